# %% [markdown] lang="en"
# # Lesson 04 · A server: tools, resources, prompts and the stdio loop
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
# 7. meet the two example servers of the course, the notes server and the English-verb server;
# 8. run the **stdio loop** and keep `print()` away from the protocol;
# 9. capture the literal bytes of a session with a real server in a **subprocess**: the proof
#    that everything above is just lines of JSON on a pipe.

# %% [markdown] lang="es"
# # Lección 04 · Un servidor: herramientas, recursos, prompts y el bucle stdio
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
# 7. conocer los dos servidores de ejemplo del curso, el de notas y el de verbos en inglés;
# 8. ejecutar el **bucle stdio** y mantener `print()` lejos del protocolo;
# 9. capturar los bytes literales de una sesión con un servidor real en un **subproceso**: la
#    prueba de que todo lo anterior no son más que líneas de JSON en una tubería.

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
#     T -- "receive(mensaje)" --> C
#     C --> D[Dispatcher: del método al manejador]
#     D --> H[manejador: tools/call, resources/read...]
#     H --> F[tu función]
#     C -- "send(respuesta)" --> T
# ```
#
# Así que no necesitamos tuberías para hablar con un servidor: una lista puede recoger lo que
# envía. Esta pequeña clase auxiliar hace de cliente. Abre la sesión con el **handshake
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
# un `result` con `isError: true`, para el modelo). `mcpkit` traza la línea por ti: una
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
# | `openWorldHint` | llega fuera del servidor (la web, otras personas) | `true` |
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
# ## 5. Resources and resource templates
#
# A **resource** is data the host may read and show or give to the model: a file, a row, a
# note. Each has a URI. A fixed URI makes a plain resource; a URI with `{variables}` makes a
# **resource template**, one entry that stands for many resources. The function gets the
# variables as keyword arguments. If it raises `KeyError`, `mcpkit` answers *resource not
# found*.

# %% [markdown] lang="es"
# `mcpkit/server.py` hace esto en `Tool.definition(version)` y `_tool_result`: busca
# `versions.at_least`.
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
#
# ## 10. The stdio loop
#
# Now the transport. Over stdio, the host starts the server as a **subprocess** and talks to
# it through its **standard input** (client to server) and **standard output** (server to
# client), one JSON message per line; **standard error** is free for logs. The loop in
# `mcpkit/transports/stdio.py` is lesson 03's `serve` with a real server in it:
#
# ```mermaid
# flowchart LR
#     I[stdin: read up to 64 KiB] --> D[NdjsonDecoder.feed]
#     D --> R[connection.receive]
#     R --> S["send(message): encode_ndjson, write to stdout"]
#     I -- "b'' (end of input)" --> X[close the connection and return]
# ```
#
# `serve_stdio` also accepts any pair of byte streams, so we can run it right here, on bytes
# prepared in advance:

# %% [markdown] lang="es"
# En `mcpkit/examples/verbs.py` el caso fuera de la tabla devuelve `error_result(...)` (un
# `ToolResult` con `is_error=True`) en lugar de lanzar una excepción: las dos formas dan el
# mismo resultado en el cable; devuelve uno cuando quieras elegir el texto exacto.
#
# ## 10. El bucle stdio
#
# Ahora, el transporte. Por stdio, el host lanza el servidor como **subproceso** y le habla a
# través de su **entrada estándar** (del cliente al servidor) y su **salida estándar** (del
# servidor al cliente), un mensaje JSON por línea; el **error estándar** queda libre para los
# registros. El bucle de `mcpkit/transports/stdio.py` es el `serve` de la lección 03 con un
# servidor real dentro:
#
# ```mermaid
# flowchart LR
#     I[stdin: leer hasta 64 KiB] --> D[NdjsonDecoder.feed]
#     D --> R[connection.receive]
#     R --> S["send(mensaje): encode_ndjson, escribir en stdout"]
#     I -- "b'' (fin de la entrada)" --> X[cerrar la conexión y volver]
# ```
#
# `serve_stdio` también acepta cualquier par de flujos de bytes, así que podemos ejecutarlo
# aquí mismo, sobre bytes preparados de antemano:

