"""Checks for lab 11 (MCP Apps): the server side of an app, and the host's router for its view.

The references are mcpkit's own. Part 1 (what a server says: the client's declaration read,
a tool's ``_meta.ui``, a view's ``resources/read`` contents) is compared with
:mod:`mcpkit.apps`. Part 2 (a whole app server) is read by real mcpkit clients, over the
in-memory transport, in both eras, by clients that do and do not show views, beside the
same server built with :mod:`mcpkit.apps`. Part 3 (the host's router for a view's
messages) is compared with :class:`mcpkit.app_bridge.AppBridge`, limited to the methods the
lab asks for, on message sequences run against fresh in-process servers behind a real
:class:`~mcpkit.host.Host`; what reached the servers, the audit log, the conversation and
the model's context are compared after every sequence.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from .. import apps
from ..app_bridge import AppBridge
from ..client import Client
from ..host import Host
from ..jsonrpc import JsonRpcError
from ..server import Server
from .core import (
    CaseResult,
    Gen,
    Seen,
    Step,
    _,
    _first_difference,
    attempt,
    case,
    differential,
    drop_each,
    quiet,
    references_for,
    run_checks,
    sequence_case,
)

#: What the exercises ask for is in these modules.
OFF_LIMITS: dict[str, set[str]] = {
    "mcpkit.apps": {"client_supports", "tool_meta", "view_meta", "add_view", "tool",
                    "declare", "visibility", "app_visible", "model_visible", "resource_uri",
                    "accepted_csp", "content_security_policy", "policy_of", "_ui",
                    "_strings"},
    "mcpkit.app_bridge": {"AppBridge", "View", "_request_id", "_Refusal"},
    "mcpkit.app_widget": {"AppView"},
}

BOARD = "ui://counter/board"
CSP = {"resourceDomains": ["https://cdn.example.com"]}
ERAS = ("2025-11-25", "2026-07-28")


# --------------------------------------------------------------------------- part 1


def reference_view_contents(uri: Any, html: Any, csp: Any = None,
                            prefers_border: Any = None) -> dict[str, Any]:
    if not isinstance(uri, str) or not uri.startswith("ui://") or len(uri) <= len("ui://"):
        raise ValueError(f"a view's URI must start with ui:// (got {uri!r})")
    ui = apps.view_meta(csp=csp, prefers_border=prefers_border)
    contents: dict[str, Any] = {"uri": uri, "mimeType": apps.MIME_TYPE, "text": html}
    if ui:
        contents["_meta"] = {"ui": ui}
    return contents


_PART1: dict[str, Callable[..., Any]] = {
    "supports_apps": apps.client_supports,
    "app_tool_meta": apps.tool_meta,
    "view_contents": reference_view_contents,
}

_EXT = apps.EXTENSION
_CAPABILITIES: list[Any] = [
    None, {}, apps.CAPABILITIES, {"extensions": {}}, {"extensions": {_EXT: {}}},
    {"extensions": {_EXT: {"mimeTypes": ["text/html"]}}},
    {"extensions": {_EXT: {"mimeTypes": ["text/html", apps.MIME_TYPE]}}},
    {"extensions": {_EXT: {"mimeTypes": apps.MIME_TYPE}}},
    {"extensions": {_EXT: True}}, {"extensions": [_EXT]},
    {"extensions": {"io.example/other": {"mimeTypes": [apps.MIME_TYPE]}}},
    {"roots": {}, "extensions": {_EXT: {"mimeTypes": [apps.MIME_TYPE]}, "x/y": {}}},
    {"experimental": {_EXT: {"mimeTypes": [apps.MIME_TYPE]}}},
    {"extensions": {_EXT: {"mimeTypes": ["text/html;profile=mcp-app "]}}},
]
_VIEWS: list[Any] = [None, BOARD, "ui://a", "ui://poll/board?v=2", "https://x.example/v",
                     "ui:/bad", "UI://x", "ui://", "https://x.example/?v=ui://a", " ui://a", 7,
                     ["ui://a"]]
_VISIBILITIES: list[Any] = [["model", "app"], ["app"], ["model"], ["app", "model"],
                            ["app", "app"], ("app",), [], "app", ["App"], ["app", "user"],
                            ["model", None], "model,app", ("model", "app", "model"),
                            {"app"}, {"model": True}, None, [["app"]]]
_ORIGINS = ["https://api.example.com", "https://*.example.com", "wss://live.example.com:8443",
            "http://localhost:3000", "https://cdn.example.com/assets/", "http://127.0.0.1:*",
            "*", "https://a.example; script-src *", "'unsafe-eval'", "data:", "ftp://x.example",
            "https://", " https://a.example", "https://a.example'", "example.com",
            "https://*", "javascript:alert(1)", 5, None, ["https://api.example.com"]]
_FIELDS = [*apps.CSP_FIELDS, "scriptDomains", "connect_domains", "ConnectDomains",
           "resourcedomains"]
_HTML = ["<p>hi</p>", "", "<!doctype html><b>café ☕</b>", "line\nbreak"]


def _csp(rng: Gen) -> Any:
    roll = rng.random()
    if roll < 0.15:
        return None
    if roll < 0.2:
        return {}
    csp: dict[str, Any] = {}
    for field in rng.sample(_FIELDS[:4] if rng.random() < 0.7 else _FIELDS, rng.randint(1, 3)):
        good = [o for o in _ORIGINS[:6]]
        pool = good if rng.random() < 0.6 else _ORIGINS
        origins = rng.sample(pool, rng.randint(0, 3))
        shape = rng.random()
        # Mostly a list; else a tuple, one origin on its own (a string, not a list), an
        # empty string, or a mapping: only a list or a tuple of origins is a value.
        csp[field] = (tuple(origins) if shape < 0.1 else (origins[0] if origins and shape < 0.2
                                                           else "" if shape < 0.23
                                                           else {o for o in origins[:1]
                                                                 if not isinstance(o, list)}
                                                           if shape < 0.26 else origins))
    return csp


@dataclass(frozen=True)
class Part1Case:
    calls: tuple[tuple[str, str], ...]  # (function, JSON of its arguments)


def _encode(args: list[Any]) -> str:
    # Tuples survive as {"(tuple)": [...]} so that a tuple is still handed over as one (and
    # sets, of one item at most so that they show the same in every process, likewise).
    def enc(v: Any) -> Any:
        if isinstance(v, tuple):
            return {"(tuple)": [enc(x) for x in v]}
        if isinstance(v, set):
            return {"(set)": [enc(x) for x in v]}
        if isinstance(v, list):
            return [enc(x) for x in v]
        if isinstance(v, dict):
            return {k: enc(x) for k, x in v.items()}
        return v
    return json.dumps(enc(args), ensure_ascii=False)


def _decode(raw: str) -> list[Any]:
    def dec(v: Any) -> Any:
        if isinstance(v, dict):
            if list(v) == ["(tuple)"]:
                return tuple(dec(x) for x in v["(tuple)"])
            if list(v) == ["(set)"]:
                return {dec(x) for x in v["(set)"]}
            return {k: dec(x) for k, x in v.items()}
        if isinstance(v, list):
            return [dec(x) for x in v]
        return v
    return dec(json.loads(raw))


def _show_args(raw: str) -> str:
    return ", ".join(repr(a) for a in _decode(raw))


def _as_value_error(call: Callable[[], Any]) -> Any:
    """``call()``; a ValueError of a subclass of the learner's own is raised as a plain
    ValueError (the lab asks for a ValueError, and that is one)."""
    try:
        return call()
    except ValueError as exc:
        if type(exc) is ValueError:
            raise
        try:
            text = str(exc)
        except Exception:  # a learner's exception whose __str__ fails
            text = ""
        raise ValueError(text) from exc


def _part1_trial(impl: dict[str, Callable[..., Any]], x: Part1Case) -> list[Step]:
    return [Step(f"{fn}({_show_args(raw)})", attempt(lambda fn=fn, raw=raw: _as_value_error(
        lambda: impl[fn](*_decode(raw))))) for fn, raw in x.calls]


def _part1_case(rng: Gen) -> Part1Case:
    calls = []
    for _i in range(rng.randint(1, 5)):
        fn = rng.choice(list(_PART1))
        if fn == "supports_apps":
            args = [rng.choice(_CAPABILITIES)]
        elif fn == "app_tool_meta":
            # Now and then without a visibility: its default is ("model", "app").
            args = [rng.choice(_VIEWS)] + ([rng.choice(_VISIBILITIES)] if rng.random() < 0.8
                                           else [])
        else:
            uri = rng.choice(_VIEWS[1:] if rng.random() < 0.85 else _VIEWS)
            args = [uri, rng.choice(_HTML), _csp(rng), rng.choice([None, None, True, False])]
        calls.append((fn, _encode(args)))
    return Part1Case(tuple(calls))


def _label_at(expected: Step | None, got: Step | None) -> str:
    step = expected or got
    return step.label if step else ""


def _part1_hint(x: Part1Case, expected: Step | None, got: Step | None) -> str | None:
    label = _label_at(expected, got)
    if label.startswith("supports_apps"):
        return _("True only when capabilities['extensions'][EXTENSION] is an object whose "
                 "'mimeTypes' is a list holding MIME_TYPE exactly",
                 "True solo si capabilities['extensions'][EXTENSION] es un objeto cuyo "
                 "'mimeTypes' es una lista que contiene MIME_TYPE tal cual")
    if label.startswith("app_tool_meta"):
        return _("visibility: a list (or tuple) of 'model'/'app', at least one, repeats "
                 "dropped in order; a view must start with ui://; anything else: ValueError",
                 "visibility: una lista (o tupla) de 'model'/'app', al menos un valor, sin "
                 "repetidos y conservando el orden de la primera aparición; una vista debe "
                 "empezar por ui://; cualquier otra cosa: ValueError")
    return _("csp: only the four CSP_FIELDS, each a list (or tuple) of strings that "
             "ORIGIN.fullmatch accepts, else ValueError; _meta.ui only when there is "
             "something to say",
             "csp: solo los cuatro CSP_FIELDS, cada uno una lista (o tupla) de cadenas que "
             "ORIGIN.fullmatch acepta; si no, ValueError; _meta.ui solo cuando hay algo que "
             "decir")


def check_what_a_server_says(supports_apps: Callable, app_tool_meta: Callable,
                             view_contents: Callable) -> None:
    """Part 1: the client's declaration, a tool's _meta.ui, a view's contents."""
    learner = {"supports_apps": supports_apps, "app_tool_meta": app_tool_meta,
               "view_contents": view_contents}

    def one(en: str, es: str, fn: str, args: list[Any], hint_en: str, hint_es: str) -> Any:
        x = Part1Case(((fn, _encode(args)),))
        (want,) = _part1_trial(_PART1, x)
        return case(_(en, es), lambda: _part1_trial(learner, x)[0].seen, want.seen,
                    given=want.label, hint=_(hint_en, hint_es))

    results = [
        one("a client that shows views", "un cliente que muestra vistas", "supports_apps",
            [apps.CAPABILITIES], "the extension, with MIME_TYPE among its mimeTypes",
            "la extensión, con MIME_TYPE entre sus mimeTypes"),
        one("a client that declares nothing", "un cliente que no declara nada",
            "supports_apps", [None], "no capabilities: False, not an error",
            "sin capacidades (None): False, no un error"),
        one("the extension without the MIME type", "la extensión sin el tipo MIME",
            "supports_apps", [{"extensions": {_EXT: {"mimeTypes": ["text/html"]}}}],
            "a client that shows views says which: 'text/html' alone is not MIME_TYPE",
            "un cliente que muestra vistas dice cuáles: 'text/html' sin más no es MIME_TYPE"),
        one("mimeTypes that is not a list", "mimeTypes que no es una lista", "supports_apps",
            [{"extensions": {_EXT: {"mimeTypes": apps.MIME_TYPE}}}],
            "a string that holds MIME_TYPE is not a list of MIME types: False",
            "una cadena que contiene MIME_TYPE no es una lista de tipos MIME: False"),
        one("extensions that are not an object", "extensions que no es un objeto",
            "supports_apps", [{"extensions": [_EXT]}],
            "check each level's type before you look inside it",
            "comprueba el tipo de cada nivel antes de mirar dentro"),
        one("the extension's settings are not an object",
            "los ajustes de la extensión no son un objeto", "supports_apps",
            [{"extensions": {_EXT: True}}],
            "capabilities['extensions'][EXTENSION] must be a dict before you read mimeTypes: "
            "False, never an exception",
            "capabilities['extensions'][EXTENSION] debe ser un dict antes de leer mimeTypes: "
            "False, nunca una excepción"),
        one("a MIME type spelt almost right", "un tipo MIME casi bien escrito",
            "supports_apps", [{"extensions": {_EXT: {"mimeTypes": [
                "Text/HTML;profile=mcp-app", "text/html; profile=mcp-app",
                "text/html;profile=mcp-app "]}}}],
            "MIME_TYPE exactly, as the extension writes it: no other case, no spaces",
            "MIME_TYPE tal cual, como lo escribe la extensión: sin cambiar mayúsculas ni "
            "añadir espacios"),
        one("a tool the model and the view may call", "una herramienta que pueden llamar el "
            "modelo y la vista", "app_tool_meta", [BOARD, ["model", "app"]],
            "{'ui': {'resourceUri': view, 'visibility': [...]}}",
            "{'ui': {'resourceUri': view, 'visibility': [...]}}"),
        one("a tool only the view calls", "una herramienta que solo la vista puede llamar",
            "app_tool_meta", [BOARD, ["app"]], "visibility ['app']",
            "visibility ['app']"),
        one("a visibility given twice", "una visibilidad repetida", "app_tool_meta",
            [BOARD, ["app", "app", "model"]], "drop repeats, keep the first order",
            "quita los repetidos y conserva el orden de la primera aparición"),
        one("visibility as a string", "visibility como cadena", "app_tool_meta",
            [BOARD, "app"], "a string is not a list of words (it would be 'a', 'p', 'p'): "
            "ValueError", "una cadena no es una lista de palabras (serían 'a', 'p', 'p'): "
            "ValueError"),
        one("a visibility word in another case", "una palabra de visibility con otras "
            "mayúsculas", "app_tool_meta", [BOARD, ["App"]],
            "only 'model' and 'app', exactly: ValueError",
            "solo 'model' y 'app', tal cual: ValueError"),
        one("an empty visibility", "una visibilidad vacía", "app_tool_meta", [BOARD, []],
            "nobody could call the tool: ValueError",
            "nadie podría llamar a la herramienta: ValueError"),
        one("a view that is not ui://", "una vista que no es ui://", "app_tool_meta",
            ["https://x.example/v", ["app"]], "views are ui:// resources: ValueError",
            "las vistas son recursos ui://: ValueError"),
        one("a URI with ui:// inside, not at its start",
            "un URI con ui:// dentro, no al principio", "app_tool_meta",
            ["https://x.example/?v=ui://a", ["app"]],
            "the URI must start with ui://, not just contain it: ValueError",
            "el URI debe empezar por ui://, no solo contenerlo: ValueError"),
        one("a tool without a view", "una herramienta sin vista", "app_tool_meta",
            [None, ["model"]], "no view: no resourceUri, the visibility still",
            "sin vista: sin resourceUri, pero con visibility"),
        one("the default visibility", "la visibilidad por defecto", "app_tool_meta", [BOARD],
            "without a visibility argument, the tool is for both: ['model', 'app']",
            "sin el argumento visibility, la herramienta es para los dos: ['model', 'app']"),
        one("visibility as a set", "visibility como conjunto", "app_tool_meta",
            [BOARD, {"app"}], "only a list or a tuple (a set has no order): ValueError",
            "solo una lista o una tupla (un conjunto no tiene orden): ValueError"),
        one("a view that is not a string", "una vista que no es una cadena", "app_tool_meta",
            [7, ["app"]], "a view is None or a string that starts with ui://; anything else: "
            "ValueError (not another error)", "una vista es None o una cadena que empieza "
            "por ui://; cualquier otra cosa: ValueError (no otro error)"),
        one("a view that declares nothing", "una vista que no declara nada", "view_contents",
            [BOARD, "<p>hi</p>", None, None],
            "uri, mimeType (with its profile) and text; no _meta when there is nothing in it",
            "uri, mimeType (con su perfil) y text; sin _meta cuando no hay nada en él"),
        one("CSP origins and a border", "orígenes CSP y un borde", "view_contents",
            [BOARD, "<p>hi</p>", {"connectDomains": ["wss://live.example.com:8443",
                                                     "https://api.example.com"],
                                  "resourceDomains": ["https://*.example.com"]}, True],
            "_meta: {'ui': {'csp': {...}, 'prefersBorder': True}}",
            "_meta: {'ui': {'csp': {...}, 'prefersBorder': True}}"),
        one("an empty csp is said too", "un csp vacío también se declara", "view_contents",
            [BOARD, "<p>hi</p>", {}, None],
            "csp={} is not None: _meta.ui.csp is {} (a view that needs no origin says so)",
            "csp={} no es None: _meta.ui.csp es {} (una vista que no necesita orígenes lo "
            "dice)"),
        one("prefers_border=False is said too", "prefers_border=False también se declara",
            "view_contents", [BOARD, "", None, False],
            "None means nothing to say; False is something to say",
            "None: no hay nada que decir; False sí es algo que decir"),
        one("a CSP entry that is not an origin", "una entrada CSP que no es un origen",
            "view_contents", [BOARD, "<p>hi</p>",
                              {"connectDomains": ["https://a.example; script-src *"]}, None],
            "an entry that ORIGIN.fullmatch refuses could widen the policy: ValueError",
            "una entrada que ORIGIN.fullmatch rechaza podría ampliar la política: ValueError"),
        one("a wildcard origin", "un origen comodín", "view_contents",
            [BOARD, "<p>hi</p>", {"resourceDomains": ["*"]}, None],
            "'*' is not an origin: ValueError", "'*' no es un origen: ValueError"),
        one("a scheme with no host name", "un esquema sin nombre de host", "view_contents",
            [BOARD, "<p>hi</p>", {"resourceDomains": ["https://*"]}, None],
            "'https://*' allows every host name: not an origin ORIGIN.fullmatch accepts, "
            "ValueError", "'https://*' permite cualquier nombre de host: no es un origen que "
            "ORIGIN.fullmatch acepte, ValueError"),
        one("an unknown CSP field", "un campo CSP desconocido", "view_contents",
            [BOARD, "<p>hi</p>", {"scriptDomains": ["https://api.example.com"]}, None],
            "only the four CSP_FIELDS: ValueError",
            "solo los cuatro CSP_FIELDS: ValueError"),
        one("a CSP field spelt another way", "un campo CSP escrito de otra forma",
            "view_contents",
            [BOARD, "<p>hi</p>", {"ConnectDomains": ["https://api.example.com"]}, None],
            "the four CSP_FIELDS exactly as written (case included): ValueError",
            "los cuatro CSP_FIELDS tal como se escriben (mayúsculas incluidas): ValueError"),
        one("a CSP entry that is not a string", "una entrada CSP que no es una cadena",
            "view_contents",
            [BOARD, "<p>hi</p>", {"connectDomains": ["https://api.example.com", 5]}, None],
            "every entry must be a string ORIGIN.fullmatch accepts: ValueError (check the "
            "type before you match it)", "cada entrada debe ser una cadena que "
            "ORIGIN.fullmatch acepte: ValueError (comprueba el tipo antes de buscar la "
            "coincidencia)"),
        one("a CSP value that is an empty string", "un valor CSP que es una cadena vacía",
            "view_contents", [BOARD, "<p>hi</p>", {"frameDomains": ""}, None],
            "a string is not a list of origins, not even an empty one: ValueError",
            "una cadena no es una lista de orígenes, ni siquiera una vacía: ValueError"),
        one("a view URI that is not ui://", "un URI de vista que no es ui://",
            "view_contents", ["https://x.example/v", "<p>hi</p>", None, None],
            "ValueError", "ValueError"),
        one("ui:// with nothing after it", "ui:// sin nada después", "view_contents",
            ["ui://", "<p>hi</p>", None, None],
            "the bare scheme names no view: ValueError",
            "el esquema por sí solo no nombra ninguna vista: ValueError"),
        one("a view URI that is not a string", "un URI de vista que no es una cadena",
            "view_contents", [None, "<p>hi</p>", None, None],
            "uri must be a string that starts with ui://: ValueError (not another error)",
            "uri debe ser una cadena que empiece por ui://: ValueError (no otro error)"),
        differential(
            _("generated declarations, tools and views, against mcpkit.apps",
              "declaraciones, herramientas y vistas generadas, frente a mcpkit.apps"),
            key="lab11/says", generate=_part1_case, trial=_part1_trial,
            reference=_PART1, learner=learner,
            show=lambda x: "; ".join(f"{fn}({_show_args(raw)})" for fn, raw in x.calls),
            shrink=lambda x: (Part1Case(tuple(c)) for c in drop_each(list(x.calls)) if c),
            hint=_part1_hint, cases=200),
    ]
    run_checks(results)


