# %% [markdown] lang="en"
# # Lesson 05 · A client: spawn, handshake, reader thread, futures, shutdown
#
# > **Español:** [`notebooks/es/05_client.ipynb`](../es/05_client.ipynb)
#
# Lesson 04 ended with a server in a subprocess and the bytes of one session. Now we sit on
# the other end of the pipe. A client owns one session with one server: it starts the
# process, agrees on a revision, sends requests and matches each answer to its caller, while
# the server talks back whenever it likes. In this lesson you will:
#
# 1. start a server as a **child process** and see why its standard error must be drained;
# 2. run the **era probe** (`server/discover`) and the **legacy handshake** by hand;
# 3. build the core of a session: **request ids, a pending table, a reader thread and a future
#    per request**;
# 4. watch **notifications** arrive between responses, and make the classic mistake of
#    blocking the reader (it hangs; a bounded timeout shows it), then fix it;
# 5. give up on a slow request with a **timeout** that sends `notifications/cancelled`;
# 6. follow a call's **progress**, and answer the server's own requests (sampling,
#    elicitation) through **callbacks**;
# 7. **shut a server down** cleanly: close stdin, then SIGTERM, then SIGKILL;
# 8. kill a server in the middle of a session and see every pending request fail at once;
# 9. write a script that lists tools and calls two, and keep **the literal bytes** of its
#    session as proof;
# 10. see why the blocking client uses threads in a notebook, and when the asyncio one fits.
#
# Everything here is what `mcpkit/session.py` (the decisions, with no I/O),
# `mcpkit/client.py` (threads) and `mcpkit/transports/process.py` (the child process) do.

# %% [markdown] lang="es"
# # Lección 05 · Un cliente: arranque, handshake, hilo lector, futures y cierre
#
# > **English:** [`notebooks/en/05_client.ipynb`](../en/05_client.ipynb)
#
# La lección 04 terminó con un servidor en un subproceso y los bytes de una sesión. Ahora nos
# sentamos en el otro extremo de la tubería. Un cliente tiene una única sesión con un único
# servidor: arranca el proceso, acuerda una revisión, envía solicitudes y empareja cada
# respuesta con quien la pidió, mientras el servidor habla cuando quiere. En esta lección vas a:
#
# 1. arrancar un servidor como **proceso hijo** y ver por qué hay que vaciar su error estándar;
# 2. hacer a mano el **sondeo de la era** (`server/discover`) y el **handshake (negociación
#    inicial) heredado**;
# 3. construir el núcleo de una sesión: **ids de solicitud, una tabla de pendientes, un hilo
#    lector y un future (resultado futuro) por solicitud**;
# 4. ver llegar **notificaciones** entre respuestas y cometer el error clásico de bloquear al
#    lector (se queda colgado; un tiempo de espera acotado lo muestra) para luego corregirlo;
# 5. abandonar una solicitud lenta con un **tiempo de espera (timeout)** que envía
#    `notifications/cancelled`;
# 6. seguir el **progreso** de una llamada y responder a las solicitudes del propio servidor
#    (muestreo, solicitud de datos al usuario) mediante **callbacks**;
# 7. **cerrar un servidor** limpiamente: cerrar stdin, luego SIGTERM y luego SIGKILL;
# 8. matar un servidor en mitad de una sesión y ver fallar a la vez todas las solicitudes
#    pendientes;
# 9. escribir un script que liste herramientas y llame a dos, y guardar **los bytes literales**
#    de su sesión como prueba;
# 10. ver por qué el cliente bloqueante usa hilos en un cuaderno, y cuándo encaja el de asyncio.
#
# Todo esto es lo que hacen `mcpkit/session.py` (las decisiones, sin E/S), `mcpkit/client.py`
# (hilos) y `mcpkit/transports/process.py` (el proceso hijo).

# %% tags=["setup"]
# [en] Setup: run this cell first.
# [es] Preparación: ejecuta esta celda primero.
import itertools
import json
import logging
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import Future
from pathlib import Path

from mcpkit import grading
from mcpkit.client import Client, ConnectionClosed
from mcpkit.transports.process import ServerProcess, describe_exit

NOTES = [sys.executable, "-m", "mcpkit", "serve", "mcpkit.examples.notes:server"]
EVERYTHING = [sys.executable, "-m", "mcpkit", "serve", "mcpkit.examples.everything:server"]
# [en] Lab 05's misbehaving test server (standard library only).
# [es] El servidor de prueba del laboratorio 05, que se porta mal (solo biblioteca estándar).
TEST_SERVER = grading.lab05_server_command()
grading.set_language("en")  # [en] the cells' own sentences  [es] las frases de las celdas
# [en] mcpkit logs a server's exit from its reader thread; here the cells print what matters.
# [es] mcpkit registra desde su hilo lector cuándo termina un servidor; aquí las celdas
# [es] imprimen lo que importa.
logging.getLogger("mcpkit").setLevel(logging.ERROR)


def spawn(command):
    return subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)


def line(message):
    return json.dumps(message, separators=(",", ":")).encode() + b"\n"


