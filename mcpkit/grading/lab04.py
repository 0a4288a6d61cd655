"""Checks for lab 04 (a server): the notes tools, resources and prompt, the whole server."""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any

from .core import (
    CaseResult,
    Gen,
    Step,
    _,
    case,
    differential,
    drop_each,
    predicate,
    references_for,
    run_checks,
)

#: This lab builds on mcpkit's Server; nothing of mcpkit is off limits.
OFF_LIMITS: dict[str, set[str]] = {}


#: The notes every lab 04 check starts from (a fresh copy per case): id -> title and body.
NOTES_SEED: dict[str, dict[str, str]] = {
    "1": {"title": "Shopping", "body": "Milk, eggs, coffee."},
    "2": {"title": "MCP", "body": "Hosts run clients; each client talks to one server."},
    "3": {"title": "Café", "body": "Order beans from the café on Friday."},
}
_CHECK_REVISION = "2025-11-25"


def _seed(notes: dict[str, dict[str, str]] | None = None) -> dict[str, dict[str, str]]:
    return {k: dict(v) for k, v in (NOTES_SEED if notes is None else notes).items()}


class _Client:
    """A client in this process: drives a learner's Server through ``server.connect(send)``.

    It sends real JSON-RPC messages to the connection and keeps every message the server
    sends back, in order. Most tools answer before ``receive`` returns; a tool that runs on
    its own thread (one with a Context parameter) is waited for.
    """

    def __init__(self, server: Any, version: str = _CHECK_REVISION) -> None:
        self.inbox: list[dict[str, Any]] = []
        self._seen = 0
        self._cond = threading.Condition()
        self.connection = server.connect(self._deliver)
        self._next_id = 0
        self.init = self.request("initialize", {
            "protocolVersion": version, "capabilities": {},
            "clientInfo": {"name": "mcpkit-grading", "version": "1.0"}})
        self.connection.receive({"jsonrpc": "2.0", "method": "notifications/initialized"})
        self.drain()

    def _deliver(self, message: dict[str, Any]) -> None:
        with self._cond:
            self.inbox.append(json.loads(json.dumps(message)))  # what the wire would carry
            self._cond.notify_all()

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self._next_id += 1
        request_id = self._next_id
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.connection.receive(message)

        def answered() -> dict[str, Any] | None:
            return next((m for m in self.inbox if m.get("id") == request_id
                         and "method" not in m), None)

        with self._cond:
            self._cond.wait_for(lambda: answered() is not None, timeout=3.0)
            response = answered()
        if response is None:
            raise TimeoutError(f"no response to {method} within 3 s")
        return response

    def call(self, name: str, arguments: Any) -> dict[str, Any]:
        return self.request("tools/call", {"name": name, "arguments": arguments})

    def drain(self) -> list[dict[str, Any]]:
        """The messages that arrived since the last drain."""
        with self._cond:
            new = self.inbox[self._seen:]
            self._seen = len(self.inbox)
        return new

    def close(self) -> None:
        self.connection.close()


def _tool_value(result: dict[str, Any]) -> Any:
    """What a tool returned, read back from its result (structured or as JSON text)."""
    if "structuredContent" in result:
        value = result["structuredContent"]
        if isinstance(value, dict) and list(value) == ["result"]:
            return value["result"]
        return value
    content = result.get("content") or []
    texts = [b.get("text") for b in content if isinstance(b, dict) and b.get("type") == "text"]
    if len(texts) != 1:
        return content
    try:
        return json.loads(texts[0])
    except (TypeError, ValueError):
        return texts[0]


def _outcome(response: dict[str, Any]) -> dict[str, Any]:
    """A response as the lab checks it: a protocol error's code, or a tool result."""
    if "error" in response:
        return {"protocol error": response["error"].get("code")}
    result = response.get("result")
    if not isinstance(result, dict):
        return {"result": result}
    if result.get("isError") is True:
        return {"isError": True}
    return {"isError": False, "value": _tool_value(result)}


def _short_text() -> str:
    return _("<a short text>", "<un texto breve>")


def _is_short_text(result: Any) -> bool:
    """Whether a tool result is a text that is not blank (its words are the learner's)."""
    value = _tool_value(result)
    if isinstance(value, str):
        return bool(value.strip())
    # a text block whose words happen to parse as a JSON number ("4") is text all the same
    return ("structuredContent" not in result and isinstance(value, int | float)
            and not isinstance(value, bool))


def _shaped(response: dict[str, Any], tool: str | None) -> dict[str, Any]:
    """:func:`_outcome`, with notes_delete's answer reduced to its shape: the lab asks for
    "a short text, such as 'deleted note 2'", so any text that is not blank will do."""
    outcome = _outcome(response)
    if tool == "notes_delete" and outcome.get("isError") is False \
            and _is_short_text(response.get("result") or {}):
        outcome["value"] = _short_text()
    return outcome


def _tool_server(add_tools: Callable, notes: dict[str, dict[str, str]] | None = None):
    """A fresh Server with the learner's tools, its notes, and the URIs it said changed."""
    from ..server import Server

    server = Server("notes-check", "1.0.0")
    changed: list[str] = []
    notify = server.notify_resource_updated

    def recorded(uri: str) -> None:
        changed.append(uri)
        notify(uri)

    server.notify_resource_updated = recorded  # type: ignore[method-assign]
    store = _seed(notes)
    add_tools(server, store)
    return server, store, changed


def _schema_shape(schema: Any) -> Any:
    """An inputSchema reduced to what lab 04 asks for: each property's type, and required."""
    if not isinstance(schema, dict):
        return schema
    properties = schema.get("properties") or {}
    return {"properties": {name: (prop.get("type") if isinstance(prop, dict) else prop)
                           for name, prop in properties.items()},
            "required": sorted(schema.get("required") or [])}


