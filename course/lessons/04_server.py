# %% [markdown] lang="en"
# # Lesson 04 · A server: tools, resources and prompts
#
# > **Español:** [`notebooks/es/04_server.ipynb`](../es/04_server.ipynb)
#
# Lessons 01 to 03 built the machinery: bytes become messages, messages are checked, and a
# dispatcher sends each request to its handler. Now we give the handlers something to serve.
# In this lesson you will:
#
# 1. turn Python functions into **tools**, with input schemas written by their type hints;
# 2. mark tools with **annotations** and see why a host asks before running a destructive one;
# 3. see how a tool definition changes with the protocol **revision** the client negotiated;
# 4. publish **resources** and **resource templates**, and **prompts**;
# 5. see why a server advertises **capabilities** only for what it has;
# 6. **subscribe** to a resource and be told when it changes;
# 7. meet the two example servers of the course, the notes server and the English-verb server.
#
# Lesson 04b then puts this server on a pipe: the stdio loop, a real session byte by byte, and
# the widgets that show it.

# %% [markdown] lang="es"
# # Lección 04 · Un servidor: herramientas, recursos y prompts
#
# > **English:** [`notebooks/en/04_server.ipynb`](../en/04_server.ipynb)
#
# Las lecciones 01 a 03 construyeron la maquinaria: los bytes se convierten en mensajes, los
# mensajes se comprueban y un despachador envía cada solicitud a su manejador. Ahora les damos
# a los manejadores algo que servir. En esta lección vas a:
#
# 1. convertir funciones de Python en **herramientas**, con esquemas de entrada escritos por sus
#    indicadores de tipo (type hints);
# 2. marcar herramientas con **anotaciones** y ver por qué un host pregunta antes de ejecutar
#    una destructiva;
# 3. ver cómo cambia la definición de una herramienta según la **revisión** del protocolo que
#    negoció el cliente;
# 4. publicar **recursos**, **plantillas de recurso** y **prompts (plantillas de prompt)**;
# 5. ver por qué un servidor anuncia **capacidades** solo para lo que tiene;
# 6. **suscribirte** a un recurso y recibir un aviso cuando cambia;
# 7. conocer los dos servidores de ejemplo del curso, el de notas y el de verbos en inglés.
#
# Después, la lección 04b pone este servidor en una tubería: el bucle stdio, una sesión real
# byte a byte y los widgets que la muestran.

# %% tags=["setup"]
# [en] Setup: run this cell first.
# [es] Preparación: ejecuta esta celda primero.
import io
import json
import queue
import subprocess
import sys
import threading
from typing import Literal

from mcpkit import Server, framing, jsonrpc
from mcpkit.display import hexdump
from mcpkit.examples import notes, verbs
from mcpkit.transports.stdio import serve_stdio

notes.reset()

# %% [markdown] lang="en"
# ## 1. A server is a catalogue with a handler per method
#
# An `mcpkit.Server` holds what the server offers (tools, resources, prompts) and one handler
# per MCP method (`tools/list`, `tools/call`, `resources/read`...), registered in a
# `Dispatcher` like the one of lesson 03. It does no I/O at all. A transport calls
# `server.connect(send)`, where `send` is the function that delivers one message to the
# client, and gets a `Connection`; then it feeds the connection every message it decodes with
# `connection.receive(message)`.
#
# ```mermaid
# flowchart LR
#     T[transport: stdio, HTTP, or this notebook]
#     C[Connection: handshake, era, subscriptions]
#     T -- "receive(message)" --> C
#     C --> D[Dispatcher: method to handler]
#     D --> H[handler: tools/call, resources/read...]
#     H --> F[your function]
#     C -- "send(response)" --> T
# ```
#
# So we need no pipes to talk to a server: a list can collect what it sends. This small
# helper plays the client. It opens the session with the **handshake (negociación inicial)** of
# the legacy era, `initialize` followed by the notification `notifications/initialized`, and
# then sends requests with increasing ids. Tools like the ones in this lesson run right on the
# caller's thread, so when `receive` returns, the response is already in the list.

# %% [markdown] lang="es"
# ## 1. Un servidor es un catálogo con un manejador por método
#
# Un `mcpkit.Server` guarda lo que ofrece el servidor (herramientas, recursos, prompts) y un
# manejador por cada método MCP (`tools/list`, `tools/call`, `resources/read`...), registrado en
# un `Dispatcher` como el de la lección 03. No hace ninguna E/S. Un transporte llama a
# `server.connect(send)`, donde `send` es la función que entrega un mensaje al cliente, y
# obtiene una `Connection`; después le pasa cada mensaje que decodifica con
# `connection.receive(message)`.
#
# ```mermaid
# flowchart LR
#     T[transporte: stdio, HTTP o este cuaderno]
#     C[Connection: handshake, era, suscripciones]
#     T -- "receive(message)" --> C
#     C --> D[Dispatcher: del método al manejador]
#     D --> H[manejador: tools/call, resources/read...]
#     H --> F[tu función]
#     C -- "send(respuesta)" --> T
# ```
#
# Así que no necesitamos tuberías para hablar con un servidor: una lista puede recoger lo que
# envía. Esta pequeña clase auxiliar actúa como cliente. Abre la sesión con el **handshake
# (negociación inicial)** de la era heredada, `initialize` seguido de la notificación
# `notifications/initialized`, y luego envía solicitudes con ids crecientes. Las herramientas
# como las de esta lección se ejecutan en el mismo hilo que llama, así que cuando `receive`
# termina, la respuesta ya está en la lista.