# %% [markdown] lang="en"
# ## 1. A server is a child process with three pipes
#
# A stdio server is a program the client starts: `subprocess.Popen` with `stdin`, `stdout` and
# `stderr` as pipes, plus its arguments, the environment (`env`, often holding an API key) and
# the working folder (`cwd`). `stdin` and `stdout` carry the protocol; `stderr` is the
# server's log.
#
# The trap is the third pipe. A pipe holds a fixed amount (64 KiB on Linux); a child that
# writes more to a pipe nobody reads **blocks inside `write()`**, for ever. Here is a server
# that logs 200 KB before it answers. We wait for its answer on a thread, for at most one
# second:

# %% [markdown] lang="es"
# ## 1. Un servidor es un proceso hijo con tres tuberías
#
# Un servidor stdio es un programa que arranca el cliente: `subprocess.Popen` con `stdin`,
# `stdout` y `stderr` como tuberías, más sus argumentos, el entorno (`env`, que a menudo lleva
# una clave de API) y la carpeta de trabajo (`cwd`). `stdin` y `stdout` llevan el protocolo;
# `stderr` es el registro del servidor.
#
# La trampa es la tercera tubería. Una tubería tiene una capacidad fija (64 KiB en Linux); un
# hijo que escribe más en una tubería que nadie lee **se bloquea dentro de `write()`**, para
# siempre. Este servidor escribe 200 KB de registro antes de responder. Esperamos su respuesta
# en un hilo, como mucho un segundo:

# %%
CHATTY = """
import sys
sys.stderr.write("log line\\n" * 25000)
sys.stderr.flush()
sys.stdout.write("ready\\n")
sys.stdout.flush()
"""


def first_line(process, seconds):
    box = []
    reader = threading.Thread(target=lambda: box.append(process.stdout.readline()), daemon=True)
    reader.start()
    reader.join(seconds)
    return box[0] if box else grading._("(nothing: the child is stuck writing to stderr)",
                                        "(nada: el hijo está bloqueado escribiendo en stderr)")


chatty = spawn([sys.executable, "-c", CHATTY])
print(first_line(chatty, 1.0))
chatty.kill()
chatty.wait()
for pipe in (chatty.stdin, chatty.stdout, chatty.stderr):
    pipe.close()

# %% [markdown] lang="en"
# Nothing came. The same server, with a thread that reads `stderr` all the time (keeping only
# the last lines, for error messages), answers at once:

# %% [markdown] lang="es"
# No llegó nada. El mismo servidor, con un hilo que lee `stderr` todo el tiempo (y guarda solo
# las últimas líneas, para los mensajes de error), responde en el acto:

# %%
def drain(pipe, tail, keep=3):
    for raw in pipe:
        tail.append(raw)
        del tail[:-keep]


chatty = spawn([sys.executable, "-c", CHATTY])
tail = []
drainer = threading.Thread(target=drain, args=(chatty.stderr, tail), daemon=True)
drainer.start()
print(first_line(chatty, 30.0))
chatty.wait(5)
drainer.join(5)
for pipe in (chatty.stdin, chatty.stdout, chatty.stderr):
    pipe.close()
print(chatty.returncode, tail)

# %% [markdown] lang="en"
# `mcpkit.transports.process.ServerProcess` does exactly this: one drain thread per server,
# a bounded tail of its last lines, bounded writes to stdin, and the child in a process group
# of its own (so that "interrupt kernel" stops your code, not every server it started).

# %% [markdown] lang="es"
# `mcpkit.transports.process.ServerProcess` hace exactamente esto: un hilo de vaciado por
# servidor que conserva un número acotado de sus últimas líneas, escrituras acotadas en stdin y
# el hijo en un grupo de procesos propio (así, "interrumpir el kernel" detiene tu código, no
# todos los servidores que arrancó).

# %% [markdown] lang="en"
# ## 2. The handshake: the era probe, then `initialize`
#
# A client does not know in advance which revision a server speaks. The 2026-07-28 revision
# says how to find out: send `server/discover` first. A modern server answers with its
# versions and capabilities, and there is no other handshake; the probe, like every later
# request, carries the client's version, capabilities and name in `params._meta` (lesson 07).
# A legacy server answers "method not found" (or nothing, within a timeout), and the client
# falls back to the legacy handshake: `initialize`, its result, then the notification
# `notifications/initialized`.
#
# ```mermaid
# sequenceDiagram
#     participant C as client
#     participant S as server
#     C->>S: server/discover (id 1)
#     alt modern server
#         S-->>C: result: supportedVersions, capabilities
#     else legacy server
#         S-->>C: error -32601 (or silence until the probe's timeout)
#         C->>S: initialize (id 2): protocolVersion, capabilities, clientInfo
#         S-->>C: result: protocolVersion, capabilities, serverInfo
#         C->>S: notifications/initialized
#     end
# ```
#
# By hand, with the notes server (`mcpkit` speaks both eras):