def check_note_tools(add_tools: Callable) -> None:
    """Lab 04, part 1: the four note tools, their schemas, annotations, results and errors."""

    def tools_list() -> dict[str, Any]:
        server, _store, _changed = _tool_server(add_tools)
        client = _Client(server)
        tools = client.request("tools/list")["result"]["tools"]
        client.close()
        return {t["name"]: t for t in tools}

    def definition_of(name: str, part: Callable[[dict[str, Any]], Any]) -> Callable[[], Any]:
        def run() -> Any:
            tools = tools_list()
            if name not in tools:
                return {_("tools listed", "herramientas listadas"): sorted(tools)}
            return part(tools[name])

        return run

    def schema(tool: dict[str, Any]) -> Any:
        return _schema_shape(tool.get("inputSchema"))

    def hints(tool: dict[str, Any]) -> dict[str, Any]:
        annotations = tool.get("annotations") or {}
        return {"readOnlyHint": annotations.get("readOnlyHint") is True,
                "destructiveHint": annotations.get("destructiveHint")}

    def read_only(tool: dict[str, Any]) -> Any:
        return (tool.get("annotations") or {}).get("readOnlyHint")

    def session(steps: Callable[[_Client, dict, list], Any],
                notes: dict[str, dict[str, str]] | None = None) -> Callable[[], Any]:
        def run() -> Any:
            server, store, changed = _tool_server(add_tools, notes)
            client = _Client(server)
            try:
                return steps(client, store, changed)
            finally:
                client.close()

        return run

    def call(name: str, arguments: Any, notes: dict[str, dict[str, str]] | None = None):
        return session(lambda c, s, ch: _outcome(c.call(name, arguments)), notes)

    def ok(value: Any) -> dict[str, Any]:
        return {"isError": False, "value": value}

    tool_error = {"isError": True}
    many = {str(i): {"title": f"Note {i}", "body": "same words"} for i in range(1, 13)}
    seed_list = [{"id": k, "title": v["title"]} for k, v in NOTES_SEED.items()]

    def full(note_id: str) -> dict[str, str]:
        return {"id": note_id, **NOTES_SEED[note_id]}

    def create_then(c: _Client, store: dict, changed: list) -> Any:
        created = _outcome(c.call("notes_create", {"title": "Tea", "body": "Green, no sugar."}))
        return {"result": created, "notes_list": _outcome(c.call("notes_list", {})),
                "notes['4']": store.get("4"), "notified": changed}

    def delete_then(c: _Client, store: dict, changed: list) -> Any:
        deleted = _shaped(c.call("notes_delete", {"id": "2"}), "notes_delete")
        listed = _outcome(c.call("notes_list", {}))
        return {"result": deleted, "ids left": [n.get("id") for n in listed.get("value") or []],
                "notified": changed}

    def delete_twice(c: _Client, store: dict, changed: list) -> Any:
        first = _outcome(c.call("notes_delete", {"id": "1"}))
        second = _outcome(c.call("notes_delete", {"id": "1"}))
        return {"first isError": first.get("isError"), "second": second, "notified": changed}

    def unknown_delete(c: _Client, store: dict, changed: list) -> Any:
        return {"result": _outcome(c.call("notes_delete", {"id": "99"})),
                "notes left": sorted(store), "notified": changed}

    def integer_id(c: _Client, store: dict, changed: list) -> Any:
        return {"result": _outcome(c.call("notes_delete", {"id": 1})),
                "notes left": sorted(store)}

    def no_reuse(c: _Client, store: dict, changed: list) -> Any:
        c.call("notes_delete", {"id": "3"})
        first = _tool_value(c.call("notes_create", {"title": "A", "body": "a"})["result"])
        c.call("notes_delete", {"id": "4"})
        second = _tool_value(c.call("notes_create", {"title": "B", "body": "b"})["result"])
        return {"created": [n.get("id") if isinstance(n, dict) else n for n in (first, second)],
                "notes": sorted(store)}

    def created_id(c: _Client, title: str = "Tea") -> Any:
        value = _tool_value(c.call("notes_create", {"title": title, "body": "x"})["result"])
        return value.get("id") if isinstance(value, dict) else value

    def failed_create_between(c: _Client, store: dict, changed: list) -> Any:
        first = created_id(c)
        c.call("notes_create", {"title": "", "body": "x"})
        return [first, created_id(c, "Milk")]

    def follows(ids: Any) -> bool:
        return (isinstance(ids, list) and len(ids) == 2
                and all(isinstance(i, str) and i.isdigit() for i in ids)
                and int(ids[1]) == int(ids[0]) + 1)

    def two_servers() -> Any:
        sessions = [_tool_server(add_tools) for _i in range(2)]
        clients = [_Client(server) for server, _store, _changed in sessions]
        try:
            return {f"{_server_word()} {n}": created_id(c) for n, c in enumerate(clients)}
        finally:
            for c in clients:
                c.close()

    ten = {str(i): {"title": f"Note {i}", "body": ""} for i in range(1, 11)}

    def after_ten(c: _Client, store: dict, changed: list) -> Any:
        return {"created": created_id(c), "notes": len(store)}

    def after_ten_ok(value: Any) -> bool:
        return (isinstance(value, dict) and value.get("notes") == 11
                and isinstance(value.get("created"), str) and value["created"].isdigit()
                and int(value["created"]) > 10)

    def blank_title(c: _Client, store: dict, changed: list) -> Any:
        return {"result": _outcome(c.call("notes_create", {"title": "   ", "body": "x"})),
                "notes": sorted(store), "notified": changed}

    def whitespace_title(c: _Client, store: dict, changed: list) -> Any:
        return {"results": [_outcome(c.call("notes_create", {"title": title, "body": "x"}))
                            for title in ("\t", " \n ")],
                "notes": sorted(store), "notified": changed}

    def as_it_comes(c: _Client, store: dict, changed: list) -> Any:
        return {query: _outcome(c.call("notes_search", {"query": query}))
                for query in ("  eggs  ", "ping milk", "pingmilk")}

    def near_ids(c: _Client, store: dict, changed: list) -> Any:
        return {"results": [_outcome(c.call("notes_delete", {"id": note_id}))
                            for note_id in (" 2", "02")],
                "notes left": sorted(store), "notified": changed}

    def same_title(c: _Client, store: dict, changed: list) -> Any:
        return {"created": [created_id(c, "Shopping"), created_id(c, "Shopping")],
                "notes": sorted(store)}

    def first_of_none(c: _Client, store: dict, changed: list) -> Any:
        return {"created": created_id(c), "notes": sorted(store)}

    results = [
        case(_("the four tools are listed", "se listan las cuatro herramientas"),
             lambda: sorted(tools_list()),
             ["notes_create", "notes_delete", "notes_list", "notes_search"],
             given="tools/list"),
        case(_("notes_list takes no arguments", "notes_list no recibe argumentos"),
             definition_of("notes_list", schema), {"properties": {}, "required": []},
             given="tools/list"),
        case(_("notes_search: query (string, required), limit (integer, optional)",
               "notes_search: query (cadena, obligatoria), limit (entero, opcional)"),
             definition_of("notes_search", schema),
             {"properties": {"query": "string", "limit": "integer"}, "required": ["query"]},
             given="tools/list", hint=_("def notes_search(query: str, limit: int = 10)",
                                        "def notes_search(query: str, limit: int = 10)")),
        case(_("notes_create: title and body (strings, required)",
               "notes_create: title y body (cadenas, obligatorias)"),
             definition_of("notes_create", schema),
             {"properties": {"title": "string", "body": "string"}, "required": ["body", "title"]},
             given="tools/list"),
        case(_("notes_delete: id is a string (ids are strings)",
               "notes_delete: id es una cadena (los ids son cadenas)"),
             definition_of("notes_delete", schema),
             {"properties": {"id": "string"}, "required": ["id"]}, given="tools/list",
             hint=_("def notes_delete(id: str): ids are strings like \"2\"",
                    "def notes_delete(id: str): los ids son cadenas como \"2\"")),
        case(_("notes_list is read-only (readOnlyHint true)",
               "notes_list es de solo lectura (readOnlyHint true)"),
             definition_of("notes_list", read_only), True, given="tools/list",
             hint="@server.tool(read_only=True)"),
        case(_("notes_search is read-only (readOnlyHint true)",
               "notes_search es de solo lectura (readOnlyHint true)"),
             definition_of("notes_search", read_only), True, given="tools/list",
             hint="@server.tool(read_only=True)"),
        case(_("notes_create only adds (destructiveHint false)",
               "notes_create solo añade (destructiveHint false)"),
             definition_of("notes_create", hints),
             {"readOnlyHint": False, "destructiveHint": False}, given="tools/list",
             hint=_("the default is destructive: say destructive=False",
                    "por defecto se supone destructiva: indica destructive=False")),
        case(_("notes_delete says it is destructive (destructiveHint true)",
               "notes_delete dice que es destructiva (destructiveHint true)"),
             definition_of("notes_delete", hints),
             {"readOnlyHint": False, "destructiveHint": True}, given="tools/list",
             hint=_("@server.tool(destructive=True): say it explicitly, so that a host asks "
                    "the user before it runs", "@server.tool(destructive=True): dilo "
                    "explícitamente, para que un host pregunte al usuario antes de ejecutarla")),
        case(_("notes_list: every note's id and title, in order",
               "notes_list: el id y el título de cada nota, en orden"),
             call("notes_list", {}), ok(seed_list), given='notes_list {}'),
        case(_("notes_search finds a title whatever its case",
               "notes_search encuentra un título sin importar mayúsculas"),
             call("notes_search", {"query": "mcp"}), ok([full("2")]),
             given='notes_search {"query": "mcp"}',
             hint=_("compare query.lower() with title.lower() and body.lower()",
                    "compara query.lower() con title.lower() y body.lower()")),
        case(_("notes_search looks in the body too, case-insensitively",
               "notes_search busca también en el cuerpo, sin distinguir mayúsculas"),
             call("notes_search", {"query": "EGGS"}), ok([full("1")]),
             given='notes_search {"query": "EGGS"}'),
        case(_("notes_search: accented capitals match too",
               "notes_search: también encajan las mayúsculas con tilde"),
             call("notes_search", {"query": "CAFÉ"}), ok([full("3")]),
             given='notes_search {"query": "CAFÉ"}'),
        case(_("notes_search: several matches, in the notes' order",
               "notes_search: varias coincidencias, en el orden de las notas"),
             call("notes_search", {"query": "o"}), ok([full("1"), full("2"), full("3")]),
             given='notes_search {"query": "o"}',
             hint=_("each found note whole: id, title and body, in the dict's order",
                    "cada nota encontrada entera: id, title y body, en el orden del dict")),
        case(_("notes_search: limit caps the number of results",
               "notes_search: limit acota el número de resultados"),
             call("notes_search", {"query": "o", "limit": 2}), ok([full("1"), full("2")]),
             given='notes_search {"query": "o", "limit": 2}'),
        case(_("notes_search: at most 10 results by default",
               "notes_search: como mucho 10 resultados por defecto"),
             call("notes_search", {"query": "same"}, many),
             ok([{"id": str(i), "title": f"Note {i}", "body": "same words"}
                 for i in range(1, 11)]),
             given=_('12 notes that all match; notes_search {"query": "same"}',
                     '12 notas que coinciden todas; notes_search {"query": "same"}')),
        case(_("notes_search: the query as it comes, in the title and in the body one at a time",
               "notes_search: la consulta tal como llega, en el título y en el cuerpo por "
               "separado"),
             session(as_it_comes), {q: ok([]) for q in ("  eggs  ", "ping milk", "pingmilk")},
             given=_('note 1 is "Shopping" / "Milk, eggs, coffee."; notes_search {"query": '
                     '"  eggs  "}, {"query": "ping milk"}, {"query": "pingmilk"}',
                     'la nota 1 es "Shopping" / "Milk, eggs, coffee."; notes_search {"query": '
                     '"  eggs  "}, {"query": "ping milk"}, {"query": "pingmilk"}'),
             hint=_("do not strip the query, and look in note[\"title\"] and note[\"body\"] "
                    "separately: title + body makes matches that are in neither",
                    "no le quites espacios a la consulta, y busca en note[\"title\"] y en "
                    "note[\"body\"] por separado: title + body crea coincidencias que no están "
                    "en ninguno de los dos")),
        case(_("notes_search: no match is an empty list, not an error",
               "notes_search: sin coincidencias es una lista vacía, no un error"),
             call("notes_search", {"query": "zebra"}), ok([]),
             given='notes_search {"query": "zebra"}'),
        case(_("notes_create returns the new note, stores it in notes and notifies notes://4",
               "notes_create devuelve la nota nueva, la guarda en notes y avisa de notes://4"),
             session(create_then),
             {"result": ok({"id": "4", "title": "Tea", "body": "Green, no sugar."}),
              "notes_list": ok(seed_list + [{"id": "4", "title": "Tea"}]),
              "notes['4']": {"title": "Tea", "body": "Green, no sugar."},
              "notified": ["notes://4"]},
             given='notes_create {"title": "Tea", "body": "Green, no sugar."}; notes_list {}',
             hint=_('call server.notify_resource_updated(f"notes://{note_id}") after the '
                    "change", 'llama a server.notify_resource_updated(f"notes://{note_id}") '
                    "tras el cambio")),
        case(_("ids are never reused, even after deleting the newest note",
               "los ids nunca se reutilizan, ni siquiera tras borrar la nota más nueva"),
             session(no_reuse), {"created": ["4", "5"], "notes": ["1", "2", "5"]},
             given=_("delete 3, create, delete 4, create", "borrar 3, crear, borrar 4, crear"),
             hint=_("keep a counter (itertools.count), made in each add_tools call, that "
                    "starts after the largest id of its notes",
                    "usa un contador (itertools.count), creado en cada llamada a add_tools, "
                    "que empiece tras el mayor id de sus notas")),
        predicate(_("a failed create uses up no id: the next note is 4",
                    "una creación fallida no gasta ningún id: la siguiente nota es la 4"),
                  session(failed_create_between), follows,
                  _("the second id is one more than the first (['4', '5'])",
                    "el segundo id es uno más que el primero (['4', '5'])"),
                  given='notes_create {"title": "Tea", ...}; notes_create {"title": "", ...}; '
                        'notes_create {"title": "Milk", ...}',
                  hint=_("check the title before you take an id: a failed call changes "
                         "nothing, not even the counter",
                         "comprueba el título antes de tomar un id: una llamada fallida no "
                         "cambia nada, ni siquiera el contador")),
        case(_("two servers side by side: each numbers its own notes",
               "dos servidores a la vez: cada uno numera sus propias notas"),
             two_servers, {f"{_server_word()} 0": "4", f"{_server_word()} 1": "4"},
             given=_("add_tools on two servers, each with its own copy of the notes; "
                     "notes_create on each",
                     "add_tools en dos servidores, cada uno con su propia copia de las notas; "
                     "notes_create en cada uno"),
             hint=_("keep the id counter inside add_tools: one made outside it (a global, a "
                    "default argument, a class attribute) is shared by every server",
                    "guarda el contador de ids dentro de add_tools: uno creado fuera (una "
                    "variable global, un argumento por defecto, un atributo de clase) lo "
                    "comparten todos los servidores")),
        predicate(_("ids compare as numbers: after 1 to 10 comes 11",
                    "los ids se comparan como números: tras los ids del 1 al 10 viene el 11"),
                  session(after_ten, ten), after_ten_ok,
                  _("a new id after 10 (\"11\"), and 11 notes",
                    "un id nuevo después del 10 (\"11\") y 11 notas"),
                  given=_('notes with ids "1" to "10"; notes_create {"title": "Tea", ...}',
                          'notas con ids de "1" a "10"; notes_create {"title": "Tea", ...}'),
                  hint=_('int() each id before max(): as strings "9" > "10", so max(notes) is '
                         '"9" and the new note overwrites note 10',
                         'aplica int() a cada id antes de max(): como cadenas, "9" > "10", así '
                         'que max(notes) es "9" y la nota nueva sobrescribe la 10')),
        case(_("notes_create with a blank title: isError, nothing stored, nothing notified",
               "notes_create con un título en blanco: isError, no se guarda ni se avisa nada"),
             session(blank_title),
             {"result": tool_error, "notes": ["1", "2", "3"], "notified": []},
             given='notes_create {"title": "   ", "body": "x"}',
             hint=_("raise ValueError(...) when title.strip() is empty",
                    "lanza ValueError(...) cuando title.strip() está vacío")),
        case(_("notes_create: a title of tabs and newlines is blank too",
               "notes_create: un título de tabuladores y saltos de línea también está en "
               "blanco"),
             session(whitespace_title),
             {"results": [tool_error, tool_error], "notes": ["1", "2", "3"], "notified": []},
             given='notes_create {"title": "\\t", ...}; notes_create {"title": " \\n ", ...}',
             hint=_("blank is what title.strip() removes: spaces, tabs and newlines",
                    "los caracteres en blanco son los que quita title.strip(): espacios, "
                    "tabuladores y saltos de línea")),
        case(_("a title already in use is stored again, as a new note",
               "un título que ya existe se guarda otra vez, como una nota nueva"),
             session(same_title), {"created": ["4", "5"], "notes": ["1", "2", "3", "4", "5"]},
             given='notes_create {"title": "Shopping", "body": "x"} ×2',
             hint=_("only a blank title is an error: titles need not be unique",
                    "solo un título en blanco es un error: los títulos no tienen por qué ser "
                    "únicos")),
        case(_("with no notes, the first new id is \"1\"",
               "sin notas, el primer id nuevo es \"1\""),
             session(first_of_none, {}), {"created": "1", "notes": ["1"]},
             given='notes = {}; notes_create {"title": "Tea", "body": "x"}',
             hint=_("max(..., default=0) + 1: the counter starts at 1 when there are no notes",
                    "max(..., default=0) + 1: el contador empieza en 1 cuando no hay notas")),
        case(_("notes_delete removes the note and notifies its URI",
               "notes_delete elimina la nota y avisa de su URI"),
             session(delete_then),
             {"result": ok(_short_text()), "ids left": ["1", "3"], "notified": ["notes://2"]},
             given='notes_delete {"id": "2"}; notes_list {}',
             hint=_('return a short text that is not blank, such as f"deleted note {id}"',
                    'devuelve un texto breve que no esté en blanco, como '
                    'f"deleted note {id}"')),
        case(_("notes_delete of an unknown id: an isError result, not a crash",
               "notes_delete de un id desconocido: un resultado isError, no una caída"),
             session(unknown_delete),
             {"result": tool_error, "notes left": ["1", "2", "3"], "notified": []},
             given='notes_delete {"id": "99"}',
             hint=_("raise KeyError or ValueError: mcpkit turns it into isError for the model",
                    "lanza KeyError o ValueError: mcpkit lo convierte en isError para el "
                    "modelo")),
        case(_("notes_delete: an id matches only as it is (\" 2\" and \"02\" are not \"2\")",
               "notes_delete: un id solo coincide tal cual (\" 2\" y \"02\" no son \"2\")"),
             session(near_ids),
             {"results": [tool_error, tool_error], "notes left": ["1", "2", "3"],
              "notified": []},
             given='notes_delete {"id": " 2"}; notes_delete {"id": "02"}',
             hint=_("look the id up as it came (id in notes): no strip(), no int()",
                    "busca el id tal como llegó (id in notes): sin strip() ni int()")),
        case(_("deleting twice: the second call is an isError result",
               "borrar dos veces: la segunda llamada es un resultado isError"),
             session(delete_twice),
             {"first isError": False, "second": tool_error, "notified": ["notes://1"]},
             given='notes_delete {"id": "1"} ×2',
             hint=_("notify only after a deletion that happened",
                    "avisa solo tras un borrado que se produjo")),
        case(_("an id sent as a number is refused by the schema (isError), nothing deleted",
               "un id enviado como número lo rechaza el esquema (isError), no se borra nada"),
             session(integer_id), {"result": tool_error, "notes left": ["1", "2", "3"]},
             given='notes_delete {"id": 1}'),
        case(_("a tool that does not exist: protocol error -32602",
               "una herramienta que no existe: error de protocolo -32602"),
             call("notes_purge", {}), {"protocol error": -32602},
             given='notes_purge {}'),
    ]
    results.append(tools_differential(add_tools))
    run_checks(results)


