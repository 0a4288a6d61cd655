"""Checks for lab 02 (JSON-RPC): classify, error_for, call_tool."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
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
    error_shape,
    references_for,
    run_checks,
)

#: What this lab asks the learner to write: exercise code may not use mcpkit's own.
OFF_LIMITS = {"mcpkit.jsonrpc": {"classify", "_is_id"},
              # Routes to the same checks: a dispatcher answers -32600 for what classify refuses.
              "mcpkit.dispatch": {"Dispatcher"}, "mcpkit.registry": {"Registry"},
              "mcpkit.server": {"Server"}}



def _kind_or_error(fn: Callable, message: Any) -> Callable[[], Any]:
    """What classify did: the kind it returned, or the error it raised (a Seen)."""
    return lambda: attempt(lambda: fn(message))


#: classify's answer to an invalid message: InvalidRequest raised (not returned), code -32600.
_REJECTED = Seen("InvalidRequest", (("code", -32600), ("data", None)), raised=True)


def check_classify(classify: Callable) -> None:
    """Lab 02, part 1: tell the four kinds of message apart, and reject the rest."""
    good = [
        ({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, "request"),
        ({"jsonrpc": "2.0", "id": "abc", "method": "ping", "params": {}}, "request"),
        ({"jsonrpc": "2.0", "id": 0, "method": "ping"}, "request"),
        ({"jsonrpc": "2.0", "method": "notifications/initialized"}, "notification"),
        ({"jsonrpc": "2.0", "id": 1, "result": {}}, "result"),
        ({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "Method not found"}},
         "error"),
        ({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}},
         "error"),
    ]
    names_good = [
        _("a request with an integer id", "una solicitud con id entero"),
        _("a request with a string id and params", "una solicitud con id de texto y params"),
        _("id 0 is a perfectly good id", "el id 0 es un id perfectamente válido"),
        _("a notification has no id", "una notificación no tiene id"),
        _("a result response", "una respuesta con resultado"),
        _("an error response", "una respuesta de error"),
        _("an error response with id null (the request was unreadable)",
          "una respuesta de error con id null (la solicitud era ilegible)"),
    ]
    bad = [
        ([{"jsonrpc": "2.0", "id": 1, "method": "ping"}],
         _("a JSON array (batch): not supported", "un array JSON (lote): no admitido")),
        ("ping", _("a string is not a message", "una cadena no es un mensaje")),
        ({"id": 1, "method": "ping"}, _('"jsonrpc" missing', 'falta "jsonrpc"')),
        ({"jsonrpc": "1.0", "id": 1, "method": "ping"},
         _('"jsonrpc" is not "2.0"', '"jsonrpc" no es "2.0"')),
        ({"jsonrpc": 2.0, "id": 1, "method": "ping"},
         _('"jsonrpc" is the number 2.0, not the string', '"jsonrpc" es el número 2.0, no la '
           "cadena")),
        ({"jsonrpc": "2.0", "id": 1, "method": 42}, _('"method" is not a string',
                                                      '"method" no es una cadena')),
        ({"jsonrpc": "2.0", "id": 1, "method": ""}, _('"method" is empty', '"method" está vacío')),
        ({"jsonrpc": "2.0", "id": True, "method": "ping"},
         _("id true: a boolean is not an id", "id true: un booleano no es un id")),
        ({"jsonrpc": "2.0", "id": None, "method": "ping"},
         _("a request with id null", "una solicitud con id null")),
        ({"jsonrpc": "2.0", "id": 1.5, "method": "ping"},
         _("a fractional id", "un id con decimales")),
        ({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": [1, 2]},
         _("params as an array (MCP uses named params)",
           "params como array (MCP usa parámetros con nombre)")),
        ({"jsonrpc": "2.0", "id": 1, "result": {}, "error": {"code": 1, "message": "x"}},
         _("both result and error", "result y error a la vez")),
        ({"jsonrpc": "2.0", "id": 1}, _("neither method, result nor error",
                                        "ni method, ni result, ni error")),
        ({"jsonrpc": "2.0", "result": {}}, _("a response without id", "una respuesta sin id")),
        ({"jsonrpc": "2.0", "id": 1, "result": [1, 2]},
         _("a result that is not an object", "un result que no es un objeto")),
        ({"jsonrpc": "2.0", "id": 1, "error": {"code": "oops", "message": "x"}},
         _("an error whose code is not an integer", "un error cuyo code no es un entero")),
        ({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601}},
         _("an error without a message", "un error sin message")),
    ]
    results = [
        case(name, _kind_or_error(classify, msg), kind, given=json.dumps(msg),
             hint=_("check 'id' in message, not message.get('id'): 0 is falsy",
                    "comprueba 'id' in message, no message.get('id'): 0 es falso en Python")
             if msg.get("id") == 0 else None)
        for (msg, kind), name in zip(good, names_good, strict=True)
    ]
    results += [
        case(_("invalid: ", "inválido: ") + name, _kind_or_error(classify, msg),
             _REJECTED, given=json.dumps(msg),
             hint=_("raise InvalidRequest(reason): ", "lanza InvalidRequest(motivo): ")
             + (_broken_rule(msg) or ""))
        for msg, name in bad
    ]
    results.append(classify_differential(classify))
    run_checks(results)


def check_error_for(error_for: Callable) -> None:
    """Lab 02, part 2: from one raw line to the error response it deserves (or None), on
    mcpkit's classify (so that part 1's bugs stay in part 1)."""
    from ..jsonrpc import classify

    with references_for(error_for, classify=classify):
        _check_error_for(error_for)


def _check_error_for(error_for: Callable) -> None:

    def expect(id_: Any, code: int) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": id_, "error": {"code": code, "message": ANY_TEXT}}

    parse_hint = _("not UTF-8 or not JSON: -32700 with id null",
                   "no es UTF-8 o no es JSON: -32700 con id null")
    shape_hint = _("readable JSON that classify rejects: -32600, with the message's own id "
                   "when it is a string or an integer, else null",
                   "JSON legible que classify rechaza: -32600, con el id del propio mensaje si "
                   "es una cadena o un entero; si no, null")
    rows = [
        (b'{"jsonrpc":"2.0","id":1,"method":"ping"}', None,
         _("a valid request needs no error", "una solicitud válida no necesita error")),
        (b'{"jsonrpc":"2.0","method":"notifications/initialized"}', None,
         _("a valid notification needs no error", "una notificación válida no necesita error")),
        (b'{"jsonrpc":"2.0","id":1,"method":"ping"', expect(None, -32700),
         _("truncated JSON: parse error, id null", "JSON truncado: error de análisis, id null")),
        (b'\xff\xfe', expect(None, -32700),
         _("bytes that are not UTF-8: parse error", "bytes que no son UTF-8: error de análisis")),
        (b'{"jsonrpc":"1.0","id":7,"method":"ping"}', expect(7, -32600),
         _("readable but invalid: -32600 with the message's own id",
           "legible pero inválido: -32600 con el id del propio mensaje")),
        (b'{"jsonrpc":"2.0","id":"a-1","method":5}', expect("a-1", -32600),
         _("a string id is echoed back as is", "un id de texto se devuelve tal cual")),
        (b'{"jsonrpc":"2.0","id":true,"method":"ping"}', expect(None, -32600),
         _("an unusable id (true) is answered with id null",
           "un id inservible (true) se responde con id null"),
         _("only a string or an integer id is echoed (true is a bool, 1.5 a float): else null",
           "solo se devuelve un id de texto o entero (true es un booleano, 1.5 un float); si "
           "no, null")),
        (b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]', expect(None, -32600),
         _("a batch: -32600 with id null", "un lote: -32600 con id null"),
         _("a batch is a list, not an object: it has no id to read (check it is a dict "
           "before message.get)", "un lote es una lista, no un objeto: no tiene id que leer "
           "(comprueba que es un dict antes de message.get)")),
        (b'\xef\xbb\xbf{"jsonrpc":"2.0","id":1,"method":"ping"}', expect(None, -32700),
         _("a byte order mark before the JSON: parse error",
           "una marca de orden de bytes antes del JSON: error de análisis"),
         _("decode the bytes as UTF-8 yourself: json.loads(bytes) guesses the encoding and "
           "skips a BOM", "decodifica tú los bytes como UTF-8: json.loads(bytes) adivina la "
           "codificación y se salta un BOM")),
        (b'{"jsonrpc":"2.0","id":0,"params":{}}', expect(0, -32600),
         _("no method, result or error: -32600 keeping id 0",
           "sin method, result ni error: -32600 conservando el id 0")),
        (b'{"jsonrpc":"2.0","method":"notifications/x","params":"oops"}', expect(None, -32600),
         _("an invalid notification still gets an error, with id null",
           "una notificación inválida también recibe un error, con id null")),
    ]
    results = [
        case(name, lambda raw=raw: error_for(raw), expected, given=repr(raw),
             normalize=error_shape,
             hint=more[0] if more else parse_hint if expected and expected["error"]["code"]
             == -32700 else shape_hint if expected else None)
        for raw, expected, name, *more in rows
    ]
    results.append(error_for_differential(error_for))
    run_checks(results)


def check_call_tool(call_tool: Callable) -> None:
    """Lab 02, part 3: the two kinds of error of a tools/call."""

    def divide(a: float, b: float) -> str:
        return str(a / b)

    def shout(text: str) -> str:
        return text.upper() + "!"

    tools = {"divide": divide, "shout": shout}

    def error_text(tool: Callable, **arguments: Any) -> str:
        """What str(exception) says on this Python, so the checks don't pin its wording."""
        try:
            tool(**arguments)
        except Exception as exc:
            return f"{type(exc).__name__}: {exc}"
        raise AssertionError("the sample tool was expected to fail")

    def req(params: Any, id_: Any = 1) -> dict[str, Any]:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": id_, "method": "tools/call"}
        if params is not None:
            message["params"] = params
        return message

    def ok(id_: Any, text: str, is_error: bool = False) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": id_,
                "result": {"content": [{"type": "text", "text": text}], "isError": is_error}}

    def protocol_error(id_: Any, code: int) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": id_, "error": {"code": code, "message": ANY_TEXT}}

    def shape(response: Any) -> Any:
        if isinstance(response, dict) and isinstance(response.get("result"), dict):
            return response
        return error_shape(response)

    rows = [
        (req({"name": "shout", "arguments": {"text": "hola"}}), ok(1, "HOLA!"),
         _("a tool that works: a result with one text block and \"isError\": false",
           "una herramienta que funciona: un resultado con un bloque de texto e \"isError\": "
           "false"),
         _('the result is {"content": [...], "isError": False}: isError is written on success '
           'too', 'el resultado es {"content": [...], "isError": False}: isError se escribe '
           'también cuando todo va bien')),
        (req({"name": "divide", "arguments": {"a": 1, "b": 4}}, id_="r-2"), ok("r-2", "0.25"),
         _("the response carries the request's id", "la respuesta lleva el id de la solicitud"),
         None),
        (req({"name": "divide", "arguments": {"a": 1, "b": 0}}),
         ok(1, error_text(divide, a=1, b=0), is_error=True),
         _("a tool that fails: a result with isError true and the error text",
           "una herramienta que falla: un resultado con isError true y el texto del error"),
         _("the tool ran and failed: that is a result the model should see, not a protocol "
           "error", "la herramienta se ejecutó y falló: es un resultado que el modelo debe "
           "ver, no un error de protocolo")),
        (req({"name": "divide", "arguments": {"a": 1}}),
         ok(1, error_text(divide, a=1), is_error=True),
         _("missing arguments: the tool cannot run, still a tool error (isError)",
           "faltan argumentos: la herramienta no puede ejecutarse, sigue siendo un error de "
           "herramienta (isError)"),
         _('the text is f"{type(exc).__name__}: {exc}"',
           'el texto es f"{type(exc).__name__}: {exc}"')),
        (req({"name": "shout"}), ok(1, error_text(shout), is_error=True),
         _("no arguments at all count as {}", "la ausencia de arguments equivale a {}"), None),
        (req({"name": "launch_rockets", "arguments": {}}), protocol_error(1, -32602),
         _("an unknown tool: a protocol error, -32602",
           "una herramienta desconocida: un error de protocolo, -32602"),
         _("nothing ran: answer with a JSON-RPC error object",
           "no se ejecutó nada: responde con un objeto de error JSON-RPC")),
        (req({"arguments": {}}, id_=9), protocol_error(9, -32602),
         _("no tool name: a protocol error, -32602",
           "sin nombre de herramienta: un error de protocolo, -32602"), None),
        (req(None, id_=10), protocol_error(10, -32602),
         _("no params at all: a protocol error, -32602",
           "sin params: un error de protocolo, -32602"), None),
        (req({"name": "shout", "arguments": ["hola"]}), protocol_error(1, -32602),
         _("arguments that are not an object: a protocol error, -32602",
           "arguments que no son un objeto: un error de protocolo, -32602"), None),
        (req({"name": "shout", "arguments": None}), protocol_error(1, -32602),
         _('"arguments": null is not an object either: -32602',
           '"arguments": null tampoco es un objeto: -32602'),
         _("only a missing arguments counts as {}; null is a value, and not an object",
           "solo la ausencia de arguments equivale a {}; null es un valor, y no un objeto")),
    ]
    results = [
        case(name, lambda r=request: call_tool(r, tools), expected, given=json.dumps(request),
             normalize=shape, hint=hint)
        for request, expected, name, hint in rows
    ]
    results.append(call_tool_differential(call_tool))
    run_checks(results)