# %% [markdown] lang="es"
# ## 2. El handshake: el sondeo de la era y luego `initialize`
#
# Un cliente no sabe de antemano qué revisión habla un servidor. La revisión 2026-07-28 dice
# cómo averiguarlo: envía primero `server/discover`. Un servidor moderno responde con sus
# versiones y capacidades, y no hay más handshake; el sondeo, como cada solicitud posterior,
# lleva la versión, las capacidades y el nombre del cliente en `params._meta` (lección 07). Un
# servidor heredado responde "método no encontrado" (o no responde nada antes de que se agote el
# tiempo de espera), y el cliente recurre al handshake heredado: `initialize`, su resultado y
# luego la notificación `notifications/initialized`.
#
# ```mermaid
# sequenceDiagram
#     participant C as cliente
#     participant S as servidor
#     C->>S: server/discover (id 1)
#     alt servidor moderno
#         S-->>C: resultado: supportedVersions, capabilities
#     else servidor heredado
#         S-->>C: error -32601 (o silencio hasta que se agota el tiempo de espera del sondeo)
#         C->>S: initialize (id 2): protocolVersion, capabilities, clientInfo
#         S-->>C: resultado: protocolVersion, capabilities, serverInfo
#         C->>S: notifications/initialized
#     end
# ```
#
# A mano, con el servidor de notas (`mcpkit` habla las dos eras):

# %%
PROBE = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "lesson-05", "version": "1.0"}}}}

notes_process = spawn(NOTES)
notes_process.stdin.write(line(PROBE))
notes_process.stdin.flush()
discovered = json.loads(notes_process.stdout.readline())
print(sorted(discovered["result"]))
print(discovered["result"]["supportedVersions"])

notes_process.stdin.write(line({"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {},
    "clientInfo": {"name": "lesson-05", "version": "1.0"}}}))
notes_process.stdin.write(line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
notes_process.stdin.flush()
initialized = json.loads(notes_process.stdout.readline())
print(initialized["result"]["protocolVersion"], sorted(initialized["result"]["capabilities"]))
notes_process.stdin.close()
print(notes_process.wait(5))
notes_process.stdout.close()
notes_process.stderr.close()

# %% [markdown] lang="en"
# The test server of lab 05 is a legacy peer of the crudest kind: it knows neither method.
# That is what a probe must survive. `mcpkit.Client` runs the probe for you and tells you the
# era it settled on; `version=` skips the probe when you already know:

# %% [markdown] lang="es"
# El servidor de prueba del laboratorio 05 es un interlocutor heredado de lo más tosco: no
# conoce ninguno de los dos métodos. Eso es lo que un sondeo debe aguantar. `mcpkit.Client`
# hace el sondeo por ti y te dice qué era eligió; `version=` se salta el sondeo cuando ya lo
# sabes:

# %%
probe = spawn(TEST_SERVER)
probe.stdin.write(line(PROBE))
probe.stdin.flush()
print(probe.stdout.readline())
probe.stdin.close()
probe.wait(5)
for pipe in (probe.stdout, probe.stderr):
    pipe.close()

with Client(NOTES) as modern, Client(NOTES, version="2025-11-25") as legacy:
    print(modern.era, modern.protocol_version)
    print(legacy.era, legacy.protocol_version)

# %% [markdown] lang="en"
# ## 3. Ids, a pending table, a reader thread, a future per request
#
# Requests and responses are not a conversation in turns. Several requests may be in flight
# at once, the server may answer them in any order, and between two responses it may send
# notifications (progress, logs, "the tool list changed") or requests of its own. So a
# client:
#
# - gives every request a new **id** (a counter: never reused within a session);
# - keeps a **pending table**, id -> a **future**, an object the caller waits on and someone
#   else completes (`concurrent.futures.Future`: `result(timeout)` waits, `set_result` and
#   `set_exception` complete it);
# - runs **one reader thread** that reads `stdout` all the time: a response pops its future
#   from the table and completes it; a notification goes to a queue; nothing else blocks it.
#
# The future goes into the table *before* the request is written: a fast server may answer
# before the write call returns. Here is the whole idea in about forty lines, talking to lab
# 05's test server:

# %% [markdown] lang="es"
# ## 3. Ids, una tabla de pendientes, un hilo lector y un future por solicitud
#
# Las solicitudes y las respuestas no son una conversación por turnos. Puede haber varias
# solicitudes en curso a la vez, el servidor puede responderlas en cualquier orden y, entre dos
# respuestas, puede enviar notificaciones (progreso, registros, "cambió la lista de
# herramientas") o solicitudes propias. Así que un cliente:
#
# - le da a cada solicitud un **id** nuevo (un contador: nunca se reutiliza en una sesión);
# - mantiene una **tabla de pendientes**, id -> un **future**, un objeto por el que espera
#   quien llama y que completa otro hilo (`concurrent.futures.Future`: `result(timeout)` espera,
#   `set_result` y `set_exception` lo completan);
# - ejecuta **un hilo lector** que lee `stdout` todo el tiempo: una respuesta saca su future
#   de la tabla y lo completa; una notificación va a una cola; y nada más puede bloquearlo.
#
# El future entra en la tabla *antes* de escribir la solicitud: un servidor rápido puede
# responder antes de que retorne la llamada de escritura. Esta es la idea completa en unas
# cuarenta líneas, hablando con el servidor de prueba del laboratorio 05:

# %%
class RequestError(Exception):  # [en] the server answered with an error: its code, message, data  [es] el servidor respondió con un error: su código, mensaje y data
    def __init__(self, code, message, data=None):
        super().__init__(f"{code}: {message}")
        self.code, self.message, self.data = code, message, data


class SessionClosed(Exception):  # [en] the server's output ended: no answer will come  [es] terminó la salida del servidor: no llegará ninguna respuesta
    pass


class TinySession:
    def __init__(self, process, on_notification=None):
        self.process = process
        self.ids = itertools.count(1)
        self.pending = {}
        self.notifications = []
        self.on_notification = on_notification
        self.lock = threading.Lock()
        self.reader = threading.Thread(target=self.read_loop, daemon=True)
        self.reader.start()

    def send(self, message):
        with self.lock:
            self.process.stdin.write(line(message))
            self.process.stdin.flush()

    def request(self, method, params=None, timeout=2.0):
        request_id = next(self.ids)
        future = self.pending[request_id] = Future()
        message = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:  # [en] no params: no "params" key at all (not null, not {})  [es] sin params: ninguna clave "params" (ni null, ni {})
            message["params"] = params
        self.send(message)
        try:
            return future.result(timeout)
        except TimeoutError:
            self.pending.pop(request_id, None)
            self.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                       "params": {"requestId": request_id, "reason": "timeout"}})
            raise

    def read_loop(self):
        for raw in self.process.stdout:
            try:
                message = json.loads(raw)
            except ValueError:
                continue  # [en] a line that is not JSON is skipped  [es] se salta una línea que no es JSON
            if not isinstance(message, dict):
                continue  # [en] so is a JSON value that is not an object  [es] y también un valor JSON que no es un objeto
            if "method" in message and "id" not in message:
                self.notifications.append(message["params"]["data"])
                if self.on_notification is not None:
                    self.on_notification(message)
            elif type(message.get("id")) is int and (
                    future := self.pending.pop(message["id"], None)) is not None:
                if "error" in message:  # [en] True == 1 in Python: only an int id can be ours  [es] True == 1 en Python: solo un id int puede ser nuestro
                    error = message["error"]
                    future.set_exception(RequestError(error.get("code"), error.get("message"),
                                                      error.get("data")))
                else:
                    future.set_result(message.get("result"))
        for future in list(self.pending.values()):
            future.set_exception(SessionClosed(grading._("the server's output ended",
                                                          "terminó la salida del servidor")))
        self.pending.clear()

    def close(self):
        self.process.stdin.close()
        self.reader.join(5)
        self.process.wait(5)
        self.process.stdout.close()
        self.process.stderr.close()


