"""Checks for lab 02 (JSON-RPC): classify, error_for, call_tool."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from .core import (
    Err,
    _,
    case,
    error_shape,
    run_checks,
)


def _kind_or_error(fn: Callable, message: Any) -> Callable[[], Any]:
    def run() -> Any:
        try:
            return fn(message)
        except Exception as exc:
            if type(exc).__name__ == "InvalidRequest" or getattr(exc, "code", None) == -32600:
                return Err("InvalidRequest")
            raise

    return run


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
        ({"jsonrpc": "2.0", "id": 1, "error": {"code": "oops", "message": "x"}},
         _("an error whose code is not an integer", "un error cuyo code no es un entero")),
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
             Err("InvalidRequest"), given=json.dumps(msg),
             hint=_("raise InvalidRequest(reason)", "lanza InvalidRequest(motivo)"))
        for msg, name in bad
    ]
    run_checks(results)


def check_error_for(error_for: Callable) -> None:
    """Lab 02, part 2: from one raw line to the error response it deserves (or None)."""

    def expect(id_: Any, code: int) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": id_, "error": {"code": code, "message": "…"}}

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
           "un id inservible (true) se responde con id null")),
        (b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]', expect(None, -32600),
         _("a batch: -32600 with id null", "un lote: -32600 con id null")),
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
             hint=_("parse problems are -32700 with id null; shape problems -32600",
                    "los problemas de análisis son -32700 con id null; los de forma, -32600"))
        for raw, expected, name in rows
    ]
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
        return {"jsonrpc": "2.0", "id": id_, "error": {"code": code, "message": "…"}}

    def shape(response: Any) -> Any:
        if isinstance(response, dict) and isinstance(response.get("result"), dict):
            result = dict(response["result"])
            result.setdefault("isError", False)
            return {**response, "result": result}
        return error_shape(response)

    rows = [
        (req({"name": "shout", "arguments": {"text": "hola"}}), ok(1, "HOLA!"),
         _("a tool that works: a result with one text block",
           "una herramienta que funciona: un resultado con un bloque de texto"), None),
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
    ]
    results = [
        case(name, lambda r=request: call_tool(r, tools), expected, given=json.dumps(request),
             normalize=shape, hint=hint)
        for request, expected, name, hint in rows
    ]
    run_checks(results)
