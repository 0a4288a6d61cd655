"""The per-request context: what a handler knows about the request it serves.

A :class:`Context` is made for every request. In the modern era (2026-07-28) it is the
whole truth about the client, since version, capabilities and log level come with each
request in ``params._meta``; in the legacy era it copies what the connection's
``initialize`` handshake agreed.

It is also how a tool talks back while it runs: log messages, progress, and questions to
the client (elicitation, sampling, roots), which work in both eras: see :mod:`mcpkit.mrtr`.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from . import deprecations, jsonrpc, mrtr, versions

if TYPE_CHECKING:
    from .tasks import Task

Send = Callable[[dict[str, Any]], None]


class Channel(Protocol):
    """What a context needs of the connection it came in on (a
    :class:`~mcpkit.connection.Connection`, a layer above this one)."""

    server: Any  # the Registry the request is served from
    log_level: str | None  # the legacy era's logging/setLevel
    subscriptions: set[str]  # the legacy era's resources/subscribe

    def request_client(self, method: str, params: dict[str, Any],
                       send: Send | None = None) -> dict[str, Any]: ...

# Shared by every context that cannot be cancelled; nothing ever sets it.
_NEVER_CANCELLED = threading.Event()


class Context:
    """What a handler knows about the request it is serving, and how it talks back.

    Add a parameter annotated ``Context`` to a tool to get one. It can log, report
    progress, notice cancellation, and ask the client for input (elicitation, sampling,
    roots) in either era: see :mod:`mcpkit.mrtr` for how the modern era does that.
    """

    def __init__(
        self,
        connection: Channel,
        request_id: jsonrpc.RequestId | None,
        method: str,
        params: dict[str, Any],
        era: versions.Era,
        version: str,
        client_capabilities: dict[str, Any],
        log_level: str | None,
        send: Send,
    ) -> None:
        self.connection = connection
        self.request_id = request_id
        self.method = method
        self.params = params
        self.era = era
        self.version = version
        self.client_capabilities = client_capabilities
        self.log_level = log_level
        self._send = send
        # Replaced by a fresh Event when the call runs on its own thread (the cancellable case).
        self.cancelled: threading.Event = _NEVER_CANCELLED
        meta = params.get("_meta") or {}
        self.progress_token = meta.get("progressToken")
        # Modern round trips: answers known so far, and the tool's own saved state.
        self._answers: dict[str, Any] = {}
        self._offered: dict[str, Any] = {}  # inputResponses no sealed state vouches for
        self.state: dict[str, Any] = {}
        self._asked = itertools.count(1)
        # A tools/call that may become a task (tasks extension): how to start it, and the
        # task once started. From then on the request is answered and the call runs on.
        self._start_task: Callable[[], None] | None = None
        self.task: Task | None = None

    @property
    def server(self) -> Any:
        """The server's :class:`~mcpkit.registry.Registry` (its tools, resources, ...)."""
        return self.connection.server

    @property
    def auth(self) -> Any:
        """Whose token the request came with, over HTTP with an authorization server
        (a :class:`~mcpkit.transports.http_auth.TokenInfo`); None otherwise."""
        return getattr(self._send, "auth", None)

    def client_supports(self, capability: str) -> bool:
        return capability in self.client_capabilities

    def start_task(self) -> None:
        """Answer the call now with a task, and go on running as that task.

        A tool registered with ``task_support`` becomes a task before it starts unless it
        was registered with ``defer_task=True``: then it calls this itself, for instance
        after the questions it asks synchronously (an ``input_required`` round trip). Does
        nothing when the call cannot become a task (the client did not declare the
        extension) or already is one.
        """
        if self._start_task is not None and self.task is None:
            self._start_task()

    def end_stream(self) -> bool:
        """Close the stream this request is answered on, now; the call goes on.

        Over streamable HTTP (2025-11-25 sessions) the client reconnects with
        ``Last-Event-ID`` and gets what the call sends afterwards, its result included. False
        where the transport cannot do that (stdio, 2026-07-28).
        """
        end = getattr(self._send, "end_stream", None)
        if end is None:
            return False
        end()
        return True

    def _task_copy(self) -> Context:
        """The context a call that may become a task runs with, on its own thread: the same
        request, with its own cancellation (the task's, once it starts) and sharing the
        answers and state of this request's round trips."""
        copy = Context(self.connection, self.request_id, self.method, self.params, self.era,
                       self.version, self.client_capabilities, self.log_level, self._send)
        copy._answers, copy._offered, copy.state = self._answers, self._offered, self.state
        copy.cancelled = threading.Event()
        return copy

    def log(self, level: str, data: Any, logger: str | None = None) -> None:
        """Send ``notifications/message`` if the client asked for this level."""
        if self.era == "modern":
            deprecations.warn("logging", f"a handler of {self.method} called ctx.log")
            allowed = versions.log_level_allows(self.log_level, level)
        else:
            threshold = self.connection.log_level
            allowed = threshold is None or versions.log_level_allows(threshold, level)
        if not allowed or self.task is not None:
            return  # a task's request has been answered: its stream is gone
        params: dict[str, Any] = {"level": level, "data": data}
        if logger:
            params["logger"] = logger
        self._send(jsonrpc.notification("notifications/message", params))

    def progress(self, progress: float, total: float | None = None, message: str | None = None):
        """Report progress, if the caller asked for it with a ``progressToken``."""
        if self.progress_token is None or self.task is not None:
            return
        params: dict[str, Any] = {"progressToken": self.progress_token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        self._send(jsonrpc.notification("notifications/progress", params))

    # -- asking the client ---------------------------------------------------------------

    def ask(self, requests: dict[str, tuple[str, dict[str, Any]]]) -> dict[str, Any]:
        """Ask the client for several inputs at once: ``{key: (method, params)}``.

        Returns ``{key: result}``. Each method needs its client capability
        (:data:`mcpkit.mrtr.CAPABILITY_FOR_METHOD`).
        """
        for method, params in requests.values():
            _warn_if_deprecated(self.era, self.method, method, params)
            capability = mrtr.CAPABILITY_FOR_METHOD.get(method)
            if capability and not self.client_supports(capability):
                raise mrtr.MissingClientCapability(capability)
        if self.task is not None and self.era == "legacy":
            return self._ask_for_task(requests)
        if self.task is not None:
            # A task waits for its answers: tasks/get shows the questions, tasks/update
            # brings the answers.
            return self.server.tasks.ask(self.task, {
                key: {"method": method, "params": params}
                for key, (method, params) in requests.items()})
        if self.era == "legacy":
            # On the request's own channel (its HTTP response stream), as the spec advises.
            return {
                key: self.connection.request_client(method, params, send=self._send)
                for key, (method, params) in requests.items()
            }
        for key, (method, params) in requests.items():
            # An answer sent without requestState (so unsealed) still counts for a
            # question the tool asks now, if it fits that question.
            offered = self._offered.get(key)
            if key not in self._answers and isinstance(offered, dict) and mrtr.answer_fits(
                    {"method": method, "params": params}, offered):
                self._answers[key] = offered
        missing = {
            key: {"method": method, "params": params}
            for key, (method, params) in requests.items()
            if key not in self._answers
        }
        if missing:
            raise mrtr.InputRequired(missing)
        return {key: self._answers[key] for key in requests}

    def _ask_for_task(self, requests: dict[str, tuple[str, dict[str, Any]]]) -> dict[str, Any]:
        """2025-11-25: a task asks its client directly, on the session's own stream (its
        call was answered), each request tagged with the task; ``input_required`` meanwhile."""
        assert self.task is not None
        store = self.server.tasks
        related = {"io.modelcontextprotocol/related-task": {"taskId": self.task.id}}
        store.set_waiting(self.task, True)
        try:
            return {key: self.connection.request_client(method, {**params, "_meta": related})
                    for key, (method, params) in requests.items()}
        finally:
            store.set_waiting(self.task, False)

    def _one(self, prefix: str, key: str | None, method: str, params: dict[str, Any]) -> Any:
        key = key or f"{prefix}_{next(self._asked)}"
        return self.ask({key: (method, params)})[key]

    def elicit(
        self, message: str, requested_schema: dict[str, Any], key: str | None = None
    ) -> dict[str, Any]:
        """Ask the user to fill in a form. Returns the ElicitResult (``action``, ``content``)."""
        params = {"mode": "form", "message": message, "requestedSchema": requested_schema}
        if not versions.at_least(self.version, "2025-11-25"):
            del params["mode"]
        return self._one("elicitation", key, "elicitation/create", params)

    def sample(
        self,
        prompt: str | list[dict[str, Any]],
        max_tokens: int = 100,
        key: str | None = None,
        **extra: Any,
    ) -> dict[str, Any]:
        """Ask the client's model for a completion. Returns the CreateMessageResult."""
        if isinstance(prompt, str):
            messages = [{"role": "user", "content": {"type": "text", "text": prompt}}]
        else:
            messages = prompt
        params = {"messages": messages, "maxTokens": max_tokens, **extra}
        return self._one("sampling", key, "sampling/createMessage", params)

    def list_roots(self, key: str | None = None) -> list[dict[str, Any]]:
        """The client's roots (folders or URIs it lets the server look at)."""
        return self._one("roots", key, "roots/list", {}).get("roots", [])


_ASKED_FEATURE = {"sampling/createMessage": "sampling", "roots/list": "roots"}


def _warn_if_deprecated(era: str, handler: str, method: str, params: dict[str, Any]) -> None:
    feature = _ASKED_FEATURE.get(method)
    if feature is not None and era == "modern":
        deprecations.warn(feature, f"a handler of {handler} asked the client for {method}")
    if method == "sampling/createMessage" and \
            params.get("includeContext") in ("thisServer", "allServers"):
        deprecations.warn("includeContext", f"a handler of {handler} asked for "
                                            f"includeContext {params['includeContext']!r}")
