# %% [markdown] lang="en"
# # Lesson 03 · Dispatch
#
# > **Español:** [`notebooks/es/03_dispatch.ipynb`](../es/03_dispatch.ipynb)
#
# A server receives requests such as `tools/list`, `tools/call` or `ping`, and for each one
# some function must run. The **dispatcher** is the table from method name to that function,
# the **handler**, plus three rules every MCP peer must get right. In this lesson you will:
#
# 1. register handlers with `mcpkit.dispatch.Dispatcher`;
# 2. see the three rules at work: errors as responses, silence for notifications, responses
#    handed back to whoever is waiting;
# 3. join framing, JSON-RPC and dispatch into one loop that turns bytes in into bytes out:
#    the core of a server, minus the pipes.

# %% [markdown] lang="es"
# # Lección 03 · Despacho
#
# > **English:** [`notebooks/en/03_dispatch.ipynb`](../en/03_dispatch.ipynb)
#
# Un servidor recibe solicitudes como `tools/list`, `tools/call` o `ping`, y para cada una
# debe ejecutarse alguna función. El **despachador** es la tabla que va del nombre del método a
# esa función, el **manejador**, más tres reglas que todo interlocutor MCP debe cumplir. En esta
# lección vas a:
#
# 1. registrar manejadores con `mcpkit.dispatch.Dispatcher`;
# 2. ver las tres reglas en acción: errores como respuestas, silencio para las notificaciones,
#    respuestas devueltas a quien las espera;
# 3. unir enmarcado, JSON-RPC y despacho en un solo bucle que convierte bytes de entrada en
#    bytes de salida: el núcleo de un servidor, sin las tuberías.

# %% tags=["setup"]
# [en] Setup: run this cell first.
# [es] Preparación: ejecuta esta celda primero.
import logging

from mcpkit import framing, jsonrpc
from mcpkit.dispatch import Dispatcher
from mcpkit.jsonrpc import InvalidParams

# %% [markdown] lang="en"
# ## 1. A table of handlers
#
# A handler takes two arguments: the request's `params` (always a dict, `{}` when absent) and
# a `context`, whatever the server wants to pass along (the session, the request id, a way to
# report progress...). A request handler returns the `result` object. The decorators register
# a function under a method name:

# %% [markdown] lang="es"
# ## 1. Una tabla de manejadores
#
# Un manejador recibe dos argumentos: los `params` de la solicitud (siempre un dict, `{}`
# cuando no vienen) y un `context`, lo que el servidor quiera pasarle (la sesión, el id de la
# solicitud, una forma de informar del progreso...). Un manejador de solicitudes devuelve el
# objeto `result`. Los decoradores registran una función con un nombre de método:

# %%
dispatcher = Dispatcher()
progress_seen = []


@dispatcher.request("ping")
def ping(params, context):
    return {}


@dispatcher.request("math/add")
def add(params, context):
    a, b = params.get("a"), params.get("b")
    if not isinstance(a, int | float) or not isinstance(b, int | float):
        raise InvalidParams('"a" and "b" must be numbers')
    return {"sum": a + b}


@dispatcher.notification("notifications/progress")
def progress(params, context):
    progress_seen.append(params)


dispatcher.methods

# %% [markdown] lang="en"
# `dispatch(message)` takes one decoded message and returns the response to send, or `None`
# when nothing must be sent:

# %% [markdown] lang="es"
# `dispatch(message)` recibe un mensaje decodificado y devuelve la respuesta que hay que enviar,
# o `None` cuando no hay que enviar nada:

# %%
dispatcher.dispatch(jsonrpc.request(1, "math/add", {"a": 2, "b": 40}))

# %% [markdown] lang="en"
# ## 2. Rule one: every failure of a request becomes an error response
#
# Whatever goes wrong, the requester gets exactly one answer with its id, so it never waits
# forever:
#
# ```mermaid
# flowchart TD
#     m[decoded message] --> c{valid JSON-RPC?}
#     c -- no --> e600[-32600 Invalid Request]
#     c -- request --> h{handler for the method?}
#     h -- no --> e601[-32601 Method not found]
#     h -- yes --> run[run the handler]
#     run -- returns a dict --> ok[result response]
#     run -- raises JsonRpcError --> own[its code: -32602, -32002...]
#     run -- raises anything else --> e603[-32603 Internal error, details to the log]
#     c -- notification --> n[run its handler if any; send nothing]
#     c -- response --> r[hand it to on_response; send nothing]
# ```