# %%
class Session:
    def __init__(self, server, version="2025-11-25"):
        self.sent = []
        self.connection = server.connect(self.sent.append)
        self.next_id = 0
        self.hello = self.request("initialize", {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "lesson-04", "version": "1.0"},
        })
        self.connection.receive(jsonrpc.notification("notifications/initialized"))

    def request(self, method, params=None):
        self.next_id += 1
        self.connection.receive(jsonrpc.request(self.next_id, method, params))
        return self.sent[-1]

    def notifications(self):
        return [message for message in self.sent if "method" in message]

    def close(self):
        self.connection.close()

# %% [markdown] lang="en"
# A server with nothing registered still answers the handshake. Look at its `capabilities`:
# only `logging`, which every `mcpkit` server handles. It offers no tools, so it says nothing
# about tools, and asking for them gets -32601, *Method not found*: for this server,
# `tools/list` does not exist.

# %% [markdown] lang="es"
# Un servidor sin nada registrado también responde al handshake. Mira sus `capabilities`:
# solo `logging`, que todo servidor de `mcpkit` maneja. No ofrece herramientas, así que no dice
# nada de herramientas, y pedírselas recibe -32601, *Method not found*: para este servidor,
# `tools/list` no existe.

# %%
empty = Server("empty", "1.0.0")
session = Session(empty)
session.hello

# %%
session.request("tools/list")

# %% [markdown] lang="en"
# ## 2. Tools: a function, a schema, a description
#
# A **tool** is a function the model may ask the host to call. `@server.tool` registers one;
# everything the model will know about it comes from the function itself:
#
# - the **name** is the function's name;
# - the **description** is the docstring's first paragraph, and the `Args:` section describes
#   each argument;
# - the **input schema** (`inputSchema`, a JSON Schema) comes from the type hints: `str`
#   becomes `"type": "string"`, a `Literal` becomes an `enum`, and an argument without a
#   default is `required`.
#
# Our first server is a tiny English-Spanish glossary of MCP terms.

# %% [markdown] lang="es"
# ## 2. Herramientas: una función, un esquema, una descripción
#
# Una **herramienta** es una función que el modelo puede pedirle al host que llame.
# `@server.tool` registra una; todo lo que el modelo sabrá de ella sale de la propia función:
#
# - el **nombre** es el nombre de la función;
# - la **descripción** es el primer párrafo del docstring, y la sección `Args:` describe cada
#   argumento;
# - el **esquema de entrada** (`inputSchema`, un JSON Schema) sale de los indicadores de tipo:
#   `str` se convierte en `"type": "string"`, un `Literal` en un `enum`, y un argumento sin
#   valor por defecto es `required`.
#
# Nuestro primer servidor es un pequeño glosario inglés-español de términos de MCP.

# %%
glossary = Server("glossary", "1.0.0")
TERMS = {"request": "solicitud", "response": "respuesta", "tool": "herramienta",
         "resource": "recurso", "subscription": "suscripción"}


@glossary.tool(read_only=True)
def translate(term: str, to: Literal["es", "en"] = "es") -> str:
    """Translate an MCP term between English and Spanish.

    Args:
        term: The term to translate, e.g. "request".
        to: The language to translate into.
    """
    table = TERMS if to == "es" else {es: en for en, es in TERMS.items()}
    if term not in table:
        raise ValueError(f"{term!r} is not in the glossary; known terms: {', '.join(table)}")
    return table[term]


session = Session(glossary)
session.request("tools/list")["result"]["tools"]

# %% [markdown] lang="en"
# That definition is the model's whole view of the tool: names and descriptions deserve as
# much care as the code. Now call it. The `result` holds a list of **content blocks**; a
# string returned by the function becomes one `text` block:

# %% [markdown] lang="es"
# Esa definición es todo lo que el modelo ve de la herramienta: los nombres y las
# descripciones merecen tanto cuidado como el código. Ahora llamémosla. El `result` contiene una
# lista de **bloques de contenido**; una cadena devuelta por la función se convierte en un
# bloque `text`:

# %%
session.request("tools/call", {"name": "translate", "arguments": {"term": "tool"}})

# %% [markdown] lang="en"
# ### The two kinds of error, from the server's side
#
# Lesson 02 told apart a **protocol error** (nothing ran; a JSON-RPC `error` for the client)
# from a **tool error** (the tool ran and failed; a `result` with `isError: true`, for the
# model). `mcpkit` draws the line for you: an exception raised by your function becomes a tool
# error whose text is the exception's, so write messages that help the model try again.

