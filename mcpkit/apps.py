"""MCP Apps (the extension ``io.modelcontextprotocol/ui``, SEP-1865, stable 2026-01-26): a
tool that comes with a view, an HTML page the host shows in a sandboxed iframe.

    clock = Server("clock")
    apps.add_view(clock, "ui://clock/face", FACE_HTML, csp={"connectDomains": []})

    @apps.tool(clock, "ui://clock/face")                   # the model calls it; the view shows it
    def now(zone: str = "UTC") -> str: ...

    @apps.tool(clock, "ui://clock/face", visibility=["app"])  # only the view calls it
    def tick() -> str: ...

Theory of operation
-------------------
The server side is three facts on the wire. A ``ui://`` resource whose contents are the
view's HTML, with ``mimeType`` ``text/html;profile=mcp-app`` and the view's needs in the
contents' ``_meta.ui`` (CSP domains, browser permissions, a dedicated domain, a border).
A tool that names the view in ``_meta.ui.resourceUri`` and says who may call it in
``_meta.ui.visibility``: ``"model"`` (the agent), ``"app"`` (the view, through its host),
both by default. And the extension declared in ``capabilities.extensions`` with the MIME
types it serves, in both eras (SEP-1724 lets a 2025 capabilities object carry it). A client
that does not declare the extension is not shown the tools only a view may call: it has no
view to call them from.

The host side here is pure: which tools a model may be offered (:func:`model_visible`),
which a view may call (:func:`app_visible`), and the Content-Security-Policy a host puts on
a view (:func:`content_security_policy`): the spec's restrictive default when the view
declares nothing, the declared origins otherwise, and never an origin it did not declare.
The view's own protocol (``ui/initialize`` and the rest, JSON-RPC over ``postMessage``)
is the notebook host's business (:mod:`mcpkit.widgets`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = [
    "CAPABILITIES",
    "EXTENSION",
    "MIME_TYPE",
    "add_view",
    "app_visible",
    "client_supports",
    "content_security_policy",
    "model_visible",
    "resource_uri",
    "tool",
    "tool_meta",
    "visibility",
]

EXTENSION = "io.modelcontextprotocol/ui"
MIME_TYPE = "text/html;profile=mcp-app"
#: The revision of the view <-> host protocol this module follows.
APPS_VERSION = "2026-01-26"
SETTINGS: dict[str, Any] = {"mimeTypes": [MIME_TYPE]}
#: What a client that shows views declares: ``Client(..., capabilities=apps.CAPABILITIES)``,
#: ``Host(..., client_options={"capabilities": apps.CAPABILITIES})``.
CAPABILITIES: dict[str, Any] = {"extensions": {EXTENSION: SETTINGS}}
VISIBILITY = ("model", "app")
CSP_FIELDS = ("connectDomains", "resourceDomains", "frameDomains", "baseUriDomains")
PERMISSIONS = ("camera", "microphone", "geolocation", "clipboardWrite")

# An origin a view may declare: scheme, host (a leading "*." for any subdomain), port; an
# optional path. Nothing that could end a directive or widen it (";", quotes, "*", spaces,
# keywords such as 'unsafe-eval', bare schemes such as "data:").
_ORIGIN = re.compile(r"(https?|wss?)://(\*\.)?[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*"
                     r"(:(\d{1,5}|\*))?(/[A-Za-z0-9._~%/-]*)?")


# -- negotiation ---------------------------------------------------------------------------


def client_supports(capabilities: Mapping[str, Any] | None) -> bool:
    """Whether a client's capabilities declare the extension with HTML views."""
    extensions = (capabilities or {}).get("extensions")
    settings = extensions.get(EXTENSION) if isinstance(extensions, Mapping) else None
    if not isinstance(settings, Mapping):
        return False
    mime_types = settings.get("mimeTypes")
    return isinstance(mime_types, list) and MIME_TYPE in mime_types


def declare(server: Any) -> None:
    """Declare the extension in ``server``'s capabilities (any mcpkit Server or Registry)."""
    server.extensions[EXTENSION] = {"mimeTypes": [MIME_TYPE]}