# --------------------------------------------------------------------------- generated cases
#
# References: mcpkit.jsonrpc.classify, and for error_for and call_tool the composition the lab
# describes, built from mcpkit.jsonrpc. mcpkit accepts "params": null, which the lab rules out
# ("params, if present, is an object"), so generated messages never carry it.

_ABSENT = object()


def _valid_message(rng: Gen) -> dict[str, Any]:
    kind = rng.choice(["request", "notification", "result", "error"])
    m: dict[str, Any] = {"jsonrpc": "2.0"}
    if kind in ("request", "notification"):
        m["method"] = rng.choice(["ping", "tools/call", "notifications/x", "a"])
        if rng.random() < 0.5:
            m["params"] = rng.json_object()
    if kind != "notification":
        m["id"] = rng.choice([0, 1, -7, 2**53, "", "a-1", "é", rng.randint(2, 999)])
    if kind == "result":
        m["result"] = rng.json_object()
    elif kind == "error":
        if rng.random() < 0.3:
            m["id"] = None
        m["error"] = {"code": rng.choice([-32700, -32601, 0, 1]), "message": rng.text()}
        if rng.random() < 0.3:
            m["error"]["data"] = rng.json_value()
    return m


def _envelope(rng: Gen) -> Any:
    """A message of every kind, valid or with one or two fields broken: missing, of another
    JSON type (ids of every type included), or borrowed from another kind of message."""
    roll = rng.random()
    if roll < 0.06:
        return rng.choice([[], [_valid_message(rng)], "ping", 7, None, True, 1.5])
    m = _valid_message(rng)
    if roll < 0.3:
        return m
    for _i in range(rng.choice([1, 1, 2])):
        field = rng.choice(["jsonrpc", "id", "method", "params", "result", "error",
                            "error.code", "error.message"])
        action = rng.random()
        if field.startswith("error."):
            if isinstance(m.get("error"), dict):
                key = field.split(".")[1]
                if action < 0.3:
                    m["error"].pop(key, None)
                else:
                    m["error"][key] = rng.choice([rng.json_value(), True, False, None, 2.0,
                                                  "-32601", rng.text()])
        elif action < 0.3:
            m.pop(field, None)
        elif field == "id":
            m["id"] = rng.json_id()
        elif field == "params" and action < 0.5:  # mcpkit allows params: null, the lab not
            m["params"] = rng.choice([[1], "x", 3, True, []])
        else:
            value = rng.choice([rng.json_value(), rng.json_object(), "", None, 0, True,
                                {"code": 1, "message": "m"}, "2.0", 2.0, [], "ping"])
            if field == "params" and value is None:
                value = [None]
            m[field] = value
    return m


