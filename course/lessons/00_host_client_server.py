# %% [markdown] lang="en"
# # Lesson 00 · Host, client, server
#
# *MCP from the bytes up*: a hands-on course on the Model Context Protocol, built over
# `mcpkit`, a small but real implementation you can read in an afternoon.
#
# > **Español:** [`notebooks/es/00_host_client_server.ipynb`](../es/00_host_client_server.ipynb)
#
# In this lesson you will:
#
# 1. meet the three roles of MCP, **host**, **client** and **server**, and see where each lives;
# 2. find out why **the model never speaks MCP**, the most common misconception about it;
# 3. follow one tool call from the model's reply to the exact bytes on the wire, and back;
# 4. check that your setup is ready for the labs.
#
# **How to use these notebooks.** Run the cells in order with **Shift+Enter**. They are small
# on purpose: read, run, look at the output, change something, run again. Nothing in the
# course needs a network connection or an API key.

# %% [markdown] lang="es"
# # Lección 00 · Host, cliente, servidor
#
# *MCP desde los bytes*: un curso práctico sobre el Model Context Protocol, construido sobre
# `mcpkit`, una implementación pequeña pero real que puedes leer en una tarde.
#
# > **English:** [`notebooks/en/00_host_client_server.ipynb`](../en/00_host_client_server.ipynb)
#
# En esta lección vas a:
#
# 1. conocer los tres papeles de MCP, **host (anfitrión)**, **cliente** y **servidor**, y ver
#    dónde vive cada uno;
# 2. descubrir por qué **el modelo nunca habla MCP**, el malentendido más común sobre el
#    protocolo;
# 3. seguir una llamada a una herramienta desde la respuesta del modelo hasta los bytes exactos
#    que viajan por la conexión, y de vuelta;
# 4. comprobar que tu entorno está listo para los laboratorios (labs).
#
# **Cómo usar estos cuadernos.** Ejecuta las celdas en orden con **Shift+Enter**
# (Mayús+Intro). Son pequeñas a propósito: lee, ejecuta, mira la salida, cambia algo y vuelve
# a ejecutar. Nada en el curso necesita conexión a la red ni una clave de API.

# %% tags=["setup"]
# [en] Setup: run this cell first. It imports the parts of mcpkit this lesson uses
# [en] and sets the language of the checks.
# [es] Preparación: ejecuta esta celda primero. Importa las partes de mcpkit que usa
# [es] esta lección y fija el idioma de las comprobaciones.
from mcpkit import framing, grading, jsonrpc
from mcpkit.display import hexdump

grading.set_language("en")

# %% [markdown] lang="en"
# ## 1. Three roles
#
# The **host** is the application the user talks to: a chat app, an IDE, a command-line
# agent. It owns the conversation with the language model, the user interface, and every
# decision about what the model is allowed to do.
#
# A **server** is a program that offers capabilities: **tools** (functions the model may ask
# to call, such as `notes_search`), **resources** (data the host can read, such as
# `notes://42`) and **prompts** (templates the user can pick). A server knows nothing about
# models or users. It answers requests.
#
# A **client** is the host's connection to *one* server. A host that uses three servers holds
# three clients. Each client speaks MCP with its server over a **transport**: the server's
# standard input and output when the host starts it as a subprocess (*stdio*), or HTTP.

# %% [markdown] lang="es"
# ## 1. Tres papeles
#
# El **host** es la aplicación con la que habla el usuario: una app de chat, un IDE, un agente
# de línea de comandos. Es dueño de la conversación con el modelo de lenguaje, de la interfaz y
# de cada decisión sobre lo que el modelo puede hacer.
#
# Un **servidor** es un programa que ofrece capacidades: **herramientas** (funciones que el
# modelo puede pedir que se llamen, como `notes_search`), **recursos** (datos que el host puede
# leer, como `notes://42`) y **prompts (plantillas de prompt)** que el usuario puede elegir. Un
# servidor no sabe nada de modelos ni de usuarios: responde solicitudes.
#
# Un **cliente** es la conexión del host con *un* servidor. Un host que usa tres servidores
# tiene tres clientes. Cada cliente habla MCP con su servidor a través de un **transporte**: la
# entrada y la salida estándar del servidor cuando el host lo lanza como subproceso (*stdio*),
# o HTTP.

# %% [markdown] lang="en"
# ```mermaid
# flowchart LR
#     user([User]) <--> host
#     model[(Language model)] <-- "provider API: text, tool-use blocks" --> host
#     subgraph host [Host: chat app, IDE, agent]
#         c1[Client 1]
#         c2[Client 2]
#     end
#     c1 <-- "MCP over stdio" --> s1[Server: notes]
#     c2 <-- "MCP over HTTP" --> s2[Server: calendar]
# ```
#
# Notice where the arrows labelled *MCP* are: between clients and servers, and nowhere else.

