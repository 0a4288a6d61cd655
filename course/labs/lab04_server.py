# %% [markdown] lang="en"
# # Lab 04 · The notes server
#
# > **Español:** [`labs/es/lab04_server.ipynb`](../es/lab04_server.ipynb)
#
# Lesson 04 used the notes server that ships with `mcpkit`. Now you build your own with
# `mcpkit.Server`: four tools, a resource template, a prompt, and change notifications for
# clients that subscribe to a note.
#
# | part | you write | points |
# | --- | --- | --- |
# | 1 | `add_tools(server, notes)`: four tools, `notes_list` ... `notes_delete` | 5 |
# | 2 | `add_resources(server, notes)`: the template `notes://{id}`, the prompt `review_note` | 3 |
# | 3 | `make_notes_server(notes)`: the whole server, with resource subscriptions | 2 |
#
# **How to work.** Replace each `# YOUR CODE HERE` / `raise NotImplementedError()` with your
# code, run the cell, then run the **graded cell** below it. A graded cell is read-only. Its first
# line, a comment, is the line it prints when every check passes: that is the expected
# output, not your result. Run it, and it either prints that line or lists each case with what
# it expected and what your code returned. When all three pass, save the notebook and get your
# score per part from a terminal at the repository's root:
#
# ```
# ./course.sh grade lab04
# ```
#
# **What your instructor grades.** Only the code in the exercise cells (those with
# `# YOUR CODE HERE`), run on its own in a fresh Python process, on more generated cases than
# the graded cells here try and with a seed you do not see. Keep every definition an exercise
# needs in its exercise cells, and leave `grading` alone: code that touches the grader scores
# zero.
# Exercise code may import mcpkit, what the setup cell imports, and the plainer standard
# modules (`json`, `re`, `itertools`, `collections`, `time`, `threading`, `logging` and a few
# more); a graded cell names any other import it finds, with the whole list.
#
# This lab builds on `mcpkit`'s own layers, not on your earlier labs: `mcpkit.Server` speaks
# the protocol (handshake, dispatch, schemas, errors, subscriptions) and you write what the
# server offers. The checks talk to your server the way a client would, with real JSON-RPC
# messages through `server.connect(...)`, in revision 2025-11-25.

# %% [markdown] lang="es"
# # Laboratorio 04 · El servidor de notas
#
# > **English:** [`labs/en/lab04_server.ipynb`](../en/lab04_server.ipynb)
#
# La lección 04 usó el servidor de notas que viene con `mcpkit`. Ahora construyes el tuyo con
# `mcpkit.Server`: cuatro herramientas, una plantilla de recurso, un prompt y notificaciones de
# cambio para los clientes que se suscriben a una nota.
#
# | parte | escribes | puntos |
# | --- | --- | --- |
# | 1 | `add_tools(server, notes)`: cuatro herramientas, `notes_list` ... `notes_delete` | 5 |
# | 2 | `add_resources(server, notes)`: la plantilla `notes://{id}`, el prompt `review_note` | 3 |
# | 3 | `make_notes_server(notes)`: el servidor completo, con suscripciones a recursos | 2 |
#
# **Cómo trabajar.** Sustituye cada `# YOUR CODE HERE` / `raise NotImplementedError()` por tu
# código, ejecuta la celda y luego ejecuta la **celda calificada** que hay debajo. Una celda
# calificada es de solo lectura. Su primera línea, un comentario, es la que imprime cuando
# pasan todas las comprobaciones: es la salida esperada, no tu resultado. Ejecútala: o bien
# imprime esa línea o enumera cada caso con lo que esperaba y lo que devolvió tu código.
# Cuando pasen las tres, guarda el cuaderno y obtén tu nota por partes desde una terminal
# en la raíz del repositorio:
#
# ```
# ./course.sh grade lab04
# ```
#
# **Qué califica tu instructor/a.** Solo el código de las celdas de ejercicio (las que llevan
# `# YOUR CODE HERE`), ejecutado por separado en un proceso de Python nuevo, con más casos
# generados de los que prueban aquí las celdas calificadas y con una semilla que no ves. Deja
# en las celdas de ejercicio todas las definiciones que necesitan, y no toques `grading`: el
# código que manipula el calificador obtiene cero.
# El código de ejercicio puede importar mcpkit, lo que ya importa la celda de preparación y los
# módulos estándar más sencillos (`json`, `re`, `itertools`, `collections`, `time`,
# `threading`, `logging` y algunos más); una celda calificada nombra cualquier otra
# importación que encuentre, con la lista completa.
#
# Este laboratorio se apoya en las capas de `mcpkit`, no en tus laboratorios anteriores:
# `mcpkit.Server` habla el protocolo (handshake, despacho, esquemas, errores, suscripciones) y
# tú escribes lo que ofrece el servidor. Las comprobaciones hablan con tu servidor como lo haría
# un cliente, con mensajes JSON-RPC reales a través de `server.connect(...)`, en la revisión
# 2025-11-25.