def _shrink_message(m: Any) -> Iterator[Any]:
    if isinstance(m, dict):
        for k in m:
            if k != "jsonrpc":
                yield {j: v for j, v in m.items() if j != k}
        for k, v in m.items():
            if isinstance(v, dict) and v:
                yield {**m, k: {}}


def _is_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _broken_rule(m: Any) -> str | None:
    """The first of the lab's rules (in its order) that ``m`` breaks, in words."""
    if not isinstance(m, dict):
        return _("a message is a JSON object (a list is a batch)",
                 "un mensaje es un objeto JSON (una lista es un lote)")
    if m.get("jsonrpc") != "2.0" or not isinstance(m.get("jsonrpc"), str):
        return _('"jsonrpc" is exactly the string "2.0"', '"jsonrpc" es exactamente la cadena '
                 '"2.0"')
    if "method" in m:
        if not isinstance(m["method"], str) or not m["method"]:
            return _('"method" is a non-empty string', '"method" es una cadena no vacía')
        if "result" in m or "error" in m:
            return _('a call has no "result" or "error"', 'una llamada no lleva "result" ni '
                     '"error"')
        if "params" in m and not isinstance(m["params"], dict):
            return _('"params", if present, is an object', '"params", si está, es un objeto')
        if "id" in m and not _is_id(m["id"]):
            return _("a request id is a string or an integer (not null, a bool or 1.5)",
                     "el id de una solicitud es una cadena o un entero (ni null, ni un "
                     "booleano, ni 1.5)")
        return None
    if ("result" in m) == ("error" in m):
        return _('a response has exactly one of "result" and "error"',
                 'una respuesta tiene exactamente uno de "result" y "error"')
    if "id" not in m:
        return _('a response has an "id"', 'una respuesta tiene "id"')
    if "result" in m:
        if not _is_id(m["id"]):
            return _("a result's id is a string or an integer", "el id de un resultado es una "
                     "cadena o un entero")
        if not isinstance(m["result"], dict):
            return _('"result" is an object', '"result" es un objeto')
        return None
    if m["id"] is not None and not _is_id(m["id"]):
        return _("an error's id is a string, an integer or null",
                 "el id de un error es una cadena, un entero o null")
    error = m["error"]
    if not isinstance(error, dict):
        return _('"error" is an object', '"error" es un objeto')
    if not isinstance(error.get("code"), int) or isinstance(error.get("code"), bool):
        return _('"error.code" is an integer (not a bool)', '"error.code" es un entero (no un '
                 'booleano)')
    if not isinstance(error.get("message"), str):
        return _('"error.message" is a string', '"error.message" es una cadena')
    return None


