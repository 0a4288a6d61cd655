# %% [markdown] lang="en"
# # Lesson 02 · JSON-RPC 2.0: requests, notifications and the two kinds of error
#
# > **Español:** [`notebooks/es/02_jsonrpc.ipynb`](../es/02_jsonrpc.ipynb)
#
# Lesson 01 got whole JSON values out of a byte stream. MCP gives them meaning with
# **JSON-RPC 2.0**, a small remote-procedure-call format. In this lesson you will:
#
# 1. meet its four kinds of message and build each with `mcpkit.jsonrpc`;
# 2. see how ids pair each response with its request, even out of order;
# 3. learn which messages are never answered;
# 4. answer broken messages with the standard error codes;
# 5. tell apart the **two kinds of error** of a tool call: a protocol error, which the host
#    handles, and a tool result with `isError`, which the model reads.

# %% [markdown] lang="es"
# # Lección 02 · JSON-RPC 2.0: solicitudes, notificaciones y los dos tipos de error
#
# > **English:** [`notebooks/en/02_jsonrpc.ipynb`](../en/02_jsonrpc.ipynb)
#
# La lección 01 sacó valores JSON completos de un flujo de bytes. MCP les da significado con
# **JSON-RPC 2.0**, un formato pequeño de llamadas a procedimientos remotos. En esta lección
# vas a:
#
# 1. conocer sus cuatro tipos de mensaje y construir cada uno con `mcpkit.jsonrpc`;
# 2. ver cómo los ids emparejan cada respuesta con su solicitud, incluso en desorden;
# 3. aprender qué mensajes nunca se responden;
# 4. responder a los mensajes rotos con los códigos de error estándar;
# 5. distinguir los **dos tipos de error** de una llamada a una herramienta: un error de
#    protocolo, que maneja el host, y un resultado de herramienta con `isError`, que lee el
#    modelo.

# %% tags=["setup"]
# [en] Setup: run this cell first.
# [es] Preparación: ejecuta esta celda primero.
from mcpkit import framing, jsonrpc

# %% [markdown] lang="en"
# ## 1. Four kinds of message
#
# Every message is a JSON object with `"jsonrpc": "2.0"`. What else it carries says what it is:
#
# | kind | carries | answered? |
# | --- | --- | --- |
# | request | `id`, `method`, optional `params` | exactly once, by a response with its `id` |
# | notification | `method`, optional `params`, **no** `id` | never |
# | result response | `id`, `result` | it *is* the answer |
# | error response | `id` (or `null`), `error` with `code` and `message` | it *is* the answer |
#
# MCP always passes `params` as an object (named parameters), and a `result` is always an
# object too, even when it is empty: `{}`.

# %% [markdown] lang="es"
# ## 1. Cuatro tipos de mensaje
#
# Cada mensaje es un objeto JSON con `"jsonrpc": "2.0"`. Lo que lleva además dice qué es:
#
# | tipo | lleva | ¿se responde? |
# | --- | --- | --- |
# | solicitud | `id`, `method`, `params` opcional | una sola vez, con una respuesta con su `id` |
# | notificación | `method`, `params` opcional, **sin** `id` | nunca |
# | respuesta con resultado | `id`, `result` | *es* la respuesta |
# | respuesta de error | `id` (o `null`), `error` con `code` y `message` | *es* la respuesta |
#
# MCP siempre pasa `params` como un objeto (parámetros con nombre), y un `result` también es
# siempre un objeto, aunque esté vacío: `{}`.

# %%
messages = [
    jsonrpc.request(1, "tools/list"),
    jsonrpc.notification("notifications/initialized"),
    jsonrpc.result_response(1, {"tools": []}),
    jsonrpc.error_response(2, jsonrpc.METHOD_NOT_FOUND, "Method not found: tools/destroy"),
]
for message in messages:
    print(f"{jsonrpc.classify(message):<13}", framing.encode_ndjson(message))