# %% tags=["setup"]
# [en] Setup: run this cell first.
# [es] Preparación: ejecuta esta celda primero.
import itertools

from mcpkit import Server, grading, jsonrpc
from mcpkit.jsonrpc import InvalidParams

grading.set_language("en")


def fresh_notes():
    return {note_id: dict(note) for note_id, note in grading.NOTES_SEED.items()}


class Session:
    def __init__(self, server, version="2025-11-25"):
        self.sent = []
        self.connection = server.connect(self.sent.append)
        self.next_id = 0
        self.hello = self.request("initialize", {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "lab-04", "version": "1.0"},
        })
        self.connection.receive(jsonrpc.notification("notifications/initialized"))

    def request(self, method, params=None):
        self.next_id += 1
        self.connection.receive(jsonrpc.request(self.next_id, method, params))
        return self.sent[-1]


fresh_notes()

# %% [markdown] lang="en"
# The notes live in a plain dict, `notes`, from id to title and body, as `fresh_notes()` shows
# above. **Ids are strings** (`"1"`, not `1`): they appear in URIs and JSON, where a string is
# unambiguous. Every function you write receives the dict to work on; keep the notes there (no
# copy), so that your tools and your resources see the same notes. `Session` is lesson 04's
# little client, for trying things out.
#
# ## Part 1 · The tools
#
# Write `add_tools(server, notes)`, which registers four tools on `server` with
# `@server.tool(...)`. Define them inside `add_tools`, so that they can use `server` and
# `notes`. Return plain Python values: `mcpkit` sends a list or a dict as a text block holding
# its JSON. Raise an exception for a tool error: `mcpkit` turns it into a result with
# `isError: true`.
#
# - `notes_list()`, **read-only**: returns `[{"id": ..., "title": ...}, ...]`, every note, in
#   the dict's order.
# - `notes_search(query: str, limit: int = 10)`, **read-only**: returns the full notes,
#   `{"id": ..., "title": ..., "body": ...}`, whose title **or** body contains `query`,
#   **ignoring case**, in the dict's order, at most `limit` of them. Search for `query` as it
#   comes (its spaces are part of it), in the title and in the body one at a time (a match
#   does not run from the end of the title into the body).
# - `notes_create(title: str, body: str)`, **not destructive** (it only adds): stores a note
#   with a new id and returns it, `{"id": ..., "title": ..., "body": ...}`.
# - `notes_delete(id: str)`, **destructive**: removes the note and returns a short text, such
#   as `"deleted note 2"`.
#
# And the rules the checks hold you to:
#
# - **New ids** continue after the largest id in `notes` when `add_tools` is called (`"4"`
#   after `"1"`, `"2"`, `"3"`; `"1"` when `notes` is empty), and are **never reused**: after
#   creating `"4"` and deleting it, the next note is `"5"`. A client subscribed to `notes://4`
#   must not mistake a new note for the old one. A failed call does not use up an id either:
#   take the id once the title has passed its check. `itertools.count(start)` is the tool for this.
# - `notes_create` with a blank title (empty, or only spaces, tabs and newlines: what
#   `title.strip()` removes) is a tool error: raise `ValueError`, and store nothing. Any other
#   title, and any body (even an empty one), is stored exactly as it came.
# - `notes_delete` of an id that does not exist is a tool error (raise `KeyError` or
#   `ValueError`), not a crash: the model asked for something that is not there, and should be
#   told so. An id matches only as it is (`" 2"` and `"02"` are not `"2"`).
# - Say the annotations explicitly: `read_only=True`, `destructive=False`, `destructive=True`.
#   A tool that says nothing counts as destructive, and a host asks the user before running it.
# - After a note is created or deleted, call `server.notify_resource_updated(f"notes://{id}")`
#   with its id (part 3 shows who hears it). Only after a change that happened: a failed call
#   changes nothing, so it notifies nothing.