# %% [markdown] lang="es"
# ### Los dos tipos de error, desde el lado del servidor
#
# La lección 02 distinguió un **error de protocolo** (no se ejecutó nada; un `error` de
# JSON-RPC para el cliente) de un **error de herramienta** (la herramienta se ejecutó y falló;
# un `result` con `isError: true`, para el modelo). `mcpkit` separa los dos casos por ti: una
# excepción lanzada por tu función se convierte en un error de herramienta cuyo texto es el de
# la excepción, así que escribe mensajes que ayuden al modelo a intentarlo de nuevo.

# %%
session.request("tools/call", {"name": "translate", "arguments": {"term": "handshake"}})

# %%
session.request("tools/call", {"name": "translate_all", "arguments": {}})

# %% [markdown] lang="en"
# Arguments that break the input schema sit on the line between the two, and the revisions
# disagree. Up to 2025-06-18 they were a protocol error (-32602); since 2025-11-25 they are a
# tool error, because the model wrote those arguments and is the one who can fix them. A
# server answers each client in the revision it negotiated:

# %% [markdown] lang="es"
# Los argumentos que no cumplen el esquema de entrada están en la frontera entre los dos, y las
# revisiones no coinciden. Hasta la 2025-06-18 eran un error de protocolo (-32602); desde la
# 2025-11-25 son un error de herramienta, porque quien escribió esos argumentos fue el modelo y
# es quien puede corregirlos. Un servidor responde a cada cliente en la revisión que negoció:

# %%
bad_arguments = {"name": "translate", "arguments": {"term": "tool", "to": "fr"}}
older = Session(glossary, version="2025-06-18")
print(older.request("tools/call", bad_arguments))
print(session.request("tools/call", bad_arguments))
older.close()

# %% [markdown] lang="en"
# ## 3. Annotations, and why a host asks first
#
# A tool can describe its behaviour with **annotations**, hints for the host:
#
# | annotation | meaning | if absent |
# | --- | --- | --- |
# | `readOnlyHint` | does not change its environment | `false` |
# | `destructiveHint` | may destroy or overwrite (meaningful only when not read-only) | `true` |
# | `idempotentHint` | calling it again with the same arguments changes nothing more | `false` |
# | `openWorldHint` | reaches outside the server (the web, other people) | `true` |
#
# Look at the defaults: a tool that says nothing is assumed to be the riskiest kind, a
# destructive one that reaches the outside world. With `mcpkit` you set them with keywords:
# `read_only=`, `destructive=`, `idempotent=`, `open_world=` (and `title=`, a human-friendly
# name). Let's give the glossary two more tools:

# %% [markdown] lang="es"
# ## 3. Anotaciones, y por qué un host pregunta antes
#
# Una herramienta puede describir su comportamiento con **anotaciones**, indicaciones para el
# host:
#
# | anotación | significado | si falta |
# | --- | --- | --- |
# | `readOnlyHint` | no cambia su entorno | `false` |
# | `destructiveHint` | puede destruir o sobrescribir (solo si no es de solo lectura) | `true` |
# | `idempotentHint` | llamarla otra vez con los mismos argumentos no cambia nada más | `false` |
# | `openWorldHint` | actúa más allá del servidor (la web, otras personas) | `true` |
#
# Fíjate en los valores por defecto: una herramienta que no dice nada se supone del tipo más
# arriesgado, una destructiva que llega al mundo exterior. Con `mcpkit` se fijan con palabras
# clave: `read_only=`, `destructive=`, `idempotent=`, `open_world=` (y `title=`, un nombre
# pensado para personas). Demos al glosario dos herramientas más:

# %%
@glossary.tool(title="Add a term", destructive=False, idempotent=True, open_world=False)
def add_term(term: str, translation: str) -> str:
    TERMS[term] = translation
    return f"{term} = {translation}"


@glossary.tool(title="Forget a term", destructive=True, idempotent=True, open_world=False)
def forget_term(term: str) -> str:
    del TERMS[term]
    return f"forgot {term}"


for tool in session.request("tools/list")["result"]["tools"]:
    print(f"{tool['name']:<12}", tool.get("annotations"))

# %% [markdown] lang="en"
# The model never sees MCP (lesson 00): it is the **host** that decides whether a call goes
# ahead. A careful host runs read-only tools freely and asks the user before anything that may
# destroy data. Here is that policy, written with the defaults of the table:

# %% [markdown] lang="es"
# El modelo nunca ve MCP (lección 00): es el **host** quien decide si una llamada sigue
# adelante. Un host prudente ejecuta libremente las herramientas de solo lectura y pregunta al
# usuario antes de cualquier cosa que pueda destruir datos. Esta es esa política, escrita con
# los valores por defecto de la tabla:

# %%
def needs_confirmation(tool):
    hints = tool.get("annotations", {})
    if hints.get("readOnlyHint", False):
        return False
    return hints.get("destructiveHint", True)


tools = session.request("tools/list")["result"]["tools"]
{tool["name"]: needs_confirmation(tool) for tool in tools}