def _seen_hint(x: Any, expected: Step | None, got: Step | None) -> str | None:
    if expected is None or got is None:
        return None
    want, have = expected.seen, got.seen
    if isinstance(want, Seen) and want.raised and isinstance(have, Seen) and not have.raised:
        return _("raise the error (raise InvalidRequest(...)), do not return it",
                 "lanza el error (raise InvalidRequest(...)), no lo devuelvas")
    if isinstance(want, Seen) and want.raised and not isinstance(have, Seen):
        rule = None if isinstance(x, bytes) else _broken_rule(x)
        if rule:
            return _("this message breaks the rule: ", "este mensaje incumple la regla: ") + rule
        return _("this message breaks a rule of the envelope: look at each field's type",
                 "este mensaje incumple una regla del sobre: mira el tipo de cada campo")
    if isinstance(have, Seen) and have.raised and have.type != "InvalidRequest":
        return _("only InvalidRequest may come out: check types before you use a value",
                 "solo puede salir InvalidRequest: comprueba los tipos antes de usar un valor")
    return None


def classify_differential(classify: Callable) -> CaseResult:
    from ..jsonrpc import classify as reference

    def trial(fn: Callable, message: Any) -> list[Step]:
        return [Step(f"classify({json.dumps(message)})", attempt(lambda: fn(message)))]

    return differential(
        _("behaves like mcpkit.jsonrpc.classify on generated messages (every field of every "
          "JSON type, ids included)", "se comporta como mcpkit.jsonrpc.classify en mensajes "
          "generados (cada campo de cada tipo JSON, ids incluidos)"),
        key="lab02/classify", generate=_envelope, trial=trial, reference=reference,
        learner=classify, show=json.dumps, cases=300, shrink=_shrink_message, hint=_seen_hint)