def _resource_server(add_resources: Callable, notes: dict[str, dict[str, str]] | None = None):
    from ..server import Server

    server = Server("notes-check", "1.0.0")
    store = _seed(notes)
    add_resources(server, store)
    return server, store


def _error_code(response: dict[str, Any]) -> Any:
    if "error" in response:
        return {"protocol error": response["error"].get("code")}
    return {"result": response.get("result")}


def check_note_resources(add_resources: Callable) -> None:
    """Lab 04, part 2: the ``notes://{id}`` template and the ``review_note`` prompt."""

    def session(steps: Callable[[_Client, dict], Any]) -> Callable[[], Any]:
        def run() -> Any:
            server, store = _resource_server(add_resources)
            client = _Client(server)
            try:
                return steps(client, store)
            finally:
                client.close()

        return run

    def markdown(note_id: str) -> str:
        note = NOTES_SEED[note_id]
        return f"# {note['title']}\n\n{note['body']}\n"

    def contents(note_id: str, text: str) -> dict[str, Any]:
        return {"result": {"contents": [{"uri": f"notes://{note_id}",
                                         "mimeType": "text/markdown", "text": text}]}}

    def read(uri: str) -> Callable[[], Any]:
        return session(lambda c, s: _error_code(c.request("resources/read", {"uri": uri})))

    def templates(c: _Client, store: dict) -> Any:
        found = c.request("resources/templates/list")["result"]["resourceTemplates"]
        return [{k: t.get(k) for k in ("uriTemplate", "name", "mimeType")} for t in found]

    def live(c: _Client, store: dict) -> Any:
        store["7"] = {"title": "Later", "body": "Added after start-up."}
        return _error_code(c.request("resources/read", {"uri": "notes://7"}))

    def gone(c: _Client, store: dict) -> Any:
        del store["1"]
        return _error_code(c.request("resources/read", {"uri": "notes://1"}))

    padded = {"title": " Plan ", "body": "line 1\n\n  line 2\n"}

    def exact(c: _Client, store: dict) -> Any:
        store["5"] = dict(padded)
        return _error_code(c.request("resources/read", {"uri": "notes://5"}))

    def first_message(c: _Client, note_id: str) -> Any:
        response = c.request("prompts/get", {"name": "review_note", "arguments": {"id": note_id}})
        if "error" in response:
            return _error_code(response)
        messages = response["result"].get("messages")
        first = messages[0] if isinstance(messages, list) and messages else messages
        content = first.get("content") if isinstance(first, dict) else first
        return content.get("resource", content) if isinstance(content, dict) else content

    def live_prompt(c: _Client, store: dict) -> Any:
        store["7"] = {"title": "Later", "body": "Added after start-up."}
        store["2"] = {"title": "MCP", "body": ""}  # an empty body is a note all the same
        return {"notes://7": first_message(c, "7"), "notes://2": first_message(c, "2")}

    def prompts(c: _Client, store: dict) -> Any:
        found = c.request("prompts/list")["result"]["prompts"]
        return [{"name": p.get("name"),
                 "arguments": [{"name": a.get("name"), "required": a.get("required")}
                               for a in p.get("arguments") or []]} for p in found]

    def review(note_id: str) -> Callable[[], Any]:
        def steps(c: _Client, store: dict) -> Any:
            response = c.request("prompts/get", {"name": "review_note",
                                                 "arguments": {"id": note_id}})
            if "error" in response:
                return _error_code(response)
            messages = response["result"].get("messages")
            if not isinstance(messages, list) or len(messages) != 2:
                return messages
            first, second = messages
            content = second.get("content") if isinstance(second, dict) else None
            return {"first": first,
                    "second": {"role": second.get("role") if isinstance(second, dict) else None,
                               "content type": content.get("type")
                               if isinstance(content, dict) else None}}

        return session(steps)

    def review_expected(note_id: str) -> dict[str, Any]:
        return {"first": {"role": "user", "content": {"type": "resource", "resource": {
                    "uri": f"notes://{note_id}", "mimeType": "text/markdown",
                    "text": markdown(note_id)}}},
                "second": {"role": "user", "content type": "text"}}

    not_found = {"protocol error": -32002}
    results = [
        case(_("one resource template, notes://{id}, named note, in Markdown",
               "una plantilla de recurso, notes://{id}, llamada note, en Markdown"),
             session(templates),
             [{"uriTemplate": "notes://{id}", "name": "note", "mimeType": "text/markdown"}],
             given="resources/templates/list",
             hint='@server.resource("notes://{id}", name="note", mime_type="text/markdown")'),
        case(_("reading notes://1 gives the note as Markdown",
               "leer notes://1 da la nota en Markdown"),
             read("notes://1"), contents("1", markdown("1")),
             given='resources/read {"uri": "notes://1"}',
             hint=_('f"# {title}\\n\\n{body}\\n"', 'f"# {title}\\n\\n{body}\\n"')),
        case(_("accents survive the trip", "las tildes sobreviven al viaje"),
             read("notes://3"), contents("3", markdown("3")),
             given='resources/read {"uri": "notes://3"}'),
        case(_("an unknown note: resource not found, -32002",
               "una nota desconocida: recurso no encontrado, -32002"),
             read("notes://99"), not_found, given='resources/read {"uri": "notes://99"}',
             hint=_("let the KeyError of notes[id] propagate: mcpkit answers -32002",
                    "deja que se propague el KeyError de notes[id]: mcpkit responde -32002")),
        case(_("a note added later can be read (read the notes when asked, not at start-up)",
               "una nota añadida después se puede leer (lee las notas al pedirlas, no al "
               "arrancar)"),
             session(live), {"result": {"contents": [{
                 "uri": "notes://7", "mimeType": "text/markdown",
                 "text": "# Later\n\nAdded after start-up.\n"}]}},
             given=_('notes["7"] = {...}; resources/read {"uri": "notes://7"}',
                     'notes["7"] = {...}; resources/read {"uri": "notes://7"}')),
        case(_("a note removed later is not found any more",
               "una nota eliminada después ya no se encuentra"),
             session(gone), not_found,
             given='del notes["1"]; resources/read {"uri": "notes://1"}'),
        case(_("the Markdown keeps the title and the body exactly as stored",
               "el Markdown conserva el título y el cuerpo tal como están guardados"),
             session(exact), contents("5", f"# {padded['title']}\n\n{padded['body']}\n"),
             given=_('notes["5"] = {"title": " Plan ", "body": "line 1\\n\\n  line 2\\n"}; '
                     'resources/read {"uri": "notes://5"}',
                     'notes["5"] = {"title": " Plan ", "body": "line 1\\n\\n  line 2\\n"}; '
                     'resources/read {"uri": "notes://5"}'),
             hint=_('f"# {note[\'title\']}\\n\\n{note[\'body\']}\\n", with nothing stripped',
                    'f"# {note[\'title\']}\\n\\n{note[\'body\']}\\n", sin quitar nada')),
        case(_("one prompt, review_note, with a required id argument",
               "un prompt, review_note, con un argumento id obligatorio"),
             session(prompts), [{"name": "review_note",
                                 "arguments": [{"name": "id", "required": True}]}],
             given="prompts/list", hint="@server.prompt\ndef review_note(id: str): ..."),
        case(_("review_note: the note as an embedded resource, then a text request",
               "review_note: la nota como recurso incrustado y después un texto que pide "
               "la revisión"),
             review("2"), review_expected("2"),
             given='prompts/get {"name": "review_note", "arguments": {"id": "2"}}'),
        case(_("review_note reads the note when asked: one added later, one changed later",
               "review_note lee la nota al pedirla: una añadida después, una cambiada después"),
             session(live_prompt),
             {"notes://7": {"uri": "notes://7", "mimeType": "text/markdown",
                            "text": "# Later\n\nAdded after start-up.\n"},
              "notes://2": {"uri": "notes://2", "mimeType": "text/markdown",
                            "text": "# MCP\n\n\n"}},
             given=_('notes["7"] = {...}; notes["2"] = {"title": "MCP", "body": ""}; '
                     'prompts/get review_note 7, 2',
                     'notes["7"] = {...}; notes["2"] = {"title": "MCP", "body": ""}; '
                     'prompts/get review_note 7, 2'),
             hint=_("build the messages from notes[id] when prompts/get arrives, as the read "
                    "does, for every note in notes (an empty body is fine): text kept from "
                    "start-up is stale",
                    "construye los mensajes a partir de notes[id] cuando llega prompts/get, "
                    "como hace la lectura, para cada nota de notes (un cuerpo vacío vale): un "
                    "texto guardado al arrancar está desfasado")),
        case(_("review_note of an unknown note: protocol error -32602, not a crash",
               "review_note de una nota desconocida: error de protocolo -32602, no una caída"),
             review("99"), {"protocol error": -32602},
             given='prompts/get {"name": "review_note", "arguments": {"id": "99"}}',
             hint=_("raise InvalidParams(...) when the id is unknown: a KeyError would be "
                    "-32603, an internal error",
                    "lanza InvalidParams(...) cuando el id es desconocido: un KeyError sería "
                    "-32603, un error interno")),
        case(_("review_note without its argument: protocol error -32602",
               "review_note sin su argumento: error de protocolo -32602"),
             session(lambda c, s: _error_code(c.request(
                 "prompts/get", {"name": "review_note", "arguments": {}}))),
             {"protocol error": -32602},
             given='prompts/get {"name": "review_note", "arguments": {}}'),
    ]
    results.append(resources_differential(add_resources))
    run_checks(results)