# %% [markdown] lang="es"
# Las notas viven en un dict normal, `notes`, que va del id al título y al cuerpo, como muestra
# `fresh_notes()` arriba. **Los ids son cadenas** (`"1"`, no `1`): aparecen en URI y en JSON,
# donde una cadena no deja lugar a dudas. Cada función que escribas recibe el dict con el que
# trabajar; guarda las notas ahí (sin copiarlo), para que tus herramientas y tus recursos vean
# las mismas notas. `Session` es el pequeño cliente de la lección 04, para ir probando.
#
# ## Parte 1 · Las herramientas
#
# Escribe `add_tools(server, notes)`, que registra cuatro herramientas en `server` con
# `@server.tool(...)`. Defínelas dentro de `add_tools`, para que puedan usar `server` y
# `notes`. Devuelve valores normales de Python: `mcpkit` envía una lista o un dict como un
# bloque de texto con su JSON. Lanza una excepción para un error de herramienta: `mcpkit` la
# convierte en un resultado con `isError: true`.
#
# - `notes_list()`, **de solo lectura**: devuelve `[{"id": ..., "title": ...}, ...]`, todas
#   las notas, en el orden del dict.
# - `notes_search(query: str, limit: int = 10)`, **de solo lectura**: devuelve las notas
#   completas, `{"id": ..., "title": ..., "body": ...}`, cuyo título **o** cuerpo contiene
#   `query`, **sin distinguir mayúsculas**, en el orden del dict, como mucho `limit`. Busca
#   `query` tal como llega (sus espacios forman parte de ella), en el título y en el cuerpo
#   por separado (una coincidencia no pasa del final del título al cuerpo).
# - `notes_create(title: str, body: str)`, **no destructiva** (solo añade): guarda una nota con
#   un id nuevo y la devuelve, `{"id": ..., "title": ..., "body": ...}`.
# - `notes_delete(id: str)`, **destructiva**: elimina la nota y devuelve un texto breve, como
#   `"deleted note 2"`.
#
# Y las reglas que comprueban las celdas calificadas:
#
# - Los **ids nuevos** siguen al mayor id de `notes` en el momento de llamar a `add_tools`
#   (`"4"` tras `"1"`, `"2"`, `"3"`; `"1"` si `notes` está vacío) y **nunca se reutilizan**:
#   tras crear `"4"` y borrarla, la siguiente nota es `"5"`. Un cliente suscrito a `notes://4`
#   no debe confundir una nota nueva con la antigua. Una llamada fallida tampoco gasta ningún
#   id: toma el id solo cuando el título ya haya pasado la validación.
#   `itertools.count(inicio)` es la herramienta para esto.
# - `notes_create` con un título en blanco (vacío, o solo espacios, tabuladores y saltos de
#   línea: lo que quita `title.strip()`) es un error de herramienta: lanza `ValueError` y no
#   guardes nada. Cualquier otro título, y cualquier cuerpo (aunque esté vacío), se guarda tal
#   como llegó.
# - `notes_delete` de un id que no existe es un error de herramienta (lanza `KeyError` o
#   `ValueError`), no una caída: el modelo pidió algo que no está, y hay que decírselo. Un id
#   solo coincide tal cual (`" 2"` y `"02"` no son `"2"`).
# - Indica las anotaciones explícitamente: `read_only=True`, `destructive=False`,
#   `destructive=True`. Una herramienta que no dice nada cuenta como destructiva, y un host
#   pregunta al usuario antes de ejecutarla.
# - Después de crear o borrar una nota, llama a
#   `server.notify_resource_updated(f"notes://{id}")` con su id (la parte 3 muestra quién lo
#   oye). Solo tras un cambio que se produjo: una llamada fallida no cambia nada, así que no
#   avisa de nada.

