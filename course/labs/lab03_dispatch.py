# %% [markdown] lang="en"
# # Lab 03 · A dispatcher
#
# > **Español:** [`labs/es/lab03_dispatch.ipynb`](../es/lab03_dispatch.ipynb)
#
# Lesson 03 used `mcpkit.dispatch.Dispatcher`. Now you write one with the same interface and
# the same three rules, and then the loop that turns bytes in into bytes out.
#
# | part | you write | points |
# | --- | --- | --- |
# | 1 | `Dispatcher`: handlers, errors as responses, silent notifications | 6 |
# | 2 | `serve(dispatcher, chunks)`: decoder, dispatcher and encoder in one loop | 4 |
#
# **How to work.** Replace each `# YOUR CODE HERE` / `raise NotImplementedError()` with your
# code, run the cell, then run the **graded cell** below it. A graded cell is read-only. Its first
# line, a comment, is the line it prints when every check passes: that is the expected
# output, not your result. Run it, and it either prints that line or lists each case with what
# it expected and what your code returned. When both pass, save the notebook and get your
# score per part from a terminal at the repository's root:
#
# ```
# ./course.sh grade lab03
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
# This lab builds on `mcpkit`'s own layers, not on your earlier labs: `jsonrpc.classify`
# validates messages for you, and `mcpkit.framing` frames them.

# %% [markdown] lang="es"
# # Laboratorio 03 · Un despachador
#
# > **English:** [`labs/en/lab03_dispatch.ipynb`](../en/lab03_dispatch.ipynb)
#
# La lección 03 usó `mcpkit.dispatch.Dispatcher`. Ahora escribes uno con la misma interfaz y
# las mismas tres reglas, y después el bucle que convierte bytes de entrada en bytes de salida.
#
# | parte | escribes | puntos |
# | --- | --- | --- |
# | 1 | `Dispatcher`: manejadores, errores como respuestas, notificaciones en silencio | 6 |
# | 2 | `serve(dispatcher, chunks)`: decodificador, despachador y codificador en un bucle | 4 |
#
# **Cómo trabajar.** Sustituye cada `# YOUR CODE HERE` / `raise NotImplementedError()` por tu
# código, ejecuta la celda y luego ejecuta la **celda calificada** que hay debajo. Una celda
# calificada es de solo lectura. Su primera línea, un comentario, es la que imprime cuando
# pasan todas las comprobaciones: es la salida esperada, no tu resultado. Ejecútala: o bien
# imprime esa línea o enumera cada caso con lo que esperaba y lo que devolvió tu código. Cuando
# pasen las dos, guarda el cuaderno y obtén tu nota por partes desde una terminal en la raíz
# del repositorio:
#
# ```
# ./course.sh grade lab03
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
# `jsonrpc.classify` valida los mensajes por ti y `mcpkit.framing` los enmarca.

# %% tags=["setup"]
# [en] Setup: run this cell first.
# [es] Preparación: ejecuta esta celda primero.
import logging

from mcpkit import framing, grading, jsonrpc
from mcpkit.jsonrpc import JsonRpcError, MethodNotFound

log = logging.getLogger("lab03")
grading.set_language("en")

# %% [markdown] lang="en"
# ## Part 1 · `Dispatcher`
#
# The interface, as in `mcpkit.dispatch`:
#
# - `Dispatcher(on_response=None)`;
# - `add_request(method, handler)` and `add_notification(method, handler)`; a handler is
#   called as `handler(params, context)`, with `params` being `{}` when the message has none
#   (no `"params"`, or `"params": null`);
# - `dispatch(message, context=None)` returns the response dict to send, or `None`.
#
# The rules, each one checked:
#
# 1. `jsonrpc.classify(message)` first; if it raises `JsonRpcError`, answer with that error
#    and the message's id (`jsonrpc.request_id_of(message)` finds it, or gives `None`).
# 2. A request: no handler gives -32601 (`MethodNotFound(method)`); a handler's return value is
#    the `result`; a `JsonRpcError` it raises is answered with its own code, message and data
#    (`jsonrpc.error_response_from(id, exc)`); **any other exception** is logged with
#    `log.exception(...)` and answered with -32603 and a short, generic message that does not
#    repeat the exception's text.
# 3. A notification is never answered: run its handler if there is one, ignore what it
#    returns, log an exception it raises with `log.exception(...)` (a failure nobody hears of
#    is a bug nobody finds), and return `None`.
# 4. A response (`"result"` or `"error"`) is passed to `on_response` if it was given; return
#    `None` either way.