def check_notes_server(make_notes_server: Callable) -> None:
    """Lab 04, part 3: the whole notes server in a session: handshake, capabilities and
    resource subscriptions (on the reference's tools and resources, so that parts 1 and 2
    keep their own bugs)."""
    with references_for(make_notes_server, add_tools=reference_add_tools,
                        add_resources=reference_add_resources):
        _check_notes_server(make_notes_server)


def _check_notes_server(make_notes_server: Callable) -> None:

    def session(steps: Callable[..., Any], clients: int = 1) -> Callable[[], Any]:
        def run() -> Any:
            server = make_notes_server(_seed())
            opened = [_Client(server) for _ in range(clients)]
            try:
                return steps(*opened)
            finally:
                for client in opened:
                    client.close()

        return run

    def handshake(c: _Client) -> Any:
        result = c.init.get("result") or {}
        info = result.get("serverInfo") or {}
        return {"protocolVersion": result.get("protocolVersion"),
                "serverInfo.name": info.get("name"), "serverInfo.version": info.get("version")}

    def capabilities(c: _Client) -> Any:
        caps = (c.init.get("result") or {}).get("capabilities") or {}
        return {"tools": "tools" in caps, "prompts": "prompts" in caps,
                "resources.subscribe": (caps.get("resources") or {}).get("subscribe")}

    def shapes(messages: list[dict[str, Any]]) -> list[Any]:
        shaped: list[Any] = []
        for m in messages:
            if "method" in m:
                shaped.append({"notification": m["method"], "params": m.get("params")})
            elif "error" in m:
                shaped.append({"response": m.get("id"), "error": m["error"].get("code")})
            else:
                shaped.append({"response": m.get("id"),
                               "isError": bool((m.get("result") or {}).get("isError"))})
        return shaped

    def updated(uri: str) -> dict[str, Any]:
        return {"notification": "notifications/resources/updated", "params": {"uri": uri}}

    def response(request_id: int, is_error: bool = False) -> dict[str, Any]:
        return {"response": request_id, "isError": is_error}

    def subscribed_create(c: _Client) -> Any:
        c.request("resources/subscribe", {"uri": "notes://4"})
        c.drain()
        c.call("notes_create", {"title": "Tea", "body": "Green."})
        return shapes(c.drain())

    def subscribed_delete(c: _Client) -> Any:
        c.request("resources/subscribe", {"uri": "notes://1"})
        c.drain()
        c.call("notes_delete", {"id": "1"})
        return shapes(c.drain())

    def other_note(c: _Client) -> Any:
        c.request("resources/subscribe", {"uri": "notes://1"})
        c.drain()
        c.call("notes_delete", {"id": "2"})
        return shapes(c.drain())

    def unsubscribed(c: _Client) -> Any:
        c.request("resources/subscribe", {"uri": "notes://1"})
        c.request("resources/unsubscribe", {"uri": "notes://1"})
        c.drain()
        c.call("notes_delete", {"id": "1"})
        return shapes(c.drain())

    def twice(c: _Client) -> Any:
        c.request("resources/subscribe", {"uri": "notes://3"})
        c.drain()
        c.call("notes_delete", {"id": "3"})
        c.call("notes_delete", {"id": "3"})
        return shapes(c.drain())

    def two_clients(a: _Client, b: _Client) -> Any:
        a.request("resources/subscribe", {"uri": "notes://4"})
        a.drain()
        b.drain()
        b.call("notes_create", {"title": "From b", "body": "Hello."})
        return {"a (subscribed) got": shapes(a.drain()), "b got": shapes(b.drain())}

    def keeps_given_notes() -> Any:
        given = _seed()
        server = make_notes_server(given)
        c = _Client(server)
        try:
            c.call("notes_create", {"title": "Tea", "body": "Green."})
            c.call("notes_delete", {"id": "1"})
        finally:
            c.close()
        return {"ids in the dict given to make_notes_server": sorted(given)}

    def read_after_create(c: _Client) -> Any:
        c.call("notes_create", {"title": "Tea", "body": "Green."})
        found = c.request("resources/read", {"uri": "notes://4"})
        return _error_code(found)

    results = [
        case(_("initialize (2025-11-25): the server answers as notes, version 1.0.0",
               "initialize (2025-11-25): el servidor responde como notes, versión 1.0.0"),
             session(handshake), {"protocolVersion": "2025-11-25", "serverInfo.name": "notes",
                                  "serverInfo.version": "1.0.0"},
             given="initialize", hint='Server("notes", "1.0.0")'),
        case(_("capabilities: tools, prompts, and resources with subscribe",
               "capacidades: tools, prompts y resources con subscribe"),
             session(capabilities),
             {"tools": True, "prompts": True, "resources.subscribe": True}, given="initialize",
             hint=_("register the tools and the resources and prompt of parts 1 and 2",
                    "registra las herramientas, el recurso y el prompt de las partes 1 y 2")),
        case(_("tools and resources share the notes: a created note can be read",
               "las herramientas y los recursos comparten las notas: una nota creada se puede "
               "leer"),
             session(read_after_create), {"result": {"contents": [{
                 "uri": "notes://4", "mimeType": "text/markdown", "text": "# Tea\n\nGreen.\n"}]}},
             given='notes_create {"title": "Tea", ...}; resources/read {"uri": "notes://4"}',
             hint=_("pass the same notes dict to add_tools and add_resources",
                    "pasa el mismo dict notes a add_tools y a add_resources")),
        case(_("the server keeps its notes in the dict it was given (no copy)",
               "el servidor guarda sus notas en el dict que recibió (sin copia)"),
             keeps_given_notes, {"ids in the dict given to make_notes_server": ["2", "3", "4"]},
             given='make_notes_server(notes); notes_create {"title": "Tea", ...}; '
                   'notes_delete {"id": "1"}',
             hint=_("pass the notes dict itself to add_tools and add_resources: dict(notes) "
                    "or notes.copy() makes changes invisible to whoever gave it",
                    "pasa el propio dict notes a add_tools y a add_resources: dict(notes) o "
                    "notes.copy() hace los cambios invisibles para quien lo dio")),
        case(_("subscribed to notes://4, a create sends resources/updated, then the response",
               "suscrito a notes://4, crear envía resources/updated y después la respuesta"),
             session(subscribed_create), [updated("notes://4"), response(3)],
             given='resources/subscribe {"uri": "notes://4"}; notes_create {...}'),
        case(_("subscribed to notes://1, deleting it sends resources/updated",
               "suscrito a notes://1, borrarla envía resources/updated"),
             session(subscribed_delete), [updated("notes://1"), response(3)],
             given='resources/subscribe {"uri": "notes://1"}; notes_delete {"id": "1"}'),
        case(_("a change to another note sends nothing to this subscriber",
               "un cambio en otra nota no le envía nada a este suscriptor"),
             session(other_note), [response(3)],
             given='resources/subscribe {"uri": "notes://1"}; notes_delete {"id": "2"}',
             hint=_("notify the URI of the note that changed, not every subscription",
                    "avisa del URI de la nota que cambió, no de todas las suscripciones")),
        case(_("after resources/unsubscribe, nothing more", "tras resources/unsubscribe, nada más"),
             session(unsubscribed), [response(4)],
             given='subscribe notes://1; unsubscribe notes://1; notes_delete {"id": "1"}'),
        case(_("deleting twice: one notification, and the second delete is isError",
               "borrar dos veces: una notificación, y el segundo borrado es isError"),
             session(twice), [updated("notes://3"), response(3), response(4, True)],
             given='subscribe notes://3; notes_delete {"id": "3"} ×2'),
        case(_("only the subscribed client hears of the change, whoever made it",
               "solo el cliente suscrito se entera del cambio, lo haga quien lo haga"),
             session(two_clients, clients=2),
             {"a (subscribed) got": [updated("notes://4")], "b got": [response(2)]},
             given=_("client a subscribes to notes://4; client b creates a note",
                     "el cliente a se suscribe a notes://4; el cliente b crea una nota")),
    ]
    results.append(server_differential(make_notes_server))
    run_checks(results)