# %%
def add_tools(server, notes):
    ### BEGIN SOLUTION
    ids = itertools.count(max((int(note_id) for note_id in notes), default=0) + 1)

    @server.tool(read_only=True, open_world=False)
    def notes_list() -> list:
        """List every note's id and title."""
        return [{"id": note_id, "title": note["title"]} for note_id, note in notes.items()]

    @server.tool(read_only=True, open_world=False)
    def notes_search(query: str, limit: int = 10) -> list:
        """Find notes whose title or body contains the query, ignoring case.

        Args:
            query: The words to look for.
            limit: The most notes to return.
        """
        needle = query.casefold()
        found = [{"id": note_id, **note} for note_id, note in notes.items()
                 if needle in note["title"].casefold() or needle in note["body"].casefold()]
        return found[:limit]

    @server.tool(destructive=False, open_world=False)
    def notes_create(title: str, body: str) -> dict:
        """Create a note and return it, with its new id."""
        if not title.strip():
            raise ValueError("a note needs a title that is not blank")
        note_id = str(next(ids))
        notes[note_id] = {"title": title, "body": body}
        server.notify_resource_updated(f"notes://{note_id}")
        return {"id": note_id, "title": title, "body": body}

    @server.tool(destructive=True, idempotent=True, open_world=False)
    def notes_delete(id: str) -> str:
        """Delete a note for good.

        Args:
            id: The note's id, as notes_list shows it.
        """
        if id not in notes:
            raise KeyError(f"there is no note {id}; notes_list shows the ids")
        del notes[id]
        server.notify_resource_updated(f"notes://{id}")
        return f"deleted note {id}"
    ### END SOLUTION


# %%
demo = Server("notes-demo", "1.0.0")
add_tools(demo, fresh_notes())
demo_session = Session(demo)
demo_session.request("tools/call", {"name": "notes_search", "arguments": {"query": "CAFÉ"}})

# %% tags=["graded"] points=5
grading.check_note_tools(add_tools)

# %% [markdown] lang="en"
# ## Part 2 · The resource template and the prompt
#
# Write `add_resources(server, notes)`, which registers:
#
# - the **resource template** `notes://{id}`, named `note`, with MIME type `text/markdown`
#   (`@server.resource("notes://{id}", name="note", mime_type="text/markdown")`). Reading
#   `notes://2` gives the note as Markdown: `f"# {title}\n\n{body}\n"`, with the title and
#   the body exactly as stored (nothing stripped). Look the note up when the read arrives, not
#   before: notes come and go. For an id that does not exist, let the `KeyError` of
#   `notes[id]` propagate: `mcpkit` answers it with -32002, *resource not found*.
# - the **prompt** `review_note(id: str)`, which returns two user messages: first the note as
#   an embedded resource,
#   `{"role": "user", "content": {"type": "resource", "resource": {"uri": ..., "mimeType":
#   "text/markdown", "text": ...}}}` with the same URI and text as a read of the resource at
#   that moment (look the note up when the prompt is asked for, too); then
#   a text message asking for a review (`{"role": "user", "content": {"type": "text", "text":
#   ...}}`, your words). For an id that does not exist, raise `InvalidParams(...)`: the user
#   picked a bad argument, a protocol error -32602. A stray `KeyError` would become -32603, an
#   internal error, which blames the server instead.

# %% [markdown] lang="es"
# ## Parte 2 · La plantilla de recurso y el prompt
#
# Escribe `add_resources(server, notes)`, que registra:
#
# - la **plantilla de recurso** `notes://{id}`, llamada `note`, con tipo MIME `text/markdown`
#   (`@server.resource("notes://{id}", name="note", mime_type="text/markdown")`). Leer
#   `notes://2` da la nota en Markdown: `f"# {title}\n\n{body}\n"`, con el título y el cuerpo
#   tal como están guardados (sin quitarles nada). Busca la nota cuando llegue la lectura, no
#   antes: las notas van y vienen. Para un id que no existe, deja que se propague el `KeyError`
#   de `notes[id]`: `mcpkit` lo responde con -32002, *recurso no encontrado*.
# - el **prompt** `review_note(id: str)`, que devuelve dos mensajes del usuario: primero la nota
#   como recurso incrustado,
#   `{"role": "user", "content": {"type": "resource", "resource": {"uri": ..., "mimeType":
#   "text/markdown", "text": ...}}}` con el mismo URI y el mismo texto que una lectura del
#   recurso en ese momento (busca la nota también cuando se pide el prompt); después un
#   mensaje de texto que pide una revisión (`{"role": "user", "content": {"type": "text",
#   "text": ...}}`, con tus palabras). Para un id que no existe, lanza
#   `InvalidParams(...)`: el usuario eligió un argumento erróneo, un error de protocolo -32602.
#   Un `KeyError` suelto se convertiría en -32603, un error interno, que culpa al servidor.