# %% [markdown] lang="en"
# `jsonrpc.classify` reads the envelope and names the kind. It is the first thing a peer does
# with every message that comes out of the decoder.
#
# ## 2. Ids pair answers with questions
#
# A client may send several requests before any answer comes back, and a server may answer
# them in any order: a slow tool call must not hold up a quick `ping`. The id is the only thing
# that says which answer belongs to which question.
#
# ```mermaid
# sequenceDiagram
#     participant C as Client
#     participant S as Server
#     C->>S: request id=1 tools/call (slow)
#     C->>S: request id=2 ping
#     C-)S: notification notifications/initialized
#     S-->>C: response id=2 (ping is fast)
#     S-->>C: response id=1
#     Note over C,S: no response to the notification, ever
# ```
#
# The client keeps a table of **pending requests**, keyed by id, and takes each entry out when
# its response arrives:

# %% [markdown] lang="es"
# `jsonrpc.classify` lee el sobre y nombra el tipo. Es lo primero que hace un interlocutor con
# cada mensaje que sale del decodificador.
#
# ## 2. Los ids emparejan respuestas con preguntas
#
# Un cliente puede enviar varias solicitudes antes de que vuelva ninguna respuesta, y un
# servidor puede responderlas en cualquier orden: una llamada lenta a una herramienta no debe
# retrasar un `ping` rápido. El id es lo único que dice qué respuesta corresponde a qué
# pregunta.
#
# ```mermaid
# sequenceDiagram
#     participant C as Cliente
#     participant S as Servidor
#     C->>S: solicitud id=1 tools/call (lenta)
#     C->>S: solicitud id=2 ping
#     C-)S: notificación notifications/initialized
#     S-->>C: respuesta id=2 (ping es rápido)
#     S-->>C: respuesta id=1
#     Note over C,S: ninguna respuesta a la notificación, nunca
# ```
#
# El cliente mantiene una tabla de **solicitudes pendientes**, indexada por id, y saca cada
# entrada cuando llega su respuesta:

# %%
pending = {1: "tools/call", 2: "ping"}
arrivals = [
    jsonrpc.result_response(2, {}),
    jsonrpc.result_response(1, {"content": [{"type": "text", "text": "done"}]}),
]
for response in arrivals:
    method = pending.pop(response["id"])
    print(response["id"], method, response["result"])
pending

# %% [markdown] lang="en"
# An id is a string or an integer, chosen by the sender and unique among its pending
# requests. A request id is never `null`, and `true` is not an id. And `0` is a perfectly good
# id, which trips up code that tests `if message.get("id"):`:

# %% [markdown] lang="es"
# Un id es una cadena o un entero, lo elige quien envía y es único entre sus solicitudes
# pendientes. El id de una solicitud nunca es `null`, y `true` no es un id. Y `0` es un id
# perfectamente válido, algo que hace tropezar al código que comprueba
# `if message.get("id"):`:

# %%
zero = {"jsonrpc": "2.0", "id": 0, "method": "ping"}
bool(zero.get("id")), "id" in zero, jsonrpc.classify(zero)

# %% [markdown] lang="en"
# ## 3. Notifications are never answered
#
# A notification says something happened and expects nothing back: `notifications/initialized`
# (the client is ready), `notifications/progress`, `notifications/cancelled`,
# `notifications/tools/list_changed`. The receiver must not answer it, **not even with an
# error** when it is unknown or broken: the sender has no id to match the answer with and is
# not waiting for one. If a sender needs to know that something arrived, it sends a request.
#
# ## 4. When a message is wrong: protocol errors
#
# JSON-RPC reserves a few error codes for problems with the exchange itself:
#
# | code | name | when |
# | --- | --- | --- |
# | -32700 | Parse error | not JSON (the framing's `InvalidJson` or `InvalidUtf8`) |
# | -32600 | Invalid Request | JSON, but not a valid message: no `"jsonrpc": "2.0"`, bad `id`... |
# | -32601 | Method not found | nobody handles this `method` |
# | -32602 | Invalid params | the method exists but its `params` are wrong |
# | -32603 | Internal error | the receiver failed while handling it |
#
# MCP adds a few of its own, such as -32002 (resource not found, in the older revisions). Each
# error response carries the id of the message it answers, or `null` when that id could not be
# read: after a parse error nobody knows what the id was.