# %%
INITIALIZE = jsonrpc.request(1, "initialize", {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "lesson-04", "version": "1.0"},
})
incoming = b"".join(framing.encode_ndjson(message) for message in [
    INITIALIZE,
    jsonrpc.notification("notifications/initialized"),
    jsonrpc.request(2, "tools/call", {"name": "conjugate", "arguments": {"verb": "be"}}),
])
outgoing = io.BytesIO()
serve_stdio(verbs.server, stdin=io.BytesIO(incoming), stdout=outgoing)
for line in outgoing.getvalue().splitlines(keepends=True):
    print(line)

# %% [markdown] lang="en"
# Three messages in, two lines out: the notification got no answer. The loop ended by itself
# when the input ran out, which is how a stdio server learns that the host has gone: end of
# input, not a special message.
#
# ### `print()` must never reach standard output
#
# On stdio, standard output *is* the protocol channel (lesson 01 showed what a stray line does
# to the client's decoder). But tools are ordinary Python, and ordinary Python prints. So when
# `serve_stdio` starts with the real standard output, it sets it aside for protocol messages
# only: it keeps a private copy of file descriptor 1, then points descriptor 1 and
# `sys.stdout` at standard error. From then on a `print()`, in a tool or in any program the
# tool starts, lands in the log.
#
# *From then on* is the catch. Here is a chatty server: it prints when its module loads, and
# its tool prints while it works. We run it as a real subprocess and send it a handshake and
# one call, all at once:

# %% [markdown] lang="es"
# Tres mensajes de entrada, dos líneas de salida: la notificación no recibió respuesta. El
# bucle terminó solo cuando se acabó la entrada, que es como un servidor stdio se entera de que
# el host se ha ido: fin de la entrada, no un mensaje especial.
#
# ### `print()` nunca debe llegar a la salida estándar
#
# En stdio, la salida estándar *es* el canal del protocolo (la lección 01 mostró lo que le hace
# una línea perdida al decodificador del cliente). Pero las herramientas son Python normal, y
# el Python normal imprime. Así que cuando `serve_stdio` arranca con la salida estándar real, la
# reserva solo para los mensajes del protocolo: guarda una copia privada del descriptor de
# archivo 1 y luego apunta el descriptor 1 y `sys.stdout` al error estándar. A partir de ese
# momento, un `print()`, en una herramienta o en cualquier programa que lance la herramienta,
# acaba en el registro.
#
# *A partir de ese momento* es la trampa. Aquí tienes un servidor parlanchín: imprime al cargar
# su módulo, y su herramienta imprime mientras trabaja. Lo ejecutamos como un subproceso real y
# le enviamos un handshake y una llamada, todo de una vez:

# %%
CHATTY = """
from mcpkit import Server

print("loading the chatty server")
server = Server("chatty")


@server.tool
def shout(text: str) -> str:
    print("debug: shouting", text)
    return text.upper() + "!"


server.run()
"""
incoming = b"".join(framing.encode_ndjson(message) for message in [
    INITIALIZE,
    jsonrpc.notification("notifications/initialized"),
    jsonrpc.request(2, "tools/call", {"name": "shout", "arguments": {"text": "hola"}}),
])
done = subprocess.run([sys.executable, "-c", CHATTY], input=incoming, capture_output=True,
                      timeout=60)
print("stdout:")
for line in done.stdout.splitlines(keepends=True):
    print("   ", line)
print("stderr:")
for line in done.stderr.splitlines(keepends=True):
    print("   ", line)

# %% [markdown] lang="en"
# The `print` inside the tool went to standard error, where it belongs. The one at import time
# ran before `server.run()` had claimed standard output, so it went out on the wire, and the
# client's decoder chokes on it:

# %% [markdown] lang="es"
# El `print` de dentro de la herramienta fue al error estándar, donde debe estar. El del
# momento de la importación se ejecutó antes de que `server.run()` reservara la salida
# estándar, así que salió por el cable, y el decodificador del cliente se atraganta con él:

# %%
[type(item).__name__ if isinstance(item, framing.FramingError) else item["id"]
 for item in framing.NdjsonDecoder().feed(done.stdout)]

# %% [markdown] lang="en"
# This client survives, because the junk came before any real message. Clients differ,
# though: some give up on the first line that is not JSON. The rules for a stdio server:
# **log to standard error** (`logging` does by default), keep module imports quiet, and never
# write to file descriptor 1 yourself.
#
# ## 11. A real session, byte by byte
#
# Everything so far ran inside this notebook. Now the real thing: the notes server as a
# separate process, started exactly as a host would start it,
#
# ```
# python -m mcpkit serve mcpkit.examples.notes:server
# ```
#
# and a client that writes bytes to its standard input and reads lines from its standard
# output. Reading must not block the notebook, so a **reader thread** reads each line and puts
# it in a queue, and the notebook takes them from there. The thread never prints: output from
# a thread would land in whatever cell happens to be running.