# %% [markdown] lang="en"
# The notes server of this course marks `notes_delete` the same way. Here is its definition,
# as a client speaking 2025-11-25 receives it:

# %% [markdown] lang="es"
# El servidor de notas del curso marca `notes_delete` de la misma forma. Esta es su
# definición, tal como la recibe un cliente que habla la 2025-11-25:

# %%
notes_session = Session(notes.server)
notes_tools = notes_session.request("tools/list")["result"]["tools"]
delete = next(tool for tool in notes_tools if tool["name"] == "notes_delete")
delete, needs_confirmation(delete)

# %% [markdown] lang="en"
# So before a model's "delete note 2" takes effect, the host shows the user something like
# *The assistant wants to run **Delete a note** (`{"id": "2"}`). Allow?*
#
# ```mermaid
# sequenceDiagram
#     participant M as Model
#     participant H as Host
#     actor U as User
#     participant S as Notes server
#     M-->>H: tool-use block: notes_delete {"id": "2"}
#     Note over H: annotations say destructiveHint: true
#     H->>U: Allow "Delete a note"?
#     U-->>H: yes
#     H->>S: tools/call notes_delete
#     S-->>H: result
#     H->>M: tool result
# ```
#
# Annotations are **hints**, not guarantees. Any server can claim anything, so a host trusts
# them only as much as it trusts the server. They help a host be *more* careful, never less.

# %% [markdown] lang="es"
# Así que antes de que un "borra la nota 2" del modelo tenga efecto, el host le muestra al
# usuario algo como *El asistente quiere ejecutar **Delete a note** (`{"id": "2"}`). ¿Lo
# permites?*
#
# ```mermaid
# sequenceDiagram
#     participant M as Modelo
#     participant H as Host
#     actor U as Usuario
#     participant S as Servidor de notas
#     M-->>H: bloque de uso de herramienta: notes_delete {"id": "2"}
#     Note over H: las anotaciones dicen destructiveHint: true
#     H->>U: ¿Permites "Delete a note"?
#     U-->>H: sí
#     H->>S: tools/call notes_delete
#     S-->>H: resultado
#     H->>M: resultado de la herramienta
# ```
#
# Las anotaciones son **indicaciones**, no garantías. Cualquier servidor puede afirmar cualquier
# cosa, así que un host se fía de ellas solo tanto como se fía del servidor. Sirven para que un
# host sea *más* prudente, nunca menos.

# %% [markdown] lang="en"
# ## 4. A field the first revision lacked
#
# MCP has grown one revision at a time, and the tool definition grew with it. The first
# revision, 2024-11-05, had only `name`, `description` and `inputSchema`. Then came:
#
# | field | since | what it adds |
# | --- | --- | --- |
# | `annotations` | 2025-03-26 | the hints above |
# | `title` | 2025-06-18 | a display name for people |
# | `outputSchema` | 2025-06-18 | the shape of the tool's **structured output** |
#
# A client that negotiated 2024-11-05 was written against a schema with none of these, and a
# strict one may reject a definition with fields it does not know. So the server describes
# each tool in the revision of the connection. Here are the keys of two definitions, for a
# client of each revision: `notes_delete` (annotations, title) and the verb server's
# `lookup_irregular_verb` (structured output):

# %% [markdown] lang="es"
# ## 4. Un campo que no tenía la primera revisión
#
# MCP ha crecido revisión a revisión, y la definición de herramienta creció con él. La primera
# revisión, 2024-11-05, solo tenía `name`, `description` e `inputSchema`. Después llegaron:
#
# | campo | desde | qué añade |
# | --- | --- | --- |
# | `annotations` | 2025-03-26 | las indicaciones de arriba |
# | `title` | 2025-06-18 | un nombre para mostrar a las personas |
# | `outputSchema` | 2025-06-18 | la forma de la **salida estructurada** de la herramienta |
#
# Un cliente que negoció la 2024-11-05 se escribió contra un esquema sin ninguno de ellos, y uno
# estricto puede rechazar una definición con campos que no conoce. Así que el servidor describe
# cada herramienta en la revisión de la conexión. Estas son las claves de dos definiciones, para
# un cliente de cada revisión: `notes_delete` (anotaciones, título) y `lookup_irregular_verb` del
# servidor de verbos (salida estructurada):

# %%
def definition(server, version, name):
    client = Session(server, version)
    tools = client.request("tools/list")["result"]["tools"]
    client.close()
    return next(tool for tool in tools if tool["name"] == name)


for version in ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"):
    print(version, list(definition(notes.server, version, "notes_delete")))
    print(" " * 10, list(definition(verbs.server, version, "lookup_irregular_verb")))

# %% [markdown] lang="en"
# The result follows the same rule. A tool with an `outputSchema` returns its value as
# `structuredContent`, JSON a program can use without parsing text, plus a text copy for
# clients that only read text. A client of 2025-03-26 gets only the text:

# %% [markdown] lang="es"
# El resultado sigue la misma regla. Una herramienta con `outputSchema` devuelve su valor como
# `structuredContent`, JSON que un programa puede usar sin analizar texto, más una copia en
# texto para los clientes que solo leen texto. Un cliente de la 2025-03-26 recibe solo el texto:

# %%
lookup = {"name": "lookup_irregular_verb", "arguments": {"verb": "write"}}
for version in ("2025-03-26", "2025-06-18"):
    client = Session(verbs.server, version)
    print(version, client.request("tools/call", lookup)["result"])
    client.close()

# %% [markdown] lang="en"
# `mcpkit/server.py` does this in `Tool.definition(version)` and `_tool_result`: look for
# `versions.at_least`.
#
# **Try it: a field the notes server does not use.** The specification's page on tools lists
# every field of a definition, and the three above are not all of them. One more is `icons`
# (since 2025-11-25): pictures a host may show beside the tool's name, each with a `src` URI,
# and optionally a `mimeType` and `sizes`. None of the course's servers sets it, so here is a
# tiny server that does. Pick another field from the specification's page and try it the same
# way: the keyword arguments of `@server.tool` are in `mcpkit/registry.py`.

# %% [markdown] lang="es"
# `mcpkit/server.py` hace esto en `Tool.definition(version)` y `_tool_result`: busca
# `versions.at_least`.
#
# **Pruébalo: un campo que el servidor de notas no usa.** La página de la especificación sobre
# las herramientas enumera todos los campos de una definición, y los tres de arriba no son
# todos. Otro es `icons` (desde la 2025-11-25): imágenes que un host puede mostrar junto al
# nombre de la herramienta, cada una con un URI `src` y, si se quiere, `mimeType` y `sizes`.
# Ninguno de los servidores del curso lo usa, así que aquí tienes un servidor diminuto que sí.
# Elige otro campo de la página de la especificación y pruébalo igual: los argumentos con
# nombre de `@server.tool` están en `mcpkit/registry.py`.

# %%
tea = Server("tea", "1.0.0")


@tea.tool(title="Brew tea", read_only=True, open_world=False,
          icons=[{"src": "https://example.com/icons/teapot.svg", "mimeType": "image/svg+xml",
                  "sizes": ["any"]}])
def brew(kind: str = "green") -> str:
    return f"a cup of {kind} tea"


for version in ("2025-06-18", "2025-11-25"):
    print(version, definition(tea, version, "brew").get("icons"))

# %% [markdown] lang="en"
# A client of 2025-06-18 never sees the field, for the reason given above; one of 2025-11-25
# gets it as written.
#
# ## 5. Resources and resource templates
#
# A **resource** is data the host may read and show or give to the model: a file, a row, a
# note. Each has a URI. A fixed URI makes a plain resource; a URI with `{variables}` makes a
# **resource template**, one entry that stands for many resources. The function gets the
# variables as keyword arguments. If it raises `KeyError`, `mcpkit` answers *resource not
# found*.

# %% [markdown] lang="es"
# Un cliente de la 2025-06-18 nunca ve el campo, por la razón de arriba; uno de la 2025-11-25 lo
# recibe tal como se escribió.
#
# ## 5. Recursos y plantillas de recurso
#
# Un **recurso** son datos que el host puede leer y mostrar o darle al modelo: un archivo, una
# fila, una nota. Cada uno tiene un URI. Un URI fijo da un recurso normal; un URI con
# `{variables}` da una **plantilla de recurso**, una sola entrada que representa muchos
# recursos. La función recibe las variables como argumentos con nombre. Si lanza `KeyError`,
# `mcpkit` responde *recurso no encontrado*.

# %%
@glossary.resource("glossary://terms", name="terms", mime_type="application/json")
def all_terms():
    return json.dumps(TERMS, ensure_ascii=False)


@glossary.resource("glossary://{term}", name="term")
def one_term(term):
    return f"{term} = {TERMS[term]}"


print(session.request("resources/list")["result"])
print(session.request("resources/templates/list")["result"])

# %% [markdown] lang="en"
# A read names one concrete URI; the server finds the resource or the template that matches:

# %% [markdown] lang="es"
# Una lectura nombra un URI concreto; el servidor busca el recurso o la plantilla que encaja:

# %%
for uri in ("glossary://terms", "glossary://request", "glossary://handshake"):
    print(session.request("resources/read", {"uri": uri}))

# %% [markdown] lang="en"
# The last one is a protocol error, -32002 *Resource not found*, with the URI in `data`. That
# is the code of the legacy revisions; the modern revision (lesson 07) uses -32602 instead.
#
# Who decides to use each kind of thing differs, and it is worth keeping in mind when you
# design a server:
#
# | | chosen by | typical use |
# | --- | --- | --- |
# | tool | the **model** (the host may ask the user) | actions, queries |
# | resource | the **application** (the host, or the user through it) | context to attach |
# | prompt | the **user** (e.g. a slash command) | reusable conversation starters |