# %% [markdown] lang="es"
# ```mermaid
# flowchart LR
#     user([Usuario]) <--> host
#     model[(Modelo de lenguaje)] <-- "API del proveedor: texto, uso de herramientas" --> host
#     subgraph host [Host: app de chat, IDE, agente]
#         c1[Cliente 1]
#         c2[Cliente 2]
#     end
#     c1 <-- "MCP por stdio" --> s1[Servidor: notas]
#     c2 <-- "MCP por HTTP" --> s2[Servidor: calendario]
# ```
#
# Fíjate en dónde están las flechas marcadas *MCP*: entre clientes y servidores, y en ningún
# otro sitio.

# %% [markdown] lang="en"
# ## 2. The model never speaks MCP
#
# A language model reads and writes tokens. When it "uses a tool", its reply contains a
# structured block that says, in its provider's API format: *I would like `notes_search` to be
# called with `{"query": "groceries"}`*. Then the host takes over. It reads the block, decides
# whether the call is allowed (perhaps by asking the user), finds the client whose server
# offers `notes_search`, and sends that server an MCP request. When the answer arrives, the
# host turns it back into the model's format and the conversation goes on.
#
# ```mermaid
# sequenceDiagram
#     actor U as User
#     participant H as Host
#     participant M as Model
#     participant C as Client
#     participant S as Server
#     U->>H: What is on my grocery list?
#     H->>M: conversation + tool descriptions (provider format)
#     M-->>H: tool-use block: notes_search {"query": "groceries"}
#     Note over H: policy: is this call allowed?
#     H->>C: call notes_search
#     C->>S: tools/call (a JSON-RPC request: this is MCP)
#     S-->>C: result with content blocks
#     C-->>H: result
#     H->>M: tool result (provider format)
#     M-->>H: You need eggs, milk and coffee.
#     H-->>U: answer
# ```
#
# MCP is the protocol between the host's clients and the servers. The model sees tool
# *descriptions* and tool *results*, translated by the host. It never sees a JSON-RPC id, never
# opens a pipe, and does not know MCP exists. That has practical consequences:
#
# - **policy lives in the host**: it can ask the user before a destructive tool runs;
# - **any model works with any server**: the server's side never changes with the model;
# - **names, descriptions and results are the model's whole interface**, so writing them well
#   matters more than anything on the wire.
#
# Let's play the host. Here is the block a model might produce (the shape is simplified; every
# provider has its own):

# %% [markdown] lang="es"
# ## 2. El modelo nunca habla MCP
#
# Un modelo de lenguaje lee y escribe tokens. Cuando "usa una herramienta", su respuesta
# contiene un bloque estructurado que dice, en el formato de la API de su proveedor: *me
# gustaría que se llamara a `notes_search` con `{"query": "groceries"}`*. Entonces toma el
# control el host. Lee el bloque, decide si la llamada está permitida (quizá preguntando al
# usuario), busca el cliente cuyo servidor ofrece `notes_search` y le envía a ese servidor una
# solicitud MCP. Cuando llega la respuesta, el host la traduce de nuevo al formato del modelo y
# la conversación continúa.
#
# ```mermaid
# sequenceDiagram
#     actor U as Usuario
#     participant H as Host
#     participant M as Modelo
#     participant C as Cliente
#     participant S as Servidor
#     U->>H: ¿Qué tengo que comprar en el supermercado?
#     H->>M: conversación + descripciones de herramientas (formato del proveedor)
#     M-->>H: bloque de uso de herramienta: notes_search {"query": "groceries"}
#     Note over H: política: ¿se permite esta llamada?
#     H->>C: llamar a notes_search
#     C->>S: tools/call (una solicitud JSON-RPC: esto es MCP)
#     S-->>C: resultado con bloques de contenido
#     C-->>H: resultado
#     H->>M: resultado de la herramienta (formato del proveedor)
#     M-->>H: Necesitas huevos, leche y café.
#     H-->>U: respuesta
# ```
#
# MCP es el protocolo entre los clientes del host y los servidores. El modelo ve *descripciones*
# de herramientas y *resultados* de herramientas, traducidos por el host. Nunca ve un id de
# JSON-RPC, nunca abre una tubería y no sabe que MCP existe. Eso tiene consecuencias prácticas:
#
# - **la política vive en el host**: puede preguntar al usuario antes de que se ejecute una
#   herramienta destructiva;
# - **cualquier modelo funciona con cualquier servidor**: el lado del servidor no cambia con el
#   modelo;
# - **los nombres, las descripciones y los resultados son toda la interfaz del modelo**, así que
#   escribirlos bien importa más que cualquier cosa que viaje por la conexión.
#
# Actuemos como host. Este es el bloque que podría producir un modelo (la forma está simplificada;
# cada proveedor tiene la suya):