# -- serving views -------------------------------------------------------------------------


def _strings(value: Any, what: str) -> list[str]:
    if not isinstance(value, Sequence) or isinstance(value, str) or not all(
            isinstance(v, str) for v in value):
        raise ValueError(f"{what} must be a list of strings")
    return list(value)


def view_meta(*, csp: Mapping[str, Sequence[str]] | None = None,
              permissions: Sequence[str] | Mapping[str, Any] | None = None,
              domain: str | None = None, prefers_border: bool | None = None) -> dict[str, Any]:
    """A view's ``_meta.ui``: checked here, so a typo fails at registration, not in a host."""
    ui: dict[str, Any] = {}
    if csp is not None:
        unknown = set(csp) - set(CSP_FIELDS)
        if unknown:
            raise ValueError(f"unknown csp field(s) {sorted(unknown)}: use {', '.join(CSP_FIELDS)}")
        checked = {}
        for field, origins in csp.items():
            for origin in _strings(origins, f"csp[{field!r}]"):
                if not _ORIGIN.fullmatch(origin):
                    raise ValueError(f"csp[{field!r}]: {origin!r} is not an origin such as "
                                     "'https://api.example.com' or 'https://*.example.com'")
            checked[field] = list(origins)
        ui["csp"] = checked
    if permissions is not None:
        names = list(permissions)
        unknown = set(names) - set(PERMISSIONS)
        if unknown:
            raise ValueError(f"unknown permission(s) {sorted(unknown)}: use "
                             f"{', '.join(PERMISSIONS)}")
        ui["permissions"] = {name: {} for name in names}
    if domain is not None:
        ui["domain"] = domain
    if prefers_border is not None:
        ui["prefersBorder"] = bool(prefers_border)
    return ui


def add_view(server: Any, uri: str, html: str | Callable[[], str], *,
             name: str | None = None, title: str | None = None, description: str = "",
             csp: Mapping[str, Sequence[str]] | None = None,
             permissions: Sequence[str] | Mapping[str, Any] | None = None,
             domain: str | None = None, prefers_border: bool | None = None) -> None:
    """Serve a view: the ``ui://`` resource ``uri`` whose contents are ``html`` (a string,
    or a function that returns one on each read), and declare the extension."""
    if not isinstance(uri, str) or not uri.startswith("ui://") or len(uri) <= len("ui://"):
        raise ValueError(f"a view's URI must start with ui:// (got {uri!r})")
    ui = view_meta(csp=csp, permissions=permissions, domain=domain,
                   prefers_border=prefers_border)

    def read() -> list[dict[str, Any]]:
        text = html() if callable(html) else html
        contents: dict[str, Any] = {"uri": uri, "mimeType": MIME_TYPE, "text": text}
        if ui:
            contents["_meta"] = {"ui": ui}
        return [contents]

    read.__doc__ = description
    # _meta.ui on the listed resource too: a host may review a view's needs when it
    # connects, before any tool is called (the official Python SDK does the same).
    server.resource(uri, name=name or uri[len("ui://"):].replace("/", "_"), title=title,
                    description=description, mime_type=MIME_TYPE,
                    meta={"ui": ui} if ui else None)(read)
    declare(server)


def tool_meta(view: str | None, visibility: Sequence[str] = VISIBILITY) -> dict[str, Any]:
    """A tool's ``_meta`` for MCP Apps: the view that shows its results, who may call it."""
    who = _strings(visibility, "visibility")
    if not who or set(who) - set(VISIBILITY):
        raise ValueError(f"visibility must list one or both of {VISIBILITY}, not {who!r}")
    ui: dict[str, Any] = {}
    if view is not None:
        if not isinstance(view, str) or not view.startswith("ui://"):
            raise ValueError(f"a view's URI must start with ui:// (got {view!r})")
        ui["resourceUri"] = view
    ui["visibility"] = list(dict.fromkeys(who))
    return {"ui": ui}