# --------------------------------------------------------------------------- generated cases
#
# The reference is the notes server the lab describes, written on mcpkit's own Server below.
# A generated case starts from notes whose ids are not 1..n, then makes random calls on two
# servers side by side (or two clients of one server) and compares every answer, every
# notification and the notes left.


def reference_add_tools(server: Any, notes: dict[str, dict[str, str]]) -> None:
    ids = itertools.count(max((int(i) for i in notes), default=0) + 1)

    @server.tool(read_only=True, open_world=False)
    def notes_list() -> list:
        """List every note's id and title."""
        return [{"id": i, "title": n["title"]} for i, n in notes.items()]

    @server.tool(read_only=True, open_world=False)
    def notes_search(query: str, limit: int = 10) -> list:
        """Find notes whose title or body contains the query, ignoring case."""
        needle = query.casefold()
        found = [{"id": i, **n} for i, n in notes.items()
                 if needle in n["title"].casefold() or needle in n["body"].casefold()]
        return found[:limit]

    @server.tool(destructive=False, open_world=False)
    def notes_create(title: str, body: str) -> dict:
        """Create a note and return it, with its new id."""
        if not title.strip():
            raise ValueError("a note needs a title")
        note_id = str(next(ids))
        notes[note_id] = {"title": title, "body": body}
        server.notify_resource_updated(f"notes://{note_id}")
        return {"id": note_id, "title": title, "body": body}

    @server.tool(destructive=True, idempotent=True, open_world=False)
    def notes_delete(id: str) -> str:
        """Delete a note for good."""
        if id not in notes:
            raise KeyError(id)
        del notes[id]
        server.notify_resource_updated(f"notes://{id}")
        return f"deleted note {id}"