# %% [markdown] lang="es"
# ## Parte 1 · `Dispatcher`
#
# La interfaz, como en `mcpkit.dispatch`:
#
# - `Dispatcher(on_response=None)`;
# - `add_request(method, handler)` y `add_notification(method, handler)`; a un manejador se le
#   llama como `handler(params, context)`, con `params` igual a `{}` cuando el mensaje no trae
#   (sin `"params"`, o con `"params": null`);
# - `dispatch(message, context=None)` devuelve el dict de la respuesta que hay que enviar, o
#   `None`.
#
# Las reglas, cada una comprobada:
#
# 1. Primero `jsonrpc.classify(message)`; si lanza `JsonRpcError`, responde con ese error y el
#    id del mensaje (`jsonrpc.request_id_of(message)` lo encuentra, o da `None`).
# 2. Una solicitud: sin manejador da -32601 (`MethodNotFound(method)`); lo que devuelve el
#    manejador es el `result`; un `JsonRpcError` que lance se responde con su propio código,
#    mensaje y datos (`jsonrpc.error_response_from(id, exc)`); **cualquier otra excepción** se
#    registra con `log.exception(...)` y se responde con -32603 y un mensaje breve y genérico
#    que no repite el texto de la excepción.
# 3. Una notificación nunca se responde: ejecuta su manejador si lo hay, ignora lo que devuelva,
#    registra con `log.exception(...)` la excepción que lance (un fallo del que nadie se entera
#    es un error que nadie encuentra) y devuelve `None`.
# 4. Una respuesta (`"result"` o `"error"`) se pasa a `on_response` si se dio; devuelve `None`
#    en cualquier caso.

# %%
class Dispatcher:
    def __init__(self, on_response=None):
        self.on_response = on_response
        ### BEGIN SOLUTION
        self.requests = {}
        self.notifications = {}
        ### END SOLUTION

    def add_request(self, method, handler):
        ### BEGIN SOLUTION
        self.requests[method] = handler
        ### END SOLUTION

    def add_notification(self, method, handler):
        ### BEGIN SOLUTION
        self.notifications[method] = handler
        ### END SOLUTION

    def dispatch(self, message, context=None):
        ### BEGIN SOLUTION
        try:
            kind = jsonrpc.classify(message)
        except JsonRpcError as exc:
            return jsonrpc.error_response_from(jsonrpc.request_id_of(message), exc)
        params = message.get("params") or {}
        if kind == "notification":
            handler = self.notifications.get(message["method"])
            if handler is not None:
                try:
                    handler(params, context)
                except Exception:
                    log.exception("notification %s failed", message["method"])
            return None
        if kind in ("result", "error"):
            if self.on_response is not None:
                self.on_response(message)
            return None
        request_id, method = message["id"], message["method"]
        handler = self.requests.get(method)
        if handler is None:
            return jsonrpc.error_response_from(request_id, MethodNotFound(method))
        try:
            return jsonrpc.result_response(request_id, handler(params, context))
        except JsonRpcError as exc:
            return jsonrpc.error_response_from(request_id, exc)
        except Exception:
            log.exception("request %r (%s) failed", request_id, method)
            return jsonrpc.error_response(request_id, jsonrpc.INTERNAL_ERROR, "Internal error")
        ### END SOLUTION


# %%
calculator = Dispatcher()
calculator.add_request("math/add", lambda params, context: {"sum": params["a"] + params["b"]})
calculator.dispatch({"jsonrpc": "2.0", "id": 1, "method": "math/add", "params": {"a": 1, "b": 2}})

# %% tags=["graded"] points=6
grading.check_dispatcher(Dispatcher)

# %% [markdown] lang="en"
# ## Part 2 · `serve`
#
# Write `serve(dispatcher, chunks)`: feed each chunk of bytes to one `framing.NdjsonDecoder`,
# and for every item it returns:
#
# - a `framing.FramingError` gets a -32700 parse error with id `None`;
# - anything else goes to `dispatcher.dispatch(item)`;
# - every response that is not `None` is encoded with `framing.encode_ndjson` and appended to
#   the output, in order.
#
# Return all the output as one `bytes` value. The graded cell passes `mcpkit`'s own
# `Dispatcher`, so this part does not depend on part 1.

# %% [markdown] lang="es"
# ## Parte 2 · `serve`
#
# Escribe `serve(dispatcher, chunks)`: pasa cada trozo de bytes a un único
# `framing.NdjsonDecoder` y, por cada elemento que devuelva:
#
# - un `framing.FramingError` recibe un error de análisis -32700 con id `None`;
# - cualquier otra cosa va a `dispatcher.dispatch(item)`;
# - cada respuesta que no sea `None` se codifica con `framing.encode_ndjson` y se añade a la
#   salida, en orden.
#
# Devuelve toda la salida como un único valor `bytes`. La celda calificada pasa el
# `Dispatcher` del propio `mcpkit`, así que esta parte no depende de la parte 1.

# %%
def serve(dispatcher, chunks):
    ### BEGIN SOLUTION
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
    ### END SOLUTION


# %%
serve(calculator, [b'{"jsonrpc":"2.0","id":7,"method":"math/add","params":{"a":2,', b'"b":3}}\n'])

# %% tags=["graded"] points=4
grading.check_serve(serve)

# %% [markdown] lang="en"
# ## Done?
#
# Compare your dispatcher with `mcpkit/dispatch.py`. One difference to think about: where
# should the *context* come from? In lesson 04 the server passes one per request, carrying the
# request id and the session; that is how a tool can report progress or ask the client a
# question in the middle of a call.

# %% [markdown] lang="es"
# ## ¿Terminaste?
#
# Compara tu despachador con `mcpkit/dispatch.py`. Una diferencia para pensar: ¿de dónde debería
# salir el *context*? En la lección 04 el servidor pasa uno por solicitud, con el id de la
# solicitud y la sesión; así es como una herramienta puede informar del progreso o hacerle una
# pregunta al cliente en mitad de una llamada.