# %% [markdown] lang="es"
# ## 3. Las notificaciones nunca se responden
#
# Una notificación avisa de que algo pasó y no espera nada a cambio:
# `notifications/initialized` (el cliente está listo), `notifications/progress`,
# `notifications/cancelled`, `notifications/tools/list_changed`. Quien la recibe no debe
# responderla, **ni siquiera con un error** cuando es desconocida o está rota: quien la envió no
# tiene ningún id con el que emparejar la respuesta y no la está esperando. Si quien envía
# necesita saber que algo llegó, envía una solicitud.
#
# ## 4. Cuando un mensaje está mal: errores de protocolo
#
# JSON-RPC reserva unos pocos códigos de error para los problemas del propio intercambio:
#
# | código | nombre | cuándo |
# | --- | --- | --- |
# | -32700 | Parse error | no es JSON (el `InvalidJson` o `InvalidUtf8` del enmarcado) |
# | -32600 | Invalid Request | JSON, pero no un mensaje válido: sin `"jsonrpc": "2.0"`, id malo... |
# | -32601 | Method not found | nadie maneja este `method` |
# | -32602 | Invalid params | el método existe pero sus `params` están mal |
# | -32603 | Internal error | quien recibe falló al manejarlo |
#
# MCP añade algunos propios, como -32002 (recurso no encontrado, en las revisiones antiguas).
# Cada respuesta de error lleva el id del mensaje al que responde, o `null` cuando ese id no se
# pudo leer: tras un error de análisis nadie sabe cuál era el id.

# %% [markdown] lang="en"
# `classify` raises `jsonrpc.InvalidRequest` for a message that is JSON but not valid
# JSON-RPC, and `request_id_of` recovers the id to answer with, when there is a usable one.
# Here is a gallery of broken messages and the error response each one gets:

# %% [markdown] lang="es"
# `classify` lanza `jsonrpc.InvalidRequest` con un mensaje que es JSON pero no JSON-RPC
# válido, y `request_id_of` recupera el id con el que responder, cuando hay uno utilizable.
# Aquí tienes una galería de mensajes rotos y la respuesta de error que recibe cada uno:

# %%
def answer(message):
    try:
        jsonrpc.classify(message)
    except jsonrpc.InvalidRequest as exc:
        return jsonrpc.error_response_from(jsonrpc.request_id_of(message), exc)
    return None


broken = [
    {"id": 1, "method": "ping"},
    {"jsonrpc": "2.0", "id": 2, "method": 42},
    {"jsonrpc": "2.0", "id": True, "method": "ping"},
    {"jsonrpc": "2.0", "id": 3, "method": "ping", "params": ["a", "b"]},
    {"jsonrpc": "2.0", "id": 4, "result": {}, "error": {"code": 1, "message": "?"}},
    [{"jsonrpc": "2.0", "id": 5, "method": "ping"}],
]
for message in broken:
    response = answer(message)
    print(f"{response['error']['code']}  id={response['id']!r:<5}", message)

# %% [markdown] lang="en"
# Four of them keep their id; the other two are answered with `null`. The last one is a JSON
# array: JSON-RPC calls that a *batch*, and MCP does not use batches (revision 2025-03-26
# allowed them, 2025-06-18 removed them again).
#
# The error's `message` is for people reading logs; programs act on the `code`:

# %% [markdown] lang="es"
# Cuatro de ellos conservan su id; los otros dos se responden con `null`. El último es un array
# JSON: JSON-RPC lo llama *lote* (batch), y MCP no usa lotes (la revisión 2025-03-26 los
# permitía, la 2025-06-18 los quitó de nuevo).
#
# El `message` del error es para las personas que leen los registros; los programas actúan
# según el `code`:

# %%
answer({"jsonrpc": "1.0", "id": 6, "method": "ping"})

# %% [markdown] lang="en"
# A parse error comes one step earlier, from the framing layer: the decoder hands out an
# `InvalidJson` item instead of a value, and the receiver answers it with -32700 and id `null`:

# %% [markdown] lang="es"
# Un error de análisis llega un paso antes, desde la capa de enmarcado: el decodificador
# entrega un elemento `InvalidJson` en lugar de un valor, y quien recibe lo responde con -32700
# e id `null`:

# %%
[item] = framing.NdjsonDecoder().feed(b'{"jsonrpc":"2.0","id":7,"method":"ping"\n')
type(item).__name__, jsonrpc.error_response(None, jsonrpc.PARSE_ERROR, "Parse error")

# %% [markdown] lang="en"
# ## 5. The two kinds of error
#
# A tool call can go wrong in two very different ways, and MCP sends them differently.
#
# A **protocol error** means the request could not be carried out *as a request*: the method
# does not exist, the tool name is unknown, the `params` are malformed. Nothing ran. It travels
# as a JSON-RPC `error` object. The client's code handles it; at most the host tells the model
# that the call failed.
#
# A **tool execution error** means the tool ran, or tried to, and failed: the note does not
# exist, the API said no, the date is in the past. It travels as a perfectly normal `result`,
# with `"isError": true` and content that explains what happened, because that text is meant
# for **the model**, which can read it and do better: retry, pick other arguments, or tell the
# user. Since revision 2025-11-25, arguments that do not match the tool's input schema are
# reported this way too, for the same reason: the model is the one who can fix them.
#
# ```mermaid
# flowchart TD
#     call[tools/call arrives] --> known{known tool, well-formed params?}
#     known -- no --> perr["protocol error: JSON-RPC error object (-32602)"]
#     perr --> host[the client and host handle it]
#     known -- yes --> run[run the tool]
#     run --> ok{did it succeed?}
#     ok -- yes --> res["result: content"]
#     ok -- no --> terr["result: content + isError: true"]
#     res --> model[the host passes it to the model]
#     terr --> model
# ```

# %% [markdown] lang="es"
# ## 5. Los dos tipos de error
#
# Una llamada a una herramienta puede salir mal de dos formas muy distintas, y MCP las envía de
# forma distinta.
#
# Un **error de protocolo** significa que la solicitud no se pudo llevar a cabo *como
# solicitud*: el método no existe, el nombre de la herramienta es desconocido, los `params`
# están mal formados. No se ejecutó nada. Viaja como un objeto `error` de JSON-RPC. Lo maneja el
# código del cliente; como mucho, el host le dice al modelo que la llamada falló.
#
# Un **error de ejecución de la herramienta** significa que la herramienta se ejecutó, o lo
# intentó, y falló: la nota no existe, la API dijo que no, la fecha ya pasó. Viaja como un
# `result` perfectamente normal, con `"isError": true` y un contenido que explica qué pasó,
# porque ese texto va dirigido **al modelo**, que puede leerlo y hacerlo mejor: reintentar,
# elegir otros argumentos o avisar al usuario. Desde la revisión 2025-11-25, los argumentos que
# no cumplen el esquema de entrada de la herramienta también se comunican así, por el mismo
# motivo: quien puede corregirlos es el modelo.
#
# ```mermaid
# flowchart TD
#     call[llega tools/call] --> known{¿herramienta conocida, params bien formados?}
#     known -- no --> perr["error de protocolo: objeto de error JSON-RPC (-32602)"]
#     perr --> host[lo manejan el cliente y el host]
#     known -- sí --> run[ejecutar la herramienta]
#     run --> ok{¿funcionó?}
#     ok -- sí --> res["resultado: content"]
#     ok -- no --> terr["resultado: content + isError: true"]
#     res --> model[el host se lo pasa al modelo]
#     terr --> model
# ```

# %% [markdown] lang="en"
# Here are the three possible answers to the same call, as the bytes the client receives:

# %% [markdown] lang="es"
# Estas son las tres respuestas posibles a la misma llamada, como los bytes que recibe el
# cliente:

# %%
call = jsonrpc.request(7, "tools/call", {"name": "notes_read", "arguments": {"id": 42}})

worked = jsonrpc.result_response(7, {
    "content": [{"type": "text", "text": "Groceries: eggs, milk, coffee"}],
    "isError": False,
})
tool_failed = jsonrpc.result_response(7, {
    "content": [{"type": "text", "text": "No note has id 42. Try notes_search first."}],
    "isError": True,
})
unknown_tool = jsonrpc.error_response(
    7, jsonrpc.INVALID_PARAMS, "Unknown tool: notes_read", {"name": "notes_read"}
)
for response in (worked, tool_failed, unknown_tool):
    print(framing.encode_ndjson(response))

# %% [markdown] lang="en"
# To the client, the first two are both successful responses (`classify` says `result`); only
# the third is an error. Here is what the model gets to see of each, once the host has
# translated it as in lesson 00:

# %% [markdown] lang="es"
# Para el cliente, las dos primeras son respuestas correctas (`classify` dice `result`); solo
# la tercera es un error. Esto es lo que llega a ver el modelo de cada una, una vez que el host
# la ha traducido como en la lección 00:

# %%
def for_the_model(response):
    if jsonrpc.classify(response) == "error":
        # [en] A protocol error: the client's code deals with it, the model gets no result.
        # [es] Un error de protocolo: lo trata el código del cliente, el modelo no recibe nada.
        return None
    result = response["result"]
    return {
        "type": "tool_result",
        "is_error": result.get("isError", False),
        "content": " ".join(block["text"] for block in result["content"]),
    }


for response in (worked, tool_failed, unknown_tool):
    print(for_the_model(response))

# %% [markdown] lang="en"
# **Which kind?** Decide for each case before you check the answer in lab 02: the tool name is
# misspelled; the note the model asked for was deleted; `arguments` is a list instead of an
# object; the tool's database is locked; the model passed `"limit": "ten"` to a tool that wants
# an integer.
#
# ## Summary
#
# - Four kinds: request (answered once), notification (never answered), result and error.
# - Ids pair responses with requests; they are strings or integers, and `0` counts.
# - -32700 and -32600 answer unreadable and invalid messages, with id `null` when the id is
#   unknown; -32601, -32602 and -32603 answer requests that cannot be served.
# - A failing tool is not a protocol error: it is a result with `isError: true`, for the model.
#
# **Lab 02** (`labs/en/lab02_jsonrpc.ipynb`): validate messages, build error responses and
# answer `tools/call` with the right kind of error. Next, **lesson 03**: dispatch.

# %% [markdown] lang="es"
# **¿Qué tipo?** Decide en cada caso antes de comprobar la respuesta en el laboratorio 02: el
# nombre de la herramienta está mal escrito; la nota que pidió el modelo fue borrada;
# `arguments` es una lista en lugar de un objeto; la base de datos de la herramienta está
# bloqueada; el modelo pasó `"limit": "ten"` a una herramienta que quiere un entero.
#
# ## Resumen
#
# - Cuatro tipos: solicitud (se responde una vez), notificación (nunca se responde), resultado
#   y error.
# - Los ids emparejan respuestas con solicitudes; son cadenas o enteros, y el `0` cuenta.
# - -32700 y -32600 responden a mensajes ilegibles e inválidos, con id `null` cuando el id es
#   desconocido; -32601, -32602 y -32603 responden a solicitudes que no se pueden atender.
# - Una herramienta que falla no es un error de protocolo: es un resultado con
#   `isError: true`, para el modelo.
#
# **Laboratorio 02** (`labs/es/lab02_jsonrpc.ipynb`): valida mensajes, construye respuestas de
# error y responde a `tools/call` con el tipo de error correcto. Siguiente, **lección 03**: el
# despacho.