# --------------------------------------------------------------------------- part 2


def counter_tools() -> tuple[Callable[..., Any], Callable[..., Any]]:
    """The counter's two tools, with a count of their own (the lab's setup cell has the
    same function)."""
    count = {"value": 0}

    def counter_show() -> dict:
        """The counter's value, on its board."""
        return {"value": count["value"]}

    def counter_add(step: int = 1) -> dict:
        """Add step to the counter (the board's button)."""
        count["value"] += step
        return {"value": count["value"]}

    return counter_show, counter_add


def reference_build_server(html: str) -> Server:
    server = Server("counter", "1.0.0")
    counter_show, counter_add = counter_tools()
    apps.add_view(server, BOARD, html, name="board", description="The counter's board.",
                  csp=CSP, prefers_border=True)
    apps.tool(server, BOARD, read_only=True)(counter_show)
    apps.tool(server, BOARD, visibility=["app"], destructive=False)(counter_add)
    return server


def _clean(result: Any) -> Any:
    """A result as the era-independent part of it (2026-07-28 adds cache hints and the
    server's info in _meta; the server's own answer is what is compared)."""
    if isinstance(result, dict):
        return {k: v for k, v in result.items()
                if k not in ("ttlMs", "cacheScope", "resultType", "_meta")}
    return result