# %% [markdown] lang="es"
# ## 2. Regla uno: cada fallo de una solicitud se convierte en una respuesta de error
#
# Pase lo que pase, quien hizo la solicitud recibe exactamente una respuesta con su id, así
# que nunca espera para siempre:
#
# ```mermaid
# flowchart TD
#     m[mensaje decodificado] --> c{¿JSON-RPC válido?}
#     c -- no --> e600[-32600 Invalid Request]
#     c -- solicitud --> h{¿hay manejador para el método?}
#     h -- no --> e601[-32601 Method not found]
#     h -- sí --> run[ejecutar el manejador]
#     run -- devuelve un dict --> ok[respuesta con resultado]
#     run -- lanza JsonRpcError --> own[su código: -32602, -32002...]
#     run -- lanza otra cosa --> e603[-32603 Internal error, detalles al registro]
#     c -- notificación --> n[ejecutar su manejador si lo hay; no enviar nada]
#     c -- respuesta --> r[pasarla a on_response; no enviar nada]
# ```

# %%
dispatcher.dispatch(jsonrpc.request(2, "tools/destroy"))

# %%
dispatcher.dispatch(jsonrpc.request(3, "math/add", {"a": 2, "b": "forty"}))

# %%
dispatcher.dispatch({"jsonrpc": "2.0", "id": 4, "method": "ping", "params": [1, 2]})

# %% [markdown] lang="en"
# A handler that crashes deserves a closer look. Its exception may say things the other side
# should not see (a file path, a query, a secret) and could not act on anyway. So the peer
# gets a short, generic -32603, and the traceback goes to the local log. Let's capture that
# log to see both sides:

# %% [markdown] lang="es"
# Un manejador que falla merece una mirada más atenta. Su excepción puede decir cosas que el
# otro lado no debería ver (una ruta de archivo, una consulta, un secreto) y con las que
# tampoco podría hacer nada. Así que el interlocutor recibe un -32603 breve y genérico, y la
# traza va al registro local. Capturemos ese registro para ver los dos lados:

# %%
class KeepRecords(logging.Handler):
    def __init__(self):
        super().__init__()
        self.records = []

    def emit(self, record):
        self.records.append(record)


log = KeepRecords()
logging.getLogger("mcpkit.dispatch").addHandler(log)
logging.getLogger("mcpkit.dispatch").propagate = False


@dispatcher.request("notes/open")
def notes_open(params, context):
    raise FileNotFoundError("/home/ana/.notes/private.db")


dispatcher.dispatch(jsonrpc.request(5, "notes/open"))

# %%
[(r.levelname, r.getMessage(), r.exc_info[0].__name__, str(r.exc_info[1])) for r in log.records]

# %% [markdown] lang="en"
# The path is in the server's log, where its operator can read it, and nowhere in the
# response.
#
# ## 3. Rule two: a notification is never answered
#
# Not when it works, not when its handler fails, not when nobody handles it:

# %% [markdown] lang="es"
# La ruta está en el registro del servidor, donde puede leerla quien lo administra, y en
# ningún sitio de la respuesta.
#
# ## 3. Regla dos: una notificación nunca se responde
#
# Ni cuando funciona, ni cuando su manejador falla, ni cuando nadie la maneja:

# %%
(
    dispatcher.dispatch(jsonrpc.notification("notifications/progress", {"progress": 0.5})),
    dispatcher.dispatch(jsonrpc.notification("notifications/unheard_of")),
    progress_seen,
)

# %% [markdown] lang="en"
# The handler ran (`progress_seen` has its params), and still nothing is sent back.
#
# Only a *valid* notification is guaranteed silence. A message without an id that fails
# validation, here because its `params` is a number, is answered with -32600 and id `null`:
# the dispatcher cannot know what an invalid message was meant to be, and JSON-RPC says an
# invalid request gets an error.

# %% [markdown] lang="es"
# El manejador se ejecutó (`progress_seen` tiene sus params) y, aun así, no se envía nada de
# vuelta.
#
# Solo una notificación *válida* tiene el silencio garantizado. Un mensaje sin id que no pasa la
# validación, aquí porque sus `params` son un número, se responde con -32600 e id `null`: el
# despachador no puede saber qué pretendía ser un mensaje inválido, y JSON-RPC dice que una
# solicitud inválida recibe un error.

# %%
dispatcher.dispatch({"jsonrpc": "2.0", "method": "notifications/progress", "params": 7})

# %% [markdown] lang="en"
# ## 4. Rule three: responses go back to whoever is waiting
#
# The same connection also carries responses to requests that *this* side sent (a server can
# ask the client things too, as later lessons show). A response is not a call, so it must not
# be dispatched to a handler; the dispatcher hands it to `on_response`, the function of
# whoever keeps the table of pending requests, and sends nothing back.

# %% [markdown] lang="es"
# ## 4. Regla tres: las respuestas vuelven a quien las espera
#
# La misma conexión transporta también las respuestas a solicitudes que envió *este* lado (un
# servidor también puede preguntarle cosas al cliente, como verás en lecciones posteriores).
# Una respuesta no es una llamada, así que no debe despacharse a un manejador; el despachador
# se la pasa a `on_response`, la función de quien mantiene la tabla de solicitudes pendientes,
# y no envía nada de vuelta.

