"""Checks for lab 03 (dispatch): a dispatcher, and serve() from bytes to bytes."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from .core import (
    _,
    case,
    error_shape,
    run_checks,
)


def check_dispatcher(cls: type) -> None:
    """Lab 03: a dispatcher that follows the three rules of lesson 03."""

    def build() -> tuple[Any, list[Any], list[Any]]:
        seen: list[Any] = []
        responses: list[Any] = []
        d = cls(on_response=responses.append)

        def add(params: dict, context: Any) -> dict:
            return {"sum": params["a"] + params["b"]}

        def boom(params: dict, context: Any) -> dict:
            raise RuntimeError("secret path /home/ana/notes.db is locked")

        def strict(params: dict, context: Any) -> dict:
            from ..jsonrpc import InvalidParams

            if "name" not in params:
                raise InvalidParams("name is required")
            return {"hello": params["name"]}

        def teapot(params: dict, context: Any) -> dict:
            from ..jsonrpc import JsonRpcError

            raise JsonRpcError(-32002, "Resource not found", {"uri": "notes://9"})

        def echo_context(params: dict, context: Any) -> dict:
            return {"params": params, "context": context}

        def remember(params: dict, context: Any) -> str:
            seen.append(params)
            return "ignored"

        def crash(params: dict, context: Any) -> None:
            seen.append("crash")
            raise RuntimeError("notification handler crashed")

        for method, handler in [("add", add), ("boom", boom), ("greet", strict),
                                ("resources/read", teapot), ("echo", echo_context)]:
            d.add_request(method, handler)
        d.add_notification("notifications/progress", remember)
        d.add_notification("notifications/cancelled", crash)
        return d, seen, responses

    def run(message: Any, context: Any = None) -> Callable[[], Any]:
        def go() -> Any:
            d, _seen, _responses = build()
            return d.dispatch(message, context)

        return go

    def result(id_: Any, value: Any) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": id_, "result": value}

    def error(id_: Any, code: int) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": id_, "error": {"code": code, "message": "…"}}

    def req(id_: Any, method: str, params: Any = None) -> dict[str, Any]:
        m: dict[str, Any] = {"jsonrpc": "2.0", "id": id_, "method": method}
        if params is not None:
            m["params"] = params
        return m

    def note(method: str, params: Any = None) -> dict[str, Any]:
        m: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            m["params"] = params
        return m

    def notification_effects(message: Any) -> Callable[[], Any]:
        def go() -> Any:
            d, seen, _responses = build()
            return {"returned": d.dispatch(message), "handler saw": seen}

        return go

    def response_routing() -> Any:
        d, _seen, responses = build()
        message = {"jsonrpc": "2.0", "id": 41, "result": {"ok": True}}
        return {"returned": d.dispatch(message), "on_response got": responses}

    def leaks() -> Any:
        d, _seen, _responses = build()
        response = d.dispatch(req(5, "boom"))
        text = json.dumps(response)
        return {"code": response["error"]["code"], "leaks the exception text":
                "secret" in text or "RuntimeError" in text}

    results = [
        case(_("a request gets the handler's result", "una solicitud recibe el resultado del "
               "manejador"), run(req(1, "add", {"a": 2, "b": 3})), result(1, {"sum": 5}),
             given=json.dumps(req(1, "add", {"a": 2, "b": 3}))),
        case(_("id 0 is a request like any other", "el id 0 es una solicitud como cualquier "
               "otra"), run(req(0, "add", {"a": 1, "b": 1})), result(0, {"sum": 2}),
             given=json.dumps(req(0, "add", {"a": 1, "b": 1})),
             hint=_("test 'id' in message: 0 is falsy", "comprueba 'id' in message: 0 es falso "
                    "en Python")),
        case(_("handlers get (params, context)", "los manejadores reciben (params, context)"),
             run(req("x", "echo", {"k": 1}), context="ctx"),
             result("x", {"params": {"k": 1}, "context": "ctx"}),
             given="dispatch(" + json.dumps(req("x", "echo", {"k": 1})) + ", context='ctx')"),
        case(_("missing params reach the handler as {}", "params ausentes llegan al manejador "
               "como {}"), run(req(2, "echo")), result(2, {"params": {}, "context": None}),
             given=json.dumps(req(2, "echo"))),
        case(_("an unknown method: -32601", "un método desconocido: -32601"),
             run(req(3, "tools/destroy")), error(3, -32601), normalize=error_shape,
             given=json.dumps(req(3, "tools/destroy"))),
        case(_("InvalidParams from a handler: -32602", "InvalidParams desde un manejador: "
               "-32602"), run(req(4, "greet", {})), error(4, -32602), normalize=error_shape,
             given=json.dumps(req(4, "greet", {}))),
        case(_("any JsonRpcError keeps its own code", "cualquier JsonRpcError conserva su "
               "propio código"), run(req(6, "resources/read")), error(6, -32002),
             normalize=error_shape, given=json.dumps(req(6, "resources/read"))),
        case(_("a handler that crashes: -32603, without leaking the exception text",
               "un manejador que falla: -32603, sin filtrar el texto de la excepción"),
             leaks, {"code": -32603, "leaks the exception text": False},
             given=json.dumps(req(5, "boom")),
             hint=_("log the traceback locally; send a short generic message",
                    "registra la traza localmente; envía un mensaje genérico y breve")),
        case(_("a notification is never answered", "una notificación nunca se responde"),
             notification_effects(note("notifications/progress", {"progress": 1})),
             {"returned": None, "handler saw": [{"progress": 1}]},
             given=json.dumps(note("notifications/progress", {"progress": 1}))),
        case(_("not even when its handler crashes", "ni siquiera cuando su manejador falla"),
             notification_effects(note("notifications/cancelled")),
             {"returned": None, "handler saw": ["crash"]},
             given=json.dumps(note("notifications/cancelled"))),
        case(_("nor when nobody handles it", "ni cuando nadie la maneja"),
             notification_effects(note("notifications/unknown")),
             {"returned": None, "handler saw": []},
             given=json.dumps(note("notifications/unknown"))),
        case(_("an invalid message: -32600 with its id", "un mensaje inválido: -32600 con su id"),
             run({"jsonrpc": "1.0", "id": 8, "method": "add"}), error(8, -32600),
             normalize=error_shape, given='{"jsonrpc": "1.0", "id": 8, "method": "add"}'),
        case(_("an invalid message without a usable id: -32600 with id null",
               "un mensaje inválido sin id utilizable: -32600 con id null"),
             run(["not", "a", "message"]), error(None, -32600), normalize=error_shape,
             given='["not", "a", "message"]'),
        case(_("a response goes to on_response, and nothing is sent back",
               "una respuesta va a on_response y no se envía nada de vuelta"),
             response_routing,
             {"returned": None, "on_response got": [{"jsonrpc": "2.0", "id": 41,
                                                     "result": {"ok": True}}]},
             given='{"jsonrpc": "2.0", "id": 41, "result": {"ok": true}}'),
    ]
    run_checks(results)


def check_serve(serve: Callable) -> None:
    """Lab 03, part 2: bytes in, bytes out, through mcpkit's own decoder and dispatcher."""
    from ..dispatch import Dispatcher

    def make() -> Any:
        d = Dispatcher()
        d.add_request("ping", lambda params, context: {})
        d.add_request("echo", lambda params, context: {"echo": params.get("text")})
        d.add_notification("notifications/initialized", lambda params, context: None)
        return d

    def lines(out: Any) -> Any:
        """The responses in ``out``, decoded, with error messages masked."""
        if not isinstance(out, bytes | bytearray):
            return out
        decoded = []
        for line in bytes(out).split(b"\n")[:-1]:
            try:
                decoded.append(error_shape(json.loads(line)))
            except ValueError:
                decoded.append(line)
        if out and not out.endswith(b"\n"):
            decoded.append(_("<bytes after the last newline>", "<bytes tras el último salto>"))
        return decoded

    ping = b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n'
    echo = '{"jsonrpc":"2.0","id":2,"method":"echo","params":{"text":"¡hola!"}}\n'.encode()
    init = b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
    pong = {"jsonrpc": "2.0", "id": 1, "result": {}}
    echoed = {"jsonrpc": "2.0", "id": 2, "result": {"echo": "¡hola!"}}

    def error(id_: Any, code: int) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": id_, "error": {"code": code, "message": "…"}}

    rows = [
        ([ping], [pong], _("one request, one response line", "una solicitud, una línea de "
                           "respuesta")),
        ([ping + echo], [pong, echoed], _("two requests in one chunk, answered in order",
                                          "dos solicitudes en un trozo, respondidas en orden")),
        ([echo[:30], echo[30:]], [echoed], _("a request split across chunks (and UTF-8 inside)",
                                             "una solicitud partida entre trozos (con UTF-8)")),
        ([init + ping], [pong], _("a notification produces no output",
                                  "una notificación no produce salida")),
        ([b"{not json}\n" + ping], [error(None, -32700), pong],
         _("a line that is not JSON: a parse error (-32700, id null), then carry on",
           "una línea que no es JSON: error de análisis (-32700, id null) y seguir")),
        ([b'{"jsonrpc":"2.0","id":3,"method":"nope"}\n'], [error(3, -32601)],
         _("an unknown method: the dispatcher's -32601 goes out",
           "un método desconocido: sale el -32601 del despachador")),
        ([b'{"jsonrpc":"2.0","id":4}\n'], [error(4, -32600)],
         _("an invalid message: the dispatcher's -32600 goes out",
           "un mensaje inválido: sale el -32600 del despachador")),
        ([ping[:5]], [], _("an unfinished message produces nothing yet",
                           "un mensaje inacabado todavía no produce nada")),
    ]
    results = [
        case(name, lambda chunks=chunks: serve(make(), chunks), expected,
             given=" + ".join(repr(c) for c in chunks), normalize=lines,
             hint=_("one encode_ndjson(response) per response, nothing for None",
                    "un encode_ndjson(respuesta) por respuesta, nada para None"))
        for chunks, expected, name in rows
    ]
    run_checks(results)