def tool(server: Any, view: str | None, *, visibility: Sequence[str] = VISIBILITY,
         **options: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register a tool (``server.tool(**options)``) that comes with ``view``. A tool only the
    view may call (``visibility=["app"]``) is listed only to clients that declare the
    extension."""
    meta = tool_meta(view, visibility)
    listed_if = None if "model" in meta["ui"]["visibility"] else client_supports
    return server.tool(meta={**options.pop("meta", {}), **meta}, listed_if=listed_if,
                       **options)


# -- the host's rules ----------------------------------------------------------------------


def _ui(tool: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = tool.get("_meta")
    ui = meta.get("ui") if isinstance(meta, Mapping) else None
    return ui if isinstance(ui, Mapping) else {}


def resource_uri(tool: Mapping[str, Any]) -> str | None:
    """The view a tool definition names (``_meta.ui.resourceUri``, or the deprecated flat
    ``_meta["ui/resourceUri"]``), if it is a ``ui://`` URI."""
    uri = _ui(tool).get("resourceUri")
    if uri is None:
        meta = tool.get("_meta")
        uri = meta.get("ui/resourceUri") if isinstance(meta, Mapping) else None
    return uri if isinstance(uri, str) and uri.startswith("ui://") else None


def visibility(tool: Mapping[str, Any]) -> frozenset[str]:
    """Who may call a tool: ``{"model", "app"}`` unless its ``_meta.ui`` says otherwise.
    A malformed list (not a list, unknown words only) grants nothing: a host that cannot
    read the rule must not guess it in the tool's favour."""
    who = _ui(tool).get("visibility")
    if who is None:
        return frozenset(VISIBILITY)
    if not isinstance(who, list):
        return frozenset()
    return frozenset(w for w in who if w in VISIBILITY)


def model_visible(tool: Mapping[str, Any]) -> bool:
    """Whether a host may offer the tool to a model (its visibility includes ``"model"``)."""
    return "model" in visibility(tool)


def app_visible(tool: Mapping[str, Any]) -> bool:
    """Whether a view may call the tool, through its host (visibility includes ``"app"``)."""
    return "app" in visibility(tool)


def accepted_csp(csp: Mapping[str, Any] | None) -> tuple[dict[str, list[str]], list[str]]:
    """The origins of a view's declared ``csp`` that a host accepts (field -> origins, only
    fields with some), and the entries it refuses (anything that is not a plain origin)."""
    accepted: dict[str, list[str]] = {}
    refused: list[str] = []
    for field in CSP_FIELDS:
        declared = csp.get(field) if isinstance(csp, Mapping) else None
        if declared is None:
            continue
        if not isinstance(declared, list):
            refused.append(f"{field}: {declared!r}")
            continue
        for origin in declared:
            if isinstance(origin, str) and _ORIGIN.fullmatch(origin):
                accepted.setdefault(field, []).append(origin)
            else:
                refused.append(f"{field}: {origin!r}")
    return accepted, refused


def content_security_policy(csp: Mapping[str, Any] | None) -> tuple[str, list[str]]:
    """The Content-Security-Policy a host puts on a view that declared ``csp`` (its
    ``_meta.ui.csp``), and the declared entries it refused. Nothing is allowed that was
    not declared; an entry that is not a plain origin is refused, not passed through."""
    accepted, refused = accepted_csp(csp)
    return policy_of(accepted), refused


def policy_of(accepted: Mapping[str, list[str]]) -> str:
    """The policy for origins already accepted (:func:`accepted_csp`): the spec's
    restrictive default, with those origins and nothing else added."""

    def origins(field: str) -> str:
        return " ".join(accepted.get(field, []))

    resource = origins("resourceDomains")

    def join(*parts: str) -> str:
        return " ".join(p for p in parts if p)

    directives = [
        "default-src 'none'",
        join("script-src 'self' 'unsafe-inline'", resource),
        join("style-src 'self' 'unsafe-inline'", resource),
        join("img-src 'self' data:", resource),
        join("font-src 'self'", resource),
        join("media-src 'self' data:", resource),
        join("connect-src", origins("connectDomains") or "'none'"),
        join("frame-src", origins("frameDomains") or "'none'"),
        "object-src 'none'",
        join("base-uri", origins("baseUriDomains") or "'self'"),
    ]
    return "; ".join(directives)