# %% [markdown] lang="es"
# Este cliente sobrevive, porque la basura llegó antes que cualquier mensaje real. Pero no todos
# los clientes son iguales: algunos se rinden con la primera línea que no es JSON. Las reglas
# para un servidor stdio: **registra en el error estándar** (`logging` lo hace por defecto),
# mantén en silencio la importación de los módulos y nunca escribas tú en el descriptor de
# archivo 1.
#
# ## 11. Una sesión real, byte a byte
#
# Todo lo anterior se ejecutó dentro de este cuaderno. Ahora, lo real: el servidor de notas
# como un proceso aparte, lanzado exactamente como lo lanzaría un host,
#
# ```
# python -m mcpkit serve mcpkit.examples.notes:server
# ```
#
# y un cliente que escribe bytes en su entrada estándar y lee líneas de su salida estándar. La
# lectura no debe bloquear el cuaderno, así que un **hilo lector** lee cada línea y la pone en
# una cola, y el cuaderno las recoge de ahí. El hilo nunca imprime: la salida de un hilo
# acabaría en la celda que se esté ejecutando en ese momento.

# %%
process = subprocess.Popen(
    [sys.executable, "-m", "mcpkit", "serve", "mcpkit.examples.notes:server"],
    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
)
lines = queue.Queue()


def read_lines():
    for line in process.stdout:
        lines.put(line)
    lines.put(None)


reader = threading.Thread(target=read_lines, daemon=True)
reader.start()
trace = []


def send(message):
    data = framing.encode_ndjson(message)
    trace.append(("C->S", data))
    process.stdin.write(data)
    process.stdin.flush()


def wait_for(request_id):
    while True:
        line = lines.get(timeout=30)
        if line is None:
            raise EOFError("the server closed its standard output")
        trace.append(("S->C", line))
        if json.loads(line).get("id") == request_id:
            return json.loads(line)

# %% [markdown] lang="en"
# The conversation, as a client would hold it: wait for each response before going on.
# Between the `tools/list` and the rest, the client subscribes to `notes://4` and creates a
# note, to see a message the server sends on its own.

# %% [markdown] lang="es"
# La conversación, como la mantendría un cliente: esperar cada respuesta antes de seguir.
# Entre `tools/list` y lo demás, el cliente se suscribe a `notes://4` y crea una nota, para ver
# un mensaje que el servidor envía por iniciativa propia.

# %%
conversation = [
    INITIALIZE,
    jsonrpc.notification("notifications/initialized"),
    jsonrpc.request(2, "tools/list"),
    jsonrpc.request(3, "tools/call", {"name": "notes_search", "arguments": {"query": "mcp"}}),
    jsonrpc.request(4, "resources/subscribe", {"uri": "notes://4"}),
    jsonrpc.request(5, "tools/call", {"name": "notes_create",
                                      "arguments": {"title": "Tea", "body": "Green, no sugar."}}),
    jsonrpc.request(6, "resources/read", {"uri": "notes://2"}),
    jsonrpc.request(7, "prompts/get", {"name": "review_note", "arguments": {"id": "2"}}),
]
for message in conversation:
    send(message)
    if "id" in message:
        wait_for(message["id"])

process.stdin.close()
process.wait(timeout=30)
reader.join(timeout=30)
stderr = process.stderr.read()
process.stdout.close()
process.stderr.close()
process.returncode, reader.is_alive(), stderr

# %% [markdown] lang="en"
# Closing the server's standard input was the goodbye: the server saw the end of its input,
# closed the connection and exited with status 0; the reader thread saw the end of the
# server's output and finished; nothing was written to standard error. Here is every byte that
# crossed the two pipes, in order, exactly as sent (`C->S` from client to server, `S->C` back):

# %% [markdown] lang="es"
# Cerrar la entrada estándar del servidor fue la despedida: el servidor vio el fin de su
# entrada, cerró la conexión y salió con estado 0; el hilo lector vio el fin de la salida del
# servidor y terminó; no se escribió nada en el error estándar. Aquí está cada byte que cruzó
# las dos tuberías, en orden, tal como se envió (`C->S` del cliente al servidor, `S->C` de
# vuelta):