def reference_error_for(raw: bytes) -> dict[str, Any] | None:
    """What error_for must answer, from mcpkit's own parser and classify."""
    from ..framing import FramingError, _parse
    from ..jsonrpc import PARSE_ERROR, InvalidRequest, classify, error_response, request_id_of

    message = _parse(raw)
    if isinstance(message, FramingError):
        return error_response(None, PARSE_ERROR, "Parse error")
    try:
        classify(message)
    except InvalidRequest as exc:
        return error_response(request_id_of(message), exc.code, exc.message)
    return None


def _response_seen(response: Any) -> Any:
    """A response as compared: the error's text is free, everything else counts."""
    if isinstance(response, dict) and isinstance(response.get("error"), dict):
        error = dict(response["error"])
        error["message"] = isinstance(error.get("message"), str)
        return {**response, "error": error}
    return response


def error_for_differential(error_for: Callable) -> CaseResult:
    def generate(rng: Gen) -> bytes:
        raw = json.dumps(_envelope(rng), ensure_ascii=rng.random() < 0.5).encode()
        roll = rng.random()
        if roll < 0.1:
            return raw[: rng.randrange(len(raw))]
        if roll < 0.15:
            return rng.choice([b"", b"\xff\xfe", b'{"id":"\xe9"}', b"[" * 3000 + b"]" * 3000,
                               b"NaN", b"  {}  "])
        if roll < 0.22:  # valid JSON, but not in UTF-8 (json.loads(bytes) would take it)
            text = raw.decode()
            return rng.choice([b"\xef\xbb\xbf" + raw, text.encode("utf-16"),
                               text.encode("utf-16-le"), text.encode("utf-32")])
        return raw

    def trial(fn: Callable, raw: bytes) -> list[Step]:
        return [Step(f"error_for({raw!r})", _response_seen(attempt(lambda: fn(raw))))]

    def hint(x: bytes, expected: Step | None, got: Step | None) -> str | None:
        want = expected.seen if expected else None
        have = got.seen if got else None
        if isinstance(have, Seen) and have.raised:
            try:
                value = json.loads(x.decode("utf-8"))
            except (ValueError, RecursionError):
                return _("error_for raised {t}: whatever cannot be read as JSON (RecursionError "
                         "included) is a parse error, -32700 with id null",
                         "error_for lanzó {t}: lo que no se puede leer como JSON "
                         "(RecursionError incluido) es un error de análisis, -32700 con id "
                         "null").format(t=have.type)
            if not isinstance(value, dict):
                return _("error_for raised {t} on JSON that is not an object ({k}): it has no "
                         "id to read; answer -32600 with id null",
                         "error_for lanzó {t} con un JSON que no es un objeto ({k}): no tiene "
                         "id que leer; responde -32600 con id null").format(
                             t=have.type, k=type(value).__name__)
            return _("error_for raised {t} on readable JSON: never raise; classify it and "
                     "answer -32600 if it is invalid", "error_for lanzó {t} con un JSON "
                     "legible: nunca lances; clasifícalo y responde -32600 si es inválido"
                     ).format(t=have.type)
        if isinstance(want, dict) and want.get("error", {}).get("code") == -32700 and (
                x[:3] == b"\xef\xbb\xbf" or b"\x00" in x):
            return _("these bytes are not UTF-8 JSON (a BOM, UTF-16 or UTF-32): -32700; decode "
                     "as UTF-8 yourself, json.loads(bytes) guesses the encoding",
                     "estos bytes no son JSON en UTF-8 (un BOM, UTF-16 o UTF-32): -32700; "
                     "decodifica tú como UTF-8, json.loads(bytes) adivina la codificación")
        if isinstance(want, dict) and isinstance(have, dict) and (b"NaN" in x or b"Infinity" in x):
            return _("NaN and Infinity are not JSON (RFC 8259): a parse error, -32700; "
                     "json.loads accepts them unless its parse_constant raises ValueError",
                     "NaN e Infinity no son JSON (RFC 8259): un error de análisis, -32700; "
                     "json.loads los acepta salvo que su parse_constant lance ValueError")
        if isinstance(want, dict) and isinstance(have, dict) and want.get("id") != have.get("id"):
            return _("answer with the message's own id when it is a string or an integer "
                     "(not a bool), else null", "responde con el id del propio mensaje si es "
                     "una cadena o un entero (no un booleano); si no, null")
        return _seen_hint(x, expected, got)

    return differential(
        _("behaves like mcpkit (its parser, then classify) on generated lines",
          "se comporta como mcpkit (su analizador y luego classify) en líneas generadas"),
        key="lab02/error_for", generate=generate, trial=trial, reference=reference_error_for,
        learner=error_for, show=repr, cases=300, hint=hint)