# %%
def add_resources(server, notes):
    ### BEGIN SOLUTION
    @server.resource("notes://{id}", name="note", mime_type="text/markdown")
    def read_note(id):
        """One note as Markdown."""
        note = notes[id]
        return f"# {note['title']}\n\n{note['body']}\n"

    @server.prompt(title="Review a note")
    def review_note(id: str):
        """Ask the model to review a note for clarity.

        Args:
            id: The note to review.
        """
        if id not in notes:
            raise InvalidParams(f"there is no note {id}")
        return [
            {"role": "user", "content": {"type": "resource", "resource": {
                "uri": f"notes://{id}", "mimeType": "text/markdown", "text": read_note(id)}}},
            {"role": "user", "content": {
                "type": "text", "text": "Review this note: is it clear and complete?"}},
        ]
    ### END SOLUTION


# %%
demo = Server("notes-demo", "1.0.0")
add_resources(demo, fresh_notes())
demo_session = Session(demo)
demo_session.request("resources/read", {"uri": "notes://3"})

# %% tags=["graded"] points=3
grading.check_note_resources(add_resources)

# %% [markdown] lang="en"
# ## Part 3 · The whole server, and subscriptions
#
# Write `make_notes_server(notes)`: create a `Server` named `"notes"` (version `"1.0.0"`),
# register your tools and your resources on it, **both with the same `notes`**, and return it.
#
# `mcpkit` does the rest: it advertises `tools`, `resources` (with `subscribe: true`) and
# `prompts` in its capabilities, and it keeps track of which client subscribed to which URI.
# When a tool calls `server.notify_resource_updated(uri)`, every client subscribed to that URI
# receives `notifications/resources/updated`, and nobody else. The checks open sessions,
# subscribe, create and delete notes, and look at every message that comes back, in order.

# %% [markdown] lang="es"
# ## Parte 3 · El servidor completo, y las suscripciones
#
# Escribe `make_notes_server(notes)`: crea un `Server` llamado `"notes"` (versión `"1.0.0"`),
# registra en él tus herramientas y tus recursos, **los dos con el mismo `notes`**, y
# devuélvelo.
#
# `mcpkit` hace el resto: anuncia `tools`, `resources` (con `subscribe: true`) y `prompts` en
# sus capacidades, y lleva la cuenta de qué cliente se suscribió a qué URI. Cuando una
# herramienta llama a `server.notify_resource_updated(uri)`, cada cliente suscrito a ese URI
# recibe `notifications/resources/updated`, y nadie más. Las comprobaciones abren sesiones, se
# suscriben, crean y borran notas, y miran cada mensaje que vuelve, en orden.

# %%
def make_notes_server(notes):
    ### BEGIN SOLUTION
    server = Server("notes", "1.0.0", title="Notes")
    add_tools(server, notes)
    add_resources(server, notes)
    return server
    ### END SOLUTION


# %%
notes_session = Session(make_notes_server(fresh_notes()))
notes_session.request("resources/subscribe", {"uri": "notes://4"})
notes_session.request("tools/call", {"name": "notes_create",
                                     "arguments": {"title": "Tea", "body": "Green, no sugar."}})
notes_session.sent[-2:]

# %% tags=["graded"] points=2
grading.check_notes_server(make_notes_server)

# %% [markdown] lang="en"
# ## Done?
#
# Compare your server with `mcpkit/examples/notes.py`. It keeps its notes in the module, so
# that `python -m mcpkit serve mcpkit.examples.notes:server` can find them, and it adds a
# completion for note ids. Two things to try:
#
# - Serve yours for real. Save the three functions, with the imports they need, in a file
#   `my_notes.py` that ends with `server = make_notes_server({})`, then run the wire trace of
#   lesson 04b against `python -m mcpkit serve my_notes.py`.
# - Open a session with `Session(server, version="2024-11-05")` and list the tools. Where did
#   your annotations go, and why is that right?

# %% [markdown] lang="es"
# ## ¿Terminaste?
#
# Compara tu servidor con `mcpkit/examples/notes.py`. Guarda sus notas en el módulo, para que
# `python -m mcpkit serve mcpkit.examples.notes:server` pueda encontrarlas, y añade el
# autocompletado de los ids de nota. Dos cosas que probar:
#
# - Sírvelo de verdad. Guarda las tres funciones, con los imports que necesitan, en un archivo
#   `my_notes.py` que termine con `server = make_notes_server({})`, y después ejecuta la captura
#   de bytes de la lección 04b contra `python -m mcpkit serve my_notes.py`.
# - Abre una sesión con `Session(server, version="2024-11-05")` y lista las herramientas.
#   ¿Adónde fueron tus anotaciones, y por qué es lo correcto?
