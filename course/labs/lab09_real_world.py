# %% [markdown] lang="en"
# # Lab 09 · The real world
#
# > **Español:** [`labs/es/lab09_real_world.ipynb`](../es/lab09_real_world.ipynb)
#
# Lesson 09 ran real peers and ported the notes server to the official Python SDK. Now you do
# it yourself, and prove it with a tool of your own:
#
# | part | you write | points |
# | --- | --- | --- |
# | 1 | `harness(command, script, timeout)`: a JSON-RPC harness that drives any stdio server and writes down what it answered, in a normal form | 4 |
# | 2 | `notes_port()`: the notes server on the SDK's `MCPServer`, as a program, wire-compatible with mcpkit's | 4 |
# | 3 | `reference_config(peers, folder)` and `through_host(host, folder, message)`: the npm reference servers under a host | 2 |
#
# **How to work.** Replace each `# YOUR CODE HERE` / `raise NotImplementedError()` with your
# code, run the cell, then run the **graded cell** below it. A graded cell is read-only. Before
# you run it, it shows the line it prints when every check passes: that is the expected
# output, not your result. When all three pass, save the notebook and grade the whole lab from
# the repository's root:
#
# ```
# ./course.sh grade lab09
# ```
#
# **What your instructor grades.** Only the code in the exercise cells, run on its own in a
# fresh Python process, on more generated cases than the graded cells here try and with a seed
# you do not see. Keep every definition an exercise needs in its exercise cells, and leave
# `grading` alone: code that touches the grader scores zero. Your harness may not use
# mcpkit's client, session or host (the harness is what part 1 asks for), and your port may
# import the SDK and plain data modules only: no mcpkit, no other process.
# Exercise code may import mcpkit, what the setup cell imports, and the plainer standard
# modules (`json`, `re`, `itertools`, `collections`, `time`, `threading`, `logging` and a few
# more); a graded cell names any other import it finds, with the whole list.
#
# **What you need.** The official SDK (`mcp`, installed by `./course.sh setup`) for part 2;
# the npm reference servers for part 3. If they are missing, the setup cell says so and gives
# the one command that installs them: `interop/install.sh`, from the repository's root.

# %% [markdown] lang="es"
# # Laboratorio 09 · El mundo real
#
# > **English:** [`labs/en/lab09_real_world.ipynb`](../en/lab09_real_world.ipynb)
#
# La lección 09 ejecutó interlocutores reales y portó el servidor de notas al SDK oficial de
# Python. Ahora lo haces tú, y lo demuestras con una herramienta propia:
#
# | parte | escribes | puntos |
# | --- | --- | --- |
# | 1 | `harness(command, script, timeout)`: un harness (arnés de pruebas) de JSON-RPC que controla cualquier servidor stdio y anota lo que respondió, en una forma normalizada | 4 |
# | 2 | `notes_port()`: el servidor de notas sobre el `MCPServer` del SDK, como programa, compatible con el de mcpkit en lo que viaja por la tubería | 4 |
# | 3 | `reference_config(peers, folder)` y `through_host(host, folder, message)`: los servidores de referencia de npm bajo un host | 2 |
#
# **Cómo trabajar.** Sustituye cada `# YOUR CODE HERE` / `raise NotImplementedError()` por tu
# código, ejecuta la celda y luego ejecuta la **celda calificada** que hay debajo. Una celda
# calificada es de solo lectura. Antes de que la ejecutes, ya muestra la línea que imprime cuando
# todas las comprobaciones pasan: es la salida esperada, no tu resultado. Cuando pasen las tres,
# guarda el cuaderno y califica el laboratorio completo desde la raíz del repositorio:
#
# ```
# ./course.sh grade lab09
# ```
#
# **Qué califica tu instructor/a.** Solo el código de las celdas de ejercicio, ejecutado por
# separado en un proceso de Python nuevo, con más casos generados de los que prueban aquí las
# celdas calificadas y con una semilla que no ves. Deja en las celdas de ejercicio todas las
# definiciones que necesitan, y no toques `grading`: el código que manipula el calificador
# obtiene cero. Tu harness no puede usar el cliente, la sesión ni el host de mcpkit (el harness
# es justo lo que pide la parte 1), y tu port solo puede importar el SDK y módulos de datos
# sencillos: ni mcpkit ni otro proceso.
# El código de ejercicio puede importar mcpkit, lo que ya importa la celda de preparación y los
# módulos estándar más sencillos (`json`, `re`, `itertools`, `collections`, `time`,
# `threading`, `logging` y algunos más); una celda calificada nombra cualquier otra
# importación que encuentre, con la lista completa.
#
# **Qué necesitas.** El SDK oficial (`mcp`, lo instala `./course.sh setup`) para la parte 2;
# los servidores de referencia de npm para la parte 3. Si faltan, la celda de preparación lo
# dice y da el único comando que los instala: `interop/install.sh`, desde la raíz del
# repositorio.