# %%
arrived = []
client_side = Dispatcher(on_response=arrived.append)
client_side.dispatch(jsonrpc.result_response(17, {"roots": []})), arrived

# %% [markdown] lang="en"
# ## 5. Bytes in, bytes out
#
# Now join the three layers. Each chunk goes through the decoder; each item that comes out is
# either a framing error, answered with -32700, or a message for the dispatcher; each response
# is encoded and appended to the output.
#
# ```mermaid
# sequenceDiagram
#     participant In as bytes in
#     participant D as NdjsonDecoder
#     participant X as Dispatcher
#     participant Out as bytes out
#     In->>D: feed(chunk)
#     D->>X: message
#     X->>Out: encode_ndjson(response)
#     D->>Out: FramingError: encode_ndjson(-32700, id null)
#     Note over X,Out: a notification: nothing
# ```

# %% [markdown] lang="es"
# ## 5. Bytes de entrada, bytes de salida
#
# Ahora unamos las tres capas. Cada trozo pasa por el decodificador; cada elemento que sale es
# o un error de enmarcado, que se responde con -32700, o un mensaje para el despachador; cada
# respuesta se codifica y se añade a la salida.
#
# ```mermaid
# sequenceDiagram
#     participant In as bytes de entrada
#     participant D as NdjsonDecoder
#     participant X as Dispatcher
#     participant Out as bytes de salida
#     In->>D: feed(trozo)
#     D->>X: mensaje
#     X->>Out: encode_ndjson(respuesta)
#     D->>Out: FramingError: encode_ndjson(-32700, id null)
#     Note over X,Out: una notificación: nada
# ```

# %%
def serve(dispatcher, chunks):
    decoder = framing.NdjsonDecoder()
    out = bytearray()
    for chunk in chunks:
        for item in decoder.feed(chunk):
            if isinstance(item, framing.FramingError):
                response = jsonrpc.error_response(None, jsonrpc.PARSE_ERROR, "Parse error")
            else:
                response = dispatcher.dispatch(item)
            if response is not None:
                out += framing.encode_ndjson(response)
    return bytes(out)

# %% [markdown] lang="en"
# Feed it a realistic stream: a request split across reads, a notification, a line of garbage,
# and two requests in one read.

# %% [markdown] lang="es"
# Pásale un flujo realista: una solicitud partida entre lecturas, una notificación, una línea de
# basura y dos solicitudes en una sola lectura.

# %%
chunks = [
    b'{"jsonrpc":"2.0","id":1,"meth',
    b'od":"ping"}\n{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}\n',
    b"this is not json\n",
    b'{"jsonrpc":"2.0","id":2,"method":"math/add","params":{"a":1,"b":2}}\n'
    b'{"jsonrpc":"2.0","id":3,"method":"nope"}\n',
]
output = serve(dispatcher, chunks)
for line in output.splitlines(keepends=True):
    print(line)

# %% [markdown] lang="en"
# Five messages went in; four lines came out, one per request plus one for the garbage line,
# in order. Swap `chunks` for what a subprocess's standard input delivers and `output` for
# writes to its standard output, and you have a stdio server: that is lesson 04.
#
# ## Summary
#
# - A dispatcher maps method names to handlers `(params, context) -> result`.
# - Rule one: every request gets exactly one response. Unknown method -32601, bad params
#   -32602 (raise `InvalidParams`), a crash -32603 with a generic message; details go to the
#   local log.
# - Rule two: a valid notification is never answered.
# - Rule three: responses go to `on_response`, not to handlers.
# - Decoder, dispatcher and encoder together turn bytes in into bytes out.
#
# **Lab 03** (`labs/en/lab03_dispatch.ipynb`): write the dispatcher and the loop yourself.

# %% [markdown] lang="es"
# Entraron cinco mensajes; salieron cuatro líneas, una por solicitud más una por la línea de
# basura, en orden. Cambia `chunks` por lo que entrega la entrada estándar de un subproceso y
# `output` por escrituras en su salida estándar, y tienes un servidor stdio: eso es la lección
# 04.
#
# ## Resumen
#
# - Un despachador asocia nombres de método con manejadores `(params, context) -> result`.
# - Regla uno: cada solicitud recibe exactamente una respuesta. Método desconocido -32601,
#   params erróneos -32602 (lanza `InvalidParams`), una caída del manejador -32603 con un
#   mensaje genérico;
#   los detalles van al registro local.
# - Regla dos: una notificación válida nunca se responde.
# - Regla tres: las respuestas van a `on_response`, no a los manejadores.
# - Decodificador, despachador y codificador juntos convierten bytes de entrada en bytes de
#   salida.
#
# **Laboratorio 03** (`labs/es/lab03_dispatch.ipynb`): escribe tú el despachador y el bucle.