tiny = TinySession(spawn(TEST_SERVER))
print(tiny.request("echo", {"hello": "server"}))
print(tiny.request("notify", {"count": 3}))
print(tiny.notifications)

# %% [markdown] lang="en"
# `TinySession` keeps lab 05's contract where the lab checks it: no `"params"` key when there
# are none, `RequestError(code, message, data)` for an error response, `SessionClosed` for
# every request still waiting when the output ends, junk lines skipped, only an `int` id
# matched. Where it is shorter than the lab's `Session`, the lab asks for more: `notifications`
# here is a list of the notifications' `data` for printing, while the lab's `notifications()`
# is a method that returns the whole messages and empties the queue; and the lab's session
# also remembers that it ended (a request then raises `SessionClosed` at once) and turns a
# failed write into `SessionClosed`.
#
# Three notifications arrived before the response, and the reader put each where it belongs.
# Now three requests from three threads, which the test server answers **newest first**
# (`hold`, then `release`): each caller still gets its own answer, because the id, not the
# order, says whose it is.

# %% [markdown] lang="es"
# `TinySession` respeta el contrato del laboratorio 05 donde el laboratorio lo comprueba: ninguna
# clave `"params"` cuando no hay parámetros, `RequestError(code, message, data)` para una
# respuesta de error, `SessionClosed` para cada solicitud que sigue esperando cuando se acaba la
# salida, las líneas basura se saltan y solo se empareja un id `int`. Donde es más corta que la
# `Session` del laboratorio, el laboratorio pide más: aquí `notifications` es una lista con el
# `data` de las notificaciones, para imprimirla, mientras que `notifications()` del laboratorio
# es un método que devuelve los mensajes completos y vacía la cola; y la sesión del laboratorio
# también recuerda que terminó (entonces una solicitud lanza `SessionClosed` en el acto) y
# convierte una escritura fallida en `SessionClosed`.
#
# Llegaron tres notificaciones antes de la respuesta, y el lector puso cada una en su sitio.
# Ahora, tres solicitudes desde tres hilos, que el servidor de prueba responde **empezando
# por la más reciente** (`hold` y luego `release`): cada hilo que llama sigue recibiendo su
# propia respuesta, porque es el id, no el orden, lo que indica de quién es cada una.

# %%
answers = {}


def ask(n):
    answers[n] = tiny.request("hold", {"caller": n})


callers = [threading.Thread(target=ask, args=(n,)) for n in range(3)]
for caller in callers:
    caller.start()
    time.sleep(0.05)
print(tiny.request("release", {"count": 3}))
for caller in callers:
    caller.join()
print(dict(sorted(answers.items())))
print(sorted(tiny.pending))

# %% [markdown] lang="en"
# ## 4. The classic bug: blocking the reader
#
# The reader thread is the only one that reads `stdout`. If it ever waits for a response, no
# one is left to read that response: the session stops. The easy way to get there is a
# notification handler that makes a request, say "a resource changed, read it again", on the
# reader's own thread. The notification sits handled-but-blocked, the answer sits in the pipe.
# Bounded timeouts turn the hang into an error we can see:

# %% [markdown] lang="es"
# ## 4. El error clásico: bloquear al lector
#
# El hilo lector es el único que lee `stdout`. Si alguna vez espera una respuesta, no queda
# nadie que lea esa respuesta: la sesión se detiene. La forma fácil de llegar ahí es un
# manejador de notificaciones que hace una solicitud, por ejemplo "cambió un recurso, vuelve a
# leerlo", en el propio hilo del lector. La notificación queda atendida pero bloqueada, y la
# respuesta se queda en la tubería. Los tiempos de espera acotados convierten el cuelgue en un
# error que se ve:

# %%
seen_by_handler = []


def reread(message):
    try:
        seen_by_handler.append(stuck.request("echo", {"reread": True}, timeout=0.5))
    except TimeoutError:
        seen_by_handler.append(grading._("TimeoutError: the reader was waiting for itself",
                                         "TimeoutError: el lector se esperaba a sí mismo"))


stuck = TinySession(spawn(TEST_SERVER), on_notification=reread)
started = time.monotonic()
print(stuck.request("notify", {"count": 1}, timeout=10))
print(seen_by_handler)
print(time.monotonic() - started >= 0.5)
stuck.close()

# %% [markdown] lang="en"
# The handler's request timed out, although its answer was in the pipe the whole time, right
# behind the reader that was waiting for it; and the call that brought the notification was
# held up just as long. Without a timeout both would wait for ever. The fix is to keep the
# reader reading: it hands notifications to *another* thread (a dispatcher, fed by a
# queue), and callbacks run there. `mcpkit.Client` has exactly these two threads, `_read_loop`
# and `_dispatch_loop`, so a callback may call the server:

# %% [markdown] lang="es"
# A la solicitud del manejador se le agotó el tiempo de espera, aunque su respuesta estuvo todo
# el tiempo en la tubería, justo detrás del lector que la esperaba; y la llamada que trajo la
# notificación se retrasó lo mismo. Sin tiempo de espera, las dos esperarían para siempre. La
# solución es que el lector siga leyendo: entrega las notificaciones a *otro* hilo (un
# despachador, alimentado por una cola), y los callbacks se ejecutan allí. `mcpkit.Client` tiene
# exactamente esos dos hilos, `_read_loop` y `_dispatch_loop`, así que un callback puede llamar
# al servidor:

# %%
handlers = []


def handing_over(message):
    handlers.append(threading.Thread(target=reread, args=(message,), daemon=True))
    handlers[-1].start()


seen_by_handler.clear()
stuck = TinySession(spawn(TEST_SERVER), on_notification=handing_over)
print(stuck.request("notify", {"count": 1}))
for handler in handlers:
    handler.join(5)
print(seen_by_handler)
stuck.close()

# %% [markdown] lang="en"
# ## 5. Timeouts cancel
#
# A request nobody answers must not wait for ever. When its timeout ends, the client takes
# the id out of the pending table (a late answer then belongs to nobody and is dropped) and
# tells the server with a notification, so that it can stop working on it:
#
# ```mermaid
# sequenceDiagram
#     participant C as client
#     participant S as server
#     C->>S: tools/call (id 7)
#     Note over C: timeout: id 7 leaves the pending table
#     C->>S: notifications/cancelled {requestId: 7, reason}
#     S--xC: (a late result for 7 is dropped, if one comes)
# ```
#
# The test server never answers `silent`, and `cancelled` says which requests it was told to
# drop, and why:

# %% [markdown] lang="es"
# ## 5. Agotar el tiempo de espera cancela la solicitud
#
# Una solicitud que nadie responde no debe esperar para siempre. Cuando se agota su tiempo de
# espera, el cliente saca el id de la tabla de pendientes (una respuesta tardía ya no es de
# nadie y se descarta) y se lo dice al servidor con una notificación, para que deje de trabajar
# en ella:
#
# ```mermaid
# sequenceDiagram
#     participant C as cliente
#     participant S as servidor
#     C->>S: tools/call (id 7)
#     Note over C: se agota el tiempo de espera: el id 7 sale de la tabla de pendientes
#     C->>S: notifications/cancelled {requestId: 7, reason}
#     S--xC: (si llega un resultado tardío para el 7, se descarta)
# ```
#
# El servidor de prueba nunca responde a `silent`, y `cancelled` dice qué solicitudes le
# pidieron abandonar, y por qué:

# %%
try:
    tiny.request("silent", timeout=0.3)
except TimeoutError:
    print("TimeoutError")
print(tiny.request("cancelled"))
print(sorted(tiny.pending))

# %% [markdown] lang="en"
# ## 6. Progress, and the server's own requests
#
# A caller that wants progress sends a `progressToken` in the request's `_meta`; the server
# then sends `notifications/progress` with that token while it works. The reader routes them
# to the request they belong to. With `mcpkit.Client`, pass `on_progress`:
#
# ```mermaid
# sequenceDiagram
#     participant C as client
#     participant S as server
#     C->>S: tools/call (id 4, _meta.progressToken 4)
#     S-->>C: notifications/progress {progressToken 4, progress 0, total 100}
#     S-->>C: notifications/progress {progressToken 4, progress 50, total 100}
#     S-->>C: notifications/progress {progressToken 4, progress 100, total 100}
#     S-->>C: result (id 4)
# ```

