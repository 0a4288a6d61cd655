"""An MCP server: tools, resources and prompts behind both eras of the protocol.

Theory of operation
-------------------
A :class:`Server` is a registry (tools, resources, resource templates, prompts,
completers) plus the protocol logic; it does no I/O. A transport calls
:meth:`Server.connect` with a ``send`` function and gets a :class:`Connection`, then feeds
it every decoded message with :meth:`Connection.receive`.

State lives in two places:

- the ``Connection`` holds what one transport connection has agreed: in the legacy era
  the ``initialize`` handshake fixes version, client capabilities and log level for the
  connection's life; it also tracks requests in flight (for cancellation and duplicate
  ids), requests *we* sent to the client (legacy sampling/elicitation/roots), resource
  subscriptions and ``subscriptions/listen`` streams;
- a :class:`Context`, made per request, holds what that one request said. In the modern era
  (2026-07-28) that is everything: version, client capabilities and log level all come
  from the request's ``params._meta``, so nothing carries over between requests.

Which era a request belongs to: a connection that completed ``initialize`` is legacy for
its lifetime. Otherwise a request carrying ``_meta["io.modelcontextprotocol/protocolVersion"]``
is modern, and anything else is a legacy request sent before ``initialize``.

Threads: the transport's reader calls ``receive``. Plain tools run right there (the fast
path: no thread hop). A tool that takes a :class:`Context` may wait on the client (legacy
elicitation, a cancellable loop), so it runs on its own thread, and its response is sent
from that thread. ``send`` is serialised by a lock.
"""

from __future__ import annotations

import base64
import inspect
import itertools
import logging
import re
import threading
import typing
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from . import content as content_mod
from . import jsonrpc, mrtr, schema, validation, versions
from .dispatch import Dispatcher
from .framing import FramingError, MessageTooLarge
from .jsonrpc import InvalidParams, JsonRpcError
from .versions import (
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_LOG_LEVEL,
    META_PROTOCOL_VERSION,
    META_SERVER_INFO,
    META_SUBSCRIPTION_ID,
)

log = logging.getLogger("mcpkit.server")

Send = Callable[[dict[str, Any]], None]

DEFAULT_PAGE_SIZE = 100
CLIENT_REQUEST_TIMEOUT_S = 120.0


# -- registry entries --------------------------------------------------------------------


@dataclass
class Tool:
    name: str
    fn: Callable[..., Any]
    input_schema: dict[str, Any]
    description: str = ""
    title: str | None = None
    annotations: dict[str, Any] | None = None
    output_schema: dict[str, Any] | None = None
    context_param: str | None = None
    icons: list[dict[str, Any]] | None = None
    validator: Any = field(default=None, repr=False)

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
        return out


@dataclass
class Resource:
    uri: str
    fn: Callable[..., Any]
    name: str
    description: str = ""
    mime_type: str | None = None
    title: str | None = None
    pattern: re.Pattern[str] | None = None  # set for templates
    context_param: str | None = None

    def definition(self, version: str) -> dict[str, Any]:
        key = "uriTemplate" if self.pattern else "uri"
        out: dict[str, Any] = {key: self.uri, "name": self.name}
        if self.title and versions.at_least(version, "2025-06-18"):
            out["title"] = self.title
        if self.description:
            out["description"] = self.description
        if self.mime_type:
            out["mimeType"] = self.mime_type
        return out


@dataclass
class Prompt:
    name: str
    fn: Callable[..., Any]
    arguments: list[dict[str, Any]]
    description: str = ""
    title: str | None = None
    context_param: str | None = None

    def definition(self, version: str) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name}
        if self.title and versions.at_least(version, "2025-06-18"):
            out["title"] = self.title
        out["description"] = self.description
        out["arguments"] = self.arguments
        return out


_TEMPLATE_VAR = re.compile(r"\{(\w+)\}")


