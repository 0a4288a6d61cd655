"""The host's side of an MCP Apps view: JSON-RPC 2.0 over ``postMessage``, without the I/O.

    bridge = AppBridge(host, "poll", "ask", {"question": "Tea or coffee?"})
    view = bridge.open()            # the tool's ui:// view, read, with the CSP to put on it
    ...render view.html in a sandboxed iframe with view.csp...
    for message in what_the_view_posts:
        for answer in bridge.receive(message):
            post_to_the_view(answer)
    for message in bridge.deliver_result(host.call_tool("ask", {...})):
        post_to_the_view(message)

Theory of operation
-------------------
A view is an MCP client of its host: it sends ``ui/initialize``, then
``ui/notifications/initialized``; from then on it may call tools (``tools/call``), read
resources, log, post a message to the conversation (``ui/message``), replace what the model
knows of it (``ui/update-model-context``), ask for a link to be opened, report its size. The
host answers, and tells it the tool's input and result. :class:`AppBridge` is that host
side for one view of one tool of one server, in the style of a sans-I/O protocol object:
:meth:`receive` takes one message the view posted and returns the messages to post back;
it never touches a browser, a widget or a socket. :mod:`mcpkit.app_widget` puts it in a
notebook; tests drive it directly.

State lives in three places: ``initialized`` (nothing is sent to the view before its
``initialized`` notification; what comes earlier waits in ``_pending``), the record of what
went each way (``traffic``, for the wire inspector) and what the host keeps of the view
(``audit``, one entry per ``tools/call``; ``log``; ``messages``; ``model_context``).

The host's checks, in order, for a ``tools/call`` from a view: the tool must be its own
server's and visible to apps (:meth:`mcpkit.host.Host.call_tool_from_app`); a tool that
may be destructive (:func:`mcpkit.agent.needs_confirmation`) runs only if ``confirm(name,
arguments)`` says yes; every call is audited, whatever happens to it.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from . import apps, jsonrpc
from .agent import needs_confirmation
from .host import HostError, UnknownName
from .session import ServerError, SessionError

__all__ = ["AppBridge", "AppError", "View"]

#: An error the spec leaves to the host (a refusal by policy or by the user).
REFUSED = -32000
HOST_INFO = {"name": "mcpkit-notebook", "version": "1.0.0"}
LOCALES = {"en": "en-US", "es": "es-ES"}


class AppError(Exception):
    """The tool has no view this host can show (said for a person)."""


@dataclass
class View:
    """What a host needs to render a view: its HTML, and the policy to put around it."""

    uri: str
    html: str
    csp: str  # the Content-Security-Policy (apps.content_security_policy)
    refused: list[str]  # declared CSP entries that were not plain origins
    prefers_border: bool | None = None
    declared: dict[str, Any] = field(default_factory=dict)  # the resource's _meta.ui
    accepted: dict[str, list[str]] = field(default_factory=dict)  # the origins allowed


def _request_id(message: Mapping[str, Any]) -> Any:
    request_id = message.get("id")
    return request_id if isinstance(request_id, str | int) and not isinstance(
        request_id, bool) else None


class AppBridge:
    """The host side of one view (see the module docstring). ``host`` is a
    :class:`~mcpkit.host.Host`; ``server`` the name of the server whose tool ``tool`` has
    the view; ``arguments`` the tool's input. ``confirm(name, arguments) -> bool`` is asked
    before a possibly destructive call (none given: such calls are declined);
    ``open_link(url) -> bool`` before a link is opened (none given: declined)."""

    def __init__(self, host: Any, server: str, tool: str,
                 arguments: Mapping[str, Any] | None = None, *, language: str = "en",
                 theme: str = "light", max_height: int = 600,
                 confirm: Callable[[str, dict[str, Any]], bool] | None = None,
                 open_link: Callable[[str], bool] | None = None) -> None:
        self.host, self.server, self.tool = host, server, tool
        self.arguments = dict(arguments or {})
        self.language, self.theme, self.max_height = language, theme, max_height
        self.confirm, self.open_link = confirm, open_link
        self.view: View | None = None
        self.initialized = False
        self.app_capabilities: dict[str, Any] = {}
        self.size: tuple[float, float] | None = None
        self.torn_down = False
        self.traffic: list[tuple[str, Any]] = []  # ("to view" | "from view", message)
        self.audit: list[dict[str, Any]] = []
        self.log: list[dict[str, Any]] = []
        self.messages: list[dict[str, Any]] = []  # ui/message: for the conversation
        self.model_context: dict[str, Any] | None = None
        self._pending: list[dict[str, Any]] = []
        self._ids = itertools.count(1)
        self._teardown_id: int | None = None

    # -- the view ------------------------------------------------------------------------

    def _definition(self, name: str) -> dict[str, Any] | None:
        for listed in self.host.server_tools(self.server):
            if listed.get("name") == name:
                return listed
        return None

    def open(self) -> View:
        """Read the tool's view (``resources/read`` of its ``ui://`` URI) and work out the
        policy around it. :class:`AppError` when there is no view to show."""
        declared = getattr(self.host.client(self.server), "declared_capabilities", None)
        if not apps.client_supports(declared):
            raise AppError(f"this host did not declare the MCP Apps extension to {self.server!r}"
                           ", so the tools only a view calls are kept from it: start it with "
                           "Host(..., client_options={'capabilities': apps.CAPABILITIES})")
        definition = self._definition(self.tool)
        if definition is None:
            raise AppError(f"server {self.server!r} offers no tool named {self.tool!r}")
        uri = apps.resource_uri(definition)
        if uri is None:
            raise AppError(f"tool {self.tool!r} names no view (_meta.ui.resourceUri)")
        contents = self.host.read_resource(uri, server=self.server).get("contents") or []
        page = next((c for c in contents if isinstance(c, dict) and c.get("uri") == uri),
                    None)
        if page is None or page.get("mimeType") != apps.MIME_TYPE:
            raise AppError(f"{uri} is not an MCP Apps view ({apps.MIME_TYPE})")
        html = page.get("text")
        if not isinstance(html, str):
            raise AppError(f"{uri} has no text: this host reads HTML views as text")
        meta = page.get("_meta")
        declared = meta.get("ui") if isinstance(meta, dict) else None
        declared = declared if isinstance(declared, dict) else {}
        accepted, refused = apps.accepted_csp(declared.get("csp"))
        policy = apps.policy_of(accepted)
        border = declared.get("prefersBorder")
        self.view = View(uri, html, policy, refused,
                         border if isinstance(border, bool) else None, declared, accepted)
        return self.view

    # -- messages from the view ------------------------------------------------------------

    def receive(self, message: Any) -> list[dict[str, Any]]:
        """One message the view posted; the messages to post back to it, in order."""
        self.traffic.append(("from view", message))
        out = self._receive(message)
        self.traffic.extend(("to view", m) for m in out)
        return out

    def _receive(self, message: Any) -> list[dict[str, Any]]:
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            return [jsonrpc.error_response(None, jsonrpc.INVALID_REQUEST,
                                           "not a JSON-RPC 2.0 message")]
        if "method" not in message:  # a response: to our teardown request, or to nothing
            if message.get("id") == self._teardown_id and self._teardown_id is not None:
                self.torn_down = True
            return []
        method = message["method"]  # (null is a method that is not a string: -32600)
        if not isinstance(method, str):
            return [jsonrpc.error_response(_request_id(message), jsonrpc.INVALID_REQUEST,
                                           '"method" must be a string')]
        params = message.get("params", {})
        if not isinstance(params, dict):
            params = None
        if "id" not in message:
            return self._notification(method, params or {})
        request_id = _request_id(message)
        if request_id is None:
            return [jsonrpc.error_response(None, jsonrpc.INVALID_REQUEST,
                                           '"id" must be a string or an integer')]
        if params is None:
            return [jsonrpc.error_response(request_id, jsonrpc.INVALID_PARAMS,
                                           f'{method}: "params" must be an object')]
        if not self.initialized and method not in ("ui/initialize", "ping"):
            return [jsonrpc.error_response(request_id, jsonrpc.INVALID_REQUEST,
                                           f"{method} before ui/initialize and its "
                                           "initialized notification")]
        handler = self._requests.get(method)
        if handler is None:
            return [jsonrpc.error_response(request_id, jsonrpc.METHOD_NOT_FOUND,
                                           f"this host does not handle {method}")]
        try:
            result = handler(self, params)
        except _Refusal as refusal:
            return [jsonrpc.error_response(request_id, refusal.code, refusal.message,
                                           refusal.data)]
        return [jsonrpc.result_response(request_id, result)]

    def _notification(self, method: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        if method == "ui/notifications/initialized":
            if self.initialized:
                return []
            self.initialized = True
            pending, self._pending = self._pending, []
            return pending
        if method == "ui/notifications/size-changed":
            width, height = params.get("width"), params.get("height")
            if all(isinstance(v, int | float) and not isinstance(v, bool) and v >= 0
                   for v in (width, height)):
                self.size = (width, height)
        elif method == "notifications/message":
            self.log.append({"level": params.get("level"), "data": params.get("data")})
        return []  # notifications are never answered; unknown ones are ignored

    # -- requests from the view --------------------------------------------------------------

    def _initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        capabilities = params.get("appCapabilities")
        self.app_capabilities = capabilities if isinstance(capabilities, dict) else {}
        definition = self._definition(self.tool) or {"name": self.tool}
        context: dict[str, Any] = {
            "toolInfo": {"tool": definition},
            "theme": self.theme,
            "displayMode": "inline",
            "availableDisplayModes": ["inline"],
            "containerDimensions": {"maxHeight": self.max_height},
            "locale": LOCALES.get(self.language, self.language),
            "platform": "web",
            "userAgent": f"{HOST_INFO['name']}/{HOST_INFO['version']}",
        }
        accepted = self.view.accepted if self.view is not None else {}
        return {
            "protocolVersion": apps.APPS_VERSION,
            "hostInfo": dict(HOST_INFO),
            "hostCapabilities": {"openLinks": {}, "serverTools": {}, "serverResources": {},
                                 "logging": {},
                                 "sandbox": {"permissions": {}, "csp": accepted}},
            "hostContext": context,
        }

    def _tools_call(self, params: dict[str, Any]) -> dict[str, Any]:
        name, arguments = params.get("name"), params.get("arguments", {})
        entry: dict[str, Any] = {"tool": name, "arguments": arguments, "from": "view"}
        self.audit.append(entry)
        if not isinstance(name, str) or not isinstance(arguments, dict):
            entry["outcome"] = "invalid"
            raise _Refusal(jsonrpc.INVALID_PARAMS,
                           'tools/call needs a string "name" and an object "arguments"')
        definition = self._definition(name)
        if definition is not None and apps.app_visible(definition) and \
                needs_confirmation(definition) and not (
                    self.confirm is not None and self.confirm(name, dict(arguments))):
            entry["outcome"] = "declined"
            raise _Refusal(REFUSED, f"the user declined the call to {name}")
        try:
            result = self.host.call_tool_from_app(self.server, name, arguments)
        except UnknownName as exc:
            entry["outcome"] = "unknown"
            raise _Refusal(jsonrpc.INVALID_PARAMS, f"Unknown tool: {name}",
                           {"name": name}) from exc
        except HostError as exc:
            entry["outcome"] = "refused"
            raise _Refusal(REFUSED, str(exc)) from exc
        except ServerError as exc:
            entry["outcome"] = "protocol-error"
            raise _Refusal(exc.code, exc.message, exc.data) from exc
        except SessionError as exc:
            entry["outcome"] = "protocol-error"
            raise _Refusal(jsonrpc.INTERNAL_ERROR, str(exc)) from exc
        entry["outcome"] = "tool-error" if result.get("isError") is True else "ok"
        return result

    def _resources_read(self, params: dict[str, Any]) -> dict[str, Any]:
        uri = params.get("uri")
        if not isinstance(uri, str):
            raise _Refusal(jsonrpc.INVALID_PARAMS, 'resources/read needs a string "uri"')
        try:
            return self.host.read_resource(uri, server=self.server)
        except ServerError as exc:
            raise _Refusal(exc.code, exc.message, exc.data) from exc
        except (SessionError, HostError) as exc:
            raise _Refusal(REFUSED, str(exc)) from exc

    def _message(self, params: dict[str, Any]) -> dict[str, Any]:
        content = params.get("content")
        blocks = content if isinstance(content, list) else [content]
        if params.get("role") != "user" or not blocks or not all(
                isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
                for b in blocks):
            raise _Refusal(jsonrpc.INVALID_PARAMS, 'ui/message takes role "user" and text '
                           "content")
        self.messages.append({"role": "user", "content": blocks})
        return {}

    def _update_model_context(self, params: dict[str, Any]) -> dict[str, Any]:
        content, structured = params.get("content"), params.get("structuredContent")
        if (content is not None and not isinstance(content, list)) or (
                structured is not None and not isinstance(structured, dict)):
            raise _Refusal(jsonrpc.INVALID_PARAMS, "ui/update-model-context takes a content "
                           "list and/or a structuredContent object")
        self.model_context = {k: v for k, v in (("content", content),
                                                ("structuredContent", structured))
                              if v is not None}
        return {}

    def _open_link(self, params: dict[str, Any]) -> dict[str, Any]:
        url = params.get("url")
        if not _web_link(url):
            raise _Refusal(jsonrpc.INVALID_PARAMS, "Invalid URL: only http and https links "
                           "with a host open")
        if self.open_link is None or not self.open_link(url):
            raise _Refusal(REFUSED, "Link opening denied by user")
        return {}

    def _display_mode(self, params: dict[str, Any]) -> dict[str, Any]:
        return {"mode": "inline"}  # the only mode a notebook cell offers

    _requests: dict[str, Callable[[AppBridge, dict[str, Any]], dict[str, Any]]] = {
        "ui/initialize": _initialize,
        "ping": lambda self, params: {},
        "tools/call": _tools_call,
        "resources/read": _resources_read,
        "ui/message": _message,
        "ui/update-model-context": _update_model_context,
        "ui/open-link": _open_link,
        "ui/request-display-mode": _display_mode,
    }

    # -- from the host to the view -----------------------------------------------------------

    def _to_view(self, message: dict[str, Any]) -> list[dict[str, Any]]:
        """Send now if the view is initialized, else keep until it is."""
        if self.initialized:
            self.traffic.append(("to view", message))
            return [message]
        self._pending.append(message)
        return []

    def deliver_result(self, result: Mapping[str, Any]) -> list[dict[str, Any]]:
        """The tool's input, then its result: what the view is told once it is ready."""
        out = self._to_view(jsonrpc.notification("ui/notifications/tool-input",
                                                 {"arguments": self.arguments}))
        out += self._to_view(jsonrpc.notification("ui/notifications/tool-result",
                                                  dict(result)))
        return out

    def deliver_cancelled(self, reason: str) -> list[dict[str, Any]]:
        return self._to_view(jsonrpc.notification("ui/notifications/tool-cancelled",
                                                  {"reason": reason}))

    def teardown(self) -> dict[str, Any]:
        """The request that tells the view it is about to go (answered before it goes).
        Without a ``reason``: the 2026-01-26 text allows one, but the extension's schema
        (ext-apps 2.0.4) admits empty params only, and a strict view would refuse it."""
        self._teardown_id = 1_000_000 + next(self._ids)
        message = jsonrpc.request(self._teardown_id, "ui/resource-teardown", {})
        self.traffic.append(("to view", message))
        return message


def _web_link(url: Any) -> bool:
    """An http(s) URL with a host name (``http://user@`` has a netloc but no host; a URL
    ``urlsplit`` cannot parse, such as ``http://[``, is no link)."""
    if not isinstance(url, str):
        return False
    try:
        parts = urlsplit(url)
        return parts.scheme in ("http", "https") and bool(parts.hostname)
    except ValueError:
        return False


class _Refusal(Exception):
    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code, self.message, self.data = code, message, data