# %% [markdown] lang="es"
# La última es un error de protocolo, -32002 *Resource not found*, con el URI en `data`. Ese es
# el código de las revisiones heredadas; la revisión moderna (lección 07) usa -32602 en su
# lugar.
#
# Quién decide usar cada tipo de cosa es distinto, y conviene tenerlo presente al diseñar un
# servidor:
#
# | | lo elige | uso típico |
# | --- | --- | --- |
# | herramienta | el **modelo** (el host puede preguntar al usuario) | acciones, consultas |
# | recurso | la **aplicación** (el host, o el usuario a través de él) | contexto que adjuntar |
# | prompt | el **usuario** (p. ej., un comando con barra) | inicios de conversación reutilizables |

# %% [markdown] lang="en"
# ## 6. Prompts
#
# A **prompt** is a template of messages that the user picks, with arguments they fill in.
# `@server.prompt` turns a function into one: its parameters are the arguments (always
# strings), and it returns the messages. The notes server has `review_note`:

# %% [markdown] lang="es"
# ## 6. Prompts
#
# Un **prompt** es una plantilla de mensajes que elige el usuario, con argumentos que él
# rellena. `@server.prompt` convierte una función en uno: sus parámetros son los argumentos
# (siempre cadenas) y devuelve los mensajes. El servidor de notas tiene `review_note`:

# %%
notes_session.request("prompts/list")["result"]["prompts"]

# %%
for message in notes_session.request(
        "prompts/get", {"name": "review_note", "arguments": {"id": "2"}})["result"]["messages"]:
    print(message)

# %% [markdown] lang="en"
# The first message carries the note itself as an embedded resource, so the model gets the
# text and knows where it came from. A missing required argument is a protocol error:

# %% [markdown] lang="es"
# El primer mensaje lleva la propia nota como un recurso incrustado, así que el modelo recibe
# el texto y sabe de dónde viene. Un argumento obligatorio que falta es un error de protocolo:

# %%
notes_session.request("prompts/get", {"name": "review_note", "arguments": {}})

# %% [markdown] lang="en"
# ## 7. Capabilities: say what you have, and nothing else
#
# The `capabilities` of the `initialize` result tell the client which features exist on this
# server, so it never has to guess. `mcpkit` computes them from the catalogue: `tools` only if
# there is a tool, `resources` only if there is a resource or a template, `prompts` only if
# there is a prompt, `completions` (suggestions for arguments) when there is something to
# complete. Compare the four servers of this lesson:

# %% [markdown] lang="es"
# ## 7. Capacidades: di lo que tienes, y nada más
#
# Las `capabilities` del resultado de `initialize` le dicen al cliente qué funcionalidades
# existen en este servidor, para que nunca tenga que adivinar. `mcpkit` las calcula a partir
# del catálogo: `tools` solo si hay alguna herramienta, `resources` solo si hay algún recurso
# o plantilla, `prompts` solo si hay algún prompt, `completions` (sugerencias para argumentos)
# cuando hay algo que completar. Compara los cuatro servidores de esta lección:

# %%
for server in (empty, verbs.server, glossary, notes.server):
    print(f"{server.name:<9}", json.dumps(server.capabilities()))

# %% [markdown] lang="en"
# `listChanged: true` promises a notification when the list changes, and `subscribe: true`
# promises that a client can subscribe to a resource (next section). A client that calls a
# feature the server did not advertise gets -32601, as the empty server showed, and as the
# verb server shows for resources:

# %% [markdown] lang="es"
# `listChanged: true` promete una notificación cuando la lista cambia, y `subscribe: true`
# promete que un cliente puede suscribirse a un recurso (siguiente sección). Un cliente que
# usa una funcionalidad que el servidor no anunció recibe -32601, como mostró el servidor
# vacío, y como muestra el servidor de verbos con los recursos:

# %%
verbs_session = Session(verbs.server)
verbs_session.request("resources/list")

# %% [markdown] lang="en"
# The catalogue may change while clients are connected, and then connected clients are told.
# Register one more tool on the glossary while our session is open:

# %% [markdown] lang="es"
# El catálogo puede cambiar con clientes conectados, y entonces se les avisa. Registra una
# herramienta más en el glosario con nuestra sesión abierta:

# %%
@glossary.tool(read_only=True, open_world=False)
def count_terms() -> int:
    return len(TERMS)


session.sent[-1]

# %% [markdown] lang="en"
# The server sent `notifications/tools/list_changed` on its own initiative; a client reacts by
# calling `tools/list` again.
#
# ## 8. Subscriptions: being told that a resource changed
#
# A host that shows a note to the user, or put it in the model's context, wants to know when
# that note changes. It **subscribes** to the note's URI with `resources/subscribe`; from then
# on, whenever the server changes that resource, it sends `notifications/resources/updated`
# with the URI. The notification carries no content: the client reads the resource again if it
# cares.
#
# ```mermaid
# sequenceDiagram
#     participant C as Client
#     participant S as Notes server
#     C->>S: resources/subscribe {"uri": "notes://4"}
#     S-->>C: result {}
#     C->>S: tools/call notes_create {"title": "Tea", ...}
#     S--)C: notifications/resources/updated {"uri": "notes://4"}
#     S-->>C: result: created note 4
#     C->>S: resources/read {"uri": "notes://4"}
#     S-->>C: contents
# ```
#
# On the server's side, the tool that changes a note calls
# `server.notify_resource_updated(uri)`, and `mcpkit` sends the notification to every
# connection subscribed to that URI. Watch it happen:

# %% [markdown] lang="es"
# El servidor envió `notifications/tools/list_changed` por iniciativa propia; un cliente
# reacciona llamando otra vez a `tools/list`.
#
# ## 8. Suscripciones: que te avisen de que un recurso cambió
#
# Un host que le muestra una nota al usuario, o que la puso en el contexto del modelo, quiere
# saber cuándo cambia esa nota. Se **suscribe** al URI de la nota con `resources/subscribe`; a
# partir de entonces, cada vez que el servidor cambia ese recurso, envía
# `notifications/resources/updated` con el URI. La notificación no lleva contenido: el cliente
# vuelve a leer el recurso si le interesa.
#
# ```mermaid
# sequenceDiagram
#     participant C as Cliente
#     participant S as Servidor de notas
#     C->>S: resources/subscribe {"uri": "notes://4"}
#     S-->>C: resultado {}
#     C->>S: tools/call notes_create {"title": "Tea", ...}
#     S--)C: notifications/resources/updated {"uri": "notes://4"}
#     S-->>C: resultado: created note 4
#     C->>S: resources/read {"uri": "notes://4"}
#     S-->>C: contents
# ```
#
# En el lado del servidor, la herramienta que cambia una nota llama a
# `server.notify_resource_updated(uri)`, y `mcpkit` envía la notificación a cada conexión
# suscrita a ese URI. Míralo en acción:

# %%
print(notes_session.request("resources/subscribe", {"uri": "notes://4"}))
before = len(notes_session.sent)
notes_session.request("tools/call", {"name": "notes_create",
                                     "arguments": {"title": "Tea", "body": "Green, no sugar."}})
for message in notes_session.sent[before:]:
    print(message)

# %% [markdown] lang="en"
# Two messages came back for one request: the notification first (the tool sent it while it
# ran) and then the response. Now read the note, unsubscribe, and delete it. The deletion
# changes the resource too, but this client is no longer listening, so nothing but the
# response arrives:

# %% [markdown] lang="es"
# Volvieron dos mensajes para una sola solicitud: primero la notificación (la herramienta la
# envió mientras se ejecutaba) y después la respuesta. Ahora lee la nota, cancela la
# suscripción y bórrala. El borrado también cambia el recurso, pero este cliente ya no escucha,
# así que no llega nada más que la respuesta:

# %%
print(notes_session.request("resources/read", {"uri": "notes://4"})["result"]["contents"])
print(notes_session.request("resources/unsubscribe", {"uri": "notes://4"}))
before = len(notes_session.sent)
notes_session.request("tools/call", {"name": "notes_delete", "arguments": {"id": "4"}})
for message in notes_session.sent[before:]:
    print(message)

# %% [markdown] lang="en"
# ### Is anyone still there? `ping`
#
# A subscription can stay quiet for hours. To tell a quiet peer from a dead one, either side
# may send `ping` at any time, after the handshake or even before it: a request with no
# params, answered at once with an empty result. Sending it is a **keepalive** (a message
# whose only job is to show the connection still works), and the spec leaves it optional.
# Over stdio there is little need: a server that dies closes its end of the pipe, and the
# client's reader sees the end of the stream right away (lesson 05). It matters on long-lived
# HTTP streams, where a proxy or a balancer may cut a connection that has carried nothing for
# a while; there `mcpkit`'s HTTP server also writes an SSE comment line, `: keepalive`, every
# 15 s on an idle stream (the SSE streams of lesson 08). A `ping` costs one line each way:

# %% [markdown] lang="es"
# ### ¿Sigue ahí alguien? `ping`
#
# Una suscripción puede pasar horas en silencio. Para distinguir un interlocutor callado de uno
# muerto, cualquiera de los dos lados puede enviar `ping` en cualquier momento, tras el
# handshake o incluso antes: una solicitud sin params que se responde enseguida con un
# resultado vacío. Enviarlo es un **keepalive** (un mensaje cuyo único trabajo es mostrar que la
# conexión sigue funcionando), y la especificación lo deja como opcional. Por stdio hace poca
# falta: un servidor que muere cierra su extremo de la tubería, y el lector del cliente ve el
# fin del flujo enseguida (lección 05). Importa en los flujos HTTP de larga duración, donde un
# proxy o un balanceador puede cortar una conexión que lleva un rato sin transportar nada; ahí
# el servidor HTTP de `mcpkit` escribe además una línea de comentario SSE, `: keepalive`, cada
# 15 s en un flujo inactivo (los flujos SSE de la lección 08). Un `ping` cuesta una línea en
# cada sentido:

# %%
before = len(notes_session.sent)
print(notes_session.request("ping"))
print(len(notes_session.sent) - before)

