"""The server's registry: tools, resources, prompts and completers, and the handler of
each MCP method. No I/O, and no connections of its own making.

Theory of operation
-------------------
A :class:`Registry` holds what a server offers and answers each request from it: every
handler takes the request's params and its :class:`~mcpkit.context.Context`, which says
what revision and client it serves. :class:`~mcpkit.connection.Connection` (one per
transport connection, a layer above) decides each request's era and calls these handlers
through :attr:`Registry.dispatcher`; :class:`~mcpkit.server.Server` (above that) adds
making connections and running over stdio.

The registry may change while clients are connected: adding or removing anything tells
every listener in ``_listeners`` (the open connections) so they can send ``list_changed``.
"""

from __future__ import annotations

import base64
import inspect
import re
import threading
import typing
from collections.abc import Callable, Iterable
from typing import Any, Protocol

from . import content as content_mod
from . import context_use, jsonrpc, mrtr, schema, validation, versions
from . import tasks as tasks_mod
from .context import Context
from .dispatch import Dispatcher
from .jsonrpc import InvalidParams, JsonRpcError
from .logs import LazyLogger

log = LazyLogger("mcpkit.server")  # see mcpkit.logs


DEFAULT_PAGE_SIZE = 100


class Listener(Protocol):
    """What hears of changes to the registry (a connection, which tells its client)."""

    def list_changed(self, kind: str) -> None: ...

    def resource_updated(self, uri: str) -> None: ...

    def task_status(self, task: tasks_mod.Task) -> None: ...


# -- registry entries --------------------------------------------------------------------


# Plain classes, not dataclasses: the dataclasses module and the code it generates per
# class cost a server about 3 ms of start-up, a tenth of a bare interpreter's (bench/).


class Tool:
    __slots__ = ("name", "fn", "input_schema", "description", "title", "annotations",
                 "output_schema", "context_param", "icons", "validator", "task_support",
                 "defer_task", "meta", "listed_if", "asks_client")

    def __init__(self, name: str, fn: Callable[..., Any], input_schema: dict[str, Any],
                 description: str = "", title: str | None = None,
                 annotations: dict[str, Any] | None = None,
                 output_schema: dict[str, Any] | None = None, context_param: str | None = None,
                 icons: list[dict[str, Any]] | None = None, validator: Any = None,
                 task_support: str = "forbidden", defer_task: bool = False,
                 meta: dict[str, Any] | None = None,
                 listed_if: Callable[[dict[str, Any]], bool] | None = None) -> None:
        self.name, self.fn, self.input_schema = name, fn, input_schema
        self.description, self.title, self.annotations = description, title, annotations
        self.output_schema, self.context_param = output_schema, context_param
        self.icons, self.validator = icons, validator
        # The tasks extension: "forbidden", "optional" or "required"; and whether the tool
        # calls ctx.start_task() itself.
        self.task_support, self.defer_task = task_support, defer_task
        # The definition's _meta (an extension's fields: mcpkit.apps puts its view there),
        # and who sees the tool in tools/list: a test of the client's capabilities.
        self.meta, self.listed_if = meta, listed_if
        # Whether a call may wait on the client (mcpkit.context_use); a task runs on.
        self.asks_client = context_param is not None and (
            task_support != "forbidden" or context_use.may_ask_client(fn, context_param))

    def __repr__(self) -> str:
        return f"Tool({self.name!r})"

    def definition(self, version: str) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name}
        if self.title and versions.at_least(version, "2025-06-18"):
            out["title"] = self.title
        out["description"] = self.description
        out["inputSchema"] = self.input_schema
        if self.output_schema and versions.at_least(version, "2025-06-18"):
            out["outputSchema"] = self.output_schema
        if self.annotations and versions.at_least(version, "2025-03-26"):
            out["annotations"] = self.annotations
        if self.icons and versions.at_least(version, "2025-11-25"):
            out["icons"] = self.icons
        if self.task_support != "forbidden" and versions.at_least(version, "2025-11-25"):
            out["execution"] = {"taskSupport": self.task_support}
        if self.meta:
            out["_meta"] = self.meta
        return out