def reference_call_tool(request: dict[str, Any], tools: dict[str, Callable]) -> dict[str, Any]:
    """Lab 02's call_tool as the lab states it, on mcpkit.jsonrpc's builders."""
    from ..jsonrpc import INVALID_PARAMS, error_response, result_response

    request_id = request["id"]
    params = request.get("params")
    if not isinstance(params, dict) or not isinstance(params.get("name"), str):
        return error_response(request_id, INVALID_PARAMS, "tools/call needs a name")
    if params["name"] not in tools:
        return error_response(request_id, INVALID_PARAMS, "unknown tool")
    arguments = params.get("arguments", {})
    if not isinstance(arguments, dict):
        return error_response(request_id, INVALID_PARAMS, "arguments must be an object")
    try:
        text, is_error = tools[params["name"]](**arguments), False
    except Exception as exc:
        text, is_error = f"{type(exc).__name__}: {exc}", True
    return result_response(request_id, {"content": [{"type": "text", "text": text}],
                                        "isError": is_error})


def _sample_tools() -> dict[str, Callable]:
    def shout(text: str) -> str:
        return text.upper() + "!"

    def divide(a: float, b: float) -> str:
        return str(a / b)

    def lookup(key: str = "x") -> str:
        return {"x": "found x"}[key]

    def fail() -> str:
        raise RuntimeError("the tool itself failed")

    class QuotaExceeded(Exception):
        pass

    def quota(n: int = 1) -> str:
        raise QuotaExceeded(f"{n} over quota")

    def pending() -> str:
        raise ConnectionError("the backend is down")

    return {"shout": shout, "divide": divide, "lookup": lookup, "fail": fail, "quota": quota,
            "pending": pending}