# %%
tool_use = {
    "type": "tool_use",
    "id": "call_01",
    "name": "notes_search",
    "input": {"query": "groceries"},
}

# %% [markdown] lang="en"
# The host's client turns it into an MCP request: the JSON-RPC method `tools/call`, with the
# tool's `name` and its `arguments`. The client picks the request id; it has nothing to do with
# the model's `call_01`, so the host must remember which is which.

# %% [markdown] lang="es"
# El cliente del host lo convierte en una solicitud MCP: el método JSON-RPC `tools/call`, con el
# `name` de la herramienta y sus `arguments`. El id de la solicitud lo elige el cliente; no
# tiene nada que ver con el `call_01` del modelo, así que el host debe recordar cuál es cuál.

# %%
request = jsonrpc.request(1, "tools/call", {
    "name": tool_use["name"],
    "arguments": tool_use["input"],
})
model_call_for_request = {1: tool_use["id"]}
request

# %% [markdown] lang="en"
# ## 3. One message, as bytes
#
# On a stdio transport, that request travels as one line of UTF-8 JSON ended by a newline.
# `framing.encode_ndjson` produces exactly those bytes:

# %% [markdown] lang="es"
# ## 3. Un mensaje, en bytes
#
# En un transporte stdio, esa solicitud viaja como una línea de JSON en UTF-8 terminada en un
# salto de línea. `framing.encode_ndjson` produce exactamente esos bytes:

# %%
wire = framing.encode_ndjson(request)
wire

# %%
len(wire), wire.count(b"\n"), wire.endswith(b"\n")

# %% [markdown] lang="en"
# A hex dump shows every byte: the offset on the left, each byte in hexadecimal, and the same
# bytes as text on the right (a dot stands for a byte that is not printable ASCII). The last
# byte, `0a`, is the newline that ends the message.

# %% [markdown] lang="es"
# Un volcado hexadecimal muestra cada byte: el desplazamiento a la izquierda, cada byte en
# hexadecimal y los mismos bytes como texto a la derecha (un punto representa un byte que no es
# ASCII imprimible). El último byte, `0a`, es el salto de línea que termina el mensaje.

# %%
hexdump(wire)

# %% [markdown] lang="en"
# The server answers with a line of its own. Lesson 04 builds a real server; for now, here are
# the bytes it would send. The client decodes them and finds its request id, `1`, in them:

# %% [markdown] lang="es"
# El servidor contesta con una línea propia. La lección 04 construye un servidor real; por
# ahora, estos son los bytes que enviaría. El cliente los decodifica y encuentra en ellos el id
# de su solicitud, `1`:

# %%
reply_bytes = (
    b'{"jsonrpc":"2.0","id":1,"result":{"content":'
    b'[{"type":"text","text":"eggs, milk, coffee"}],"isError":false}}\n'
)
[reply] = framing.NdjsonDecoder().feed(reply_bytes)
reply

# %% [markdown] lang="en"
# The host translates the result back into the model's format, pairing it with the model's
# own call id. This is all the model ever sees of MCP:

# %% [markdown] lang="es"
# El host traduce el resultado de vuelta al formato del modelo, emparejándolo con el id de
# llamada del propio modelo. Esto es todo lo que el modelo llega a ver de MCP:

# %%
tool_result = {
    "type": "tool_result",
    "tool_use_id": model_call_for_request[reply["id"]],
    "content": [block["text"] for block in reply["result"]["content"]],
    "is_error": reply["result"]["isError"],
}
tool_result

# %% [markdown] lang="en"
# **Try it.** Change the query in `tool_use` (to `"todo"`, say) and run the cells again from
# there. Which bytes change? Does the request id change? Why not?

# %% [markdown] lang="es"
# **Pruébalo.** Cambia la consulta en `tool_use` (por ejemplo, a `"todo"`) y vuelve a ejecutar
# las celdas desde ahí. ¿Qué bytes cambian? ¿Cambia el id de la solicitud? ¿Por qué no?

# %% [markdown] lang="en"
# ## 4. The road ahead
#
# Each lesson builds one layer of `mcpkit`, from the bytes up, and each lab has you write the
# heart of that layer yourself.
#
# | lesson | layer | in `mcpkit` |
# | --- | --- | --- |
# | 01 | framing: bytes on a pipe become messages | `framing.py` |
# | 02 | JSON-RPC 2.0: requests, notifications, responses, errors | `jsonrpc.py` |
# | 03 | dispatch: from a method name to the code that handles it | `dispatch.py` |
# | 04 | a server: tools, resources, prompts, the stdio loop | `server.py` |
# | 05 | a client: a session with one server | `session.py`, `client.py` |
# | 06 | a host: many servers, one tool namespace, restarts | `host.py` |
# | 07 | modern MCP: stateless requests and discovery | `versions.py` |
# | 08 | streamable HTTP | `transports/http.py` |
# | 09 | the real world: reference servers and official SDKs | `interop/`, `grading/lab09.py` (a harness) |
# | 10 | host and model: the agent loop | `toolformats.py`, `agent.py` |
#
# Every module is short enough to read in one sitting. When a lesson says "`mcpkit` does
# this", open the file and check.