def _by_name(items: Any) -> Any:
    if isinstance(items, list) and all(isinstance(i, dict) for i in items):
        return sorted(items, key=lambda i: (str(i.get("name")), str(i.get("uri"))))
    return items


@dataclass(frozen=True)
class ServerCase:
    era: str
    capabilities: str  # JSON
    html: str
    steps: tuple[int, ...]  # counter_add steps, then counter_show


def _server_trial(build: Callable[[str], Any], x: ServerCase) -> list[Step]:
    server = attempt(lambda: build(x.html), plain=False)
    if isinstance(server, Seen):
        return [Step(f"build_server({x.html!r})", server)]
    out: list[Step] = []
    caps = json.loads(x.capabilities)
    opened = attempt(lambda: Client(server=server, version=x.era, capabilities=caps,
                                    timeout=10).connect(), plain=False)
    if isinstance(opened, Seen):
        return [Step(_("a client connects", "un cliente se conecta"), opened)]
    with opened as client:
        extensions = (client.server_capabilities or {}).get("extensions")
        out.append(Step("capabilities.extensions", attempt(lambda: extensions)))
        out.append(Step("serverInfo", attempt(lambda: {
            k: v for k, v in (client.server_info or {}).items() if k in ("name", "version")})))
        # The order of a list is the order of registration, which the lab leaves free.
        out.append(Step("tools/list", attempt(lambda: _by_name(client.list_tools()))))
        out.append(Step("resources/list", attempt(lambda: _by_name(client.list_resources()))))
        out.append(Step(f"resources/read {BOARD}",
                        attempt(lambda: _clean(client.read_resource(BOARD)))))
        for step in x.steps:
            out.append(Step(f"tools/call counter_add {{'step': {step}}}", attempt(
                lambda step=step: _clean(client.call_tool("counter_add", {"step": step})))))
        out.append(Step("tools/call counter_show", attempt(
            lambda: _clean(client.call_tool("counter_show", {})))))
    return out


def _server_case(rng: Gen) -> ServerCase:
    caps = rng.choice(_CAPABILITIES)
    return ServerCase(rng.choice(ERAS), json.dumps(caps or {}), rng.choice(_HTML),
                      tuple(rng.randint(-3, 9) for _i in range(rng.randint(0, 3))))


def _show_server(x: ServerCase) -> str:
    return (f"build_server({x.html!r}); Client(version={x.era!r}, "
            f"capabilities={x.capabilities}); " + ", ".join(
                f"counter_add(step={s})" for s in x.steps) + ("; " if x.steps else "")
            + "counter_show()")


def _server_hint(x: ServerCase, expected: Step | None, got: Step | None) -> str | None:
    label = _label_at(expected, got)
    if label == "serverInfo":
        return _("a new Server('counter', '1.0.0') each time",
                 "un Server('counter', '1.0.0') nuevo cada vez")
    if label.startswith("capabilities"):
        return _("declare the extension on the server: server.extensions[EXTENSION] = "
                 "{'mimeTypes': [MIME_TYPE]} (both eras read it from there)",
                 "declara la extensión en el servidor: server.extensions[EXTENSION] = "
                 "{'mimeTypes': [MIME_TYPE]} (las dos eras la leen de ahí)")
    if label == "tools/list":
        return _("counter_add is for the view only, and not destructive: list it only to "
                 "clients that supports_apps (listed_if); each tool's _meta is "
                 "app_tool_meta(...)",
                 "counter_add es solo para la vista y no es destructiva: inclúyela en "
                 "tools/list solo para los clientes que pasan supports_apps (listed_if); el "
                 "_meta de cada herramienta es app_tool_meta(...)")
    if label.startswith("resources"):
        return _("the board: name 'board', its description, MIME_TYPE, and _meta.ui both "
                 "in resources/list (meta=) and in what resources/read returns",
                 "el tablero: nombre 'board', su descripción, MIME_TYPE y _meta.ui tanto en "
                 "resources/list (meta=) como en lo que devuelve resources/read")
    return _("each server built has its own count, starting at 0 (counter_tools())",
             "cada servidor construido tiene su propia cuenta, que empieza en 0 "
             "(counter_tools())")