# %% [markdown] lang="es"
# ## 6. El progreso y las solicitudes del propio servidor
#
# Quien quiere seguir el progreso envía un `progressToken` en el `_meta` de la solicitud; el
# servidor envía entonces `notifications/progress` con ese token mientras trabaja. El lector
# las enruta a la solicitud a la que pertenecen. Con `mcpkit.Client`, pasa `on_progress`:
#
# ```mermaid
# sequenceDiagram
#     participant C as cliente
#     participant S as servidor
#     C->>S: tools/call (id 4, _meta.progressToken 4)
#     S-->>C: notifications/progress {progressToken 4, progress 0, total 100}
#     S-->>C: notifications/progress {progressToken 4, progress 50, total 100}
#     S-->>C: notifications/progress {progressToken 4, progress 100, total 100}
#     S-->>C: resultado (id 4)
# ```

# %%
steps = []
with Client(EVERYTHING, version="2025-11-25") as everything:
    everything.call_tool("test_tool_with_progress",
                         on_progress=lambda p: steps.append((p["progress"], p.get("total"))))
print(steps)

# %% [markdown] lang="en"
# In the legacy era a server may also send *requests* to the client: `sampling/createMessage`
# (ask the host's model), `elicitation/create` (ask the user), `roots/list` (which folders may
# I use?). The client answers them with callbacks, and declares the matching capabilities in
# `initialize` only if it has them. A callback may take its time (a human is answering), so
# `mcpkit` runs it on a thread of its own, never on the reader. Here a scripted "model" and a
# scripted "user" answer:

# %% [markdown] lang="es"
# En la era heredada, un servidor también puede enviarle *solicitudes* al cliente:
# `sampling/createMessage` (preguntar al modelo del host), `elicitation/create` (preguntar al
# usuario), `roots/list` (¿qué carpetas puedo usar?). El cliente las responde con callbacks, y
# declara las capacidades correspondientes en `initialize` solo si las tiene. Un callback puede
# tardar (responde una persona), así que `mcpkit` lo ejecuta en un hilo propio, nunca en el
# lector. Aquí responden un "modelo" y un "usuario" guionizados:

# %%
asked = []


def scripted_model(params):
    asked.append(("sampling", params["messages"][0]["content"]["text"]))
    return {"role": "assistant", "model": "scripted",
            "content": {"type": "text", "text": "four"}}


def scripted_user(params):
    asked.append(("elicitation", params["message"]))
    return {"action": "accept", "content": {"name": "Ada"}}


with Client(EVERYTHING, version="2025-11-25", sampling=scripted_model,
            elicitation=scripted_user) as everything:
    sampled = everything.call_tool("test_sampling", {"prompt": "two plus two?"})
    elicited = everything.call_tool("test_elicitation", {"message": "Your name?"})
print(asked)
print(sampled["content"][0]["text"])
print(elicited["content"][0]["text"])

# %% [markdown] lang="en"
# Sampling and roots are **deprecated** since revision 2026-07-28 (lesson 07, section 9, has
# the table): they keep working in both eras at least until the first revision released on or
# after 2027-07-28, but a new server should call its model provider's API itself and take
# folders as tool arguments. Elicitation is not deprecated.

# %% [markdown] lang="es"
# El muestreo y las raíces están **obsoletos** (*deprecated*) desde la revisión 2026-07-28 (la
# tabla está en la sección 9 de la lección 07): siguen funcionando en las dos eras al menos
# hasta la primera revisión publicada a partir de 2027-07-28, pero un servidor nuevo debería
# llamar él mismo a la API de su proveedor de modelos y recibir las carpetas como argumentos de
# herramienta. La solicitud de datos al usuario (elicitation) no está obsoleta.

# %% [markdown] lang="en"
# ## 7. Shutting down: close stdin, then SIGTERM, then SIGKILL
#
# The spec's order for stdio: close the server's stdin (a well-behaved server exits at the end
# of its input), wait; if it is still there, SIGTERM, wait; then SIGKILL, wait. Every wait is
# bounded, and waiting is also what reaps the child (no zombie left). This server ignores both
# its input and SIGTERM:

# %% [markdown] lang="es"
# ## 7. El cierre: cerrar stdin, luego SIGTERM y luego SIGKILL
#
# El orden de la especificación para stdio: cerrar la stdin del servidor (un servidor que se
# porta bien termina al final de su entrada) y esperar; si sigue ahí, SIGTERM y esperar;
# después SIGKILL y esperar. Cada espera está acotada, y esperar es además lo que recoge al
# hijo (no queda ningún zombi). Este servidor ignora tanto su entrada como SIGTERM:

# %%
STUBBORN = """
import signal, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
while True:
    time.sleep(1)
"""
for name, command in (("notes", NOTES), ("stubborn", [sys.executable, "-c", STUBBORN])):
    process = ServerProcess(command[0], command[1:], name=name).start()
    time.sleep(0.3)
    returncode = process.shutdown(grace=2.0, term_timeout=0.5, kill_timeout=2.0)
    process.close()
    print(name, returncode, describe_exit(returncode))