class Resource:
    __slots__ = ("uri", "fn", "name", "description", "mime_type", "title", "pattern",
                 "context_param", "meta", "asks_client")

    def __init__(self, uri: str, fn: Callable[..., Any], name: str, description: str = "",
                 mime_type: str | None = None, title: str | None = None,
                 pattern: re.Pattern[str] | None = None,  # set for templates
                 context_param: str | None = None, meta: dict[str, Any] | None = None) -> None:
        self.uri, self.fn, self.name, self.description = uri, fn, name, description
        self.mime_type, self.title, self.pattern = mime_type, title, pattern
        self.context_param, self.meta = context_param, meta
        self.asks_client = context_param is not None and context_use.may_ask_client(
            fn, context_param)

    def __repr__(self) -> str:
        return f"Resource({self.uri!r})"

    def definition(self, version: str) -> dict[str, Any]:
        key = "uriTemplate" if self.pattern else "uri"
        out: dict[str, Any] = {key: self.uri, "name": self.name}
        if self.title and versions.at_least(version, "2025-06-18"):
            out["title"] = self.title
        if self.description:
            out["description"] = self.description
        if self.mime_type:
            out["mimeType"] = self.mime_type
        if self.meta:
            out["_meta"] = self.meta
        return out


class Prompt:
    __slots__ = ("name", "fn", "arguments", "description", "title", "context_param",
                 "asks_client")

    def __init__(self, name: str, fn: Callable[..., Any], arguments: list[dict[str, Any]],
                 description: str = "", title: str | None = None,
                 context_param: str | None = None) -> None:
        self.name, self.fn, self.arguments, self.description = name, fn, arguments, description
        self.title, self.context_param = title, context_param
        self.asks_client = context_param is not None and context_use.may_ask_client(
            fn, context_param)

    def __repr__(self) -> str:
        return f"Prompt({self.name!r})"

    def definition(self, version: str) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name}
        if self.title and versions.at_least(version, "2025-06-18"):
            out["title"] = self.title
        out["description"] = self.description
        out["arguments"] = self.arguments
        return out


_TEMPLATE_VAR = re.compile(r"\{(\w+)\}")


def _template_pattern(template: str) -> re.Pattern[str]:
    """``notes://{id}`` -> a regex with one named group per variable.

    A variable is one path segment: no slash, and no control character (a NUL, a CR, a tab
    or a newline in an id is an injection, not a name). ``\\Z`` rather than ``$``, which
    would also match before a trailing newline.
    """
    parts = _TEMPLATE_VAR.split(template)
    regex = "".join(
        re.escape(part) if i % 2 == 0 else f"(?P<{part}>[^/\\x00-\\x1f\\x7f-\\x9f]+)"
        for i, part in enumerate(parts)
    )
    return re.compile(f"\\A{regex}\\Z")


def _context_param(fn: Callable[..., Any]) -> str | None:
    """The name of the parameter annotated as :class:`Context`, if the function has one."""
    try:
        hints = typing.get_type_hints(fn)
    except Exception:
        hints = {}
    for name, hint in hints.items():
        if hint is Context:
            return name
    return None


# -- the registry ----------------------------------------------------------------------