# %% tags=["setup"]
# [en] Setup: run this cell first.
# [es] Preparación: ejecuta esta celda primero.
import itertools
import json
import queue
import subprocess
import threading
import time

from mcpkit import grading

grading.set_language("en")
PEERS = grading.lab09_peers()
NOTES = grading.lab09_notes_command()


def test_server(config):
    return grading.lab09_server_command(config)


def start(command):
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL)
    lines = queue.Queue()

    def pump():
        for line in process.stdout:
            lines.put(line)
        lines.put(b"")

    threading.Thread(target=pump, daemon=True).start()
    return process, lines


# %% [markdown] lang="en"
# ## Part 1 · A harness for any server
#
# `harness(command, script, timeout=2.0)` starts `command` with `start(command)` from the
# setup cell (it returns the `Popen` and a queue that receives each line of the server's
# output as bytes, then `b""` at the end), talks to it over one stdio session, and returns a
# **transcript**: a list of entries `[kind, target, outcome]`, the same for any two servers
# that behave the same on the wire.
#
# 1. Send `initialize` (id 1, ids go up by one per request) with params
#    `{"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": ..., "version": ...}}`;
#    write `["initialize", "2025-11-25", {"version": <the protocolVersion answered>, "capabilities": <the sorted keys of its capabilities among "tools", "resources", "prompts">}]`
#    (an error answer, or none, writes its outcome there instead, as below).
#    Then send the notification `notifications/initialized`.
# 2. For each step of `script`, one entry:
#
# | step | request | entry |
# | --- | --- | --- |
# | `["list", kind]` (kind: `tools`, `resources`, `templates`, `prompts`) | `tools/list`, `resources/list`, `resources/templates/list`, `prompts/list`; no params, then `{"cursor": c}` while the result has `nextCursor` | `["list", kind, sorted items of every page]`: for a tool `[name, sorted inputSchema.required, sorted annotation keys whose value is true]`, for a resource its `uri`, a template its `uriTemplate`, a prompt its `name` |
# | `["call", tool, arguments]` | `tools/call` | `["call", tool, outcome]` |
# | `["read", uri]` | `resources/read` | `["read", uri, outcome]` |
# | `["get", prompt, arguments]` | `prompts/get` | `["get", prompt, outcome]` |
# | `["send", method, params]` | `method`, with params unless they are `None` | `["send", method, outcome]` |
#
# 3. Close the server's stdin, wait up to `timeout` seconds for it to exit (kill it if it does
#    not) and write `["end", None, {"exit": <its return code, or None if you had to kill it>, "stray": <lines that were not a JSON object>}]`.
#
# The **outcome** of an answer: `{"error": code}` for an error response; `"no answer"` if none
# came within `timeout` seconds (10 s for `initialize`: the server is starting); otherwise, for
# `call`, `{"isError": True}` when the result says `isError: true`, else `{"content": [...]}`
# with each block's `text` (or its `type`, for a block that is not text); for `read`,
# `{"contents": [[uri, mimeType, text], ...]}`; for `get`, `{"messages": [[role, content type, text], ...]}`
# (a `resource` block's text is its resource's `text`); for `send`, `{"result": sorted keys of the result}`.
# A list that gets an error or no answer writes that outcome instead of the items.
#
# While you wait for an answer, skip every message with a `"method"` (notifications, and
# requests of the server's own) and every response to another id; count the lines that do
# not parse as a JSON object.