def _server_named(build: Callable[[str], Any], en: str, es: str, x: ServerCase,
                  labels: tuple[str, ...], hint_en: str, hint_es: str) -> Any:
    def pick(steps: list[Step]) -> list[Step]:
        return [s for s in steps if s.label.startswith(labels) or len(steps) == 1]

    expected = pick(_server_trial(reference_build_server, x))
    return sequence_case(_(en, es), expected, lambda: pick(_server_trial(build, x)),
                         _(hint_en, hint_es))


def check_app_server(build_server: Callable) -> None:
    """Part 2: a whole app server, read by real clients in both eras."""
    with references_for(build_server, supports_apps=apps.client_supports,
                        app_tool_meta=apps.tool_meta, view_contents=reference_view_contents):
        _check_app_server(build_server)  # a part-1 bug costs part 1 only


def _check_app_server(build_server: Callable) -> None:
    apps_caps = json.dumps(apps.CAPABILITIES)
    results = []
    for era in ERAS:
        results.append(_server_named(
            build_server, f"the extension is declared ({era})",
            f"la extensión se declara ({era})", ServerCase(era, "{}", "<p>hi</p>", ()),
            ("capabilities",),
            "server.extensions[EXTENSION] = {'mimeTypes': [MIME_TYPE]}, in both eras",
            "server.extensions[EXTENSION] = {'mimeTypes': [MIME_TYPE]}, en las dos eras"))
    results.append(_server_named(
        build_server, "the server's name and version", "el nombre y la versión del servidor",
        ServerCase(ERAS[0], "{}", "<p>hi</p>", ()), ("serverInfo",),
        "Server('counter', '1.0.0')", "Server('counter', '1.0.0')"))
    results += [
        _server_named(build_server, "a client that shows views sees both tools",
                      "un cliente que muestra vistas ve las dos herramientas",
                      ServerCase(ERAS[1], apps_caps, "<p>hi</p>", ()), ("tools/list",),
                      "counter_show for model and view (read-only), counter_add for the view "
                      "only (destructive=False), both naming the board",
                      "counter_show para el modelo y la vista (solo lectura), counter_add solo "
                      "para la vista (destructive=False), y las dos nombran el tablero"),
        _server_named(build_server, "a plain client is not shown the view's tool",
                      "a un cliente sin vistas no se le muestra la herramienta de la vista",
                      ServerCase(ERAS[0], "{}", "<p>hi</p>", ()), ("tools/list",),
                      "listed_if=supports_apps on counter_add: a client without views could "
                      "only hand it to a model",
                      "listed_if=supports_apps en counter_add: un cliente sin vistas solo "
                      "podría dársela a un modelo"),
        _server_named(build_server, "the board is listed with its _meta.ui",
                      "el tablero aparece en la lista con su _meta.ui",
                      ServerCase(ERAS[1], apps_caps, "<p>hi</p>", ()), ("resources/list",),
                      "server.resource(BOARD, name='board', description=..., "
                      "mime_type=MIME_TYPE, meta={'ui': ...})",
                      "server.resource(BOARD, name='board', description=..., "
                      "mime_type=MIME_TYPE, meta={'ui': ...})"),
        _server_named(build_server, "resources/read: the HTML, its MIME type and _meta.ui",
                      "resources/read: el HTML, su tipo MIME y _meta.ui",
                      ServerCase(ERAS[0], apps_caps, "<!doctype html><b>café ☕</b>", ()),
                      ("resources/read",),
                      "the read function returns [view_contents(BOARD, html, CSP, True)]",
                      "la función de lectura devuelve [view_contents(BOARD, html, CSP, True)]"),
        _server_named(build_server, "the view's tools work", "las herramientas de la vista "
                      "funcionan", ServerCase(ERAS[1], apps_caps, "<p>hi</p>", (2, 5)),
                      ("tools/call",),
                      "register the functions counter_tools() returns, as they are",
                      "registra las funciones que devuelve counter_tools(), tal cual"),
        differential(
            _("generated clients of both eras, against mcpkit.apps",
              "clientes generados de las dos eras, frente a mcpkit.apps"),
            key="lab11/server", generate=_server_case, trial=_server_trial,
            reference=reference_build_server, learner=build_server, show=_show_server,
            shrink=lambda x: (ServerCase(x.era, x.capabilities, x.html, tuple(s))
                              for s in drop_each(list(x.steps))),
            hint=_server_hint, cases=40),
    ]
    run_checks(results)


# --------------------------------------------------------------------------- part 3

#: The methods a view may ask for that the lab's router handles.
ROUTED = ("ui/initialize", "ping", "tools/call", "ui/message", "ui/update-model-context",
          "ui/open-link")


def initialize_result(definition: dict[str, Any]) -> dict[str, Any]:
    """The answer to ``ui/initialize`` (the lab's setup cell has the same function)."""
    return {
        "protocolVersion": "2026-01-26",
        "hostInfo": {"name": "mcpkit-notebook", "version": "1.0.0"},
        "hostCapabilities": {"openLinks": {}, "serverTools": {}},
        "hostContext": {"toolInfo": {"tool": definition}, "theme": "light",
                        "displayMode": "inline", "locale": "en-US", "platform": "web"},
    }


class ReferenceRouter(AppBridge):
    """AppBridge with the methods of the lab and nothing else."""

    def __init__(self, host: Any, server: str, tool: str, arguments: dict[str, Any],
                 confirm: Callable[[str, dict[str, Any]], bool],
                 open_link: Callable[[str], bool]) -> None:
        super().__init__(host, server, tool, arguments, confirm=confirm, open_link=open_link)

    def _lab_initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        return initialize_result(self._definition(self.tool) or {"name": self.tool})

    _requests = {**{m: f for m, f in AppBridge._requests.items() if m in ROUTED},
                 "ui/initialize": _lab_initialize}


class _ViewHost(Host):
    """The host a learner's router is handed: what it needs, without the shortcut that is
    the exercise."""

    def call_tool_from_app(self, *args: Any, **kwargs: Any) -> Any:
        raise AttributeError(_("call_tool_from_app is what you write in this lab: find the "
                               "definition with host.server_tools(server), check it, then "
                               "host.client(server).call_tool(name, arguments)",
                               "call_tool_from_app es lo que escribes en este laboratorio: "
                               "busca la definición con host.server_tools(server), "
                               "compruébala y luego llama a "
                               "host.client(server).call_tool(name, arguments)"))


#: The code board_busy refuses with: one of the server's own, which a router passes on.
BUSY = -32050


class _ServerDies(KeyboardInterrupt):
    """Raised by a tool: the stdio loop serving it ends as if the process were interrupted,
    so its client's call (and every later one) fails with a SessionError."""


def lab_servers(reached: list[Any] | None = None) -> dict[str, Any]:
    """The part-3 servers, in this process: ``board`` (the app: tools for model and view,
    for the view only, one that may be destructive, one that fails, one for the model only)
    and ``other`` (a second server, whose tool a view must never reach). Each call that
    reaches one is appended to ``reached``."""
    reached = reached if reached is not None else []
    board = Server("board", "1.0.0")
    other = Server("other", "1.0.0")
    apps.add_view(board, "ui://board/view", "<p>board</p>")
    count = {"value": 0}

    @apps.tool(board, "ui://board/view", read_only=True)
    def board_show() -> dict:
        """The board's count."""
        reached.append(["board_show", {}])
        return {"count": count["value"]}

    @apps.tool(board, "ui://board/view", visibility=["app"], destructive=False)
    def board_add(step: int = 1) -> dict:
        """Add to the count."""
        reached.append(["board_add", {"step": step}])
        count["value"] += step
        return {"count": count["value"]}

    @apps.tool(board, "ui://board/view", visibility=["app"])
    def board_clear() -> dict:
        """Set the count back to 0 (no annotations: it may be destructive)."""
        reached.append(["board_clear", {}])
        count["value"] = 0
        return {"count": 0}

    @apps.tool(board, "ui://board/view", visibility=["app"], read_only=True)
    def board_fail() -> str:
        """Always fails."""
        reached.append(["board_fail", {}])
        raise RuntimeError("the board is out of order")

    @apps.tool(board, "ui://board/view", visibility=["app"], read_only=True)
    def board_busy() -> str:
        """Refuses with a JSON-RPC error of the server's own (the client raises ServerError)."""
        reached.append(["board_busy", {}])
        raise JsonRpcError(BUSY, "the board is busy")

    @apps.tool(board, "ui://board/view", visibility=["app"], read_only=True)
    def board_crash() -> str:
        """The server dies during the call (the client raises SessionError, now and after)."""
        reached.append(["board_crash", {}])
        raise _ServerDies

    @apps.tool(board, None, visibility=["model"], read_only=True)
    def board_secret() -> str:
        """For the model only."""
        reached.append(["board_secret", {}])
        return "secret"

    @apps.tool(board, None, visibility=["model"])
    def board_purge() -> str:
        """For the model only, and it may be destructive (no annotations)."""
        reached.append(["board_purge", {}])
        return "purged"

    @board.tool(read_only=True, meta={"ui": {"visibility": None}})
    def board_null() -> str:
        """A visibility of null: as if it were missing, so for both."""
        reached.append(["board_null", {}])
        return "null"

    @board.tool(read_only=True)
    def board_plain() -> str:
        """No _meta at all: for the model and the view alike."""
        reached.append(["board_plain", {}])
        return "plain"

    @board.tool(read_only=True, meta={"ui": {"resourceUri": "ui://board/view",
                                             "visibility": "app"}})
    def board_odd() -> str:
        """A visibility that is not a list: nobody's."""
        reached.append(["board_odd", {}])
        return "odd"

    @board.tool(read_only=True, meta={"ui": {"resourceUri": "ui://board/view",
                                             "visibility": []}})
    def board_empty() -> str:
        """An empty visibility: a list without "app" (nor "model"), so nobody's."""
        reached.append(["board_empty", {}])
        return "empty"

    @apps.tool(other, None, read_only=True)
    def other_wipe() -> str:
        """Another server's tool."""
        reached.append(["other_wipe", {}])
        return "wiped"

    return {"mcpServers": {"board": board, "other": other}}