# %% [markdown] lang="en"
# The notes server exited on its own (status 0) when its input ended; the stubborn one lasted
# through SIGTERM and was killed (`-9`). `Client.close()` does the same, with
# `shutdown_timeouts=(2.0, 2.0, 2.0)` by default.
#
# ## 8. A server dies mid-session
#
# A session can end from the other side too: the server crashes, or someone kills it. The
# reader thread sees the end of `stdout` (EOF) and is the one who knows. It marks the session
# dead and fails **every pending request at once**, instead of letting each wait for its
# timeout. Three requests are waiting when we send the test server SIGTERM:

# %% [markdown] lang="es"
# El servidor de notas terminó solo (código de salida 0) al acabar su entrada; el terco aguantó
# SIGTERM y lo mataron (`-9`). `Client.close()` hace lo mismo, con
# `shutdown_timeouts=(2.0, 2.0, 2.0)` por defecto.
#
# ## 8. Un servidor muere en mitad de la sesión
#
# Una sesión también puede terminar por el otro lado: el servidor se cae, o alguien lo
# mata. El hilo lector ve el final de `stdout` (EOF) y es quien se entera. Marca la sesión como
# muerta y hace fallar **todas las solicitudes pendientes a la vez**, en lugar de dejar que
# cada una espere a que se agote su tiempo de espera. Hay tres solicitudes esperando cuando le
# enviamos SIGTERM al servidor de prueba:

# %%
failures = {}


def wait_for_hold(n):
    try:
        tiny.request("hold", {"caller": n}, timeout=10)
    except SessionClosed as exc:
        failures[n] = str(exc)


waiting = [threading.Thread(target=wait_for_hold, args=(n,)) for n in range(3)]
for thread in waiting:
    thread.start()
deadline = time.monotonic() + 30
while len(tiny.pending) < 3 and time.monotonic() < deadline:  # [en] all three are waiting  [es] las tres están esperando
    time.sleep(0.01)
time.sleep(0.1)
tiny.process.send_signal(signal.SIGTERM)
for thread in waiting:
    thread.join()
print(sorted(failures.items()))
print(tiny.process.wait(5), sorted(tiny.pending))
tiny.close()

# %% [markdown] lang="en"
# All three failed together, well before their ten-second timeouts. `mcpkit.Client` does the
# same and remembers why: `alive` turns false, `closed_error` says how the server ended, and
# every later call raises `ConnectionClosed` at once.

# %% [markdown] lang="es"
# Las tres fallaron juntas, mucho antes de que se agotaran sus diez segundos de tiempo de espera.
# `mcpkit.Client` hace lo mismo y recuerda por qué: `alive` pasa a falso, `closed_error` dice
# cómo terminó el servidor y cada llamada posterior lanza `ConnectionClosed` en el acto.

# %%
notes_client = Client(NOTES, name="notes").connect()
print(notes_client.alive, len(notes_client.list_tools()))
os.kill(notes_client.pid, signal.SIGTERM)
deadline = time.monotonic() + 30
while notes_client.alive and time.monotonic() < deadline:
    time.sleep(0.05)
print(notes_client.alive)
print(notes_client.closed_error)
try:
    notes_client.call_tool("notes_list")
except ConnectionClosed as exc:
    print(type(exc).__name__)
notes_client.close()

# %% [markdown] lang="en"
# ## 9. A whole session, and its bytes as proof
#
# A client script in a few lines: start the notes server, list its tools, call two, print,
# exit. To keep the literal byte stream we put a relay between client and server:
# `python -m mcpkit.shell --relay LOG -- COMMAND` starts the server, passes both streams
# through untouched and writes every line it passes to `LOG`, with `>` for client to server
# and `<` for server to client. (`mcpkit trace` does the same from a terminal.)

# %% [markdown] lang="es"
# ## 9. Una sesión completa, y sus bytes como prueba
#
# Un script de cliente en pocas líneas: arranca el servidor de notas, lista sus herramientas,
# llama a dos, imprime y termina. Para guardar el flujo de bytes literal ponemos un
# intermediario (relay) entre el cliente y el servidor:
# `python -m mcpkit.shell --relay LOG -- COMANDO` arranca el servidor, deja pasar los dos flujos
# sin tocarlos y escribe en `LOG` cada línea que pasa, con `>` del cliente al servidor y `<` del
# servidor al cliente. (`mcpkit trace` hace lo mismo desde una terminal.)

# %%
folder = tempfile.TemporaryDirectory()
log = Path(folder.name) / "session.log"
relay = [sys.executable, "-m", "mcpkit.shell", "--relay", str(log), "--"]

with Client(relay + NOTES, version="2025-11-25", name="notes") as client:
    print([tool["name"] for tool in client.list_tools()])
    print(client.call_tool("notes_list")["content"][0]["text"])
    print(client.call_tool("notes_search", {"query": "mcp"})["content"][0]["text"])

for raw in log.read_bytes().splitlines():
    print(raw.decode()[:150] + (" …" if len(raw) > 150 else ""))
folder.cleanup()