# %% [markdown] lang="es"
# ## Parte 1 · Un harness para cualquier servidor
#
# `harness(command, script, timeout=2.0)` arranca `command` con `start(command)` de la celda
# de preparación (devuelve el `Popen` y una cola que recibe cada línea de la salida del
# servidor en bytes y, al final, `b""`), habla con él en una sesión stdio y devuelve una
# **transcripción**: una lista de entradas `[kind, target, outcome]`, la misma para dos
# servidores cualesquiera que se comporten igual en la conexión.
#
# 1. Envía `initialize` (id 1; los ids suben de uno en uno por solicitud) con params
#    `{"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": ..., "version": ...}}`;
#    escribe `["initialize", "2025-11-25", {"version": <el protocolVersion respondido>, "capabilities": <las claves ordenadas de sus capacidades entre "tools", "resources", "prompts">}]`
#    (si responde con un error, o no responde, escribe ahí su outcome en su lugar, como se explica abajo).
#    Luego envía la notificación `notifications/initialized`.
# 2. Por cada paso de `script`, una entrada:
#
# | paso | solicitud | entrada |
# | --- | --- | --- |
# | `["list", kind]` (kind: `tools`, `resources`, `templates`, `prompts`) | `tools/list`, `resources/list`, `resources/templates/list`, `prompts/list`; sin params, y luego `{"cursor": c}` mientras el resultado traiga `nextCursor` | `["list", kind, elementos ordenados de todas las páginas]`: de una herramienta `[name, inputSchema.required ordenado, claves ordenadas de las anotaciones cuyo valor es true]`, de un recurso su `uri`, de una plantilla su `uriTemplate`, de un prompt su `name` |
# | `["call", tool, arguments]` | `tools/call` | `["call", tool, outcome]` |
# | `["read", uri]` | `resources/read` | `["read", uri, outcome]` |
# | `["get", prompt, arguments]` | `prompts/get` | `["get", prompt, outcome]` |
# | `["send", method, params]` | `method`, con params salvo que sean `None` | `["send", method, outcome]` |
#
# 3. Cierra la stdin del servidor, espera hasta `timeout` segundos a que termine (mátalo si no
#    lo hace) y escribe `["end", None, {"exit": <su código de salida, o None si tuviste que matarlo>, "stray": <líneas que no eran un objeto JSON>}]`.
#
# Lo que se anota de una respuesta (su **outcome**): `{"error": code}` para una respuesta de error;
# `"no answer"` si no llegó ninguna en `timeout` segundos (10 s para `initialize`: el servidor
# está arrancando); si no, para `call`, `{"isError": True}` cuando el resultado dice
# `isError: true`, y si no `{"content": [...]}` con el `text` de cada bloque (o su `type`, si no
# es de texto); para `read`, `{"contents": [[uri, mimeType, text], ...]}`; para `get`,
# `{"messages": [[role, tipo de contenido, text], ...]}` (el texto de un bloque `resource` es el
# `text` de su recurso); para `send`, `{"result": claves ordenadas del resultado}`. Una lista
# que recibe un error o ninguna respuesta escribe ese outcome en lugar de los elementos.
#
# Mientras esperas una respuesta, salta cada mensaje con `"method"` (notificaciones y
# solicitudes del propio servidor) y cada respuesta a otro id; cuenta las líneas que no se
# pueden leer como un objeto JSON.