# %% [markdown] lang="en"
# ## 9. The English-verb server: the two kinds of error again
#
# The second example server helps with English verbs. Its world is closed: a table of thirty
# verbs. A verb outside the table is not a bug of the caller, it is something the model asked
# about, so the answer is a tool error the model can read and explain to the user. A tool that
# does not exist *is* a bug of the caller: a protocol error.

# %% [markdown] lang="es"
# ## 9. El servidor de verbos en inglés: otra vez los dos tipos de error
#
# El segundo servidor de ejemplo ayuda con los verbos en inglés. Su mundo es cerrado: una tabla
# de treinta verbos. Un verbo fuera de la tabla no es un fallo de quien llama, es algo por lo
# que preguntó el modelo, así que la respuesta es un error de herramienta que el modelo puede
# leer y explicar al usuario. Una herramienta que no existe *sí* es un fallo de quien llama: un
# error de protocolo.

# %%
calls = [
    ("conjugate", {"verb": "go", "subject": "she", "tense": "past"}),
    ("check_subject_verb_agreement", {"subject": "she", "verb_form": "go"}),
    ("conjugate", {"verb": "swim"}),
    ("conjugate_everything", {"verb": "go"}),
]
for name, arguments in calls:
    response = verbs_session.request("tools/call", {"name": name, "arguments": arguments})
    if "error" in response:
        print(name, "-> protocol error", response["error"]["code"], response["error"]["message"])
    else:
        result = response["result"]
        print(name, "-> isError" if result.get("isError") else "->", result["content"][0]["text"])

# %% [markdown] lang="en"
# In `mcpkit/examples/verbs.py` the out-of-table case returns `error_result(...)` (a
# `ToolResult` with `is_error=True`) instead of raising: both give the same wire result; return
# one when you want to choose the exact text.

# %% [markdown] lang="es"
# En `mcpkit/examples/verbs.py` el caso fuera de la tabla devuelve `error_result(...)` (un
# `ToolResult` con `is_error=True`) en lugar de lanzar una excepción: las dos formas dan el
# mismo resultado en la conexión; devuelve uno cuando quieras elegir el texto exacto.

# %%
for open_session in (session, notes_session, verbs_session):
    open_session.close()
notes.reset()

# %% [markdown] lang="en"
# ## Summary
#
# - A `Server` is a catalogue plus handlers, with no I/O; `server.connect(send)` and
#   `connection.receive(message)` are all a transport needs.
# - `@server.tool` turns a function into a tool: name, description and `inputSchema` come from
#   the function. An exception becomes a result with `isError: true`; an unknown tool is a
#   protocol error, -32602.
# - Annotations (`readOnlyHint`, `destructiveHint`, `idempotentHint`, `openWorldHint`) are hints
#   for the host; a tool that says nothing is assumed destructive. Hosts ask before
#   destructive tools.
# - Definitions and results follow the negotiated revision: no `annotations` before
#   2025-03-26, no `title`, `outputSchema` or `structuredContent` before 2025-06-18.
# - Resources have URIs; templates like `notes://{id}` stand for many; an unknown one is
#   -32002 in the legacy era. Prompts are message templates the user picks.
# - Capabilities list only what the server has; `resources/subscribe` plus
#   `notifications/resources/updated` tell a client when a resource changes; `ping`, from
#   either side, checks that a quiet connection still works.
#
# **Lab 04** (`labs/en/lab04_server.ipynb`): build the notes server yourself. Next,
# **lesson 04b** (`04b_stdio.ipynb`): the server on a pipe, byte by byte and in widgets.

# %% [markdown] lang="es"
# ## Resumen
#
# - Un `Server` es un catálogo más unos manejadores, sin E/S; `server.connect(send)` y
#   `connection.receive(message)` es todo lo que necesita un transporte.
# - `@server.tool` convierte una función en una herramienta: el nombre, la descripción y el
#   `inputSchema` salen de la función. Una excepción se convierte en un resultado con
#   `isError: true`; una herramienta desconocida es un error de protocolo, -32602.
# - Las anotaciones (`readOnlyHint`, `destructiveHint`, `idempotentHint`, `openWorldHint`) son
#   indicaciones para el host; una herramienta que no dice nada se supone destructiva. Los
#   hosts preguntan antes de ejecutar herramientas destructivas.
# - Las definiciones y los resultados siguen la revisión negociada: sin `annotations` antes de
#   la 2025-03-26, sin `title`, `outputSchema` ni `structuredContent` antes de la 2025-06-18.
# - Los recursos tienen URI; las plantillas como `notes://{id}` representan muchos; uno
#   desconocido es -32002 en la era heredada. Los prompts son plantillas de mensajes que elige
#   el usuario.
# - Las capacidades enumeran solo lo que tiene el servidor; `resources/subscribe` más
#   `notifications/resources/updated` le avisan a un cliente cuando cambia un recurso; `ping`,
#   desde cualquiera de los lados, comprueba que una conexión callada sigue funcionando.
#
# **Laboratorio 04** (`labs/es/lab04_server.ipynb`): construye tú el servidor de notas. Después,
# la **lección 04b** (`04b_stdio.ipynb`): el servidor en una tubería, byte a byte y en
# widgets.