def view_host(reached: list[Any] | None = None, *, for_learner: bool = True) -> Host:
    """A host on :func:`lab_servers` that declares the extension (the lab's cells use it)."""
    kind = _ViewHost if for_learner else Host
    return kind(lab_servers(reached), client_options={"capabilities": apps.CAPABILITIES})


@dataclass(frozen=True)
class RouterCase:
    events: tuple[str, ...]  # JSON: ["view", message] or ["result", result]
    confirms: tuple[bool, ...]
    links: tuple[bool, ...]
    tool: str = "board_show"  # the tool whose view the router serves


#: What an error's message is compared as: its wording is free, that it is a string is not.
WORDED = "…"


def _normalize(replies: Any) -> Any:
    """Replies as compared: an error's code, and that its message is a string (the wording,
    and any data, are free)."""
    if not isinstance(replies, list):
        return replies
    out = []
    for reply in replies:
        if isinstance(reply, dict) and isinstance(reply.get("error"), dict):
            error = reply["error"]
            shown = {"code": error.get("code")}
            if "message" in error:
                shown["message"] = WORDED if isinstance(error["message"], str) else error[
                    "message"]
            reply = {**reply, "error": shown}
        out.append(reply)
    return out


def _audit(entries: Any) -> Any:
    if not isinstance(entries, list):
        return entries
    return [{k: v for k, v in e.items() if k != "from"} if isinstance(e, dict) else e
            for e in entries]


def _router_trial(router_class: Any, x: RouterCase) -> list[Step]:
    reached: list[Any] = []
    confirms, links = list(x.confirms), list(x.links)
    asked: list[Any] = []

    def confirm(name: str, arguments: dict[str, Any]) -> bool:
        asked.append(["confirm", name, dict(arguments) if isinstance(arguments, dict)
                      else arguments])
        # The dialog marks what it was shown: the lab hands it a copy (dict(arguments)), so
        # this never reaches the call, its audit entry or the server.
        if isinstance(arguments, dict):
            arguments["shown to the user"] = True
        return confirms.pop(0) if confirms else False

    def open_link(url: str) -> bool:
        asked.append(["open_link", url])
        return links.pop(0) if links else False

    learner = router_class is not ReferenceRouter
    out: list[Step] = []
    with view_host(reached, for_learner=learner) as host:
        arguments = {"step": 1}
        router = attempt(lambda: router_class(host, "board", x.tool, dict(arguments),
                                              confirm, open_link), plain=False)
        if isinstance(router, Seen):
            return [Step(f"ViewRouter(host, 'board', {x.tool!r}, ...)", router)]
        for raw in x.events:
            kind, value = json.loads(raw)
            if kind == "view":
                label = f"receive({json.dumps(value, ensure_ascii=False)})"
                got = attempt(lambda v=value: router.receive(v))
            else:
                label = f"deliver_result({json.dumps(value, ensure_ascii=False)})"
                got = attempt(lambda v=value: router.deliver_result(v))
            out.append(Step(label, _normalize(got)))
        out.append(Step(_("asked the user", "lo que se preguntó al usuario"),
                        attempt(lambda: asked)))
        out.append(Step(_("reached the servers", "lo que llegó a los servidores"),
                        attempt(lambda: reached)))
        out.append(Step("audit", attempt(lambda: _audit(router.audit))))
        out.append(Step("messages", attempt(lambda: router.messages)))
        out.append(Step("model_context", attempt(lambda: router.model_context)))
    return out


def _req(request_id: Any, method: Any, params: Any = None, *, no_params: bool = False) -> str:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if not no_params:
        message["params"] = {} if params is None else params
    return json.dumps(["view", message], ensure_ascii=False)


def _note(method: str, params: Any = None) -> str:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(["view", message], ensure_ascii=False)


def _raw(message: Any) -> str:
    return json.dumps(["view", message], ensure_ascii=False)


def _result(result: dict[str, Any]) -> str:
    return json.dumps(["result", result], ensure_ascii=False)


INIT = _req(1, "ui/initialize", {"protocolVersion": "2026-01-26", "appCapabilities": {},
                                 "appInfo": {"name": "board", "version": "1"}})
READY = _note("ui/notifications/initialized")


def _call(request_id: Any, name: Any, arguments: Any = "missing") -> str:
    params: dict[str, Any] = {"name": name}
    if arguments != "missing":
        params["arguments"] = arguments
    return _req(request_id, "tools/call", params)


_TOOL_CALLS = [("board_show", {}), ("board_add", {"step": 2}), ("board_add", "missing"),
               ("board_add", {"step": "x"}), ("board_add", None), ("board_add", [1]),
               ("board_clear", {}), ("board_fail", {}), ("board_busy", {}), ("board_secret", {}),
               ("board_plain", {}), ("board_odd", {}), ("board_purge", {}),
               ("board_null", {}), ("board_empty", {}),
               ("other_wipe", {}), ("nope", {}), (3, {}), (None, {})]