# %%
def harness(command, script, timeout=2.0):
    ### BEGIN SOLUTION
    process, lines = start(command)
    ids = itertools.count(1)
    stray = 0

    def send(message):
        try:
            process.stdin.write(json.dumps(message).encode() + b"\n")
            process.stdin.flush()
            return True
        except (OSError, ValueError):
            return False

    def ask(method, params, wait=timeout):
        nonlocal stray
        request_id = next(ids)
        message = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        if not send(message):
            return None
        deadline = time.monotonic() + wait
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            try:
                line = lines.get(timeout=left)
            except queue.Empty:
                return None
            if not line:
                lines.put(b"")
                return None
            try:
                reply = json.loads(line)
            except ValueError:
                stray += 1
                continue
            if not isinstance(reply, dict):
                stray += 1
            elif "method" not in reply and reply.get("id") == request_id:
                return reply

    def outcome(kind, reply):
        if reply is None:
            return "no answer"
        if "error" in reply:
            return {"error": reply["error"].get("code")}
        result = reply.get("result") or {}
        if kind == "call":
            if result.get("isError") is True:
                return {"isError": True}
            return {"content": [b.get("text") if b.get("type") == "text" else b.get("type")
                                for b in result.get("content", [])]}
        if kind == "read":
            return {"contents": [[c.get("uri"), c.get("mimeType"), c.get("text")]
                                 for c in result.get("contents", [])]}
        if kind == "get":
            messages = []
            for m in result.get("messages", []):
                content = m.get("content") or {}
                text = content.get("text")
                if content.get("type") == "resource":
                    text = (content.get("resource") or {}).get("text")
                elif content.get("type") != "text":
                    text = None
                messages.append([m.get("role"), content.get("type"), text])
            return {"messages": messages}
        return {"result": sorted(result)}

    def item(kind, entry):
        if kind == "tools":
            required = (entry.get("inputSchema") or {}).get("required") or []
            hints = [k for k, v in (entry.get("annotations") or {}).items() if v is True]
            return [entry.get("name"), sorted(required), sorted(hints)]
        return entry.get({"resources": "uri", "templates": "uriTemplate"}.get(kind, "name"))

    lists = {"tools": ("tools/list", "tools"), "resources": ("resources/list", "resources"),
             "templates": ("resources/templates/list", "resourceTemplates"),
             "prompts": ("prompts/list", "prompts")}

    def listing(kind):
        method, key = lists[kind]
        items, cursor = [], None
        for _page in range(50):
            reply = ask(method, {"cursor": cursor} if cursor else None)
            if reply is None or "error" in reply:
                return outcome("list", reply)
            result = reply.get("result") or {}
            items += [item(kind, entry) for entry in result.get(key, [])]
            cursor = result.get("nextCursor")
            if not cursor:
                break
        return sorted(items)

    transcript = []
    try:
        reply = ask("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                   "clientInfo": {"name": "my-harness", "version": "1.0"}},
                    wait=max(timeout, 10.0))
        if reply is None or "error" in reply:
            transcript.append(["initialize", "2025-11-25", outcome("initialize", reply)])
        else:
            result = reply.get("result") or {}
            caps = sorted(k for k in result.get("capabilities") or {}
                          if k in ("tools", "resources", "prompts"))
            transcript.append(["initialize", "2025-11-25",
                               {"version": result.get("protocolVersion"), "capabilities": caps}])
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        for step in script:
            kind, target = step[0], step[1]
            if kind == "list":
                transcript.append(["list", target, listing(target)])
            elif kind == "call":
                reply = ask("tools/call", {"name": target, "arguments": step[2]})
                transcript.append(["call", target, outcome("call", reply)])
            elif kind == "read":
                reply = ask("resources/read", {"uri": target})
                transcript.append(["read", target, outcome("read", reply)])
            elif kind == "get":
                reply = ask("prompts/get", {"name": target, "arguments": step[2]})
                transcript.append(["get", target, outcome("get", reply)])
            else:
                transcript.append(["send", target, outcome("send", ask(target, step[2]))])
        try:
            process.stdin.close()
        except (OSError, ValueError):
            pass
        try:
            code = process.wait(timeout)
        except subprocess.TimeoutExpired:
            code = None
        transcript.append(["end", None, {"exit": code, "stray": stray}])
        return transcript
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()
    ### END SOLUTION


# %% [markdown] lang="en"
# `test_server(config)` is the command of the lab's test server, whose quirks you choose: the
# ones real peers have. Its keys (all optional): `version` (the revision it answers),
# `page` (list this many items per page), `tools` (from `echo`, `add`, `fail`, `image`),
# `resources` (`{uri: text}`), `templates`, `prompts`, `unknown_tool` (`"protocol"`: error
# -32602, or `"result"`: `isError`), `missing` (the error code of a resource it lacks),
# `chatty` (a notification and a `ping` request before each answer), `stray` (a response to
# an id nobody used before each answer), `noise` (lines of plain text on stdout first),
# `silent` (methods it never answers), `linger` (it does not exit at the end of its input).
# Try your harness on a few:

# %% [markdown] lang="es"
# `test_server(config)` es el comando del servidor de prueba del laboratorio, cuyas
# peculiaridades eliges tú: las que tienen los interlocutores reales. Sus claves (todas
# opcionales): `version` (la revisión con la que responde), `page` (cuántos elementos devuelve
# por página), `tools` (de entre `echo`, `add`, `fail`, `image`), `resources` (`{uri: text}`),
# `templates`, `prompts`, `unknown_tool` (`"protocol"`: error -32602, o `"result"`:
# `isError`), `missing` (el código de error de un recurso que no tiene), `chatty` (una
# notificación y una solicitud `ping` antes de cada respuesta), `stray` (una respuesta a un id
# que nadie usó antes de cada respuesta), `noise` (líneas de texto normal en stdout al
# principio), `silent` (métodos que nunca responde), `linger` (no termina al final de su
# entrada). Prueba tu harness con algunos:

# %%
quirky = {"tools": ["echo", "fail"], "page": 1, "chatty": True, "noise": 1,
          "unknown_tool": "result", "version": "2024-11-05"}
script = [["list", "tools"], ["call", "echo", {"text": "hola"}], ["call", "fail", {}],
          ["call", "nope", {}], ["send", "ping", None]]
for entry in harness(test_server(quirky), script):
    print(entry)

# %% [markdown] lang="en"
# The checks run your harness and the reference one against the same real servers (the test
# server with every quirk, alone and mixed, and mcpkit's notes server) and compare the
# transcripts entry by entry.

# %% [markdown] lang="es"
# Las comprobaciones ejecutan tu harness y el de referencia contra los mismos servidores
# reales (el servidor de prueba con cada peculiaridad, sola y mezclada, y el servidor de notas
# de mcpkit) y comparan las transcripciones entrada a entrada.

# %% tags=["graded"] points=4
grading.check_harness(harness)

# %% [markdown] lang="en"
# ## Part 2 · The notes server on the official SDK
#
# `notes_port()` returns the **source of a program**: the notes server of `mcpkit.examples.notes`
# written on the official Python SDK's decorator API (`from mcp.server.mcpserver import MCPServer`,
# then `@mcp.tool(...)`, `@mcp.resource("notes://{id}", ...)`, `@mcp.prompt(...)` and
# `mcp.run()`), at most 80 lines of code. A server is a program of its own, so the checks write
# your source to a file and run it as a real process; it may import the SDK (and pydantic)
# and plain data modules only.
#
# Wire-compatible means that the reference harness writes the same transcript for your port
# and for mcpkit's notes server: the same three seed notes, ids `"1"`, `"2"`, `"3"` and on;
# the same tools with the same required arguments and hints (`readOnlyHint` on the two that
# only read, `destructiveHint` and `idempotentHint` on `notes_delete`); a list result as one
# text block holding its JSON (`json.dumps(value, ensure_ascii=False)`); a failing tool as
# `isError`; `resources/read` of a note that does not exist as the error -32002, and
# `prompts/get` of `review_note` for a note that does not exist as the error -32602 (raise
# `MCPError(code, message)` from `mcp`: the SDK passes it on as it is). Run
# `python -m mcpkit serve mcpkit.examples.notes:server` and lesson 09's side-by-side to see it.

# %% [markdown] lang="es"
# ## Parte 2 · El servidor de notas sobre el SDK oficial
#
# `notes_port()` devuelve el **código fuente de un programa**: el servidor de notas de
# `mcpkit.examples.notes` escrito sobre la API de decoradores del SDK oficial de Python
# (`from mcp.server.mcpserver import MCPServer`, luego `@mcp.tool(...)`,
# `@mcp.resource("notes://{id}", ...)`, `@mcp.prompt(...)` y `mcp.run()`), en 80 líneas de
# código como mucho. Un servidor es un programa propio, así que las comprobaciones escriben tu
# código en un archivo y lo ejecutan como un proceso real; tu programa solo puede importar el
# SDK (y pydantic) y módulos de datos sencillos.
#
# Compatible en la conexión significa que el harness de referencia escribe la misma
# transcripción para tu port y para el servidor de notas de mcpkit: las mismas tres notas
# iniciales, ids `"1"`, `"2"`, `"3"` y siguientes; las mismas herramientas con los mismos
# argumentos obligatorios e indicaciones (`readOnlyHint` en las dos que solo leen,
# `destructiveHint` e `idempotentHint` en `notes_delete`); un resultado de lista como un solo
# bloque de texto con su JSON (`json.dumps(value, ensure_ascii=False)`); una herramienta que
# falla como `isError`; `resources/read` de una nota que no existe como el error -32002, y
# `prompts/get` de `review_note` para una nota que no existe como el error -32602 (lanza
# `MCPError(code, message)` de `mcp`: el SDK lo transmite tal cual). Ejecuta
# `python -m mcpkit serve mcpkit.examples.notes:server` y la comparación de la lección 09
# para verlo.