# %%
for direction, data in trace:
    print(direction, data)

# %% [markdown] lang="en"
# ```mermaid
# sequenceDiagram
#     participant C as Client (this notebook)
#     participant S as python -m mcpkit serve notes
#     C->>S: 1 initialize (protocolVersion 2025-11-25)
#     S-->>C: 1 result: protocolVersion, capabilities, serverInfo
#     C-)S: notifications/initialized
#     C->>S: 2 tools/list
#     S-->>C: 2 result: four tools
#     C->>S: 3 tools/call notes_search
#     S-->>C: 3 result: one text block
#     C->>S: 4 resources/subscribe notes://4
#     S-->>C: 4 result {}
#     C->>S: 5 tools/call notes_create
#     S--)C: notifications/resources/updated notes://4
#     S-->>C: 5 result: created note 4
#     C->>S: 6 resources/read notes://2
#     S-->>C: 6 result: contents
#     C->>S: 7 prompts/get review_note
#     S-->>C: 7 result: messages
#     Note over C,S: the client closes stdin, the server exits with status 0
# ```
#
# Nothing in the stream was ever anything but a line of UTF-8 JSON and a `\n`. The hex dump of
# the one message the server sent without being asked shows it, down to the final `0a`:

# %% [markdown] lang="es"
# ```mermaid
# sequenceDiagram
#     participant C as Cliente (este cuaderno)
#     participant S as python -m mcpkit serve notes
#     C->>S: 1 initialize (protocolVersion 2025-11-25)
#     S-->>C: 1 resultado: protocolVersion, capabilities, serverInfo
#     C-)S: notifications/initialized
#     C->>S: 2 tools/list
#     S-->>C: 2 resultado: cuatro herramientas
#     C->>S: 3 tools/call notes_search
#     S-->>C: 3 resultado: un bloque de texto
#     C->>S: 4 resources/subscribe notes://4
#     S-->>C: 4 resultado {}
#     C->>S: 5 tools/call notes_create
#     S--)C: notifications/resources/updated notes://4
#     S-->>C: 5 resultado: created note 4
#     C->>S: 6 resources/read notes://2
#     S-->>C: 6 resultado: contents
#     C->>S: 7 prompts/get review_note
#     S-->>C: 7 resultado: messages
#     Note over C,S: el cliente cierra stdin, el servidor sale con estado 0
# ```
#
# En el flujo nunca hubo otra cosa que una línea de JSON en UTF-8 y un `\n`. El volcado
# hexadecimal del único mensaje que el servidor envió sin que se lo pidieran lo muestra, hasta
# el `0a` final:

# %%
updated = next(data for direction, data in trace if b"resources/updated" in data)
hexdump(updated)

# %% [markdown] lang="en"
# ### The bytes as proof
#
# The trace is also evidence that the server kept the rules of the earlier lessons. Decode
# both directions with the decoder of lesson 01 and classify every message as in lesson 02:

# %% [markdown] lang="es"
# ### Los bytes como prueba
#
# La captura es además una prueba de que el servidor cumplió las reglas de las lecciones
# anteriores. Decodifica las dos direcciones con el decodificador de la lección 01 y clasifica
# cada mensaje como en la lección 02:

# %%
client_bytes = b"".join(data for direction, data in trace if direction == "C->S")
server_bytes = b"".join(data for direction, data in trace if direction == "S->C")
sent = framing.NdjsonDecoder().feed(client_bytes)
received = framing.NdjsonDecoder().feed(server_bytes)
request_ids = [m["id"] for m in sent if jsonrpc.classify(m) == "request"]
response_ids = [m["id"] for m in received if jsonrpc.classify(m) in ("result", "error")]
print(len(client_bytes), "bytes sent,", len(server_bytes), "bytes received")
print("requests: ", request_ids)
print("responses:", response_ids)
print("notifications sent:    ", [m["method"] for m in sent if "id" not in m])
print("notifications received:", [m["method"] for m in received if "id" not in m])