_MESSAGES = [
    {"role": "user", "content": [{"type": "text", "text": "Tea won"}]},
    {"role": "user", "content": {"type": "text", "text": "one block"}},
    {"role": "assistant", "content": [{"type": "text", "text": "I am the model"}]},
    {"role": "user", "content": [{"type": "image", "data": "AA==", "mimeType": "image/png"}]},
    {"role": "user", "content": []}, {"role": "user"},
    {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": 5}]},
]
_CONTEXTS = [{"content": [{"type": "text", "text": "3 votes"}]},
             {"structuredContent": {"votes": 3}},
             {"content": [], "structuredContent": {}}, {}, {"content": "3 votes"},
             {"structuredContent": [1]}, {"content": None, "structuredContent": {"a": 1}},
             {"content": {"type": "text", "text": "3 votes"}}, {"structuredContent": "3"}]
_LINKS = ["https://modelcontextprotocol.io/", "http://example.com/a?b=c", "javascript:alert(1)",
          "http://user@", "http://[", "https://:443/x",
          "https://", "ftp://example.com/f", "file:///etc/passwd", "example.com", 7,
          "HTTPS://EXAMPLE.COM/", "javascript://example.com/%0Aalert(1)",
          "data://example.com/,x", None]
_OTHER = [
    _req(9, "ping"), _req("p", "ping", no_params=True), _req(10, "ui/whatever"),
    _req(11, "resources/read", {"uri": "ui://board/view"}), _note("ui/notifications/size-changed",
                                                                  {"width": 300, "height": 200}),
    _note("notifications/message", {"level": "info", "data": "hi"}), _note("ui/unknown"),
    _raw({"jsonrpc": "2.0", "id": 5, "result": {}}), _raw({"jsonrpc": "2.0", "id": 6,
                                                           "error": {"code": -1,
                                                                     "message": "x"}}),
    _raw(["not", "an", "object"]), _raw("text"), _raw(None), _raw({"id": 1, "method": "ping"}),
    _raw({"jsonrpc": "1.0", "id": 1, "method": "ping"}),
    _raw({"jsonrpc": "2.0", "id": 1, "method": 5}), _raw({"jsonrpc": "2.0", "id": True,
                                                         "method": "ping"}),
    _raw({"jsonrpc": "2.0", "id": None, "method": "ping"}),
    _raw({"jsonrpc": "2.0", "id": 1.5, "method": "ping"}),
    _raw({"jsonrpc": "2.0", "id": 12, "method": "tools/call", "params": ["board_show"]}),
    _raw({"jsonrpc": "2.0", "method": "ui/notifications/initialized", "params": [1]}),
    _raw({"jsonrpc": "2.0", "id": [1], "method": "ping"}),
    _raw({"jsonrpc": "2.0", "id": 13, "method": None}),
    _raw({"jsonrpc": "2.0", "id": True, "method": "ping", "params": [1]}),
    _raw({"jsonrpc": "2.0", "id": None, "method": 5, "params": "x"}),
    _raw({"jsonrpc": 2.0, "id": 14, "method": "ping"}),
    _raw({"jsonrpc": "2.0", "id": False, "method": 5}),
    _raw({"jsonrpc": "2.0", "id": 2.0, "method": None}),
    _req(15, "ui/notifications/initialized"), _req("16", "ping"),
]
_RESULTS = [{"content": [{"type": "text", "text": "count: 1"}], "structuredContent": {"count": 1}},
            {"content": [{"type": "text", "text": "failed"}], "isError": True}, {}]


def _router_event(rng: Gen, request_id: Any) -> str:
    roll = rng.random()
    if roll < 0.35:
        name, arguments = rng.choice(_TOOL_CALLS)
        return _call(request_id, name, arguments)
    if roll < 0.45:
        return _req(request_id, "ui/message", rng.choice(_MESSAGES))
    if roll < 0.55:
        return _req(request_id, "ui/update-model-context", rng.choice(_CONTEXTS))
    if roll < 0.65:
        return _req(request_id, "ui/open-link", {"url": rng.choice(_LINKS)})
    if roll < 0.75:
        return _result(rng.choice(_RESULTS))
    if roll < 0.8:
        return rng.choice([INIT, READY])
    return rng.choice(_OTHER)


def _router_case(rng: Gen) -> RouterCase:
    events: list[str] = []
    roll = rng.random()
    if roll < 0.7:
        events += [INIT, READY]
    elif roll < 0.85:
        events += [INIT]
    ids = iter(rng.sample(range(20, 99), 12))
    for _i in range(rng.randint(1, 7)):
        request_id = next(ids)
        roll_id = rng.random()
        if roll_id < 0.25:
            # A string id stays a string, even when it reads as a number.
            request_id = f"r{request_id}" if roll_id < 0.15 else str(request_id)
        events.append(_router_event(rng, request_id))
    if rng.random() < (0.2 if roll < 0.7 else 0.6):
        events.insert(rng.randrange(len(events) + 1), READY)
    confirms = tuple(rng.random() < 0.5 for _i in range(rng.randint(0, 3)))
    links = tuple(rng.random() < 0.5 for _i in range(rng.randint(0, 3)))
    # Now and then the view of another tool: an app-only one, or one the server does not list.
    tool = "board_show" if rng.random() < 0.85 else rng.choice(["board_add", "board_gone"])
    return RouterCase(tuple(events), confirms, links, tool)


def _show_router(x: RouterCase) -> str:
    shown = []
    for raw in x.events:
        kind, value = json.loads(raw)
        shown.append(("receive(" if kind == "view" else "deliver_result(")
                     + json.dumps(value, ensure_ascii=False) + ")")
    start = f"ViewRouter(host, 'board', {x.tool!r}, ...); "
    return (start + "; ".join(shown) + f"; confirm -> {list(x.confirms)}; open_link -> "
            f"{list(x.links)}")


def _shrink_router(x: RouterCase) -> Iterator[RouterCase]:
    for events in drop_each(list(x.events)):
        if events:
            yield RouterCase(tuple(events), x.confirms, x.links, x.tool)


_ROUTER_HINTS = {
    "ui/initialize": ("ui/initialize: initialize_result(definition), the definition of the "
                      "router's tool from host.server_tools(server), or {'name': tool} when the "
                      "server lists no such tool",
                      "ui/initialize: initialize_result(definition), con la definición de la "
                      "herramienta del enrutador tomada de host.server_tools(server), o "
                      "{'name': tool} si el servidor no lista esa herramienta"),
    "tools/call": ("tools/call: audit first; a string name and an object arguments (-32602); "
                   "the definition from host.server_tools(server) (none: -32602, not app-visible:"
                   " -32000); confirm(name, dict(arguments)) if needs_confirmation (no: -32000);"
                   " then host.client(server).call_tool; ServerError: its code",
                   "tools/call: audita primero; un name de tipo cadena y unos arguments de tipo "
                   "objeto (-32602); la definición, tomada de host.server_tools(server) (sin "
                   "ella: -32602; no visible para la app: -32000); pregunta a "
                   "confirm(name, dict(arguments)) si needs_confirmation lo pide (si dice que "
                   "no: -32000); luego "
                   "host.client(server).call_tool; ServerError: su código"),
    "ui/message": ("ui/message: role 'user' and text blocks only (one block counts as a list of "
                   "one), at least one; else -32602",
                   "ui/message: role 'user' y solo bloques de texto (un bloque suelto cuenta como "
                   "una lista de uno), al menos uno; si no, -32602"),
    "ui/update-model-context": ("ui/update-model-context: content a list or absent, "
                                "structuredContent an object or absent; it replaces what was "
                                "there, keeping only the keys given",
                                "ui/update-model-context: content una lista o ausente, "
                                "structuredContent un objeto o ausente; sustituye lo que hubiera "
                                "y conserva solo las claves dadas"),
    "ui/open-link": ("ui/open-link: only an http or https URL with a host name (-32602 "
                     "otherwise, and for a URL urlsplit cannot parse), "
                     "and only if open_link(url) says yes (-32000 otherwise)",
                     "ui/open-link: solo una URL http o https con nombre de host (si no, -32602; "
                     "también para una URL que urlsplit no puede analizar), y solo "
                     "si open_link(url) dice que sí (si no, -32000)"),
    "error": ("an error answer is {'code': ..., 'message': a string}: the wording is yours, "
              "the message is not optional",
              "una respuesta de error es {'code': ..., 'message': una cadena}: el texto lo "
              "redactas tú, pero el message no es opcional"),
    "deliver": ("the tool's input, then its result, as notifications; held until the view "
                "says ui/notifications/initialized",
                "la entrada de la herramienta y luego su resultado, como notificaciones; se "
                "guardan hasta que la vista envía ui/notifications/initialized"),
}


def _router_hint(x: RouterCase, expected: Step | None, got: Step | None) -> str | None:
    label = _label_at(expected, got)
    if label.startswith("receive") and _bad_error(got.seen if got else None):
        return _(*_ROUTER_HINTS["error"])
    if label.startswith("deliver_result"):
        return _(*_ROUTER_HINTS["deliver"])
    for method, hint in _ROUTER_HINTS.items():
        if f'"method": "{method}"' in label:
            return _(*hint)
    if label in ("audit", "reached the servers", "lo que llegó a los servidores", "asked the user",
                 "lo que se preguntó al usuario"):
        return _(*_ROUTER_HINTS["tools/call"])
    return _("in this order: not a JSON-RPC 2.0 object (-32600, id null); no method: a "
             "response, nothing back; a method that is not a string (-32600, its id); no id: "
             "a notification, never answered; a bad id (-32600, null); params not an object "
             "(-32602); before initialized, only ui/initialize and ping (-32600); an unknown "
             "method (-32601)",
             "en este orden: no es un objeto JSON-RPC 2.0 (-32600, id null); sin method: una "
             "respuesta, no se devuelve nada; un method que no es cadena (-32600, su id); sin "
             "id: una notificación, nunca se contesta; un id inválido (-32600, null); unos "
             "params que no son un objeto (-32602); antes de initialized, solo ui/initialize y "
             "ping (-32600); un método desconocido (-32601)")


def _bad_error(replies: Any) -> bool:
    """Whether a reply (as compared) is an error without a string message."""
    return isinstance(replies, list) and any(
        isinstance(r, dict) and isinstance(r.get("error"), dict)
        and r["error"].get("message") != WORDED for r in replies)


_NAMED_ROUTER_CASES: list[tuple[str, str, RouterCase, str, str]] = [
    ("ui/initialize: the host context with the tool's definition",
     "ui/initialize: el contexto del host con la definición de la herramienta",
     RouterCase((INIT, READY), (), ()),
     "initialize_result(definition), the definition from host.server_tools(server)",
     "initialize_result(definition), con la definición de host.server_tools(server)"),
    ("nothing reaches the view before it says initialized",
     "nada llega a la vista antes de que diga initialized",
     RouterCase((INIT, _result(_RESULTS[0]), READY, _result(_RESULTS[1]), READY), (), ()),
     *_ROUTER_HINTS["deliver"]),
    ("every call before initialized waits, in order",
     "cada llamada anterior a initialized espera, en orden",
     RouterCase((INIT, _result(_RESULTS[0]), _result(_RESULTS[1]), _result(_RESULTS[2]),
                 READY), (), ()),
     "keep the notifications of every deliver_result before initialized (not only the "
     "last), and send them all, in order, as the answer to initialized",
     "guarda las notificaciones de cada deliver_result anterior a initialized (no solo las del "
     "último) y envíalas todas, en orden, como respuesta a initialized"),
    ("ui/notifications/initialized sent as a request",
     "ui/notifications/initialized enviada como solicitud",
     RouterCase((INIT, _result(_RESULTS[0]), _req(2, "ui/notifications/initialized"),
                 _req(3, "ping"), READY), (), ()),
     "a message with an id is a request, whatever its method: before initialized it gets "
     "-32600 and initializes nothing (what is kept waits for the notification)",
     "un mensaje con id es una solicitud, sea cual sea su method: antes de initialized "
     "recibe -32600 y no inicializa nada (lo guardado espera a la notificación)"),
    ("ui/initialize for a tool the server does not list",
     "ui/initialize para una herramienta que el servidor no lista",
     RouterCase((INIT, READY), (), (), "board_gone"), *_ROUTER_HINTS["ui/initialize"]),
    ("a request before ui/initialize", "una solicitud antes de ui/initialize",
     RouterCase((_call(2, "board_show", {}), _req(3, "ui/whatever"), _req(4, "ping")), (), ()),
     "before initialized only ui/initialize and ping are answered; the rest: -32600, and "
     "nothing reaches a server",
     "antes de initialized solo se contestan ui/initialize y ping; el resto: -32600, y nada "
     "llega a un servidor"),
    ("the view calls its own server's tool",
     "la vista llama a una herramienta de su propio servidor",
     RouterCase((INIT, READY, _call(2, "board_add", {"step": 2}), _call(3, "board_show", {})),
                (), ()),
     "host.client(server).call_tool(name, arguments); its result is the answer; audit "
     "{'tool', 'arguments', 'outcome': 'ok'}",
     "host.client(server).call_tool(name, arguments); su resultado es la respuesta; audita "
     "{'tool', 'arguments', 'outcome': 'ok'}"),
    ("a tool for the model only is refused", "una herramienta solo para el modelo se rechaza",
     RouterCase((INIT, READY, _call(2, "board_secret", {}), _call(3, "board_purge", {})),
                (True,), ()),
     "visibility ['model']: not for views: -32000, outcome 'refused', not called, and the "
     "user is not asked about it (board_purge may be destructive, but no view may call it)",
     "visibility ['model']: no es para vistas: -32000, outcome 'refused', sin llamarla y sin "
     "preguntar al usuario (board_purge puede ser destructiva, pero ninguna vista puede "
     "llamarla)"),
    ("a visibility that is not a list is nobody's",
     "una visibilidad que no es una lista no es de nadie",
     RouterCase((INIT, READY, _call(2, "board_odd", {})), (), ()),
     "board_odd says visibility 'app', a string: refused (-32000), not called",
     "board_odd dice visibility 'app', una cadena: se rechaza (-32000), sin llamarla"),
    ("an empty visibility is nobody's", "una visibilidad vacía no es de nadie",
     RouterCase((INIT, READY, _call(2, "board_empty", {})), (), ()),
     "board_empty says visibility []: a list without 'app', so refused (-32000), not called",
     "board_empty dice visibility []: una lista sin 'app', así que se rechaza (-32000), sin "
     "llamarla"),
    ("no visibility, or None, is for both", "sin visibilidad, o con None, es para los dos",
     RouterCase((INIT, READY, _call(2, "board_plain", {}), _call(3, "board_null", {})), (), ()),
     "board_plain has no _meta.ui, board_null a visibility of None: both are visible to the "
     "model and the view",
     "board_plain no tiene _meta.ui y board_null tiene visibility None: las dos son visibles "
     "para el modelo y la vista"),
    ("another server's tool is unknown to the view",
     "la herramienta de otro servidor es desconocida para la vista",
     RouterCase((INIT, READY, _call(2, "other_wipe", {}), _call(3, "nope", {})), (), ()),
     "look the name up among host.server_tools(server) only: -32602, outcome 'unknown'",
     "busca el nombre solo en host.server_tools(server): -32602, outcome 'unknown'"),
    ("a call that may be destructive waits for the user",
     "una llamada que puede ser destructiva espera al usuario",
     RouterCase((INIT, READY, _call(2, "board_clear", {}), _call(3, "board_clear", {}),
                 _call(4, "board_add", {"step": 1})), (False, True), ()),
     "needs_confirmation(definition): ask confirm(name, dict(arguments)) (a copy: what the "
     "dialog does to it must not reach the call); no: -32000, outcome 'declined'; board_add "
     "says destructiveHint false: no question",
     "needs_confirmation(definition): pregunta a confirm(name, dict(arguments)) (una copia: "
     "lo que el diálogo haga con ella no debe llegar a la llamada); si dice que no: -32000, "
     "outcome 'declined'; board_add dice destructiveHint false: no se pregunta"),
    ("arguments that are not an object", "arguments que no son un objeto",
     RouterCase((INIT, READY, _call(2, "board_add", None), _call(3, "board_add", [1]),
                 _call(4, "board_add"), _call(5, 3, {})), (), ()),
     "missing arguments are {}; anything but an object (or a name that is not a string): "
     "-32602, outcome 'invalid', audited",
     "unos arguments ausentes valen {}; cualquier cosa que no sea un objeto (o un name que "
     "no es una cadena): -32602, outcome 'invalid', y la llamada se audita"),
    ("the server's two kinds of error", "los dos tipos de error del servidor",
     RouterCase((INIT, READY, _call(2, "board_fail", {}), _call(3, "board_add",
                                                             {"step": "x"})), (), ()),
     "an isError result is an answer (outcome 'tool-error'); a ServerError is an error with "
     "its code (outcome 'protocol-error')",
     "un resultado isError es una respuesta (outcome 'tool-error'); un ServerError es un error "
     "con su código (outcome 'protocol-error')"),
    ("the server refuses, then dies", "el servidor se niega y luego muere",
     RouterCase((INIT, READY, _call(2, "board_busy", {}), _call(3, "board_crash", {}),
                 _call(4, "board_show", {})), (), ()),
     "a ServerError is an error with its own .code (board_busy answers -32050); a "
     "SessionError (the server died) is -32603; both outcome 'protocol-error'",
     "un ServerError es un error con su propio .code (board_busy contesta -32050); un "
     "SessionError (el servidor murió) es -32603; los dos con outcome 'protocol-error'"),
    ("ui/message goes to the conversation", "ui/message va a la conversación",
     RouterCase((INIT, READY, _req(2, "ui/message", _MESSAGES[0]),
                 _req(3, "ui/message", _MESSAGES[2]), _req(4, "ui/message", _MESSAGES[1]),
                 _req(5, "ui/message", _MESSAGES[3]), _req(6, "ui/message", _MESSAGES[4]),
                 _req(7, "ui/message", _MESSAGES[6])),
                (), ()), *_ROUTER_HINTS["ui/message"]),
    ("ui/update-model-context replaces what the model knows",
     "ui/update-model-context sustituye lo que sabe el modelo",
     RouterCase((INIT, READY, _req(2, "ui/update-model-context", _CONTEXTS[0]),
                 _req(3, "ui/update-model-context", _CONTEXTS[1]),
                 _req(4, "ui/update-model-context", _CONTEXTS[4]),
                 _req(5, "ui/update-model-context", _CONTEXTS[3])), (), ()),
     *_ROUTER_HINTS["ui/update-model-context"]),
    ("links: http(s) only, and only if the user agrees",
     "enlaces: solo http(s), y solo si el usuario acepta",
     RouterCase((INIT, READY, _req(2, "ui/open-link", {"url": _LINKS[0]}),
                 _req(3, "ui/open-link", {"url": _LINKS[0]}),
                 _req(4, "ui/open-link", {"url": "javascript:alert(1)"}),
                 _req(5, "ui/open-link", {"url": "https:///no-host"}),
                 _req(6, "ui/open-link", {"url": "httpx://example.com/"}),
                 _req(7, "ui/open-link", {"url": "HTTPS://EXAMPLE.COM/"}),
                 _req(8, "ui/open-link", {"url": "http://user@"}),
                 _req(9, "ui/open-link", {"url": "http://["})), (True, ), (False,)),
     *_ROUTER_HINTS["ui/open-link"]),
    ("an unknown method, and notifications", "un método desconocido, y notificaciones",
     RouterCase((INIT, READY, _req(2, "ui/whatever"), _req(3, "resources/read",
                                                          {"uri": "ui://board/view"}),
                 _note("ui/unknown"), _note("ui/notifications/size-changed",
                                            {"width": 1, "height": 2}),
                 _note("ui/notifications/size-changed", [1])), (), ()),
     "-32601 for a method you do not handle; a notification is never answered",
     "-32601 para un método que no tratas; una notificación nunca se contesta"),
    ("messages that are not JSON-RPC requests",
     "mensajes que no son solicitudes JSON-RPC",
     RouterCase((INIT, READY, _raw(["x"]), _raw({"id": 1, "method": "ping"}),
                 _raw({"jsonrpc": "2.0", "id": True, "method": "ping"}),
                 _raw({"jsonrpc": "2.0", "id": 7, "method": 5}),
                 _raw({"jsonrpc": "2.0", "id": 8, "method": "ping", "params": [1]}),
                 _raw({"jsonrpc": "2.0", "id": 1.5, "method": "ping", "params": [1]}),
                 _raw({"jsonrpc": "2.0", "id": 9, "method": None}),
                 _raw({"jsonrpc": "2.0", "id": 5, "result": {}}),
                 _raw({"jsonrpc": "2.0", "id": None, "method": "ping"}),
                 _req(12, "ui/notifications/initialized")), (), ()),
     "-32600 with id null (\"jsonrpc\" is the string \"2.0\"), except a method that is not a "
     "string (-32600 with its id when that is a string or an int, not a bool) and params "
     "that are not an object (-32602), checked after the id; a string id comes back as the "
     "same string; a message with an id is a request, whatever its method; a response (no "
     "method key at all) gets nothing back",
     "-32600 con id null (\"jsonrpc\" es la cadena \"2.0\"), salvo un method que no es "
     "cadena (-32600 con su id si es una cadena o un int, no un bool) y unos params que no "
     "son un objeto (-32602), que se comprueban después del id; un id de tipo cadena vuelve "
     "como la misma cadena; un mensaje con id es una solicitud, sea cual sea su method; una "
     "respuesta (sin la clave method) no recibe nada"),
    ('"jsonrpc" is the string "2.0"', '"jsonrpc" es la cadena "2.0"',
     RouterCase((INIT, READY, _raw({"jsonrpc": 2.0, "id": 2, "method": "ping"}),
                 _raw({"jsonrpc": "2", "id": 3, "method": "ping"}),
                 _raw({"jsonrpc": "2.0", "id": 4, "method": "ping"})), (), ()),
     'a number 2.0, or "2", is not the string "2.0": -32600 with id null',
     'un número 2.0, o "2", no es la cadena "2.0": -32600 con id null'),
    ("a method that is not a string, and the id sent back",
     "un method que no es una cadena, y el id que se devuelve",
     RouterCase((INIT, READY, _raw({"jsonrpc": "2.0", "id": True, "method": 5}),
                 _raw({"jsonrpc": "2.0", "id": 1.5, "method": None}),
                 _raw({"jsonrpc": "2.0", "id": "m", "method": ["ping"]}),
                 _raw({"jsonrpc": "2.0", "id": 6, "method": {}})), (), ()),
     "-32600, with the message's id only when it is a string or an int (not a bool, not a "
     "float): else id null",
     "-32600, con el id del mensaje solo si es una cadena o un int (no un bool ni un float); "
     "si no, id null"),
    ("ids come back as they came", "los ids vuelven tal como llegaron",
     RouterCase((INIT, READY, _req("7", "ping"), _req(7, "ping"), _req("r8", "ping"),
                 _req("", "ping"), _req(0, "ping")), (), ()),
     "an answer carries the request's id unchanged: the string \"7\" stays a string, 0 and "
     "\"\" are ids too",
     "una respuesta lleva el id de la solicitud sin cambios: la cadena \"7\" sigue siendo una "
     "cadena, 0 y \"\" también son ids"),
    ("a link with a host name but another scheme",
     "un enlace con nombre de host pero con otro esquema",
     RouterCase((INIT, READY,
                 _req(2, "ui/open-link", {"url": "javascript://example.com/%0Aalert(1)"}),
                 _req(3, "ui/open-link", {"url": "data://example.com/,x"}),
                 _req(4, "ui/open-link", {"url": "ftp://example.com/f"}),
                 _req(5, "ui/open-link", {"url": "https://example.com/"})), (), (True,)),
     "the scheme must be http or https: a host name does not make javascript:// or data:// "
     "safe (-32602, and the user is not asked)",
     "el esquema debe ser http o https: tener nombre de host no hace seguros javascript:// ni "
     "data:// (-32602, y no se pregunta al usuario)"),
    ("ui/update-model-context checks its types",
     "ui/update-model-context comprueba sus tipos",
     RouterCase((INIT, READY, _req(2, "ui/update-model-context", _CONTEXTS[7]),
                 _req(3, "ui/update-model-context", _CONTEXTS[5]),
                 _req(4, "ui/update-model-context", _CONTEXTS[8]),
                 _req(5, "ui/update-model-context", _CONTEXTS[1])), (), ()),
     "content a list (not one block on its own), structuredContent an object: else -32602, "
     "and the model's context stays as it was",
     "content una lista (no un bloque suelto), structuredContent un objeto: si no, -32602, y "
     "el contexto del modelo queda como estaba"),
]


#: Tool definitions for app_visible: (definition, what the lab's rule says of it).
_DEFINITIONS: list[Any] = [
    {"name": "t"},
    {"name": "t", "_meta": {"io.example/x": 1}},
    {"name": "t", "_meta": {"ui": {"resourceUri": "ui://v"}}},
    {"name": "t", "_meta": {"ui": {"resourceUri": "ui://v", "visibility": None}}},
    {"name": "t", "_meta": {"ui": {"visibility": ["model", "app"]}}},
    {"name": "t", "_meta": {"ui": {"visibility": ["app"]}}},
    {"name": "t", "_meta": {"ui": {"visibility": ["model"]}}},
    {"name": "t", "_meta": {"ui": {"visibility": []}}},
    {"name": "t", "_meta": {"ui": {"visibility": "app"}}},
    {"name": "t", "_meta": {"ui": {"visibility": ("app",)}}},
    {"name": "t", "_meta": {"ui": {"visibility": {"app": True}}}},
    {"name": "t", "_meta": {"ui": {"visibility": ["App"]}}},
    {"name": "t", "_meta": {"ui": {"visibility": ["user", "app"]}}},
]


def _visible_trial(app_visible: Callable[[Any], Any]) -> list[Step]:
    out = []
    for definition in _DEFINITIONS:
        got = attempt(lambda d=definition: app_visible(copy.deepcopy(d)))
        out.append(Step(f"app_visible({definition!r})",
                        got if isinstance(got, Seen) else bool(got)))
    return out


def _router_sequence(name: str, expected: list[Step], run: Callable[[], list[Step]],
                     hint: str) -> CaseResult:
    """A named router case; when the first difference is an error answer without a string
    message, the hint says that rather than the case's own rule."""
    got: list[Step] = []

    def recording() -> list[Step]:
        steps = run()
        got[:] = steps
        return steps

    result = sequence_case(name, expected, recording, hint)
    at = None if result.ok or not got else _first_difference(expected, got)
    if at is not None and at < len(got) and _bad_error(got[at].seen) and not (
            at < len(expected) and _bad_error(expected[at].seen)) and result.details:
        result.details[-1] = result.details[-1].replace(hint, _(*_ROUTER_HINTS["error"]))
    return result


def check_view_router(ViewRouter: Any,  # noqa: N803 - the lab's class
                      app_visible: Callable[[Any], Any] | None = None) -> None:
    """Part 3: the host's router for a view's messages, against real servers (and, when the
    graded cell hands it over, ``app_visible`` on tool definitions of every shape)."""
    results = []
    if app_visible is not None:
        results.append(sequence_case(
            _("app_visible: who may call a tool, read from its definition",
              "app_visible: quién puede llamar a una herramienta, según su definición"),
            _visible_trial(apps.app_visible), lambda: _visible_trial(app_visible),
            _("no _meta.ui or no visibility (or None): True; a visibility that is not a list "
              "(a string, a tuple, an object): False; a list: whether 'app' is in it",
              "sin _meta.ui o sin visibility (o None): True; una visibility que no es una "
              "lista (una cadena, una tupla, un objeto): False; una lista: si 'app' está en "
              "ella")))
    for en, es, x, hint_en, hint_es in _NAMED_ROUTER_CASES:
        with quiet():  # (the host logs the server that dies: not for the cell's output)
            expected = _router_trial(ReferenceRouter, x)
        results.append(_router_sequence(_(en, es), expected,
                                        lambda x=x: _router_trial(ViewRouter, x),
                                        _(hint_en, hint_es)))
    results.append(differential(
        _("generated message sequences, against mcpkit.app_bridge",
          "secuencias de mensajes generadas, frente a mcpkit.app_bridge"),
        key="lab11/router", generate=_router_case, trial=_router_trial,
        reference=ReferenceRouter, learner=ViewRouter, show=_show_router,
        shrink=_shrink_router, hint=_router_hint, cases=60))
    run_checks(results)