# %%
def notes_port():
    ### BEGIN SOLUTION
    return r'''
import itertools
import json

from mcp import MCPError
from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

mcp = MCPServer("notes", version="1.0.0", title="Notes")
notes = {}
ids = itertools.count(1)
for title, body in [("Shopping", "Milk, eggs, coffee."),
                    ("MCP", "Hosts run clients; each client talks to one server."),
                    ("Spanish", "La solicitud y la respuesta llevan el mismo id.")]:
    note_id = str(next(ids))
    notes[note_id] = {"id": note_id, "title": title, "body": body}


def as_text(value):
    return json.dumps(value, ensure_ascii=False)


@mcp.tool(title="List notes", description="List every note's id and title.",
          annotations=ToolAnnotations(readOnlyHint=True))
def notes_list() -> str:
    return as_text([{"id": n["id"], "title": n["title"]} for n in notes.values()])


@mcp.tool(title="Search notes", description="Find notes whose title or body has the query.",
          annotations=ToolAnnotations(readOnlyHint=True))
def notes_search(query: str, limit: int = 10) -> str:
    needle = query.casefold()
    hits = [n for n in notes.values()
            if needle in n["title"].casefold() or needle in n["body"].casefold()]
    return as_text(hits[:limit])


@mcp.tool(title="Create a note", description="Create a note and return its id.",
          annotations=ToolAnnotations(destructiveHint=False, idempotentHint=False))
def notes_create(title: str, body: str) -> str:
    if not title.strip():
        raise ValueError("a note needs a non-empty title")
    note_id = str(next(ids))
    notes[note_id] = {"id": note_id, "title": title, "body": body}
    return f"created note {note_id}"


@mcp.tool(title="Delete a note", description="Delete a note for good.",
          annotations=ToolAnnotations(destructiveHint=True, idempotentHint=True))
def notes_delete(id: str) -> str:
    if notes.pop(id, None) is None:
        raise ValueError(f"no note with id {id}")
    return f"deleted note {id}"


@mcp.resource("notes://{id}", name="note", mime_type="text/markdown",
              description="One note as Markdown.")
def read_note(id: str) -> str:
    if id not in notes:
        raise MCPError(-32002, f"Resource not found: notes://{id}", {"uri": f"notes://{id}"})
    return f"# {notes[id]['title']}\n\n{notes[id]['body']}\n"


@mcp.prompt(title="Review a note", description="Ask the model to review a note for clarity.")
def review_note(id: str) -> list[dict]:
    if id not in notes:
        raise MCPError(-32602, f"no note with id {id}", {"id": id})
    note = {"uri": f"notes://{id}", "mimeType": "text/markdown", "text": read_note(id)}
    return [{"role": "user", "content": {"type": "resource", "resource": note}},
            {"role": "user", "content": {"type": "text",
                                         "text": "Review this note: is it clear and complete?"}}]


mcp.run()
'''
    ### END SOLUTION


# %% [markdown] lang="en"
# Your harness, on your port and on mcpkit's server, step by step. The script ends with two
# steps that part 2 leaves out, because the SDK, not your port, decides them: an unknown tool
# and an unknown prompt. Your harness finds both differences:

# %% [markdown] lang="es"
# Tu harness, sobre tu port y sobre el servidor de mcpkit, paso a paso. El guion termina con
# dos pasos que la parte 2 deja fuera, porque los decide el SDK y no tu port: una herramienta
# desconocida y un prompt desconocido. Tu harness encuentra las dos diferencias:

# %%
import tempfile
from pathlib import Path

script = [["list", "tools"], ["call", "notes_search", {"query": "milk"}],
          ["read", "notes://9"], ["get", "review_note", {"id": "1"}],
          ["call", "no_such_tool", {}], ["get", "no_such_prompt", {}]]
with tempfile.TemporaryDirectory() as folder:
    port_file = Path(folder) / "notes_port.py"
    port_file.write_text(notes_port(), encoding="utf-8")
    mine = harness([NOTES[0], str(port_file)], script, timeout=10.0)
theirs = harness(NOTES, script, timeout=10.0)
for a, b in zip(mine, theirs):
    print("==" if a == b else "!=", a[0], a[1], "" if a == b else f"{b[2]} -> {a[2]}")

# %% [markdown] lang="en"
# mcpkit answers an unknown tool with the protocol error -32602 and the SDK with a result
# marked `isError`; both forms are in use (lesson 09 tells which peers do which), so a host
# must handle both. An unknown prompt gets the error code 0 from SDK 2.3.0, a code JSON-RPC
# does not define: a host that switches on the code sees "no known error".

