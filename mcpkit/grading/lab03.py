"""Checks for lab 03 (dispatch): a dispatcher, and serve() from bytes to bytes."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any

from .core import (
    ANY_TEXT,
    CaseResult,
    Gen,
    Seen,
    Step,
    _,
    attempt,
    case,
    differential,
    drop_each,
    error_shape,
    errors_logged,
    run_checks,
    shared_state,
)

#: What this lab asks the learner to write: exercise code may not use mcpkit's own.
OFF_LIMITS = {"mcpkit.dispatch": {"Dispatcher"},
              # A server's registry holds a Dispatcher: Registry("x").dispatcher is the reference.
              "mcpkit.registry": {"Registry"}, "mcpkit.server": {"Server"}}


def _tracebacks_logged() -> int:
    """How many records of level ERROR or above, with a traceback (log.exception), the code
    being checked has logged so far."""
    from . import core

    collector = core._collector
    if collector is None:
        return 0
    # log.exception outside an except block records exc_info (None, None, None): no traceback
    return sum(r.levelno >= logging.ERROR and bool(r.exc_info) and r.exc_info[0] is not None
               for r in collector.records)



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
        return {"jsonrpc": "2.0", "id": id_, "error": {"code": code, "message": ANY_TEXT}}

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

    def traceback_logged() -> Any:
        d, _seen, _responses = build()
        before = _tracebacks_logged()
        d.dispatch(req(5, "boom"))
        return {"logged with its traceback": _tracebacks_logged() > before}

    def no_listener() -> Any:
        d = cls()
        return {"returned": d.dispatch({"jsonrpc": "2.0", "id": 41, "result": {"ok": True}})}

    def leaks() -> Any:
        d, _seen, _responses = build()
        response = d.dispatch(req(5, "boom"))
        text = json.dumps(response)
        return {"code": response["error"]["code"], "leaks the exception text":
                _leaks(text, "secret path /home/ana/notes.db is locked")}

    results = [
        case(_("a request gets the handler's result", "una solicitud recibe el resultado del "
               "manejador"), run(req(1, "add", {"a": 2, "b": 3})), result(1, {"sum": 5}),
             given=json.dumps(req(1, "add", {"a": 2, "b": 3}))),
        case(_("id 0 is a request like any other", "el id 0 es una solicitud como cualquier "
               "otra"), run(req(0, "add", {"a": 1, "b": 1})), result(0, {"sum": 2}),
             given=json.dumps(req(0, "add", {"a": 1, "b": 1})),
             hint=lambda got: None if isinstance(got, dict) and got.get("id") == 0 else _(
                 "test 'id' in message: 0 is falsy", "comprueba 'id' in message: 0 es falso "
                 "en Python")),
        case(_("handlers get (params, context)", "los manejadores reciben (params, context)"),
             run(req("x", "echo", {"k": 1}), context="ctx"),
             result("x", {"params": {"k": 1}, "context": "ctx"}),
             given="dispatch(" + json.dumps(req("x", "echo", {"k": 1})) + ", context='ctx')"),
        case(_("missing params reach the handler as {}", "params ausentes llegan al manejador "
               "como {}"), run(req(2, "echo")), result(2, {"params": {}, "context": None}),
             given=json.dumps(req(2, "echo"))),
        case(_('"params": null reaches the handler as {}', '"params": null llega al manejador '
               "como {}"), run({**req(2, "echo"), "params": None}),
             result(2, {"params": {}, "context": None}),
             given=json.dumps({**req(2, "echo"), "params": None}),
             hint=_('message.get("params", {}) gives None for "params": null; '
                    'message.get("params") or {} gives {}',
                    'message.get("params", {}) da None con "params": null; '
                    'message.get("params") or {} da {}')),
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
             hint=_("any exception that is not a JsonRpcError: -32603 (jsonrpc.INTERNAL_ERROR) "
                    "with a short generic message; the traceback goes to the log",
                    "cualquier excepción que no sea JsonRpcError: -32603 "
                    "(jsonrpc.INTERNAL_ERROR) con un mensaje genérico y breve; la traza va al "
                    "registro")),
        case(_("a handler that crashes is logged with its traceback (log.exception)",
               "un manejador que falla se registra con su traza (log.exception)"),
             traceback_logged, {"logged with its traceback": True},
             given=json.dumps(req(5, "boom")),
             hint=_("log.error(...) leaves the traceback out; log.exception(...) inside the "
                    "except block keeps it", "log.error(...) deja fuera la traza; "
                    "log.exception(...) dentro del bloque except la conserva")),
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
             given=json.dumps(note("notifications/unknown")),
             hint=_("a notification is never answered, not even with -32601: there is nobody "
                    "waiting for an answer", "una notificación nunca se responde, ni siquiera "
                    "con -32601: nadie espera la respuesta")),
        case(_("an invalid message: -32600 with its id", "un mensaje inválido: -32600 con su id"),
             run({"jsonrpc": "1.0", "id": 8, "method": "add"}), error(8, -32600),
             normalize=error_shape, given='{"jsonrpc": "1.0", "id": 8, "method": "add"}'),
        case(_("an invalid message without a usable id: -32600 with id null",
               "un mensaje inválido sin id utilizable: -32600 con id null"),
             run(["not", "a", "message"]), error(None, -32600), normalize=error_shape,
             given='["not", "a", "message"]',
             hint=_("answer with jsonrpc.request_id_of(message): it gives None for a message "
                    "that is not an object or has no usable id",
                    "responde con jsonrpc.request_id_of(message): da None para un mensaje que "
                    "no es un objeto o no tiene un id utilizable")),
        case(_("an invalid message with id true: -32600 with id null",
               "un mensaje inválido con id true: -32600 con id null"),
             run({"jsonrpc": "2.0", "id": True, "method": "add"}), error(None, -32600),
             normalize=error_shape, given='{"jsonrpc": "2.0", "id": true, "method": "add"}',
             hint=_("answer with jsonrpc.request_id_of(message): true is not an id",
                    "responde con jsonrpc.request_id_of(message): true no es un id")),
        case(_("a response goes to on_response, and nothing is sent back",
               "una respuesta va a on_response y no se envía nada de vuelta"),
             response_routing,
             {"returned": None, "on_response got": [{"jsonrpc": "2.0", "id": 41,
                                                     "result": {"ok": True}}]},
             given='{"jsonrpc": "2.0", "id": 41, "result": {"ok": true}}'),
        case(_("a response with no on_response given: dropped, nothing raised",
               "una respuesta sin on_response: se descarta, sin lanzar nada"),
             no_listener, {"returned": None},
             given='Dispatcher() ; dispatch({"jsonrpc": "2.0", "id": 41, "result": {"ok": true}})',
             hint=_("on_response is optional: call it only if it was given (not None)",
                    "on_response es opcional: llámalo solo si se dio (no None)")),
    ]
    results.append(dispatcher_differential(cls))
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
        if out and not out.endswith(b"\n"):  # what came after the last newline, as it came
            decoded.append(bytes(out).rsplit(b"\n", 1)[-1])
        return decoded

    ping = b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n'
    echo = '{"jsonrpc":"2.0","id":2,"method":"echo","params":{"text":"¡hola!"}}\n'.encode()
    init = b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
    pong = {"jsonrpc": "2.0", "id": 1, "result": {}}
    echoed = {"jsonrpc": "2.0", "id": 2, "result": {"echo": "¡hola!"}}

    def error(id_: Any, code: int) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": id_, "error": {"code": code, "message": ANY_TEXT}}

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
        ([b'{"t":"\xff"}\n' + ping], [error(None, -32700), pong],
         _("a line that is not UTF-8: a parse error too (any FramingError item)",
           "una línea que no es UTF-8: también un error de análisis (cualquier elemento "
           "FramingError)")),
        ([b"7\n" + ping], [error(None, -32600), pong],
         _("a JSON scalar is readable but not a message: the dispatcher's -32600",
           "un escalar JSON es legible pero no es un mensaje: el -32600 del despachador")),
        ([b'{"jsonrpc":"2.0","id":3,"method":"nope"}\n'], [error(3, -32601)],
         _("an unknown method: the dispatcher's -32601 goes out",
           "un método desconocido: sale el -32601 del despachador")),
        ([b'{"jsonrpc":"2.0","id":4}\n'], [error(4, -32600)],
         _("an invalid message: the dispatcher's -32600 goes out",
           "un mensaje inválido: sale el -32600 del despachador")),
        ([ping[:5]], [], _("an unfinished message produces nothing yet",
                           "un mensaje inacabado todavía no produce nada")),
        ([b'[{"jsonrpc":"2.0","id":5,"method":"ping"},{"jsonrpc":"2.0","id":6,'
          b'"method":"ping"}]\n'], [error(None, -32600)],
         _("a JSON array (a batch) is one item: the dispatcher's -32600",
           "un array JSON (un lote) es un solo elemento: el -32600 del despachador")),
    ]
    results = [
        case(name, lambda chunks=chunks: serve(make(), chunks), expected,
             given=" + ".join(repr(c) for c in chunks), normalize=lines,
             hint=_("one encode_ndjson(response) per response, nothing for None",
                    "un encode_ndjson(respuesta) por respuesta, nada para None"))
        for chunks, expected, name in rows
    ]
    # Messages the size of the decoder's limit, shown by their shape, not their bytes.
    text = "x" * 100_000
    long_echo = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "echo",
                            "params": {"text": text}}).encode() + b"\n"
    results.append(case(
        _("a long request (100 kB) is answered like any other",
          "una solicitud larga (100 kB) se responde como cualquier otra"),
        lambda: serve(make(), [long_echo]), [{"jsonrpc": "2.0", "id": 2,
                                              "result": {"echo": text}}],
        given='{"jsonrpc":"2.0","id":2,"method":"echo","params":{"text":"x" * 100000}}\n',
        normalize=lines, hint=_("framing.NdjsonDecoder() with its default limit (4 MiB): a "
                                "smaller one refuses honest messages",
                                "framing.NdjsonDecoder() con su límite por defecto (4 MiB): "
                                "uno menor rechaza mensajes legítimos")))
    from ..framing import DEFAULT_MAX_MESSAGE_SIZE

    huge = b'{"jsonrpc":"2.0","id":3,"method":"echo","params":{"text":"' + \
        b"x" * DEFAULT_MAX_MESSAGE_SIZE + b'"}}\n'
    results.append(case(
        _("a message over the decoder's limit (MessageTooLarge): -32700, id null, then carry "
          "on", "un mensaje que supera el límite del decodificador (MessageTooLarge): -32700, "
          "id null, y seguir"),
        lambda: serve(make(), [huge, ping]), [error(None, -32700), pong],
        given='{"jsonrpc":"2.0","id":3,"method":"echo","params":{"text":"x" * 4194304}}\n + '
              + repr(ping), normalize=lines,
        hint=_("MessageTooLarge is a FramingError: a parse error (-32700, id None) like the "
               "others", "MessageTooLarge es un FramingError: un error de análisis (-32700, "
               "id None) como los demás")))
    results.append(case(
        _("the output is one bytes value", "la salida es un único valor bytes"),
        lambda: type(serve(make(), [ping])).__name__, "bytes", given=repr(ping),
        hint=_("return bytes(out): a bytearray is not bytes", "devuelve bytes(out): un "
               "bytearray no es bytes")))
    results.append(serve_differential(serve))
    run_checks(results)


# --------------------------------------------------------------------------- generated cases
#
# The reference is mcpkit.dispatch.Dispatcher. Each generated case builds one or two
# dispatchers with random tables (the same method name may be a request in one table and a
# notification in the other, or registered twice), then sends them random messages. Handlers
# echo what they were given, raise JsonRpcErrors with data of any JSON type, or crash, and
# notification handlers write down every call, so passing params, context and errors along
# is all observed.

_METHODS = ("ping", "add", "tools/list", "notifications/progress", "notes/get")
_SECRET = "secret /home/ana/notes.db"


def _handler(kind: str, tag: int, behaviour: tuple, log: list) -> Callable[[Any, Any], Any]:
    def handle(params: Any, context: Any) -> Any:
        from ..jsonrpc import InvalidParams, JsonRpcError

        log.append({"handler": f"{kind} {tag}", "params": params, "context": context})
        what = behaviour[0]
        if what == "error":
            raise JsonRpcError(behaviour[1], behaviour[2], behaviour[3])
        if what == "invalid":
            raise InvalidParams(behaviour[1])
        if what == "crash":
            raise behaviour[1](_SECRET)
        return {"handled by": f"{kind} {tag}", "params": params}

    return handle


@dataclass(frozen=True)
class DispatchCase:
    tables: tuple[tuple[tuple[str, str, tuple], ...], ...]  # per dispatcher: (kind, method, how)
    messages: tuple[tuple[int, Any, Any], ...]  # (which dispatcher, message, context)
    deaf: tuple[int, ...] = ()  # dispatchers made without on_response


def _behaviour(rng: Gen) -> tuple:
    roll = rng.random()
    if roll < 0.5:
        return ("echo",)
    if roll < 0.7:
        return ("error", rng.choice([-32002, -32001, 1, -32602]), rng.text(),
                rng.choice([None, None, {"uri": "notes://9"}, [1, 2], "why", 0, False]))
    if roll < 0.8:
        return ("invalid", "name is required")
    return ("crash", rng.choice([RuntimeError, KeyError, ValueError, ZeroDivisionError]))


def _dispatch_message(rng: Gen) -> Any:
    roll = rng.random()
    method = rng.choice([*_METHODS, "unknown/method"])
    params = rng.choice([{}, {"a": 1, "b": 2}, rng.json_object(), None, "null"])
    if roll < 0.45:
        m: dict[str, Any] = {"jsonrpc": "2.0", "id": rng.choice([1, 0, "a", "", -5,
                                                                 rng.randint(2, 99)]),
                             "method": method}
    elif roll < 0.75:
        m = {"jsonrpc": "2.0", "method": method}
    elif roll < 0.85:
        m = {"jsonrpc": "2.0", "id": rng.randint(0, 9),
             **rng.choice([{"result": {"ok": True}},
                           {"error": {"code": -32601, "message": "nope"}},
                           # responses classify refuses: -32600, never on_response
                           {"result": 5}, {"error": "bad"},
                           {"error": {"code": "x", "message": "m"}},
                           {"result": {}, "error": {"code": 1, "message": "x"}}])}
        if rng.random() < 0.15:
            del m["id"]  # a response must carry its request's id
    else:
        return rng.choice([{"jsonrpc": "1.0", "id": 8, "method": "add"}, ["not", "a", "message"],
                           {"jsonrpc": "2.0", "id": True, "method": "ping"},
                           {"jsonrpc": "2.0", "id": 4}, {"jsonrpc": "2.0", "method": 5},
                           {"jsonrpc": "2.0", "id": 3, "method": "ping", "params": [1]}, "ping"])
    if params is not None:
        m["params"] = None if params == "null" else params
    return m


def _dispatch_case(rng: Gen) -> DispatchCase:
    count = 2 if rng.random() < 0.4 else 1
    tables = tuple(
        tuple((rng.choice(["request", "request", "notification"]), rng.choice(_METHODS),
               _behaviour(rng)) for _i in range(rng.randint(1, 6)))
        for _d in range(count))
    messages = tuple((rng.randrange(count), _dispatch_message(rng),
                      rng.choice([None, "ctx", {"user": "ana"}]))
                     for _i in range(rng.randint(1, 8)))
    deaf = tuple(i for i in range(count) if rng.random() < 0.25)
    return DispatchCase(tables, messages, deaf)


def _returned() -> str:
    return _("returned", "devolvió")


def _called() -> str:
    return _("handlers called", "manejadores llamados")


def _routed() -> str:
    return _("on_response got", "on_response recibió")


def _logged() -> str:
    return _("logged an error", "registró un error")


def _traced() -> str:
    return _("logged a traceback", "registró una traza")


def _dispatch_seen(response: Any, free: tuple[int, ...] = (-32601, -32603)) -> Any:
    """A response as compared. Text is free where the dispatcher writes its own (-32601,
    -32603; serve's -32700 too), but not empty, and no part of a crash's text may be in it;
    -32601 keeps MethodNotFound's data. A -32600 is classify's error, and a handler's own
    JsonRpcError, which must both arrive whole: code, message and data."""
    if not isinstance(response, dict) or not isinstance(response.get("error"), dict):
        return response
    error = response["error"]
    shaped: dict[str, Any] = {k: v for k, v in response.items() if k != "error"}
    if error.get("code") in free:
        message = error.get("message")
        shaped["error"] = {"code": error.get("code"),
                           _("message is a text, not empty", "message es un texto no vacío"):
                           isinstance(message, str) and message.strip() != ""}
        if error.get("code") == -32601:
            shaped["error"]["data"] = error.get("data")
        shaped[_("leaks the exception", "filtra la excepción")] = _leaks(
            json.dumps(response, default=repr), _SECRET)
    else:
        shaped["error"] = error
    return shaped


def _leaks(text: str, secret: str) -> bool:
    """Whether ``text`` repeats a distinctive part of an exception's text ``secret`` (a word
    of five characters or more: "secret", a path, "locked"), not only the whole of it."""
    return any(len(word) >= 5 and word in text for word in re.split(r"[\s/]+", secret))


def _dispatch_trial(cls: type, x: DispatchCase) -> list[Step]:
    logs: list[list] = []
    responses: list[list] = []
    dispatchers = []
    for i, table in enumerate(x.tables):
        log: list = []
        got: list = []
        if i in x.deaf:
            made = attempt(lambda: cls(), plain=False)
        else:
            made = attempt(lambda got=got: cls(on_response=got.append), plain=False)
        if isinstance(made, Seen):
            return [Step("Dispatcher()" if i in x.deaf else "Dispatcher(on_response=...)",
                         made)]
        for tag, (kind, method, how) in enumerate(table):
            add = getattr(made, "add_request" if kind == "request" else "add_notification")
            handler = _handler(kind, tag, how, log)
            added = attempt(lambda add=add, m=method, h=handler: add(m, h))
            if isinstance(added, Seen) and added.raised:
                return [Step(f"d{i}.add_{kind}({method!r}, ...)", added)]
        dispatchers.append(made)
        logs.append(log)
        responses.append(got)
    steps = []
    for i, message, context in x.messages:
        before = len(logs[i]), len(responses[i]), errors_logged(), _tracebacks_logged()
        out = attempt(lambda d=dispatchers[i], m=message, c=context: d.dispatch(
            json.loads(json.dumps(m)), c))
        seen = {_returned(): _dispatch_seen(out), _called(): logs[i][before[0]:],
                _routed(): responses[i][before[1]:], _logged(): errors_logged() > before[2]}
        if isinstance(message, dict) and "id" in message and "method" in message:
            seen[_traced()] = _tracebacks_logged() > before[3]
        steps.append(Step(f"d{i}.dispatch({json.dumps(message)}, context={context!r})", seen))
    return steps


def _show_dispatch(x: DispatchCase) -> str:
    parts = []
    for i, table in enumerate(x.tables):
        for tag, (kind, method, how) in enumerate(table):
            what = {"echo": "returns what it got", "invalid": "raise InvalidParams(...)",
                    "crash": f"raise {getattr(how[-1], '__name__', '')}(...)"}.get(how[0], "")
            if how[0] == "error":
                what = f"raise JsonRpcError({how[1]}, {how[2]!r}, {how[3]!r})"
            parts.append(f"d{i}.add_{kind}({method!r}, <{kind} {tag}: {what}>)")
    made = ", ".join(f"d{i} = Dispatcher()" if i in x.deaf else
                     f"d{i} = Dispatcher(on_response=...)" for i in range(len(x.tables)))
    parts = [made, *parts]
    parts += [f"d{i}.dispatch({json.dumps(m)}, {c!r})" for i, m, c in x.messages]
    return " ; ".join(parts)


def _shrink_dispatch(x: DispatchCase) -> Iterator[DispatchCase]:
    for smaller in drop_each(list(x.messages)):
        yield replace(x, messages=tuple(smaller))
    for d, table in enumerate(x.tables):
        for smaller in drop_each(list(table)):
            yield replace(x, tables=(*x.tables[:d], tuple(smaller), *x.tables[d + 1 :]))


def _dispatch_hint(x: DispatchCase, expected: Step | None, got: Step | None) -> str | None:
    if expected is None or got is None or not isinstance(got.seen, dict):
        return None
    want, have = expected.seen, got.seen
    called_w, called_h = want.get(_called()) or [], have.get(_called()) or []
    if [c.get("handler") for c in called_w] == [c.get("handler") for c in called_h] \
            and called_w != called_h:
        return _("handlers get (params, context): params {} when the message has none, and "
                 "the context dispatch() was given", "los manejadores reciben (params, "
                 "context): params {} si el mensaje no trae, y el context que recibió "
                 "dispatch()")
    if called_w != called_h:
        return _("requests and notifications have separate tables: a notification never "
                 "runs a request handler, nor the other way round",
                 "las solicitudes y las notificaciones tienen tablas separadas: una "
                 "notificación nunca ejecuta un manejador de solicitud, ni al revés")
    w_out = want.get(_returned())
    if isinstance(w_out, dict) and isinstance(w_out.get("error"), dict) \
            and w_out["error"].get("code") == -32600 \
            and (have.get(_routed()) or have.get(_returned()) is None):
        return _("classify(message) first, for responses too: one it refuses (a result that "
                 "is not an object, an error without code and message, no id) is answered "
                 "with -32600 and never reaches on_response",
                 "primero classify(message), también para las respuestas: una que rechace (un "
                 "result que no es un objeto, un error sin code ni message, una respuesta sin "
                 "id) se responde con -32600 y nunca llega a on_response")
    if want.get(_routed()) != have.get(_routed()):
        return _("a response (result or error) goes to on_response, and dispatch() returns "
                 "None", "una respuesta (result o error) va a on_response, y dispatch() "
                 "devuelve None")
    if have.get(_returned()) is not None and isinstance(have.get(_returned()), Seen) \
            and have[_returned()].raised and have[_returned()].type in ("TypeError",
                                                                       "AttributeError"):
        if any(i in x.deaf for i, m, _c in x.messages if isinstance(m, dict)
               and "method" not in m):
            return _("on_response is optional: call it only if it was given (not None)",
                     "on_response es opcional: llámalo solo si se dio (no None)")
    if want.get(_logged()) == have.get(_logged()) and want.get(_traced()) != have.get(_traced()):
        return _("log a crashing request handler with log.exception(...) inside the except "
                 "block: log.error leaves the traceback out",
                 "registra un manejador de solicitud que falla con log.exception(...) dentro "
                 "del bloque except: log.error deja fuera la traza")
    if want.get(_logged()) != have.get(_logged()):
        return _("a handler that crashes is logged locally, with log.exception(...), and only "
                 "then answered (or, for a notification, forgotten)",
                 "un manejador que falla se registra localmente, con log.exception(...), y solo "
                 "después se responde (o, si es una notificación, se olvida)")
    w, h = want.get(_returned()), have.get(_returned())
    if isinstance(w, dict) and w.get("id", 0) is None and isinstance(h, dict) \
            and h.get("id") is not None:
        return _("answer an invalid message with jsonrpc.request_id_of(message): None when it "
                 "has no usable id", "responde a un mensaje inválido con "
                 "jsonrpc.request_id_of(message): None si no tiene un id utilizable")
    if isinstance(w, dict) and w.get("error", {}).get("code") == -32603 and isinstance(h, dict) \
            and isinstance(h.get("error"), dict) and h["error"].get("code") != -32603:
        return _("an exception that is not a JsonRpcError is answered with -32603 "
                 "(jsonrpc.INTERNAL_ERROR)", "una excepción que no es JsonRpcError se responde "
                 "con -32603 (jsonrpc.INTERNAL_ERROR)")
    if w is None and isinstance(h, dict) and isinstance(h.get("error"), dict):
        return _("a notification (no id) is never answered, whatever happens",
                 "una notificación (sin id) nunca se responde, pase lo que pase")
    codes = [r["error"].get("code") for r in (w, h)
             if isinstance(r, dict) and isinstance(r.get("error"), dict)]
    same_code = codes[0] if len(codes) == 2 and codes[0] == codes[1] else None
    if same_code == -32600:
        return _("answer an invalid message with the error classify raised, as it is: "
                 "error_response_from(request_id_of(message), exc) keeps its message (the "
                 "reason the message is invalid)",
                 "responde a un mensaje inválido con el error que lanzó classify, tal cual: "
                 "error_response_from(request_id_of(message), exc) conserva su mensaje (el "
                 "motivo por el que el mensaje es inválido)")
    if same_code == -32601:
        return _("answer an unknown method with MethodNotFound(method): its data names the "
                 "method", "responde a un método desconocido con MethodNotFound(method): su "
                 "data nombra el método")
    if isinstance(w, dict) and isinstance(h, dict) and w.get("error") != h.get("error"):
        return _("a JsonRpcError from a handler goes out whole: error_response_from(id, exc) "
                 "keeps its code, message and data",
                 "un JsonRpcError de un manejador sale entero: error_response_from(id, exc) "
                 "conserva su code, message y data")
    return None


def dispatcher_differential(cls: type) -> CaseResult:
    from ..dispatch import Dispatcher

    return differential(
        _("behaves like mcpkit's Dispatcher on generated tables and messages (two "
          "dispatchers side by side)", "se comporta como el Dispatcher de mcpkit en tablas y "
          "mensajes generados (dos despachadores a la vez)"),
        key="lab03/dispatcher", generate=_dispatch_case, trial=_dispatch_trial,
        reference=Dispatcher, learner=cls, show=_show_dispatch, cases=150,
        shrink=_shrink_dispatch,
        hint=lambda x, e, g: _shared_hint(cls) or _dispatch_hint(x, e, g))


def _shared_hint(cls: type) -> str | None:
    names = shared_state(cls)
    if not names:
        return None
    return _("two dispatchers must not share their tables: the class body holds {names}; "
             "assign them in __init__ (self.{first} = {{}})",
             "dos despachadores no deben compartir sus tablas: el cuerpo de la clase guarda "
             "{names}; asígnalas en __init__ (self.{first} = {{}})").format(
                 names=", ".join(names), first=names[0])


def reference_serve(dispatcher: Any, chunks: list[bytes]) -> bytes:
    """serve() as the lab states it, on mcpkit's decoder, dispatcher and encoder."""
    from .. import framing, jsonrpc

    decoder = framing.NdjsonDecoder()
    out = bytearray()
    for chunk in chunks:
        for item in decoder.feed(chunk):
            if isinstance(item, framing.FramingError):
                response = jsonrpc.error_response(None, jsonrpc.PARSE_ERROR, "Parse error")
            else:
                response = dispatcher.dispatch(item)
            if response is not None:
                out += framing.encode_ndjson(response)
    return bytes(out)