class Registry:
    """What an MCP server offers, and its protocol handlers. See :class:`~mcpkit.server.Server`."""

    def __init__(
        self,
        name: str,
        version: str = "0.1.0",
        *,
        title: str | None = None,
        instructions: str | None = None,
        page_size: int = DEFAULT_PAGE_SIZE,
        cache_ttl_ms: int = 0,
        cache_scope: str = "public",
        state_secret: bytes | str | None = None,
    ) -> None:
        self.name = name
        self.version = version
        self.title = title
        self.instructions = instructions
        self.page_size = page_size
        self.cache_ttl_ms = cache_ttl_ms
        self.cache_scope = cache_scope
        self.sealer = mrtr.StateSealer(state_secret)
        self.tools: dict[str, Tool] = {}
        self.resources: dict[str, Resource] = {}
        self.templates: dict[str, Resource] = {}
        self.prompts: dict[str, Prompt] = {}
        self.completers: dict[tuple[str, str], Callable[..., Iterable[str]]] = {}
        self._listeners: set[Listener] = set()
        self._lock = threading.Lock()
        self.tasks = tasks_mod.TaskStore(on_status=self._task_status)
        #: Extensions this server declares (name -> settings) in its capabilities, in both
        #: eras (an extra member of a 2025 capabilities object, as SEP-1724 allows).
        self.extensions: dict[str, dict[str, Any]] = {}
        self.dispatcher = self._build_dispatcher()

    @property
    def info(self) -> dict[str, Any]:
        info = {"name": self.name, "version": self.version}
        if self.title:
            info["title"] = self.title
        return info

    # -- registration ----------------------------------------------------------------

    def tool(
        self,
        fn: Callable[..., Any] | None = None,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        input_schema: dict[str, Any] | None = None,
        output_schema: dict[str, Any] | None = None,
        structured: bool = False,
        read_only: bool | None = None,
        destructive: bool | None = None,
        idempotent: bool | None = None,
        open_world: bool | None = None,
        icons: list[dict[str, Any]] | None = None,
        task_support: str = "forbidden",
        defer_task: bool = False,
        meta: dict[str, Any] | None = None,
        listed_if: Callable[[dict[str, Any]], bool] | None = None,
    ) -> Any:
        """Register a tool. Use bare (``@server.tool``) or with options.

        The input schema comes from the type hints unless given; ``structured=True`` derives
        an ``outputSchema`` from the return annotation and returns ``structuredContent``.
        The hint keywords become the tool's ``annotations``. ``task_support`` (``"optional"``
        or ``"required"``) lets a call answer at once with a task and run on (see
        :mod:`mcpkit.tasks`); ``defer_task=True``: the tool starts the task itself, with
        :meth:`Context.start_task`. ``meta`` is the definition's ``_meta``; ``listed_if``
        (the client's capabilities -> bool) keeps the tool out of the tools/list of clients
        it is not for (calls are not refused: the list is a courtesy, not a guard).
        """
        if task_support not in tasks_mod.TASK_SUPPORT:
            raise ValueError(f"task_support must be one of {', '.join(tasks_mod.TASK_SUPPORT)}")

        def register(fn: Callable[..., Any]) -> Callable[..., Any]:
            ctx_param = _context_param(fn)
            derived, doc = schema.function_schema(fn, skip=(ctx_param,) if ctx_param else ())
            in_schema = input_schema or derived
            out_schema = output_schema
            if out_schema is None and structured:
                out_schema = schema.return_schema(fn)
            hints = {
                "readOnlyHint": read_only,
                "destructiveHint": destructive,
                "idempotentHint": idempotent,
                "openWorldHint": open_world,
            }
            annotations = {k: v for k, v in hints.items() if v is not None}
            if title:
                annotations = {"title": title, **annotations}
            validation.check_schema(in_schema)
            self.add_tool(
                Tool(
                    name=name or fn.__name__,
                    fn=fn,
                    input_schema=in_schema,
                    description=description if description is not None else doc,
                    title=title,
                    annotations=annotations or None,
                    output_schema=out_schema,
                    context_param=ctx_param,
                    icons=icons,
                    validator=validation.compile_schema(in_schema),
                    task_support=task_support,
                    defer_task=defer_task,
                    meta=meta,
                    listed_if=listed_if,
                )
            )
            return fn

        return register(fn) if fn is not None else register

    def add_tool(self, tool: Tool) -> None:
        with self._lock:
            self.tools[tool.name] = tool
        self._list_changed("tools")

    def remove_tool(self, name: str) -> None:
        with self._lock:
            del self.tools[name]
        self._list_changed("tools")

    def resource(
        self,
        uri: str,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = "text/plain",
        meta: dict[str, Any] | None = None,
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Register a resource; a URI with ``{variables}`` makes a resource template.

        The function gets the template variables as keyword arguments and returns text,
        bytes, or a list of ``contents`` dicts. ``meta`` is the listed entry's ``_meta``.
        """

        def register(fn: Callable[..., Any]) -> Callable[..., Any]:
            doc, _ = schema.parse_docstring(fn.__doc__)
            entry = Resource(
                uri=uri,
                fn=fn,
                name=name or fn.__name__,
                description=description if description is not None else doc,
                mime_type=mime_type,
                title=title,
                pattern=_template_pattern(uri) if "{" in uri else None,
                context_param=_context_param(fn),
                meta=meta,
            )
            with self._lock:
                (self.templates if entry.pattern else self.resources)[uri] = entry
            self._list_changed("resources")
            return fn

        return register

    def remove_resource(self, uri: str) -> None:
        with self._lock:
            self.resources.pop(uri, None) or self.templates.pop(uri)
        self._list_changed("resources")

    def prompt(
        self,
        fn: Callable[..., Any] | None = None,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
    ) -> Any:
        """Register a prompt. Its parameters are the prompt's arguments (strings).

        Return a string (one user message), or a list of messages
        (``{"role": ..., "content": block}``), or a string list alternating user/assistant.
        """

        def register(fn: Callable[..., Any]) -> Callable[..., Any]:
            ctx_param = _context_param(fn)
            doc, arg_docs = schema.parse_docstring(fn.__doc__)
            arguments = []
            for pname, param in inspect.signature(fn).parameters.items():
                if pname == ctx_param:
                    continue
                arg: dict[str, Any] = {"name": pname}
                if pname in arg_docs:
                    arg["description"] = arg_docs[pname]
                arg["required"] = param.default is inspect.Parameter.empty
                arguments.append(arg)
            entry = Prompt(
                name=name or fn.__name__,
                fn=fn,
                arguments=arguments,
                description=description if description is not None else doc,
                title=title,
                context_param=ctx_param,
            )
            with self._lock:
                self.prompts[entry.name] = entry
            self._list_changed("prompts")
            return fn

        return register(fn) if fn is not None else register

    def remove_prompt(self, name: str) -> None:
        with self._lock:
            del self.prompts[name]
        self._list_changed("prompts")

    def completion(self, kind: str, name: str) -> Callable[[Callable[..., Any]], Any]:
        """Register a completer for a prompt's arguments (``kind="prompt"``, prompt name) or a
        template's variables (``kind="resource"``, the template URI).

        The function is called as ``fn(argument_name, value, context_arguments)`` and
        returns candidate strings.
        """
        if kind not in ("prompt", "resource"):
            raise ValueError('completion kind must be "prompt" or "resource"')

        def register(fn: Callable[..., Iterable[str]]) -> Callable[..., Iterable[str]]:
            self.completers[(kind, name)] = fn
            return fn

        return register

    # -- capabilities and change notifications ------------------------------------------

    def offers(self, capability: str) -> bool:
        """Whether the server has what a capability advertises (checked on every request)."""
        if capability == "tools":
            return bool(self.tools)
        if capability == "resources":
            return bool(self.resources or self.templates)
        if capability == "prompts":
            return bool(self.prompts)
        if capability == "completions":
            return bool(self.completers or self.prompts or self.templates)
        return capability == "logging"

    def capabilities(self) -> dict[str, Any]:
        """The capabilities object: only what is registered right now is advertised."""
        caps: dict[str, Any] = {"logging": {}}
        if self.offers("completions"):
            caps["completions"] = {}
        if self.offers("tools"):
            caps["tools"] = {"listChanged": True}
        if self.offers("resources"):
            caps["resources"] = {"subscribe": True, "listChanged": True}
        if self.offers("prompts"):
            caps["prompts"] = {"listChanged": True}
        if self.extensions:
            caps["extensions"] = {name: dict(settings) for name, settings in
                                  self.extensions.items()}
        return caps

    def _list_changed(self, kind: str) -> None:
        for listener in list(self._listeners):
            listener.list_changed(kind)

    def _forget(self, listener: Listener) -> None:
        with self._lock:
            self._listeners.discard(listener)

    def _task_status(self, task: tasks_mod.Task) -> None:
        for listener in list(self._listeners):
            listener.task_status(task)

    def offers_tasks(self) -> bool:
        return any(tool.task_support != "forbidden" for tool in self.tools.values())

    def notify_resource_updated(self, uri: str) -> None:
        """Tell every client subscribed to ``uri`` that it changed."""
        for listener in list(self._listeners):
            listener.resource_updated(uri)

    # -- protocol handlers ---------------------------------------------------------------

    def _build_dispatcher(self) -> Dispatcher:
        d = Dispatcher(reraise=(mrtr.InputRequired, mrtr.MissingClientCapability))
        d.add_request("ping", lambda params, ctx: {})
        d.add_request("server/discover", self._discover)
        d.add_request("tools/list", self._tools_list)
        d.add_request("tools/call", self._tools_call)
        d.add_request("resources/list", self._resources_list)
        d.add_request("resources/templates/list", self._templates_list)
        d.add_request("resources/read", self._resources_read)
        d.add_request("resources/subscribe", self._subscribe)
        d.add_request("resources/unsubscribe", self._unsubscribe)
        d.add_request("prompts/list", self._prompts_list)
        d.add_request("prompts/get", self._prompts_get)
        d.add_request("completion/complete", self._complete)
        d.add_request("logging/setLevel", self._set_level)
        # Tasks: the extension (2026-07-28) and its earlier form (2025-11-25), whose
        # tasks/result and tasks/list the extension dropped (-32601 there).
        d.add_request("tasks/get", self._tasks_get)
        d.add_request("tasks/update", self._tasks_update)
        d.add_request("tasks/cancel", self._tasks_cancel)
        d.add_request("tasks/result", self._tasks_result)
        d.add_request("tasks/list", self._tasks_list)
        return d

    def _discover(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        result: dict[str, Any] = {
            "supportedVersions": list(versions.SUPPORTED_VERSIONS),
            "capabilities": self.capabilities(),
        }
        if self.offers_tasks():
            result["capabilities"].setdefault("extensions", {})[tasks_mod.EXTENSION] = {}
        if self.instructions:
            result["instructions"] = self.instructions
        return self._cacheable(result)

    def _cacheable(self, result: dict[str, Any], scope: str | None = None) -> dict[str, Any]:
        result["ttlMs"] = self.cache_ttl_ms
        result["cacheScope"] = scope or self.cache_scope
        return result

    def _page(self, items: list[Any], params: dict[str, Any]) -> tuple[list[Any], str | None]:
        cursor = params.get("cursor")
        start = 0
        if cursor is not None:
            try:
                start = int(base64.urlsafe_b64decode(cursor.encode()).decode())
                if start < 0 or start > len(items):
                    raise ValueError
            except (ValueError, AttributeError, UnicodeDecodeError):
                raise InvalidParams(
                    f"invalid cursor {cursor!r}: pass back a nextCursor as is") from None
        end = start + self.page_size
        next_cursor = None
        if end < len(items):
            next_cursor = base64.urlsafe_b64encode(str(end).encode()).decode()
        return items[start:end], next_cursor

    def _list(self, key: str, entries: list[Any], params: dict[str, Any], ctx: Context):
        page, next_cursor = self._page(entries, params)
        result: dict[str, Any] = {key: [e.definition(ctx.version) for e in page]}
        if next_cursor:
            result["nextCursor"] = next_cursor
        return self._cacheable(result) if ctx.era == "modern" else result

    def _tools_list(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        tools = [t for t in self.tools.values()
                 if t.listed_if is None or t.listed_if(ctx.client_capabilities)]
        return self._list("tools", tools, params, ctx)

    def _tools_call(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        name = params.get("name")
        if not isinstance(name, str):
            raise InvalidParams('tools/call needs a string "name"')
        tool = self.tools.get(name)
        if tool is None:
            raise InvalidParams(f"Unknown tool: {name}", {"name": name})
        as_task = False
        if tool.task_support != "forbidden" or "task" in params:  # plain calls skip this
            as_task = self._as_task(tool, params, ctx)
        arguments = params.get("arguments") or {}
        if not isinstance(arguments, dict):
            raise InvalidParams('"arguments" must be an object')
        problems = tool.validator(arguments)
        if problems:
            message = "; ".join(problems[:5])
            text = f"Invalid arguments for tool {name}: {message}"
            # 2025-11-25 made input errors tool results, so the model can correct itself.
            if versions.at_least(ctx.version, "2025-11-25"):
                return content_mod.error_result(text).to_dict()
            raise InvalidParams(text)
        if as_task:
            return self._call_as_task(tool, arguments, ctx, params.get("task"))
        return self._invoke(tool, arguments, ctx)

    def _as_task(self, tool: Tool, params: dict[str, Any], ctx: Context) -> bool:
        """Whether this call runs as a task, or the error for a call that must not be."""
        if ctx.era == "modern":
            # The server decides: a task whenever the client can take one. A 2025-11-25
            # style params.task is ignored.
            if tasks_mod.client_declares(ctx.client_capabilities):
                return tool.task_support != "forbidden"
            if tool.task_support == "required":
                raise _needs_tasks(f"Tool {tool.name} runs only as a task: declare the "
                                   f"{tasks_mod.EXTENSION} extension")
            return False
        if not versions.at_least(ctx.version, "2025-11-25"):
            return False  # no tasks before 2025-11-25: params.task means nothing there
        # 2025-11-25: the client asks for a task with params.task.
        wants = isinstance(params.get("task"), dict)
        if wants and tool.task_support == "forbidden":
            raise JsonRpcError(jsonrpc.METHOD_NOT_FOUND,
                               f"Tool {tool.name} does not run as a task: call it without "
                               '"task"', {"name": tool.name})
        if not wants and tool.task_support == "required":
            raise JsonRpcError(jsonrpc.METHOD_NOT_FOUND,
                               f'Tool {tool.name} runs only as a task: call it with "task"',
                               {"name": tool.name})
        return wants

    def _invoke(self, tool: Tool, arguments: dict[str, Any], ctx: Context) -> dict[str, Any]:
        """Run a tool: its result, an ``isError`` one if it raised (protocol errors and
        round trips propagate)."""
        kwargs = arguments  # a call with **kwargs copies them: the request is not changed
        if tool.context_param:
            kwargs = {**arguments, tool.context_param: ctx}
        try:
            value = tool.fn(**kwargs)
        except (mrtr.InputRequired, mrtr.MissingClientCapability, JsonRpcError,
                tasks_mod.TaskCancelled):
            raise
        except Exception as exc:
            log.info("tool %s raised %s: %s", tool.name, type(exc).__name__, exc)
            # KeyError's str() is the repr of its key; the message reads better bare.
            detail = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
            return content_mod.error_result(f"{type(exc).__name__}: {detail}").to_dict()
        return self._tool_result(tool, value, ctx.version)

    # -- tasks (the io.modelcontextprotocol/tasks extension) -----------------------------

    def _call_as_task(self, tool: Tool, arguments: dict[str, Any], request_ctx: Context,
                      asked: Any = None) -> dict[str, Any]:
        """Run the tool on a thread of its own; answer with what comes first.

        That is the task (``resultType: "task"``) once it starts: before the tool runs, or
        when a ``defer_task`` tool calls ``ctx.start_task()``. A deferred tool may first
        ask for input (an ``input_required`` round trip) or just return: then the call is
        answered that way, and no task is made. ``asked``: 2025-11-25's ``params.task``.
        """
        ctx = request_ctx._task_copy()
        handoff = _Handoff()
        legacy = ctx.era == "legacy"
        ttl = asked.get("ttl") if isinstance(asked, dict) else None

        def start() -> None:
            try:
                task = self.tasks.create(owner=ctx.connection if legacy else None,
                                         ttl_ms=ttl if isinstance(ttl, int) else None)
            except tasks_mod.TooManyTasks as exc:
                raise JsonRpcError(jsonrpc.INTERNAL_ERROR, str(exc)) from None
            ctx.cancelled = task.cancelled
            ctx.task = task  # from here on ctx.ask() waits on the task's questions
            if legacy:
                handoff.give(result={"task": task.legacy_info()})
            else:
                handoff.give(result={"resultType": "task", **task.info()})

        ctx._start_task = start
        thread = threading.Thread(target=self._run_task, args=(tool, arguments, ctx, handoff),
                                  daemon=True, name=f"mcpkit-task-{tool.name}")
        thread.start()
        return handoff.take()

    def _run_task(self, tool: Tool, arguments: dict[str, Any], ctx: Context,
                  handoff: _Handoff) -> None:
        result: dict[str, Any] | None = None
        error: BaseException | None = None
        try:
            if not tool.defer_task:
                ctx.start_task()
            result = self._invoke(tool, arguments, ctx)
        except tasks_mod.TaskCancelled:
            return  # cancelled (or expired) while it waited for input: nothing to record
        except Exception as exc:  # a protocol error, a round trip, or a bug of ours
            error = exc
        if ctx.task is None:  # it never became a task: the call gets this as its answer
            handoff.give(result=result, error=error)
        elif result is None:
            self.tasks.fail(ctx.task, _error_object(error))
        elif ctx.era == "legacy" and result.get("isError"):
            # 2025-11-25: a tool that reports an error fails its task (tasks/result still
            # gives the result); the extension calls that completed.
            self.tasks.complete(ctx.task, result, tasks_mod.FAILED, "the tool reported an error")
        else:
            self.tasks.complete(ctx.task, result)

    def _task_of(self, params: dict[str, Any], ctx: Context) -> tasks_mod.Task:
        if ctx.era == "modern" and not tasks_mod.client_declares(ctx.client_capabilities):
            raise _needs_tasks(f"{ctx.method} needs the {tasks_mod.EXTENSION} extension")
        try:
            task = self.tasks.get(params.get("taskId"))
            # 2025-11-25: a session sees its own tasks only.
            if ctx.era == "legacy" and task.owner is not ctx.connection:
                raise tasks_mod.UnknownTask(task.id)
            return task
        except tasks_mod.UnknownTask:
            raise InvalidParams(f"Unknown task: {params.get('taskId')} (it never existed, "
                                "or it expired)", {"taskId": params.get("taskId")}) from None

    def _tasks_get(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        task = self._task_of(params, ctx)
        if ctx.era == "legacy":
            return task.legacy_info()
        return {"resultType": "complete", **task.detailed()}

    def _tasks_result(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        """2025-11-25: the call's own answer, once the task is terminal (it waits)."""
        if ctx.era == "modern":
            raise jsonrpc.MethodNotFound(ctx.method)  # the extension inlines it in tasks/get
        task = self._task_of(params, ctx)
        if not self.tasks.wait_done(task, _Handoff.TIMEOUT_S):
            raise JsonRpcError(jsonrpc.INTERNAL_ERROR, f"task {task.id} is still running "
                               f"after {_Handoff.TIMEOUT_S:g} s: ask again")
        if task.error is not None:  # what the call itself would have answered
            raise JsonRpcError(task.error["code"], task.error["message"], task.error.get("data"))
        if task.result is None:
            raise InvalidParams(f"task {task.id} was cancelled: it has no result",
                                {"taskId": task.id})
        related = {tasks_mod.RELATED_TASK: {"taskId": task.id}}
        return {**task.result, "_meta": {**(task.result.get("_meta") or {}), **related}}

    def _tasks_list(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        """2025-11-25: the session's tasks, paged."""
        if ctx.era == "modern":
            raise jsonrpc.MethodNotFound(ctx.method)  # tasks are not listed in the extension
        page, next_cursor = self._page(self.tasks.owned_by(ctx.connection), params)
        result: dict[str, Any] = {"tasks": [task.legacy_info() for task in page]}
        if next_cursor:
            result["nextCursor"] = next_cursor
        return result

    def _tasks_update(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        if ctx.era == "legacy":
            raise jsonrpc.MethodNotFound(ctx.method)  # 2025-11-25 asks its client directly
        task = self._task_of(params, ctx)
        responses = params.get("inputResponses") or {}
        if not isinstance(responses, dict):
            raise InvalidParams('"inputResponses" must be an object keyed like inputRequests')
        self.tasks.answer(task, responses)
        return {}

    def _tasks_cancel(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        task = self._task_of(params, ctx)
        if ctx.era == "modern":
            self.tasks.cancel(task)
            return {}  # the extension: an empty ack, for a finished task too
        if task.terminal:
            raise InvalidParams(f"task {task.id} is {task.status} already: it cannot be "
                                "cancelled", {"taskId": task.id})
        self.tasks.cancel(task)
        return task.legacy_info()

    def _tool_result(self, tool: Tool, value: Any, version: str) -> dict[str, Any]:
        if isinstance(value, content_mod.ToolResult):
            result = value.to_dict()
        elif tool.output_schema is not None and not content_mod.is_content_block(value):
            structured = value
            if schema.wraps_result(tool.output_schema):
                structured = {"result": value}
            result = {
                "content": content_mod.to_content(structured),
                "structuredContent": structured,
            }
        else:
            result = {"content": content_mod.to_content(value)}
        if "structuredContent" in result and not versions.at_least(version, "2025-06-18"):
            del result["structuredContent"]
        return result

    def _resources_list(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        return self._list("resources", list(self.resources.values()), params, ctx)

    def _templates_list(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        return self._list("resourceTemplates", list(self.templates.values()), params, ctx)

    def _find_resource(self, uri: str) -> tuple[Resource, dict[str, str]] | None:
        if uri in self.resources:
            return self.resources[uri], {}
        for template in self.templates.values():
            match = template.pattern.match(uri)  # type: ignore[union-attr]
            if match:
                return template, match.groupdict()
        return None

    def _resources_read(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        uri = params.get("uri")
        if not isinstance(uri, str):
            raise InvalidParams('resources/read needs a string "uri"')
        found = self._find_resource(uri)
        if found is None:
            code = jsonrpc.INVALID_PARAMS if ctx.era == "modern" else jsonrpc.RESOURCE_NOT_FOUND
            raise JsonRpcError(code, f"Resource not found: {uri}", {"uri": uri})
        entry, variables = found
        kwargs: dict[str, Any] = dict(variables)
        if entry.context_param:
            kwargs[entry.context_param] = ctx
        try:
            value = entry.fn(**kwargs)
        except KeyError:
            code = jsonrpc.INVALID_PARAMS if ctx.era == "modern" else jsonrpc.RESOURCE_NOT_FOUND
            raise JsonRpcError(code, f"Resource not found: {uri}", {"uri": uri}) from None
        result = {"contents": _resource_contents(uri, value, entry.mime_type)}
        return self._cacheable(result) if ctx.era == "modern" else result

    def _subscribe(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        uri = params.get("uri")
        if not isinstance(uri, str):
            raise InvalidParams('resources/subscribe needs a string "uri"')
        ctx.connection.subscriptions.add(uri)
        return {}

    def _unsubscribe(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        uri = params.get("uri")
        if not isinstance(uri, str):
            raise InvalidParams('resources/unsubscribe needs a string "uri"')
        ctx.connection.subscriptions.discard(uri)
        return {}

    def _prompts_list(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        return self._list("prompts", list(self.prompts.values()), params, ctx)

    def _prompts_get(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        name = params.get("name")
        prompt = self.prompts.get(name)  # type: ignore[arg-type]
        if prompt is None:
            raise InvalidParams(f"Unknown prompt: {name}", {"name": name})
        arguments = params.get("arguments") or {}
        if not isinstance(arguments, dict):
            raise InvalidParams('"arguments" must be an object of strings')
        missing = [a["name"] for a in prompt.arguments
                   if a["required"] and a["name"] not in arguments]
        if missing:
            raise InvalidParams(f"Prompt {name} is missing required arguments: "
                                f"{', '.join(missing)}", {"missing": missing})
        known = {a["name"] for a in prompt.arguments}
        kwargs = {k: v for k, v in arguments.items() if k in known}
        if prompt.context_param:
            kwargs[prompt.context_param] = ctx
        value = prompt.fn(**kwargs)
        result: dict[str, Any] = {"messages": _prompt_messages(value)}
        if prompt.description:
            result["description"] = prompt.description
        return result

    def _complete(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        ref = params.get("ref") or {}
        argument = params.get("argument") or {}
        if ref.get("type") == "ref/prompt":
            key = ("prompt", ref.get("name"))
            if key[1] not in self.prompts:
                raise InvalidParams(f"Unknown prompt: {key[1]}")
        elif ref.get("type") == "ref/resource":
            key = ("resource", ref.get("uri"))
        else:
            raise InvalidParams('completion ref.type must be "ref/prompt" or "ref/resource"')
        completer = self.completers.get(key)  # type: ignore[arg-type]
        values: list[str] = []
        if completer is not None:
            context_args = (params.get("context") or {}).get("arguments") or {}
            values = [str(v) for v in completer(argument.get("name"), argument.get("value", ""),
                                                context_args)]
        return {
            "completion": {"values": values[:100], "total": len(values),
                           "hasMore": len(values) > 100}
        }

    def _set_level(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        level = params.get("level")
        if level not in versions.LOG_LEVELS:
            raise InvalidParams(
                f"unknown log level {level!r}; one of {', '.join(versions.LOG_LEVELS)}")
        ctx.connection.log_level = level
        return {}


class _Handoff:
    """One answer passed from a task's thread to the request waiting for it."""

    #: A request waits this long at most for a deferred task to start (or answer).
    TIMEOUT_S = 600.0

    def __init__(self) -> None:
        self._done = threading.Event()
        self._result: dict[str, Any] | None = None
        self._error: BaseException | None = None

    def give(self, result: dict[str, Any] | None = None,
             error: BaseException | None = None) -> None:
        self._result, self._error = result, error
        self._done.set()

    def take(self) -> dict[str, Any]:
        if not self._done.wait(self.TIMEOUT_S):
            raise JsonRpcError(jsonrpc.INTERNAL_ERROR, "the tool neither answered nor started "
                               f"its task within {self.TIMEOUT_S:g} s")
        if self._error is not None:
            raise self._error
        assert self._result is not None
        return self._result


def _needs_tasks(message: str) -> JsonRpcError:
    extensions = {tasks_mod.EXTENSION: {}}
    return JsonRpcError(jsonrpc.MISSING_REQUIRED_CLIENT_CAPABILITY, message,
                        {"requiredCapabilities": {"extensions": extensions}})


def _error_object(exc: BaseException | None) -> dict[str, Any]:
    """A failed task's ``error``: the JSON-RPC error the call broke with."""
    if isinstance(exc, JsonRpcError):
        return exc.to_error()
    if isinstance(exc, mrtr.MissingClientCapability):
        return {"code": jsonrpc.MISSING_REQUIRED_CLIENT_CAPABILITY, "message": str(exc),
                "data": {"requiredCapabilities": {exc.capability: {}}}}
    log.error("a task failed", exc_info=exc)
    return {"code": jsonrpc.INTERNAL_ERROR,
            "message": "Internal error; the server log has the details"}


def _resource_contents(uri: str, value: Any, mime_type: str | None) -> list[dict[str, Any]]:
    if isinstance(value, list):
        return value
    item: dict[str, Any] = {"uri": uri}
    if mime_type:
        item["mimeType"] = mime_type
    if isinstance(value, bytes):
        item["blob"] = base64.b64encode(value).decode("ascii")
    elif isinstance(value, dict):
        return [{**item, **value}]
    else:
        item["text"] = str(value)
    return [item]


def _prompt_messages(value: Any) -> list[dict[str, Any]]:
    if isinstance(value, str):
        return [{"role": "user", "content": content_mod.text(value)}]
    messages = []
    for i, item in enumerate(value):
        if isinstance(item, str):
            role = "user" if i % 2 == 0 else "assistant"
            messages.append({"role": role, "content": content_mod.text(item)})
        else:
            messages.append(item)
    return messages