# %% [markdown] lang="es"
# ## 4. El camino por delante
#
# Cada lección construye una capa de `mcpkit`, desde los bytes, y cada laboratorio (lab) te
# pide escribir tú mismo el corazón de esa capa.
#
# | lección | capa | en `mcpkit` |
# | --- | --- | --- |
# | 01 | enmarcado (framing): los bytes de una tubería se vuelven mensajes | `framing.py` |
# | 02 | JSON-RPC 2.0: solicitudes, notificaciones, respuestas, errores | `jsonrpc.py` |
# | 03 | despacho: del nombre de un método al código que lo maneja | `dispatch.py` |
# | 04 | un servidor: herramientas, recursos, prompts, el bucle stdio | `server.py` |
# | 05 | un cliente: una sesión con un servidor | `session.py`, `client.py` |
# | 06 | un host: muchos servidores, un espacio de nombres de herramientas, reinicios | `host.py` |
# | 07 | MCP moderno: solicitudes sin estado y descubrimiento | `versions.py` |
# | 08 | HTTP con streaming (streamable HTTP) | `transports/http.py` |
# | 09 | el mundo real: servidores de referencia y SDK oficiales | `interop/`, `grading/lab09.py` (un harness) |
# | 10 | host y modelo: el bucle del agente | `toolformats.py`, `agent.py` |
#
# Cada módulo es lo bastante corto para leerlo de una sentada. Cuando una lección diga
# "`mcpkit` hace esto", abre el archivo y compruébalo.

# %% [markdown] lang="en"
# ## 5. Check your setup
#
# The cell below checks that this kernel runs a recent Python, that it imports `mcpkit`, that
# text with accents and emoji survives a round trip, and that `nbval` is installed so you can
# grade your labs. It prints one line when everything is in place, and tells you what to fix
# when something is not.

# %% [markdown] lang="es"
# ## 5. Comprueba tu entorno
#
# La celda de abajo comprueba que este kernel ejecuta un Python reciente, que importa `mcpkit`,
# que el texto con tildes y emojis sobrevive a un viaje de ida y vuelta, y que `nbval` está
# instalado para que puedas calificar tus laboratorios. Imprime una línea cuando todo está en
# su sitio, y te dice qué arreglar cuando algo falla.

# %% tags=["nbval-check-output"]
grading.check_setup()

# %% [markdown] lang="en"
# ## How the labs work
#
# Each lab is a notebook in `labs/en/`. It explains a task, gives you cells to complete (look
# for `# YOUR CODE HERE` and replace the `raise NotImplementedError()` under it), and ends
# each part with a **graded cell**, which is read-only. Run a graded cell to check your work: it
# prints one line such as `✓ 15/15 checks passed` when you are done, or lists every case it
# tried, what it expected and what your code returned.
#
# To grade a whole lab the way your instructor will, save it and run, in a terminal at the
# repository's root (in JupyterLab: File → New → Terminal):
#
# ```
# ./course.sh grade lab01
# ```
#
# It prints one line per part, with its points and its checks, and your total. The notebooks
# you open from `work/` are your own copies (`./course.sh lab` made them); the originals stay
# untouched.
#
# Next: **lesson 01, framing**, where a stream of bytes becomes a sequence of messages.

# %% [markdown] lang="es"
# ## Cómo funcionan los laboratorios
#
# Cada laboratorio es un cuaderno de `labs/es/`. Explica una tarea, te da celdas que completar
# (busca `# YOUR CODE HERE` y sustituye el `raise NotImplementedError()` que hay debajo) y
# termina cada parte con una **celda calificada**, que es de solo lectura. Ejecuta una celda
# calificada para comprobar tu trabajo: imprime una línea como
# `✓ 15/15 comprobaciones superadas` cuando has terminado, o enumera cada caso que probó, qué
# esperaba y qué devolvió tu código.
#
# Para calificar un laboratorio completo como lo hará tu instructor/a, guárdalo y ejecuta, en
# una terminal en la raíz del repositorio (en JupyterLab: File → New → Terminal):
#
# ```
# ./course.sh grade lab01
# ```
#
# Imprime una línea por parte, con sus puntos y sus comprobaciones, y tu total. Los cuadernos
# que abres desde `work/` son tus propias copias (las creó `./course.sh lab`); los originales
# no se tocan.
#
# Siguiente: **lección 01, enmarcado**, donde un flujo de bytes se convierte en una secuencia
# de mensajes.