# %% [markdown] lang="es"
# mcpkit responde a una herramienta desconocida con el error de protocolo -32602 y el SDK con
# un resultado marcado `isError`; las dos formas están en uso (la lección 09 cuenta qué
# interlocutor usa cada una), así que un host debe manejar las dos. Un prompt desconocido
# recibe del SDK 2.3.0 el código de error 0, un código que JSON-RPC no define: un host que
# decide por el código se encuentra un código que no corresponde a ningún error conocido.

# %% tags=["graded"] points=4
grading.check_notes_port(notes_port)

# %% [markdown] lang="en"
# ## Part 3 · The reference servers under a host
#
# `PEERS` (from the setup cell) says where Node and the npm reference servers are:
# `PEERS["node"]`, `PEERS["server-everything"]`, `PEERS["server-filesystem"]` (paths of their
# scripts, or `None` when missing). Write:
#
# - `reference_config(peers, folder)`: the `mcpServers` configuration, in the shape Claude
#   Desktop and mcpkit's `Host` read, of two servers: `"everything"`, server-everything over
#   stdio (its script, then the argument `"stdio"`), and `"files"`, server-filesystem allowed
#   into `folder` (its script, then the folder), each run by `peers["node"]`.
# - `through_host(host, folder, message)`: with the host the checks start on your
#   configuration (tool names prefixed by their server, `everything__echo`), return
#   `[the text everything's echo tool answers for message, the text of folder + "/note.txt"
#   read through files' read_text_file]`. Call the tools with `host.call_tool(name, arguments)`.

# %% [markdown] lang="es"
# ## Parte 3 · Los servidores de referencia bajo un host
#
# `PEERS` (de la celda de preparación) dice dónde están Node y los servidores de referencia
# de npm: `PEERS["node"]`, `PEERS["server-everything"]`, `PEERS["server-filesystem"]` (las
# rutas de sus scripts, o `None` si faltan). Escribe:
#
# - `reference_config(peers, folder)`: la configuración `mcpServers`, con la forma que leen
#   Claude Desktop y el `Host` de mcpkit, de dos servidores: `"everything"`, server-everything
#   por stdio (su script y luego el argumento `"stdio"`), y `"files"`, server-filesystem con
#   permiso sobre `folder` (su script y luego la carpeta), cada uno lanzado por
#   `peers["node"]`.
# - `through_host(host, folder, message)`: con el host que las comprobaciones arrancan sobre
#   tu configuración (nombres de herramientas con el prefijo de su servidor,
#   `everything__echo`), devuelve `[el texto que responde la herramienta echo de everything a
#   message, el texto de folder + "/note.txt" leído con read_text_file de files]`. Llama a las
#   herramientas con `host.call_tool(name, arguments)`.

# %%
def reference_config(peers, folder):
    ### BEGIN SOLUTION
    node = peers["node"]
    return {"mcpServers": {
        "everything": {"command": node, "args": [peers["server-everything"], "stdio"]},
        "files": {"command": node, "args": [peers["server-filesystem"], folder]},
    }}
    ### END SOLUTION


def through_host(host, folder, message):
    ### BEGIN SOLUTION
    echo = host.call_tool("everything__echo", {"message": message})
    read = host.call_tool("files__read_text_file", {"path": folder + "/note.txt"})
    return [echo["content"][0]["text"], read["content"][0]["text"]]
    ### END SOLUTION


# %% tags=["graded"] points=2
grading.check_reference_host(reference_config, through_host)

# %% [markdown] lang="en"
# ## Done?
#
# Count your port's lines beside `mcpkit/examples/notes.py` and lesson 04's hand-written
# server. Then point your harness at `server-everything` (`[PEERS["node"],
# PEERS["server-everything"], "stdio"]`) with a script of your own: which of the quirks of
# the test server does a real reference server have?

# %% [markdown] lang="es"
# ## ¿Terminaste?
#
# Cuenta las líneas de tu port junto a `mcpkit/examples/notes.py` y el servidor escrito a mano
# de la lección 04. Luego prueba tu harness con `server-everything` (`[PEERS["node"],
# PEERS["server-everything"], "stdio"]`) usando un guion tuyo: ¿cuáles de las peculiaridades del
# servidor de prueba tiene un servidor de referencia real?