def _template_pattern(template: str) -> re.Pattern[str]:
    """``notes://{id}`` -> a regex with one named group per variable (no slashes inside)."""
    parts = _TEMPLATE_VAR.split(template)
    regex = "".join(
        re.escape(part) if i % 2 == 0 else f"(?P<{part}>[^/]+)" for i, part in enumerate(parts)
    )
    return re.compile(f"^{regex}$")


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


# -- per-request context -----------------------------------------------------------------


class Context:
    """What a handler knows about the request it is serving, and how it talks back.

    Add a parameter annotated ``Context`` to a tool to get one. It can log, report
    progress, notice cancellation, and ask the client for input (elicitation, sampling,
    roots) in either era: see :mod:`mcpkit.mrtr` for how the modern era does that.
    """

    def __init__(
        self,
        connection: Connection,
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
        self.cancelled = threading.Event()
        meta = params.get("_meta") or {}
        self.progress_token = meta.get("progressToken")
        # Modern round trips: answers known so far, and the tool's own saved state.
        self._answers: dict[str, Any] = {}
        self.state: dict[str, Any] = {}
        self._asked = itertools.count(1)

    @property
    def server(self) -> Server:
        return self.connection.server

    def client_supports(self, capability: str) -> bool:
        return capability in self.client_capabilities

    def log(self, level: str, data: Any, logger: str | None = None) -> None:
        """Send ``notifications/message`` if the client asked for this level."""
        if self.era == "modern":
            allowed = versions.log_level_allows(self.log_level, level)
        else:
            threshold = self.connection.log_level
            allowed = threshold is None or versions.log_level_allows(threshold, level)
        if not allowed:
            return
        params: dict[str, Any] = {"level": level, "data": data}
        if logger:
            params["logger"] = logger
        self._send(jsonrpc.notification("notifications/message", params))

    def progress(self, progress: float, total: float | None = None, message: str | None = None):
        """Report progress, if the caller asked for it with a ``progressToken``."""
        if self.progress_token is None:
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
        for method, _ in requests.values():
            capability = mrtr.CAPABILITY_FOR_METHOD.get(method)
            if capability and not self.client_supports(capability):
                raise mrtr.MissingClientCapability(capability)
        if self.era == "legacy":
            return {
                key: self.connection.request_client(method, params)
                for key, (method, params) in requests.items()
            }
        missing = {
            key: {"method": method, "params": params}
            for key, (method, params) in requests.items()
            if key not in self._answers
        }
        if missing:
            raise mrtr.InputRequired(missing)
        return {key: self._answers[key] for key in requests}

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


# -- the server ------------------------------------------------------------------------


class Server:
    """An MCP server. Register tools, resources and prompts with the decorators."""

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
        self._connections: set[Connection] = set()
        self._lock = threading.Lock()
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
    ) -> Any:
        """Register a tool. Use bare (``@server.tool``) or with options.

        The input schema comes from the type hints unless given; ``structured=True`` derives
        an ``outputSchema`` from the return annotation and returns ``structuredContent``.
        The hint keywords become the tool's ``annotations``.
        """

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
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Register a resource; a URI with ``{variables}`` makes a resource template.

        The function gets the template variables as keyword arguments and returns text,
        bytes, or a list of ``contents`` dicts.
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

    def capabilities(self) -> dict[str, Any]:
        caps: dict[str, Any] = {"logging": {}}
        if self.completers or self.prompts or self.templates:
            caps["completions"] = {}
        if self.tools:
            caps["tools"] = {"listChanged": True}
        if self.resources or self.templates:
            caps["resources"] = {"subscribe": True, "listChanged": True}
        if self.prompts:
            caps["prompts"] = {"listChanged": True}
        return caps

    def _list_changed(self, kind: str) -> None:
        for connection in list(self._connections):
            connection.list_changed(kind)

    def notify_resource_updated(self, uri: str) -> None:
        """Tell every client subscribed to ``uri`` that it changed."""
        for connection in list(self._connections):
            connection.resource_updated(uri)

    # -- connections ---------------------------------------------------------------------

    def connect(self, send: Send) -> Connection:
        """A new transport connection; ``send`` writes one message to the peer."""
        connection = Connection(self, send)
        with self._lock:
            self._connections.add(connection)
        return connection

    def _forget(self, connection: Connection) -> None:
        with self._lock:
            self._connections.discard(connection)

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
        return d

    def _discover(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        result: dict[str, Any] = {
            "supportedVersions": list(versions.SUPPORTED_VERSIONS),
            "capabilities": self.capabilities(),
        }
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
        return self._list("tools", list(self.tools.values()), params, ctx)

    def _tools_call(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        name = params.get("name")
        if not isinstance(name, str):
            raise InvalidParams('tools/call needs a string "name"')
        tool = self.tools.get(name)
        if tool is None:
            raise InvalidParams(f"Unknown tool: {name}", {"name": name})
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
        kwargs = dict(arguments)
        if tool.context_param:
            kwargs[tool.context_param] = ctx
        try:
            value = tool.fn(**kwargs)
        except (mrtr.InputRequired, mrtr.MissingClientCapability, JsonRpcError):
            raise
        except Exception as exc:
            log.info("tool %s raised %s: %s", name, type(exc).__name__, exc)
            return content_mod.error_result(f"{type(exc).__name__}: {exc}").to_dict()
        return self._tool_result(tool, value, ctx.version)

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

    # -- convenience ---------------------------------------------------------------------

    def run(self, framing: str = "ndjson") -> None:
        """Serve over this process's stdin/stdout until EOF."""
        from .transports.stdio import serve_stdio

        serve_stdio(self, framing=framing)


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


# -- one transport connection ------------------------------------------------------------

# Methods a legacy client may send before the handshake completes.
_BEFORE_INIT = frozenset({"initialize", "ping"})
# Methods that exist only in one era.
_LEGACY_ONLY = frozenset({"initialize", "ping", "logging/setLevel", "resources/subscribe",
                          "resources/unsubscribe"})
_MODERN_ONLY = frozenset({"server/discover", "subscriptions/listen"})
# The capability a feature's methods need the server to have advertised.
_CAPABILITY_FOR_METHOD = {"tools": "tools", "resources": "resources", "prompts": "prompts",
                          "completion": "completions"}
# Results that may come back as input_required in the modern era.
_MRTR_METHODS = frozenset({"tools/call", "prompts/get", "resources/read"})


class Connection:
    """The server's side of one transport connection. Feed it with :meth:`receive`."""

    def __init__(self, server: Server, send: Send) -> None:
        self.server = server
        self._raw_send = send
        self._send_lock = threading.Lock()
        self.closed = False
        # Legacy handshake state: fixed once initialize succeeds.
        self.initialized = False
        self.protocol_version: str | None = None
        self.client_capabilities: dict[str, Any] = {}
        self.client_info: dict[str, Any] = {}
        self.log_level: str | None = None
        self.subscriptions: set[str] = set()
        # Requests being served, by id: for cancellation and duplicate-id detection.
        self.in_flight: dict[jsonrpc.RequestId, Context] = {}
        # Modern subscriptions/listen streams, by the listen request's id.
        self.listens: dict[jsonrpc.RequestId, _Listen] = {}
        # Requests we sent to the client (legacy era), by id.
        self._outgoing: dict[int, _Waiter] = {}
        self._next_id = itertools.count(1)
        self._threads: set[threading.Thread] = set()
        self._state_lock = threading.Lock()

    # -- sending -------------------------------------------------------------------------

    def send(self, message: dict[str, Any]) -> None:
        if self.closed:
            return
        with self._send_lock:
            self._raw_send(message)

    def request_client(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Send a request to the client and wait for its result (legacy era)."""
        request_id = next(self._next_id)
        waiter = _Waiter()
        with self._state_lock:
            self._outgoing[request_id] = waiter
        self.send(jsonrpc.request(request_id, method, params))
        try:
            if not waiter.event.wait(CLIENT_REQUEST_TIMEOUT_S):
                self.send(jsonrpc.notification(
                    "notifications/cancelled", {"requestId": request_id, "reason": "timeout"}))
                raise TimeoutError(f"the client did not answer {method} in "
                                   f"{CLIENT_REQUEST_TIMEOUT_S:.0f} s")
        finally:
            with self._state_lock:
                self._outgoing.pop(request_id, None)
        if waiter.message is None:
            raise ConnectionError("the connection closed while waiting for the client")
        if "error" in waiter.message:
            raise JsonRpcError.from_error(waiter.message["error"])
        return waiter.message["result"]

    # -- receiving -----------------------------------------------------------------------

    def receive(self, message: Any, reply: Send | None = None) -> None:
        """Handle one decoded message (or a :class:`FramingError` from the decoder).

        ``reply`` is where this message's response and request-scoped notifications go
        (progress, log messages, a listen stream); by default the connection's ``send``.
        HTTP gives each POST its own.
        """
        reply = reply or self.send
        if isinstance(message, FramingError):
            code = jsonrpc.INVALID_REQUEST if isinstance(message, MessageTooLarge) \
                else jsonrpc.PARSE_ERROR
            reply(jsonrpc.error_response(None, code, str(message)))
            return
        if isinstance(message, list) and self.protocol_version == "2025-03-26":
            self._receive_batch(message, reply)
            return
        try:
            kind = jsonrpc.classify(message)
        except JsonRpcError as exc:
            reply(jsonrpc.error_response_from(jsonrpc.request_id_of(message), exc))
            return
        if kind == "request":
            self._on_request(message, reply)
        elif kind == "notification":
            self._on_notification(message)
        else:
            self._on_response(message)

    def _receive_batch(self, batch: list[Any], reply: Send) -> None:
        """A JSON-RPC batch (revision 2025-03-26 only): the responses go back as one array.

        Notifications (progress, log) for the batch's requests still go out on their own.
        """
        if not batch:
            reply(jsonrpc.error_response(None, jsonrpc.INVALID_REQUEST, "an empty batch"))
            return
        expected = 0
        for item in batch:
            try:
                expected += jsonrpc.classify(item) == "request"
            except JsonRpcError:
                expected += 1
        responses: list[dict[str, Any]] = []
        lock = threading.Lock()

        def collect(message: dict[str, Any]) -> None:
            if "method" in message:
                reply(message)
                return
            with lock:
                responses.append(message)
                done = len(responses) == expected
            if done:
                reply(responses)  # type: ignore[arg-type]

        for item in batch:
            self.receive(item, collect)

    def _on_response(self, message: dict[str, Any]) -> None:
        with self._state_lock:
            waiter = self._outgoing.get(message["id"])
        if waiter is None:
            log.warning("ignored a response to unknown request id %r", message.get("id"))
            return
        waiter.message = message
        waiter.event.set()

    def _on_notification(self, message: dict[str, Any]) -> None:
        method = message["method"]
        params = message.get("params") or {}
        if method == "notifications/initialized":
            return
        if method == "notifications/cancelled":
            self.cancel(params.get("requestId"), respond=True)
            return
        log.debug("ignored notification %s", method)

    def cancel(self, request_id: Any, respond: bool = False) -> None:
        """Cancel a call in flight or end a listen stream (unknown ids are ignored).

        ``respond``: close a listen stream with its final result (stdio); over HTTP the
        client closing the stream is the cancellation and nothing more is sent.
        """
        with self._state_lock:
            ctx = self.in_flight.get(request_id)
            listen = self.listens.pop(request_id, None)
        if ctx is not None:
            ctx.cancelled.set()
        if listen is not None and respond:
            self._end_listen(request_id, listen)

    def _on_request(self, message: dict[str, Any], reply: Send) -> None:
        request_id = message["id"]
        method = message["method"]
        params = message.get("params") or {}
        if request_id in self.in_flight:
            reply(jsonrpc.error_response(
                request_id, jsonrpc.INVALID_REQUEST,
                f"request id {request_id!r} is already in flight; use a new id per request"))
            return
        try:
            ctx = self._context_for(request_id, method, params, reply)
        except JsonRpcError as exc:
            reply(jsonrpc.error_response_from(request_id, exc))
            return
        if ctx is None:  # initialize was handled
            return
        needed = _CAPABILITY_FOR_METHOD.get(method.split("/")[0])
        if needed and needed not in self.server.capabilities():
            # A method of a feature the server does not offer is unknown to it.
            reply(jsonrpc.error_response_from(request_id, jsonrpc.MethodNotFound(method)))
            return
        if method == "subscriptions/listen":
            self._listen(ctx)
            return
        runs_on_thread = method == "tools/call" and self._tool_wants_thread(params)
        if not runs_on_thread:
            self._serve(ctx)
            return
        with self._state_lock:
            self.in_flight[request_id] = ctx
        thread = threading.Thread(target=self._serve, args=(ctx,), daemon=True,
                                  name=f"mcpkit-call-{request_id}")
        self._threads.add(thread)
        thread.start()

    def _tool_wants_thread(self, params: dict[str, Any]) -> bool:
        tool = self.server.tools.get(params.get("name"))  # type: ignore[arg-type]
        return tool is not None and tool.context_param is not None

    def _context_for(
        self, request_id: jsonrpc.RequestId, method: str, params: dict[str, Any], reply: Send
    ) -> Context | None:
        """Decide the request's era, check it is allowed there, and build its context."""
        meta = params.get("_meta")
        modern_version = meta.get(META_PROTOCOL_VERSION) if isinstance(meta, dict) else None
        if method == "initialize":
            self._initialize(request_id, params, reply)
            return None
        if self.initialized:
            if method in _MODERN_ONLY:
                raise jsonrpc.MethodNotFound(method)
            return Context(self, request_id, method, params, "legacy", self.protocol_version,
                           self.client_capabilities, self.log_level, reply)
        if modern_version is None:
            if method == "ping":
                return Context(self, request_id, method, params, "legacy",
                               versions.LATEST_LEGACY_VERSION, {}, None, reply)
            # Neither a handshake nor modern _meta: malformed either way (the spec: -32602).
            raise InvalidParams(
                f'{method} needs params._meta["{META_PROTOCOL_VERSION}"] and '
                f'params._meta["{META_CLIENT_CAPABILITIES}"] (revision 2026-07-28), '
                "or an initialize handshake first (earlier revisions)")
        return self._modern_context(request_id, method, params, meta, modern_version, reply)

    def _modern_context(self, request_id, method, params, meta, version, reply) -> Context:
        # Checks in the order the spec's error table implies: shape, version, method.
        capabilities = meta.get(META_CLIENT_CAPABILITIES)
        if not isinstance(capabilities, dict):
            raise InvalidParams(
                f'params._meta["{META_CLIENT_CAPABILITIES}"] is required in 2026-07-28 '
                "(an empty object if the client has none)")
        if not isinstance(version, str) or versions.era_of(version) != "modern" \
                or not versions.is_supported(version):
            raise JsonRpcError(
                jsonrpc.UNSUPPORTED_PROTOCOL_VERSION,
                f"Unsupported protocol version: {version}",
                {"supported": list(versions.SUPPORTED_VERSIONS), "requested": str(version)})
        if method in _LEGACY_ONLY:
            raise jsonrpc.MethodNotFound(method)
        log_level = meta.get(META_LOG_LEVEL)
        if log_level is not None and log_level not in versions.LOG_LEVELS:
            raise InvalidParams(f"unknown log level {log_level!r}; one of "
                                f"{', '.join(versions.LOG_LEVELS)}")
        client_info = meta.get(META_CLIENT_INFO)
        if client_info is not None and not isinstance(client_info, dict):
            raise InvalidParams(f'params._meta["{META_CLIENT_INFO}"] must be an object')
        return Context(self, request_id, method, params, "modern", version, capabilities,
                       log_level, reply)

    def _initialize(self, request_id: jsonrpc.RequestId, params: dict[str, Any],
                    reply: Send) -> None:
        if self.initialized:
            reply(jsonrpc.error_response(request_id, jsonrpc.INVALID_REQUEST,
                                             "initialize was already called on this connection"))
            return
        requested = params.get("protocolVersion")
        if not isinstance(requested, str):
            reply(jsonrpc.error_response(request_id, jsonrpc.INVALID_PARAMS,
                                         'initialize needs a string "protocolVersion"'))
            return
        version = versions.negotiate_legacy(requested)
        self.protocol_version = version
        caps = params.get("capabilities")
        self.client_capabilities = caps if isinstance(caps, dict) else {}
        info = params.get("clientInfo")
        self.client_info = info if isinstance(info, dict) else {}
        self.initialized = True
        result: dict[str, Any] = {
            "protocolVersion": version,
            "capabilities": self.server.capabilities(),
            "serverInfo": self.server.info,
        }
        if self.server.instructions:
            result["instructions"] = self.server.instructions
        reply(jsonrpc.result_response(request_id, result))

    def _serve(self, ctx: Context) -> None:
        """Run one request and send its response (on the reader or a call thread)."""
        request_id = ctx.request_id
        try:
            response = self._run(ctx)
        finally:
            with self._state_lock:
                self.in_flight.pop(request_id, None)
                self._threads.discard(threading.current_thread())
        if ctx.cancelled.is_set():
            return  # the spec: no response to a cancelled request
        ctx._send(response)

    def _run(self, ctx: Context) -> dict[str, Any]:
        request_id, method, params = ctx.request_id, ctx.method, ctx.params
        dispatcher = self.server.dispatcher
        if ctx.era == "legacy":
            try:
                return dispatcher.call(request_id, method, params, ctx)
            except mrtr.MissingClientCapability as exc:
                result = content_mod.error_result(str(exc)).to_dict()
                return jsonrpc.result_response(request_id, result)
            except mrtr.InputRequired:  # pragma: no cover - legacy asks the client directly
                raise
        try:
            if method in _MRTR_METHODS:
                self._load_round_trip(ctx)
            response = dispatcher.call(request_id, method, params, ctx)
        except JsonRpcError as exc:
            return jsonrpc.error_response_from(request_id, exc)
        except mrtr.InputRequired as exc:
            response = jsonrpc.result_response(request_id, self.input_required(ctx, exc))
        except mrtr.MissingClientCapability as exc:
            return jsonrpc.error_response(
                request_id, jsonrpc.MISSING_REQUIRED_CLIENT_CAPABILITY,
                f"Server requires the {exc.capability} capability for this request",
                {"requiredCapabilities": {exc.capability: {}}})
        return self._modern_wrap(ctx, response)

    def _modern_wrap(self, ctx: Context, response: dict[str, Any]) -> dict[str, Any]:
        result = response.get("result")
        if result is None:
            return response
        result.setdefault("resultType", "complete")
        if "ttlMs" in result and ("requestState" in ctx.params or "inputResponses" in ctx.params):
            result["ttlMs"] = 0  # the result of a round trip must not be cached
        meta = result.setdefault("_meta", {})
        meta[META_SERVER_INFO] = self.server.info
        return response

    def _load_round_trip(self, ctx: Context) -> None:
        """Give the context the answers of earlier rounds (from a verified requestState)."""
        params = ctx.params
        responses = params.get("inputResponses")
        if responses is not None and not isinstance(responses, dict):
            raise InvalidParams('"inputResponses" must be an object keyed like inputRequests')
        fingerprint = mrtr.request_fingerprint(ctx.method, params)
        asked: dict[str, Any] = {}
        if "requestState" in params:
            payload = self.server.sealer.open(fingerprint, params["requestState"])
            ctx._answers.update(payload.get("answers", {}))
            ctx.state.update(payload.get("state", {}))
            asked = payload.get("asked", {})
        for key, value in (responses or {}).items():
            # Only answers to questions this server asked count; extras are ignored.
            if key in asked and isinstance(value, dict) and _answer_fits(asked[key], value):
                ctx._answers[key] = value

    def input_required(self, ctx: Context, exc: mrtr.InputRequired) -> dict[str, Any]:
        payload = {
            "answers": ctx._answers,
            "state": ctx.state,
            "asked": {k: v for k, v in exc.requests.items()},
        }
        state = self.server.sealer.seal(mrtr.request_fingerprint(ctx.method, ctx.params), payload)
        return {"resultType": "input_required", "inputRequests": exc.requests,
                "requestState": state}

    # -- subscriptions and change notifications -------------------------------------------

    def _listen(self, ctx: Context) -> None:
        wanted = ctx.params.get("notifications")
        if not isinstance(wanted, dict):
            ctx._send(jsonrpc.error_response(ctx.request_id, jsonrpc.INVALID_PARAMS,
                                             'subscriptions/listen needs a "notifications" object'))
            return
        # Acknowledge only what this server can deliver.
        caps = self.server.capabilities()
        accepted: dict[str, Any] = {}
        for key, feature in (("toolsListChanged", "tools"), ("resourcesListChanged", "resources"),
                             ("promptsListChanged", "prompts")):
            if wanted.get(key) is True and feature in caps:
                accepted[key] = True
        uris = wanted.get("resourceSubscriptions")
        if isinstance(uris, list) and "resources" in caps:
            accepted["resourceSubscriptions"] = [u for u in uris if isinstance(u, str)]
        with self._state_lock:
            self.listens[ctx.request_id] = _Listen(accepted, ctx._send)
        ctx._send(jsonrpc.notification("notifications/subscriptions/acknowledged", {
            "_meta": {META_SUBSCRIPTION_ID: ctx.request_id}, "notifications": accepted}))

    def _end_listen(self, request_id: jsonrpc.RequestId, listen: _Listen) -> None:
        listen.send(jsonrpc.result_response(request_id, {
            "resultType": "complete",
            "_meta": {META_SUBSCRIPTION_ID: request_id, META_SERVER_INFO: self.server.info},
        }))

    def list_changed(self, kind: str) -> None:
        method = f"notifications/{kind}/list_changed"
        if self.initialized:
            self.send(jsonrpc.notification(method))
        key = f"{kind}ListChanged"
        for listen_id, listen in list(self.listens.items()):
            if listen.wanted.get(key):
                tag = {"_meta": {META_SUBSCRIPTION_ID: listen_id}}
                listen.send(jsonrpc.notification(method, tag))

    def resource_updated(self, uri: str) -> None:
        method = "notifications/resources/updated"
        if self.initialized and uri in self.subscriptions:
            self.send(jsonrpc.notification(method, {"uri": uri}))
        for listen_id, listen in list(self.listens.items()):
            if uri in listen.wanted.get("resourceSubscriptions", ()):
                listen.send(jsonrpc.notification(
                    method, {"uri": uri, "_meta": {META_SUBSCRIPTION_ID: listen_id}}))

    # -- closing -------------------------------------------------------------------------

    def close(self, timeout: float = 5.0) -> None:
        """Stop: cancel calls in flight, fail our pending requests, wait for call threads."""
        with self._state_lock:
            waiters = list(self._outgoing.values())
            contexts = list(self.in_flight.values())
            threads = list(self._threads)
        for ctx in contexts:
            ctx.cancelled.set()
        for waiter in waiters:
            waiter.event.set()
        for thread in threads:
            thread.join(timeout)
        self.closed = True
        self.server._forget(self)


def _answer_fits(request: dict[str, Any], answer: dict[str, Any]) -> bool:
    """Whether a client's answer is usable for the question asked (else: ask again)."""
    if request.get("method") != "elicitation/create" or answer.get("action") != "accept":
        return True
    schema_ = request.get("params", {}).get("requestedSchema")
    if not schema_:
        return True
    return not validation.compile_schema(schema_)(answer.get("content") or {})


@dataclass
class _Listen:
    wanted: dict[str, Any]
    send: Send


@dataclass
class _Waiter:
    event: threading.Event = field(default_factory=threading.Event)
    message: dict[str, Any] | None = None
