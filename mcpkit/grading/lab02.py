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
#: Either of two answers, where the lab leaves the choice to the learner.
_EITHER = "request | InvalidRequest (-32600)"


def check_classify(classify: Callable) -> None:
    """Lab 02, part 1: tell the four kinds of message apart, and reject the rest."""
    # (message, its kind, the case's name, the hint when it is refused: only where the fault
    # is not plain from the rule)
    good = [
        ({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, "request",
         _("a request with an integer id", "una solicitud con id entero"), None),
        ({"jsonrpc": "2.0", "id": "abc", "method": "ping", "params": {}}, "request",
         _("a request with a string id and params", "una solicitud con id de texto y params"),
         None),
        ({"jsonrpc": "2.0", "id": 0, "method": "ping"}, "request",
         _("id 0 is a perfectly good id", "el id 0 es un id perfectamente válido"),
         _("check 'id' in message, not message.get('id'): 0 is falsy",
           "comprueba 'id' in message, no message.get('id'): 0 es falso en Python")),
        ({"jsonrpc": "2.0", "method": "notifications/initialized"}, "notification",
         _("a notification has no id", "una notificación no tiene id"), None),
        ({"jsonrpc": "2.0", "id": 1, "result": {}}, "result",
         _("a result response", "una respuesta con resultado"), None),
        ({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "Method not found"}},
         "error", _("an error response", "una respuesta de error"), None),
        ({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}},
         "error", _("an error response with id null (the request was unreadable)",
                    "una respuesta de error con id null (la solicitud era ilegible)"), None),
        ({"jsonrpc": "2.0", "id": 3, "method": "ping", "trace": "t-1"}, "request",
         _("a member outside the envelope is allowed and ignored",
           "un miembro ajeno al sobre se admite y se ignora"),
         _("the rules say what each member must be, not which members may exist: ignore any "
           "other", "las reglas dicen cómo debe ser cada miembro, no qué miembros pueden "
           "existir: ignora los demás")),
        ({"jsonrpc": "2.0", "id": 2**53 + 1, "method": "ping"}, "request",
         _("any integer is an id, however large", "cualquier entero es un id, por grande que sea"),
         _("an id is any integer: do not bound it", "un id es cualquier entero: no le pongas "
           "límite")),
        ({"jsonrpc": "2.0", "method": " "}, "notification",
         _('a method " " is a non-empty string', 'un method " " es una cadena no vacía'),
         _('non-empty means not "": do not strip the method first',
           'no vacía significa distinta de "": no le quites los espacios antes')),
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
        ({"jsonrpc": "2.0.1", "id": 1, "method": "ping"},
         _('"jsonrpc" is "2.0.1": it contains "2.0" but is not exactly "2.0"',
           '"jsonrpc" es "2.0.1": contiene "2.0" pero no es exactamente "2.0"')),
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
        ({"jsonrpc": "2.0", "id": None, "result": {}},
         _("a result with id null", "un resultado con id null")),
        ({"jsonrpc": "2.0", "id": True, "error": {"code": 1, "message": "x"}},
         _("an error with id true: a boolean is not an id",
           "un error con id true: un booleano no es un id")),
        ({"jsonrpc": "2.0", "id": 1, "error": {"code": 2.0, "message": "x"}},
         _("an error whose code is 2.0, a float", "un error cuyo code es 2.0, un float")),
        ({"jsonrpc": "2.0", "id": 1, "error": {"code": "oops", "message": "x"}},
         _("an error whose code is not an integer", "un error cuyo code no es un entero")),
        ({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601}},
         _("an error without a message", "un error sin message")),
    ]
    results = [
        case(name, _kind_or_error(classify, msg), kind, given=json.dumps(msg), hint=hint)
        for msg, kind, name, hint in good
    ]
    def refused_hint(msg: Any) -> Callable[[Any], str]:
        def hint(got: Any) -> str:
            if isinstance(got, Seen) and not got.raised and got.type == "InvalidRequest":
                return _("raise the error (raise InvalidRequest(...)), do not return it",
                         "lanza el error (raise InvalidRequest(...)), no lo devuelvas")
            return _("raise InvalidRequest(reason): ", "lanza InvalidRequest(motivo): ") + (
                _broken_rule(msg) or "")
        return hint

    # "params": null is the learner's choice (the text says why): a request or a -32600.
    null_params = {"jsonrpc": "2.0", "id": 4, "method": "ping", "params": None}

    def either() -> Any:
        got = attempt(lambda: classify(null_params))
        return _EITHER if got == "request" or got == _REJECTED else got

    results.append(case(_('"params": null: a request, or InvalidRequest (your choice)',
                          '"params": null: una solicitud, o InvalidRequest (tú eliges)'),
                        either, _EITHER, given=json.dumps(null_params)))
    results += [
        case(_("invalid: ", "inválido: ") + name, _kind_or_error(classify, msg),
             _REJECTED, given=json.dumps(msg), hint=refused_hint(msg))
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
    constant_hint = _("NaN, Infinity and -Infinity are not JSON: json.loads accepts all three "
                      "unless its parse_constant raises ValueError",
                      "NaN, Infinity y -Infinity no son JSON: json.loads acepta los tres salvo "
                      "que su parse_constant lance ValueError")
    utf8_hint = _('decode with raw.decode("utf-8") and no error handler: errors="replace", '
                  '"surrogatepass" or another codec (latin-1) let through bytes that are not '
                  "UTF-8", 'decodifica con raw.decode("utf-8") sin manejador de errores: '
                  'errors="replace", "surrogatepass" u otro códec (latin-1) dejan pasar bytes '
                  "que no son UTF-8")
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
        (b'{"jsonrpc":"2.0","id":3,"method":"ping","params":null}', None,
         _('"params": null is no params: a valid request, no error',
           '"params": null es como no tener params: una solicitud válida, sin error'),
         _("classify takes null params as absent: the message is valid, return None",
           "classify toma unos params null como ausentes: el mensaje es válido, devuelve "
           "None")),
        (b"NaN", expect(None, -32700),
         _("NaN alone: not JSON, parse error", "NaN solo: no es JSON, error de análisis"),
         constant_hint),
        (b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":Infinity}}',
         expect(None, -32700),
         _("Infinity inside a message: not JSON, parse error",
           "Infinity dentro de un mensaje: no es JSON, error de análisis"), constant_hint),
        (b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":-Infinity}}',
         expect(None, -32700),
         _("-Infinity inside a message: not JSON, parse error",
           "-Infinity dentro de un mensaje: no es JSON, error de análisis"), constant_hint),
        (b'{"jsonrpc":"2.0","id":1,"method":"NaN","params":{"note":"-Infinity"}}', None,
         _('"NaN" and "-Infinity" inside strings are just text: no error',
           '"NaN" y "-Infinity" dentro de cadenas son solo texto: sin error'),
         _("inside quotes they are characters, not the constants: refuse the constants with "
           "parse_constant, not by searching the text", "entre comillas son caracteres, no "
           "las constantes: rechaza las constantes con parse_constant, no buscándolas en el "
           "texto")),
        (b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"t":"a\tb"}}',
         expect(None, -32700),
         _("a raw tab inside a string: not JSON, parse error",
           "un tabulador literal dentro de una cadena: no es JSON, error de análisis"),
         _("JSON strings escape control characters (\\t, \\n); json.loads refuses raw ones, "
           "unless strict=False", "en las cadenas JSON los caracteres de control van "
           "escapados (\\t, \\n); json.loads rechaza los literales, salvo con strict=False")),
        (b'{"jsonrpc":"2.0","id":"caf\xe9","method":"ping"}', expect(None, -32700),
         _("a Latin-1 byte (\\xe9) inside a string: not UTF-8, parse error",
           "un byte de Latin-1 (\\xe9) dentro de una cadena: no es UTF-8, error de análisis"),
         utf8_hint),
        (b'{"jsonrpc":"2.0","id":"\xed\xa0\x80","method":"ping"}', expect(None, -32700),
         _("an encoded surrogate (\\xed\\xa0\\x80): not UTF-8, parse error",
           "un sustituto codificado (\\xed\\xa0\\x80): no es UTF-8, error de análisis"),
         utf8_hint),
        (b"[" * 3000 + b"]" * 3000, expect(None, -32700),
         _("nested too deeply for json.loads (RecursionError): parse error",
           "anidamiento demasiado profundo para json.loads (RecursionError): error de análisis"),
         _("json.loads raises RecursionError on a line nested this deeply: catch it with the "
           "other parse errors", "json.loads lanza RecursionError con una línea tan anidada: "
           "captúralo junto con los demás errores de análisis")),
    ]
    def hint_for(expected: Any, hint: str | None) -> Callable[[Any], str | None]:
        def pick(got: Any) -> str | None:
            # A -32700 row's hint says why the line is unreadable; when the answer was a
            # -32700 and only its id differs, the id is the fault. (The -32600 rows' hints
            # already speak of the id.)
            if _code(expected) == _code(got) == -32700 and got.get("id") is not None:
                return _id_hint(-32700)
            return hint
        return pick

    results = [
        case(name, lambda raw=raw: error_for(raw), expected, given=repr(raw),
             normalize=error_shape,
             hint=hint_for(expected, more[0] if more else parse_hint if expected
                           and expected["error"]["code"] == -32700 else shape_hint
                           if expected else None))
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

    def refuse() -> str:
        raise ValueError()

    def lookup(key: str) -> str:
        return {"x": "found x"}[key]

    tools = {"divide": divide, "shout": shout, "refuse": refuse, "lookup": lookup}

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
        (req({"name": "lookup", "arguments": {"key": "y"}}),
         ok(1, error_text(lookup, key="y"), is_error=True),
         _("a KeyError from inside the tool is still a tool error, with its own text",
           "un KeyError de dentro de la herramienta sigue siendo un error de herramienta, con "
           "su propio texto"),
         _("only the name lookup decides an unknown tool: whatever the tool raises, KeyError "
           'included, is a result with isError true and the text f"{type(exc).__name__}: '
           '{exc}"', "solo la búsqueda del nombre decide si la herramienta es desconocida: lo "
           "que lance la herramienta, KeyError incluido, es un resultado con isError true y el "
           'texto f"{type(exc).__name__}: {exc}"')),
        (req({"name": "refuse", "arguments": {}}), ok(1, error_text(refuse), is_error=True),
         _('an exception without a message still gives "ValueError: "',
           'una excepción sin mensaje sigue dando "ValueError: "'),
         _('the text is f"{type(exc).__name__}: {exc}" also when str(exc) is empty',
           'el texto es f"{type(exc).__name__}: {exc}" también cuando str(exc) está vacío')),
        (req({"name": "launch_rockets", "arguments": {}}), protocol_error(1, -32602),
         _("an unknown tool: a protocol error, -32602",
           "una herramienta desconocida: un error de protocolo, -32602"),
         _("nothing ran: answer with a JSON-RPC error object",
           "no se ejecutó nada: responde con un objeto de error JSON-RPC")),
        (req({"name": "Shout", "arguments": {"text": "a"}}), protocol_error(1, -32602),
         _('tool names are exact: "Shout" is an unknown tool, -32602',
           'los nombres de herramienta se comparan tal cual: "Shout" es una herramienta '
           'desconocida, '
           "-32602"),
         _("look the name up as it is: no lower(), no strip()",
           "busca el nombre tal cual: sin lower() ni strip()")),
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
    def hint_for(request: dict[str, Any], expected: Any, hint: str | None
                 ) -> Callable[[Any], str | None]:
        # What differs names the fault; the row's own hint when nothing more specific does.
        return lambda got: _call_tool_hint(request, expected, got, tools) or hint

    results = [
        case(name, lambda r=request: call_tool(r, tools), expected, given=json.dumps(request),
             normalize=shape, hint=hint_for(request, expected, hint))
        for request, expected, name, hint in rows
    ]
    results.append(call_tool_differential(call_tool))
    run_checks(results)


# --------------------------------------------------------------------------- generated cases
#
# References: mcpkit.jsonrpc.classify (which, as the lab says, takes "params": null as no
# params), and for error_for and call_tool the composition the lab describes, built from
# mcpkit.jsonrpc.

_ABSENT = object()


def _valid_message(rng: Gen) -> dict[str, Any]:
    kind = rng.choice(["request", "notification", "result", "error"])
    m: dict[str, Any] = {"jsonrpc": "2.0"}
    if kind in ("request", "notification"):
        m["method"] = rng.choice(["ping", "tools/call", "notifications/x", "a", " "])
        if rng.random() < 0.5:
            m["params"] = rng.json_object()
    if kind != "notification":
        m["id"] = rng.choice([0, 1, -7, 2**53, 2**64, "", "a-1", "é", rng.randint(2, 999)])
    if kind == "result":
        m["result"] = rng.json_object()
    elif kind == "error":
        if rng.random() < 0.3:
            m["id"] = None
        m["error"] = {"code": rng.choice([-32700, -32601, 0, 1]), "message": rng.text()}
        if rng.random() < 0.3:
            m["error"]["data"] = rng.json_value()
    if rng.random() < 0.1:  # a member outside the envelope, which changes nothing
        m[rng.choice(["trace", "x-extra", "meta"])] = rng.json_value()
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
        elif field == "params" and action < 0.5:  # (never null: the learner's choice)
            m["params"] = rng.choice([[1], "x", 3, True, []])
        elif field == "jsonrpc" and action < 0.5:  # near misses of "2.0"
            m["jsonrpc"] = rng.choice(["2.0.1", "12.0", " 2.0", "2", "2.00"])
        else:
            value = rng.choice([rng.json_value(), rng.json_object(), "", None, 0, True,
                                {"code": 1, "message": "m"}, "2.0", 2.0, [], "ping"])
            m[field] = [None] if field == "params" and value is None else value
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
        if m.get("params") is not None and not isinstance(m["params"], dict):
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
        return _('"error.code" is an integer (not a bool, not 2.0)', '"error.code" es un '
                 'entero (ni un booleano, ni 2.0)')
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
        key="lab02/classify", generate=_envelope, trial=trial,
        reference=reference,
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


class _Text:
    """What a generated case compares in place of an error's message: any string is this one
    marker (equal only to itself), shown as the fixed cases show it, <any text>."""

    def __repr__(self) -> str:
        return repr(ANY_TEXT)


_TEXT = _Text()


def _response_seen(response: Any) -> Any:
    """A response as compared: the error's message text and its optional data are free (the
    lab says so: JSON-RPC lets a server put any detail in data); everything else counts. A
    message that is not a string stays as it is, and differs."""
    if isinstance(response, dict) and isinstance(response.get("error"), dict):
        error = {k: v for k, v in response["error"].items() if k != "data"}
        if isinstance(error.get("message"), str):
            error["message"] = _TEXT
        return {**response, "error": error}
    return response


def _code(response: Any) -> Any:
    """The error code of an error response, or None for anything else."""
    if isinstance(response, dict) and isinstance(response.get("error"), dict):
        return response["error"].get("code")
    return None


def _unreadable(raw: bytes) -> str:
    """Why ``raw`` deserves a -32700, in words (the hint for an answer that missed it)."""
    if raw[:3] == b"\xef\xbb\xbf" or b"\x00" in raw:
        return _("these bytes are not UTF-8 JSON (a BOM, UTF-16 or UTF-32): -32700; decode "
                 "as UTF-8 yourself, json.loads(bytes) guesses the encoding",
                 "estos bytes no son JSON en UTF-8 (un BOM, UTF-16 o UTF-32): -32700; "
                 "decodifica tú como UTF-8, json.loads(bytes) adivina la codificación")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return _('these bytes are not UTF-8: -32700; decode with raw.decode("utf-8") and no '
                 'error handler (errors="replace", "surrogatepass" or latin-1 let them '
                 "through)", 'estos bytes no son UTF-8: -32700; decodifica con '
                 'raw.decode("utf-8") sin manejador de errores (errors="replace", '
                 '"surrogatepass" o latin-1 los dejan pasar)')
    try:
        json.loads(text)
    except RecursionError:
        return _("json.loads raises RecursionError on a line nested this deeply: it cannot be "
                 "read, -32700 with id null", "json.loads lanza RecursionError con una línea "
                 "tan anidada: no se puede leer, -32700 con id null")
    except ValueError:
        try:
            json.loads(text, strict=False)
        except ValueError:
            return _("this line is not JSON: -32700 with id null",
                     "esta línea no es JSON: -32700 con id null")
        return _("a raw control character (a tab, a newline) inside a string is not JSON: "
                 "-32700; json.loads refuses it unless strict=False",
                 "un carácter de control literal (un tabulador, un salto de línea) dentro de "
                 "una cadena no es JSON: -32700; json.loads lo rechaza salvo con strict=False")
    return _("NaN and Infinity are not JSON (RFC 8259): a parse error, -32700; "
             "json.loads accepts them unless its parse_constant raises ValueError",
             "NaN e Infinity no son JSON (RFC 8259): un error de análisis, -32700; "
             "json.loads los acepta salvo que su parse_constant lance ValueError")


def _id_hint(code: int) -> str:
    """The rule for the id of an error_for answer with this code."""
    if code == -32700:
        return _("a -32700 answers a line that could not be read, so no id was read: its id "
                 "is always null", "un -32700 responde a una línea que no se pudo leer, así "
                 "que no se leyó ningún id: su id es siempre null")
    return _("answer with the message's own id when it is a string or an integer "
             "(not a bool), else null", "responde con el id del propio mensaje si es "
             "una cadena o un entero (no un booleano); si no, null")


def _error_for_hint(x: bytes, expected: Step | None, got: Step | None) -> str | None:
    """A hint from what differs (the codes first, then the id), not from the input alone."""
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
    want_code, have_code = _code(want), _code(have)
    if want_code == -32700 and have_code != -32700:
        return _unreadable(x)
    if want_code != -32700 and have_code == -32700:
        return _('this line is UTF-8 JSON that json.loads(raw.decode("utf-8")) reads (NaN '
                 "or Infinity inside quotes is text, not a constant): not a parse error",
                 'esta línea es JSON en UTF-8 que json.loads(raw.decode("utf-8")) lee (NaN '
                 "o Infinity entre comillas es texto, no una constante): no es un error de "
                 "análisis")
    if want_code == have_code and want_code is not None and want.get("id") != have.get("id"):
        return _id_hint(want_code)
    if want_code == -32600 and have is None:
        rule = _broken_rule(json.loads(x.decode("utf-8")))
        return _("classify rejects this message: answer -32600", "classify rechaza este "
                 "mensaje: responde -32600") + (f" ({rule})" if rule else "")
    if want is None and have_code is not None:
        return _("a valid message (classify accepts it) needs no error: return None",
                 "un mensaje válido (classify lo acepta) no necesita error: devuelve None")
    if want_code is not None and want_code == have_code:
        return _('the error is {"code": ..., "message": a string} (error_response(id, code, '
                 "message) builds it)", 'el error es {"code": ..., "message": una cadena} '
                 "(error_response(id, code, message) lo construye)")
    return None


def error_for_differential(error_for: Callable) -> CaseResult:
    def generate(rng: Gen) -> bytes:
        raw = json.dumps(_envelope(rng), ensure_ascii=rng.random() < 0.5).encode()
        roll = rng.random()
        if roll < 0.1:
            return raw[: rng.randrange(len(raw))]
        if roll < 0.17:
            return rng.choice([b"", b"\xff\xfe", b'{"id":"\xe9"}', b"[" * 3000 + b"]" * 3000,
                               b"NaN", b"Infinity", b"-Infinity", b"  {}  ",
                               b'{"jsonrpc":"2.0","id":1,"method":"NaN"}',
                               b'{"jsonrpc":"2.0","method":"a\tb"}',
                               b'{"jsonrpc":"2.0","id":"\xed\xa0\x80","method":"ping"}'])
        if roll < 0.24:  # valid JSON, but not in UTF-8 (json.loads(bytes) would take it)
            text = raw.decode()
            return rng.choice([b"\xef\xbb\xbf" + raw, text.encode("utf-16"),
                               text.encode("utf-16-le"), text.encode("utf-32")])
        return raw

    def trial(fn: Callable, raw: bytes) -> list[Step]:
        return [Step(f"error_for({raw!r})", _response_seen(attempt(lambda: fn(raw))))]

    return differential(
        _("behaves like mcpkit (its parser, then classify) on generated lines",
          "se comporta como mcpkit (su analizador y luego classify) en líneas generadas"),
        key="lab02/error_for", generate=generate, trial=trial, reference=reference_error_for,
        learner=error_for, show=repr, cases=300, hint=_error_for_hint)


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

    def blank() -> str:
        raise ValueError()

    return {"shout": shout, "divide": divide, "lookup": lookup, "fail": fail, "quota": quota,
            "pending": pending, "blank": blank}


def _is_result(response: Any) -> bool:
    return isinstance(response, dict) and isinstance(response.get("result"), dict)


def _protocol_fault(request: dict[str, Any], tools: Any) -> str | None:
    """Why nothing may run for this tools/call (in the lab's order), or None if it may."""
    params = request.get("params")
    if not isinstance(params, dict):
        return _("params missing or not an object", "params ausentes o que no son un objeto")
    if not isinstance(params.get("name"), str):
        return _("no string name", "sin name de texto")
    if params["name"] not in tools:
        return _("an unknown tool: names are exact", "una herramienta desconocida: los nombres "
                 "se comparan tal cual")
    arguments = params.get("arguments", {})
    if arguments is None:
        return _('"arguments": null is not an object (only a missing arguments counts as {})',
                 '"arguments": null no es un objeto (solo la ausencia de arguments equivale a '
                 "{})")
    if not isinstance(arguments, dict):
        return _("these arguments are present and not an object"
                 + (' (`or {}` turns [], "", 0 and false into {})' if not arguments else ""),
                 "estos arguments están presentes y no son un objeto"
                 + (' (`or {}` convierte [], "", 0 y false en {})' if not arguments else ""))
    return None


def _call_tool_hint(request: dict[str, Any], want: Any, have: Any,
                    tools: Any = None) -> str | None:
    """A hint from what differs between the expected response and call_tool's, with the
    reason taken from the request only once the kind of difference says it matters."""
    fault = _protocol_fault(request, _sample_tools() if tools is None else tools)
    if isinstance(have, Seen) and have.raised:
        if _is_result(want) and want["result"].get("isError"):
            return _("call_tool raised {t}: a tool's exception, whatever its class, becomes a "
                     "result with isError true", "call_tool lanzó {t}: la excepción de una "
                     "herramienta, sea de la clase que sea, es un resultado con isError true"
                     ).format(t=have.type)
        if _code(want) is not None:
            return _("call_tool raised {t} on a request to answer with -32602 ({why}): check "
                     "params, name and arguments before you use them",
                     "call_tool lanzó {t} con una solicitud que se responde con -32602 "
                     "({why}): comprueba params, name y arguments antes de usarlos"
                     ).format(t=have.type, why=fault)
        return _("call_tool raised {t}: it answers every tools/call, it never raises",
                 "call_tool lanzó {t}: responde a todo tools/call, nunca lanza"
                 ).format(t=have.type)
    if _code(want) is not None and _code(have) is None:
        return _("nothing may run here ({why}): answer with a -32602 error object, not a "
                 "result", "aquí no se puede ejecutar nada ({why}): responde con un objeto de "
                 "error -32602, no con un resultado").format(why=fault)
    if _is_result(want) and not _is_result(have):
        if want["result"].get("isError"):
            return _("the tool ran and failed: that is a result the model should see, not a "
                     "protocol error", "la herramienta se ejecutó y falló: es un resultado "
                     "que el modelo debe ver, no un error de protocolo")
        return _("this call is valid: run the tool and answer with a result",
                 "esta llamada es válida: ejecuta la herramienta y responde con un resultado")
    if _code(want) is not None:  # both errors
        if _code(have) != _code(want):
            return _("every protocol error of tools/call is -32602, invalid params ({why}); "
                     "-32601 would say the method tools/call does not exist",
                     "todo error de protocolo de tools/call es -32602, parámetros inválidos "
                     "({why}); -32601 diría que el método tools/call no existe"
                     ).format(why=fault)
        if have.get("id") != want.get("id"):
            return _("answer with the request's id", "responde con el id de la solicitud")
        return _('the error is {"code": -32602, "message": a string}',
                 'el error es {"code": -32602, "message": una cadena}')
    if not (_is_result(want) and _is_result(have)):
        return None
    if have.get("id") != want.get("id"):
        return _("the response carries the request's id", "la respuesta lleva el id de la "
                 "solicitud")
    wanted, got = want["result"], have["result"]
    if "isError" not in got:
        return _('isError is written on success too: {"content": [...], "isError": False}',
                 'isError se escribe también cuando todo va bien: {"content": [...], '
                 '"isError": False}')
    if got["isError"] is not wanted["isError"]:
        return _("isError is true exactly when the tool raised",
                 "isError es true exactamente cuando la herramienta lanzó una excepción")
    if got.get("content") != wanted["content"] and wanted["isError"]:
        return _('the text is f"{type(exc).__name__}: {exc}", from the exception of '
                 "tool(**arguments) (not str(exc), repr(exc) or exc.args), also when str(exc) "
                 "is empty", 'el texto es f"{type(exc).__name__}: {exc}", de la excepción de '
                 "tool(**arguments) (no str(exc), repr(exc) ni exc.args), también cuando "
                 "str(exc) está vacío")
    if got.get("content") != wanted["content"]:
        return _("the text is what tool(**arguments) returned: the arguments go in as keyword "
                 "arguments", "el texto es lo que devolvió tool(**arguments): los argumentos "
                 "se pasan con nombre")
    return _('the result is exactly {"content": [{"type": "text", "text": text}], '
             '"isError": ...}', 'el resultado es exactamente {"content": [{"type": "text", '
             '"text": text}], "isError": ...}')


def _shrink_call(request: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Smaller tools/call requests, still valid ones: jsonrpc, id and method stay, and only
    params and what is inside it shrink."""
    params = request.get("params")
    if "params" in request:
        yield {k: v for k, v in request.items() if k != "params"}
    if isinstance(params, dict):
        for key in params:
            yield {**request, "params": {k: v for k, v in params.items() if k != key}}
        arguments = params.get("arguments")
        if isinstance(arguments, dict):
            for key in arguments:
                yield {**request, "params": {**params, "arguments": {
                    k: v for k, v in arguments.items() if k != key}}}


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
                           "quota", "pending", "blank", "Shout", " shout",
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
        return _call_tool_hint(x, expected.seen if expected else None,
                               got.seen if got else None)

    return differential(
        _("behaves like the reference call_tool on generated requests (names, arguments of "
          "every JSON type, failing tools)", "se comporta como el call_tool de referencia en "
          "solicitudes generadas (nombres, arguments de cada tipo JSON, herramientas que "
          "fallan)"),
        key="lab02/call_tool", generate=generate, trial=trial, reference=reference_call_tool,
        learner=call_tool, show=json.dumps, cases=200, shrink=_shrink_call, hint=hint)
