"""Whether a handler may wait on its client, read from its bytecode.

In a 2025-11-25 session, a handler that takes a :class:`~mcpkit.context.Context` may ask the
client something (elicitation, sampling, roots) and wait for the answer, which arrives as
another message: the thread that reads that message must not be the one waiting. So such a
handler gets a call thread of its own, which costs a thread hop each way on every call.
Most handlers with a Context only report progress or log, and then any thread will do
(HTTP serves them like 2026-07-28 requests: on the executor, and inline once quick).

:func:`may_ask_client` says False only when it can see every use of the Context: the
handler is a plain function whose own code does nothing with the parameter but read one of
:data:`OWN_WORK` from it (``ctx.progress(...)``, ``ctx.log(...)``, ``ctx.request_id``). The
Context passed on, stored, captured by a nested function, ``locals()``, a decorator's
wrapper, a coroutine or generator: all count as "may ask". A wrong True costs a thread hop;
a wrong False could stall a session, so every doubt is a True.
"""

from __future__ import annotations

import dis
import inspect
from collections.abc import Callable
from typing import Any

#: What a handler may read from its Context without waiting for another message. Not
#: ``cancelled`` (waiting for a cancellation is waiting for a message), ``ask``/``elicit``/
#: ``sample``/``list_roots``, ``connection``, ``start_task``, ``end_stream`` or ``task``.
OWN_WORK = frozenset({
    "progress", "log", "client_supports", "request_id", "method", "params", "era",
    "version", "client_capabilities", "log_level", "progress_token", "state", "auth",
    "server",
})

# Names through which code can reach a local variable without naming it.
_INTROSPECTION = frozenset({"locals", "vars", "eval", "exec", "_getframe", "currentframe",
                            "__self__"})
_PLAIN = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR \
    | inspect.CO_ITERABLE_COROUTINE


def may_ask_client(fn: Callable[..., Any], param: str) -> bool:
    """Whether ``fn``, given its Context as ``param``, might wait on the client (see above)."""
    if not inspect.isfunction(fn) or hasattr(fn, "__wrapped__"):
        return True
    code = fn.__code__
    arguments = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
    if (code.co_flags & _PLAIN or param not in arguments or param in code.co_cellvars
            or not _INTROSPECTION.isdisjoint(code.co_names)):
        return True
    instructions = list(dis.get_instructions(code))
    for i, instruction in enumerate(instructions):
        value = instruction.argval
        if param != value and not (isinstance(value, tuple) and param in value):
            continue
        if instruction.opname != "LOAD_FAST":  # stored, deleted, loaded two at a time...
            return True
        after = instructions[i + 1] if i + 1 < len(instructions) else None
        if (after is None or after.opname not in ("LOAD_ATTR", "LOAD_METHOD")
                or after.argval not in OWN_WORK):
            return True
    return False