def serve_differential(serve: Callable) -> CaseResult:
    from ..dispatch import Dispatcher

    def make() -> Any:
        d = Dispatcher()
        d.add_request("ping", lambda params, context: {})
        d.add_request("echo", lambda params, context: {"echo": params.get("text")})
        d.add_notification("notifications/initialized", lambda params, context: None)
        return d

    def generate(rng: Gen) -> list[bytes]:
        lines = []
        for _i in range(rng.randint(1, 6)):
            roll = rng.random()
            if roll < 0.6:
                message: Any = {"jsonrpc": "2.0", "id": rng.choice([1, 0, "x", rng.randint(2, 9)]),
                                "method": rng.choice(["ping", "echo", "nope"]),
                                "params": {"text": rng.text()}}
                if rng.random() < 0.2:
                    message = {"jsonrpc": "2.0", "method": "notifications/initialized"}
                lines.append(json.dumps(message, ensure_ascii=False).encode())
            elif roll < 0.8:
                lines.append(rng.choice([b"{not json}", b'{"t":"\xff"}', b"", b"[1]",
                                         b'[{"jsonrpc":"2.0","id":5,"method":"ping"},'
                                         b'{"jsonrpc":"2.0","id":6,"method":"ping"}]',
                                         b'{"jsonrpc":"2.0","id":4}', b"7", b"null",
                                         b'"ping"', b"NaN", b"\xc3(", b"  \r"]))
            else:
                lines.append(b'{"jsonrpc":"2.0","id":9,"result":{}}')
        return rng.split(b"\n".join(lines) + b"\n")

    def trial(fn: Callable, chunks: list[bytes]) -> list[Step]:
        out = attempt(lambda: fn(make(), list(chunks)))
        if not isinstance(out, bytes | bytearray):
            return [Step("serve(dispatcher, chunks)", out)]
        lines: list[Any] = []
        for line in bytes(out).split(b"\n")[:-1]:
            try:
                lines.append(_dispatch_seen(json.loads(line), free=(-32601, -32603, -32700)))
            except ValueError:
                lines.append(line)
        return [Step("serve(dispatcher, chunks)", {
            _("responses", "respuestas"): lines,
            _("ends with a newline", "termina en un salto de línea"):
                bytes(out).endswith(b"\n") or not out})]

    return differential(
        _("behaves like mcpkit's decoder + dispatcher + encoder on generated byte streams",
          "se comporta como el decodificador + despachador + codificador de mcpkit en flujos "
          "de bytes generados"),
        key="lab03/serve", generate=generate, trial=trial, reference=reference_serve,
        learner=serve, show=lambda chunks: " + ".join(repr(c) for c in chunks), cases=100,
        shrink=drop_each,
        hint=lambda x, e, g: _("one encode_ndjson(response) per response, nothing for None; "
                               "a FramingError item is a parse error (-32700, id null)",
                               "un encode_ndjson(respuesta) por respuesta, nada para None; "
                               "un elemento FramingError es un error de análisis (-32700, id "
                               "null)"))