def reference_add_resources(server: Any, notes: dict[str, dict[str, str]]) -> None:
    from ..jsonrpc import InvalidParams

    @server.resource("notes://{id}", name="note", mime_type="text/markdown")
    def read_note(id: str) -> str:
        """One note as Markdown."""
        note = notes[id]
        return f"# {note['title']}\n\n{note['body']}\n"

    @server.prompt(title="Review a note")
    def review_note(id: str) -> list:
        """Ask the model to review a note."""
        if id not in notes:
            raise InvalidParams(f"there is no note {id}")
        return [{"role": "user", "content": {"type": "resource", "resource": {
                    "uri": f"notes://{id}", "mimeType": "text/markdown", "text": read_note(id)}}},
                {"role": "user", "content": {"type": "text", "text": "Review this note."}}]


def reference_make_notes_server(notes: dict[str, dict[str, str]]) -> Any:
    from ..server import Server

    server = Server("notes", "1.0.0")
    reference_add_tools(server, notes)
    reference_add_resources(server, notes)
    return server


_WORDS = ("Café", "tea", "MCP", "Milk", "notes", "ÉCOLE", "x")
#: Bodies that a stripping or reformatting learner would change: outer spaces, newlines.
_ODD_BODIES = ("  tea  ", "Milk\n\nMCP\n", "\tx")


def _random_notes(rng: Gen) -> dict[str, dict[str, str]]:
    """Notes whose ids have gaps, sometimes many of them (ids past 9 and 99, where string
    order is not number order), and sometimes not in increasing order in the dict."""
    if rng.random() < 0.3:
        ids = rng.sample(range(1, 130), rng.randint(5, 14))
    else:
        ids = sorted(rng.sample(range(1, 12), rng.randint(0, 4)))
    if rng.random() < 0.3:
        rng.shuffle(ids)
    notes = {str(i): {"title": " ".join(rng.sample(_WORDS, 2)),
                      "body": rng.choice([*_WORDS, ""])} for i in ids}
    for note in notes.values():  # sometimes padded, sometimes several lines
        if rng.random() < 0.2:
            note["body"] = rng.choice(_ODD_BODIES)
        if rng.random() < 0.1:
            note["title"] = f" {note['title']} "
    return notes


def _note_id(rng: Gen, notes: dict[str, Any]) -> str:
    """An id of the notes, mostly; else one that is not there, or one that only looks like
    one that is (" 2", "02": an id matches only as it is)."""
    if not notes:
        return "1"
    near = rng.choice(list(notes))
    return rng.choice([*notes, *notes, "99", "0", str(len(notes) + 1), f" {near}", f"0{near}"])