def call_tool_differential(call_tool: Callable) -> CaseResult:
    def generate(rng: Gen) -> dict[str, Any]:
        request: dict[str, Any] = {"jsonrpc": "2.0", "method": "tools/call",
                                   "id": rng.choice([1, 0, "r-1", rng.randint(2, 99)])}
        roll = rng.random()
        if roll < 0.08:
            return request  # no params
        if roll < 0.14:
            request["params"] = rng.choice([[], "shout", 3, True])
            return request
        params: dict[str, Any] = {}
        name = rng.choice(["shout", "divide", "lookup", "fail", "shout", "nope", 5, None,
                           "quota", "pending",
                           [], {"n": 1}, _ABSENT])
        if name is not _ABSENT:
            params["name"] = name
        arguments = rng.choice([
            {"text": rng.text()}, {"a": rng.randint(-3, 3), "b": rng.randint(-1, 2)},
            {"key": rng.choice(["x", "y"])}, {}, {"text": "a", "extra": 1}, {"b": 1},
            None, [], ["hola"], "text", 0, _ABSENT, _ABSENT])
        if arguments is not _ABSENT:
            params["arguments"] = arguments
        request["params"] = params
        return request

    def trial(fn: Callable, request: dict[str, Any]) -> list[Step]:
        got = attempt(lambda: fn(json.loads(json.dumps(request)), _sample_tools()))
        return [Step(f"call_tool({json.dumps(request)}, tools)", _response_seen(got))]

    def hint(x: dict[str, Any], expected: Step | None, got: Step | None) -> str | None:
        params = x.get("params")
        if isinstance(params, dict) and params.get("arguments", {}) is None:
            return _('"arguments": null is not an object: -32602, not {}',
                     '"arguments": null no es un objeto: -32602, no {}')
        if isinstance(params, dict) and "arguments" in params and not params["arguments"] \
                and not isinstance(params["arguments"], dict):
            return _("these arguments are present and not an object: -32602 (`or {}` turns "
                     "[], \"\", 0 and false into {})", "estos arguments están presentes y no "
                     "son un objeto: -32602 (`or {}` convierte [], \"\", 0 y false en {})")
        have = got.seen if got else None
        if isinstance(have, Seen) and have.raised:
            return _("call_tool raised {t}: a tool's exception, whatever its class, becomes a "
                     "result with isError true; a bad request, a -32602 error",
                     "call_tool lanzó {t}: la excepción de una herramienta, sea de la clase "
                     "que sea, es un resultado con isError true; una solicitud mala, un error "
                     "-32602").format(t=have.type)
        return _("a tool that cannot be called is -32602; a tool that ran and failed is a "
                 "result with isError true", "una herramienta que no se puede llamar es "
                 "-32602; una que se ejecutó y falló es un resultado con isError true")

    return differential(
        _("behaves like the reference call_tool on generated requests (names, arguments of "
          "every JSON type, failing tools)", "se comporta como el call_tool de referencia en "
          "solicitudes generadas (nombres, arguments de cada tipo JSON, herramientas que "
          "fallan)"),
        key="lab02/call_tool", generate=generate, trial=trial, reference=reference_call_tool,
        learner=call_tool, show=json.dumps, cases=200, shrink=_shrink_message, hint=hint)