# %% [markdown] lang="en"
# That is the session, byte for byte (long lines cut here at 150 characters): `initialize`
# and its result, `notifications/initialized`, `tools/list`, two `tools/call`, and nothing
# after them, because closing stdin is how the client says goodbye on stdio. Try it in a
# terminal with `mcpkit trace` and any server you have.
#
# ## 10. Threads in a notebook, asyncio where it fits
#
# `mcpkit.Client` is blocking: a call returns when its answer is there. It waits on threads
# (the reader, the dispatcher, a future per request) rather than on an event loop, for a
# reason that matters here: a Jupyter kernel already runs an asyncio loop, so code that calls
# `asyncio.run()` inside a cell fails (`cannot be called from a running event loop`). Threads
# work the same in a cell, a script and a test.
#
# When the rest of your program is asyncio (a web server, an agent talking to many servers at
# once), `mcpkit.aclient.AsyncClient` drives the very same `ClientSession` with `await`; in a
# notebook, top-level `await` runs on the kernel's loop:

# %% [markdown] lang="es"
# Esa es la sesión, byte a byte (aquí las líneas largas se cortan en 150 caracteres):
# `initialize` y su resultado, `notifications/initialized`, `tools/list`, dos `tools/call` y
# nada después, porque cerrar stdin es la forma en que el cliente se despide en stdio. Pruébalo
# en una terminal con `mcpkit trace` y cualquier servidor que tengas.
#
# ## 10. Hilos en un cuaderno, asyncio donde encaja
#
# `mcpkit.Client` es bloqueante: una llamada no retorna hasta que llega su respuesta. Espera con
# hilos (el lector, el despachador, un future por solicitud) en lugar de con un bucle de
# eventos, por una razón que aquí importa: un kernel de Jupyter ya ejecuta un bucle de asyncio,
# así que el código que llama a `asyncio.run()` dentro de una celda falla (`cannot be called
# from a running event loop`). Los hilos funcionan igual en una celda, en un script y en una
# prueba.
#
# Cuando el resto de tu programa es asyncio (un servidor web, un agente que habla con muchos
# servidores a la vez), `mcpkit.aclient.AsyncClient` usa exactamente la misma
# `ClientSession` con `await`; en un cuaderno, el `await` de nivel superior se ejecuta en el
# bucle del kernel:

# %%
from mcpkit.aclient import AsyncClient  # noqa: E402

async with AsyncClient(NOTES) as async_client:
    print(async_client.era, [tool["name"] for tool in await async_client.list_tools()])

# %% [markdown] lang="en"
# ## Summary
#
# - A stdio server is a child process; drain its stderr all the time, or a chatty server
#   hangs in `write()`.
# - The era probe sends `server/discover`; a legacy server gets `initialize`, then
#   `notifications/initialized`.
# - A session is ids from a counter, a pending table of futures filled before each write, and
#   one reader thread that settles them and queues notifications. Order means nothing; the id
#   says whose answer it is.
# - Never block the reader: callbacks run on another thread.
# - A timeout removes the id and sends `notifications/cancelled`; a late answer is dropped.
# - Progress comes as notifications carrying the request's token; a legacy server's own
#   requests (sampling, elicitation, roots) are answered by callbacks.
# - Shutdown: close stdin, SIGTERM, SIGKILL, each with a bounded wait. When the server dies,
#   EOF fails every pending request at once.
# - Blocking client on threads for notebooks and scripts; the asyncio front for asyncio
#   programs, over the same sans-IO session.
#
# **Lab 05** (`labs/en/lab05_client.ipynb`): write the request/response core of a session,
# graded against real servers that misbehave. Next, **lesson 06**
# (`06_many_servers.ipynb`): a host with many servers.

# %% [markdown] lang="es"
# ## Resumen
#
# - Un servidor stdio es un proceso hijo; vacía su stderr todo el tiempo, o un servidor
#   hablador se queda colgado en `write()`.
# - El sondeo de la era envía `server/discover`; a un servidor heredado se le envía `initialize` y
#   luego `notifications/initialized`.
# - Una sesión son ids de un contador, una tabla de pendientes con futures que se llena antes
#   de cada escritura y un hilo lector que los resuelve y encola las notificaciones. El orden
#   no significa nada; el id dice de quién es cada respuesta.
# - Nunca bloquees al lector: los callbacks se ejecutan en otro hilo.
# - Al agotarse el tiempo de espera, se quita el id y se envía `notifications/cancelled`; una
#   respuesta tardía se descarta.
# - El progreso llega como notificaciones con el token de la solicitud; las solicitudes
#   propias de un servidor heredado (muestreo, solicitud de datos al usuario, raíces) se
#   responden con callbacks.
# - El cierre: cerrar stdin, SIGTERM y SIGKILL, cada uno con una espera acotada. Cuando el
#   servidor muere, el EOF hace fallar a la vez todas las solicitudes pendientes.
# - Cliente bloqueante con hilos para cuadernos y scripts; la versión asyncio para programas
#   asyncio, sobre la misma sesión sin E/S.
#
# **Laboratorio 05** (`labs/es/lab05_client.ipynb`): escribe el núcleo de solicitudes y
# respuestas de una sesión, calificado con servidores reales que se portan mal. Después, la
# **lección 06** (`06_many_servers.ipynb`): un host con muchos servidores.