def _query(rng: Gen, notes: dict[str, Any]) -> str:
    """A search query: words in other cases, with spaces around them, and (from a note) the
    end of its title run into its body, which is in neither."""
    roll = rng.random()
    if notes and roll < 0.2:
        note = notes[rng.choice(list(notes))]
        glue = rng.choice(["", " "])
        return note["title"].strip()[-2:] + glue + note["body"].strip()[:2]
    if roll < 0.35:
        return rng.choice([" tea", "tea ", " x ", "e m"])
    return rng.choice([*_WORDS, "café", "cAfÉ", "zzz", "", "é"])


@dataclass(frozen=True)
class NotesCase:
    notes: tuple[tuple[tuple[str, str, str], ...], ...]  # per server: (id, title, body)
    calls: tuple[tuple[int, str, Any], ...]  # (which server or client, method, params)


def _store(rows: tuple[tuple[str, str, str], ...]) -> dict[str, dict[str, str]]:
    return {i: {"title": t, "body": b} for i, t, b in rows}


def _rows(notes: dict[str, dict[str, str]]) -> tuple[tuple[str, str, str], ...]:
    return tuple((i, n["title"], n["body"]) for i, n in notes.items())


def _tool_call(rng: Gen, notes: dict[str, Any]) -> tuple[str, Any]:
    roll = rng.random()
    if roll < 0.15:
        return "tools/call", {"name": "notes_list", "arguments": {}}
    if roll < 0.4:
        arguments: dict[str, Any] = {"query": _query(rng, notes)}
        if rng.random() < 0.5:
            arguments["limit"] = rng.randint(0, 3)
        return "tools/call", {"name": "notes_search", "arguments": arguments}
    if roll < 0.7:
        title = rng.choice(["Tea", "Café ☕", "  ", "", "x", "Milk", " Tea ", "\té", "\t",
                            " \n ", *(n["title"] for n in list(notes.values())[:1])])
        return "tools/call", {"name": "notes_create",
                              "arguments": {"title": title, "body": rng.choice([*_WORDS, ""])}}
    return "tools/call", {"name": "notes_delete", "arguments": {"id": _note_id(rng, notes)}}


def _tools_case(rng: Gen) -> NotesCase:
    count = 2 if rng.random() < 0.4 else 1
    stores = [_random_notes(rng) for _i in range(count)]
    calls = []
    for _i in range(rng.randint(1, 8)):
        which = rng.randrange(count)
        method, params = _tool_call(rng, stores[which])
        calls.append((which, method, params))
    return NotesCase(tuple(_rows(s) for s in stores), tuple(calls))


def _call_label(which: str, method: str, params: Any) -> str:
    if method == "tools/call":
        return f"{which}: {params['name']} {json.dumps(params['arguments'], ensure_ascii=False)}"
    return f"{which}: {method} {json.dumps(params, ensure_ascii=False)}"


def _server_word() -> str:
    return _("server", "servidor")


def _client_word() -> str:
    return _("client", "cliente")


def _show_notes(x: NotesCase, who: str | None = None) -> str:
    """The case as text; ``who`` names the callers (clients of one server, or servers)."""
    if who is None:
        who = _server_word()
        start = " ; ".join(f"{who} {i}: notes = {json.dumps(_store(rows), ensure_ascii=False)}"
                           for i, rows in enumerate(x.notes))
    else:
        start = f"notes = {json.dumps(_store(x.notes[0]), ensure_ascii=False)}"
    return start + " ; " + " ; ".join(_call_label(f"{who} {w}", m, p) for w, m, p in x.calls)


def _shrink_notes(x: NotesCase) -> Iterator[NotesCase]:
    if len(x.notes) == 2 and all(w == 0 for w, _m, _p in x.calls):
        yield replace(x, notes=x.notes[:1])
    for smaller in drop_each(list(x.calls)):
        yield replace(x, calls=tuple(smaller))
    for s, rows in enumerate(x.notes):
        for smaller in drop_each(list(rows)):
            yield replace(x, notes=(*x.notes[:s], tuple(smaller), *x.notes[s + 1 :]))


def _tools_trial(add_tools: Callable, x: NotesCase) -> list[Step]:
    sessions = []
    for rows in x.notes:
        server, store, changed = _tool_server(add_tools, _store(rows))
        sessions.append((_Client(server), store, changed))
    steps = []
    for which, method, params in x.calls:
        client, store, changed = sessions[which]
        before = len(changed)
        answer = _shaped(client.request(method, params), params.get("name"))
        steps.append(Step(_call_label(f"{_server_word()} {which}", method, params), {
            _("answer", "respuesta"): answer,
            _("resources/updated for", "resources/updated de"): changed[before:],
            _("notes now", "notas ahora"): {i: dict(n) for i, n in store.items()}}))
    for client, *_rest in sessions:
        client.close()
    return steps


def _tools_hint(x: NotesCase, expected: Step | None, got: Step | None) -> str | None:
    """A hint from what differs in the step: the new id, the notes kept, the search, or the
    notifications."""
    if expected is None or got is None or not isinstance(got.seen, dict):
        return None
    answer, updated, kept = (_("answer", "respuesta"), _("resources/updated for",
                             "resources/updated de"), _("notes now", "notas ahora"))
    want, have = expected.seen, got.seen
    w, h = want.get(answer) or {}, have.get(answer) or {}
    w_id = (w.get("value") or {}).get("id") if isinstance(w.get("value"), dict) else None
    h_id = (h.get("value") or {}).get("id") if isinstance(h.get("value"), dict) else None
    if w.get("isError") is False and h.get("isError") is True and "notes_create" in got.label:
        return _("only a blank title is a tool error: any other title, and any body (even an "
                 "empty one), is stored as it came",
                 "solo un título en blanco es un error de herramienta: cualquier otro título, y "
                 "cualquier cuerpo (aunque esté vacío), se guarda tal como llegó")
    if w.get("isError") is True and h.get("isError") is False:
        if "notes_create" in got.label:
            return _("a blank title (empty or only spaces, tabs, newlines) is a tool error: "
                     "raise ValueError when title.strip() is empty, and store nothing",
                     "un título en blanco (vacío, o solo espacios, tabuladores y saltos de "
                     "línea) es un error de "
                     "herramienta: lanza ValueError si title.strip() está vacío, y no guardes "
                     "nada")
        if "notes_delete" in got.label:
            return _("deleting an id that is not in notes is a tool error: raise KeyError or "
                     "ValueError; an id matches only as it is (\" 2\" and \"02\" are not "
                     "\"2\")", "borrar un id que no está en notes es un error de "
                     "herramienta: lanza KeyError o ValueError; un id solo coincide tal cual "
                     "(\" 2\" y \"02\" no son \"2\")")
    if "notes_create" in got.label and w_id != h_id:
        return _id_hint(x, got.label, w_id, h_id)
    if want.get(updated) != have.get(updated):
        return _("notify notes://{id} once for each change that happened, and only then",
                 "avisa de notes://{id} una vez por cada cambio que se produjo, y solo entonces")
    if want.get(kept) != have.get(kept) and w == h:
        return _("keep each note exactly as it was given: what the tool answers and what the "
                 "notes dict holds must agree", "guarda cada nota tal como llegó: lo que "
                 "responde la herramienta y lo que guarda el dict de notas deben coincidir")
    if "notes_search" in got.label:
        return _("case-insensitive, the query as it comes (spaces count), in the title and in "
                 "the body one at a time, in order, at most limit notes (limit 0 gives none); "
                 "each found note whole: id, title and body",
                 "sin distinguir mayúsculas de minúsculas, la consulta tal como llega (los "
                 "espacios cuentan), en el título y en el cuerpo por separado, en orden, como "
                 "mucho limit notas (limit 0 no da ninguna); cada nota encontrada entera: id, "
                 "title y body")
    if "notes_list" in got.label:
        return _("every note's id and title, in the dict's order (not sorted)",
                 "el id y el title de cada nota, en el orden del dict (sin ordenar)")
    return None