# %% [markdown] lang="en"
# Every request was answered exactly once, in order; the client's notification was not
# answered; every byte on standard output was protocol.
#
# ## 12. A glimpse of the modern era
#
# Everything above used the **legacy era** handshake: `initialize` fixes the revision and the
# capabilities for the whole connection. In the **modern era** (revision 2026-07-28, lesson 07)
# there is no handshake. Each request carries the revision and the client's capabilities in
# `params._meta`, and a client that wants to know what a server offers asks `server/discover`.
# The same server answers both eras; here is a fresh process, with no `initialize` at all:

# %% [markdown] lang="es"
# Cada solicitud se respondió exactamente una vez, en orden; la notificación del cliente no se
# respondió; cada byte de la salida estándar fue protocolo.
#
# ## 12. Un vistazo a la era moderna
#
# Todo lo anterior usó el handshake de la **era heredada**: `initialize` fija la revisión y las
# capacidades para toda la conexión. En la **era moderna** (revisión 2026-07-28, lección 07) no
# hay handshake. Cada solicitud lleva la revisión y las capacidades del cliente en
# `params._meta`, y un cliente que quiere saber qué ofrece un servidor pregunta
# `server/discover`. El mismo servidor responde en las dos eras; aquí tienes un proceso nuevo,
# sin ningún `initialize`:

# %%
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}
incoming = b"".join(framing.encode_ndjson(message) for message in [
    jsonrpc.request(1, "server/discover", {"_meta": META}),
    jsonrpc.request(2, "tools/call", {"name": "notes_search",
                                      "arguments": {"query": "mcp"}, "_meta": META}),
    jsonrpc.request(3, "tools/list"),
])
done = subprocess.run([sys.executable, "-m", "mcpkit", "serve", "mcpkit.examples.notes:server"],
                      input=incoming, capture_output=True, timeout=60)
for line in done.stdout.splitlines(keepends=True):
    print("S->C", line)

# %% [markdown] lang="en"
# The discovery result lists every revision the server speaks and the same capabilities as
# before; modern results say `resultType` and carry `serverInfo` in `_meta`, since there was no
# handshake to send it in. The last request had neither a handshake nor `_meta`, so the server
# cannot tell which revision it speaks: -32602. Lesson 07 takes it from here.
#
# **Try it.** Add a `resources/read` of `notes://99` to `conversation` in section 11 and run
# the cells again: which kind of error comes back, and with which code? Then change
# `"protocolVersion"` in `INITIALIZE` to `"2024-11-05"`: what disappears from `tools/list`?

# %% [markdown] lang="es"
# El resultado del descubrimiento enumera todas las revisiones que habla el servidor y las
# mismas capacidades que antes; los resultados modernos dicen `resultType` y llevan
# `serverInfo` en `_meta`, ya que no hubo handshake en el que enviarlo. La última solicitud no
# tenía ni handshake ni `_meta`, así que el servidor no puede saber qué revisión habla: -32602.
# La lección 07 sigue desde aquí.
#
# **Pruébalo.** Añade un `resources/read` de `notes://99` a `conversation` en la sección 11 y
# vuelve a ejecutar las celdas: ¿qué tipo de error vuelve, y con qué código? Después cambia
# `"protocolVersion"` en `INITIALIZE` a `"2024-11-05"`: ¿qué desaparece de `tools/list`?

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
#   `notifications/resources/updated` tell a client when a resource changes.
# - On stdio, standard output carries protocol only: `mcpkit` moves `print()` to standard
#   error once serving starts. End of input ends the session.
# - A real session is lines of JSON on two pipes, and the bytes prove it.
#
# **Lab 04** (`labs/en/lab04_server.ipynb`): build the notes server yourself. Next,
# **lesson 05** (`notebooks/en/05_client.ipynb`): the client side of the pipe, with a reader
# thread, a future per request, and servers that misbehave.

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
#   `notifications/resources/updated` le avisan a un cliente cuando cambia un recurso.
# - En stdio, la salida estándar solo lleva protocolo: `mcpkit` desvía `print()` al error
#   estándar en cuanto empieza a servir. El fin de la entrada termina la sesión.
# - Una sesión real son líneas de JSON en dos tuberías, y los bytes lo demuestran.
#
# **Laboratorio 04** (`labs/es/lab04_server.ipynb`): construye tú el servidor de notas. Después,
# la **lección 05** (`notebooks/es/05_client.ipynb`): el lado del cliente de la tubería, con un
# hilo lector, un future por solicitud y servidores que se portan mal.