def _id_hint(x: NotesCase, label: str, w_id: Any, h_id: Any) -> str:
    """Why a new id differs, from what the case shows: a failed create before it, ids
    compared as strings, a counter shared with another server, or the count of notes."""
    generic = _("a new id is one more than the largest id ever used, never the count of "
                "notes: ids start at any number and have gaps",
                "un id nuevo es uno más que el mayor id usado, nunca el número de notas: los "
                "ids empiezan en cualquier número y tienen huecos")
    if not (isinstance(w_id, str) and w_id.isdigit() and isinstance(h_id, str)
            and h_id.isdigit()):
        return generic
    who = next((w for w, m, p in x.calls if _call_label(f"{_server_word()} {w}", m, p)
                == label), 0)
    at = next(i for i, (w, m, p) in enumerate(x.calls)
              if _call_label(f"{_server_word()} {w}", m, p) == label)
    before = [p for w, m, p in x.calls[:at] if w == who and p.get("name") == "notes_create"]
    failed = [p for p in before if not str(p["arguments"].get("title", "")).strip()]
    start = [i for i, _t, _b in x.notes[who]]
    if not start and not before and int(h_id) < int(w_id):
        return _('with no notes, the first id is "1": max(..., default=0) + 1',
                 'sin notas, el primer id es "1": max(..., default=0) + 1')
    if int(h_id) > int(w_id):
        if failed and int(h_id) - int(w_id) <= len(failed):
            return _("a failed create uses up no id: check the title before you take one",
                     "una creación fallida no gasta ningún id: comprueba el título antes de "
                     "tomar uno")
        return _("two servers must not share state: keep the id counter inside add_tools, "
                 "starting after the largest id of that call's notes",
                 "dos servidores no deben compartir estado: guarda el contador de ids dentro "
                 "de add_tools, empezando tras el mayor id de las notas de esa llamada")
    if start and max(start) != str(max(int(i) for i in start)) \
            and int(h_id) == int(max(start)) + 1 + len(before) - len(failed):
        return _('compare ids as numbers, int() each one before max(): as strings, "9" > '
                 '"10"', 'compara los ids como números, aplica int() a cada uno antes de '
                 'max(): como cadenas, "9" > "10"')
    return generic


def tools_differential(add_tools: Callable) -> CaseResult:
    return differential(
        _("behaves like the reference notes server on generated sessions (ids with gaps, "
          "two servers side by side)", "se comporta como el servidor de notas de referencia "
          "en sesiones generadas (ids con huecos, dos servidores a la vez)"),
        key="lab04/tools", generate=_tools_case, trial=_tools_trial,
        reference=reference_add_tools, learner=add_tools, show=_show_notes, cases=60,
        shrink=_shrink_notes, hint=_tools_hint)


def _resources_case(rng: Gen) -> NotesCase:
    notes = _random_notes(rng)
    now = dict(notes)  # the notes as the calls find them: edits change what later calls name
    calls = []
    for _i in range(rng.randint(1, 6)):
        roll = rng.random()
        if roll < 0.45:
            calls.append((0, "resources/read", {"uri": f"notes://{_note_id(rng, now)}"}))
        elif roll < 0.8:
            arguments = {"id": _note_id(rng, now)} if rng.random() < 0.85 else {}
            calls.append((0, "prompts/get", {"name": "review_note", "arguments": arguments}))
        else:
            edit = rng.choice([["del", _note_id(rng, now)],
                               ["add", rng.choice([str(rng.randint(1, 15)), *now])]])
            if edit[0] == "del":
                now.pop(edit[1], None)
            else:
                now[edit[1]] = {}
            calls.append((0, "edit", edit))
    return NotesCase((_rows(notes),), tuple(calls))


def _resources_trial(add_resources: Callable, x: NotesCase) -> list[Step]:
    server, store = _resource_server(add_resources, _store(x.notes[0]))
    client = _Client(server)
    steps = []
    for _which, method, params in x.calls:
        if method == "edit":  # the notes change behind the server's back
            action, note_id = params
            if action == "del":
                store.pop(note_id, None)
            else:
                store[note_id] = {"title": f"Added {note_id}", "body": "later\n"}
            continue
        response = client.request(method, params)
        if "error" in response:
            seen_now: Any = _error_code(response)
        elif method == "prompts/get":
            messages = response["result"].get("messages") or []
            seen_now = [m.get("content", {}).get("resource", m.get("content", {}).get("type"))
                        if isinstance(m, dict) and isinstance(m.get("content"), dict) else m
                        for m in messages][:1]
        else:
            seen_now = response.get("result")
        steps.append(Step(_call_label(_server_word(), method, params), seen_now))
    client.close()
    return steps


def resources_differential(add_resources: Callable) -> CaseResult:
    return differential(
        _("behaves like the reference on generated reads and prompts (notes added and "
          "removed along the way)", "se comporta como la referencia en lecturas y prompts "
          "generados (con notas añadidas y eliminadas por el camino)"),
        key="lab04/resources", generate=_resources_case, trial=_resources_trial,
        reference=reference_add_resources, learner=add_resources, show=_show_notes, cases=60,
        shrink=_shrink_notes,
        hint=lambda x, e, g: _("read the notes when asked; an unknown note is -32002 for a "
                               "read and -32602 for the prompt",
                               "lee las notas al pedirlas; una nota desconocida es -32002 al "
                               "leerla y -32602 en el prompt"))


def _server_case(rng: Gen) -> NotesCase:
    notes = _random_notes(rng)
    calls = []
    for _i in range(rng.randint(1, 8)):
        who = rng.randrange(2)
        roll = rng.random()
        if roll < 0.35:
            uri = f"notes://{_note_id(rng, notes)}"
            calls.append((who, rng.choice(["resources/subscribe", "resources/subscribe",
                                           "resources/unsubscribe"]), {"uri": uri}))
        else:
            method, params = _tool_call(rng, notes)
            calls.append((who, method, params))
    return NotesCase((_rows(notes),), tuple(calls))


def _server_trial(make: Callable, x: NotesCase) -> list[Step]:
    server = make(_store(x.notes[0]))
    clients = [_Client(server), _Client(server)]
    steps = []
    for who, method, params in x.calls:
        response = clients[who].request(method, params)
        if method.startswith("resources/") and "error" not in response:
            response = {"result": {}}
        tool = params.get("name") if method == "tools/call" else None
        heard = [[{"notification": m["method"], "params": m.get("params")} if "method" in m
                  else _shaped(m, tool) for m in c.drain()] for c in clients]
        received = _("client {n} received", "el cliente {n} recibió")
        steps.append(Step(_call_label(f"{_client_word()} {who}", method, params),
                          {received.format(n=0): heard[0], received.format(n=1): heard[1]}))
    for c in clients:
        c.close()
    return steps


def server_differential(make_notes_server: Callable) -> CaseResult:
    return differential(
        _("behaves like the reference on generated sessions of two clients (subscriptions, "
          "creates and deletes)", "se comporta como la referencia en sesiones generadas de dos "
          "clientes (suscripciones, altas y bajas)"),
        key="lab04/server", generate=_server_case, trial=_server_trial,
        reference=reference_make_notes_server, learner=make_notes_server,
        show=lambda x: _show_notes(x, _client_word()), cases=40, shrink=_shrink_notes,
        hint=_server_hint)


def _server_hint(x: NotesCase, expected: Step | None, got: Step | None) -> str | None:
    if expected is None or got is None or not isinstance(got.seen, dict):
        return None

    def notifications(seen: dict[str, Any]) -> list[Any]:
        return [[m for m in messages if "notification" in m] for messages in seen.values()]

    if notifications(expected.seen) != notifications(got.seen):
        return _("only a client subscribed to a note's URI hears of its change, once per "
                 "change that happened", "solo un cliente suscrito al URI de una nota se entera "
                 "de su cambio, una vez por cada cambio que se produjo")
    if "notes_create" in got.label:
        return _("a new id is one more than the largest id ever used, never the count of "
                 "notes: ids start at any number and have gaps",
                 "un id nuevo es uno más que el mayor id usado, nunca el número de notas: los "
                 "ids empiezan en cualquier número y tienen huecos")
    if "notes_search" in got.label:
        return _("case-insensitive, in the title and the body, in order, at most limit notes "
                 "(limit 0 gives none)", "sin distinguir mayúsculas, en el título y en el "
                 "cuerpo, en orden, como mucho limit notas (limit 0 no da ninguna)")
    return None
