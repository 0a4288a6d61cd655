# %% [markdown] lang="en"
# # Lab 05 · The core of a client session
#
# > **Español:** [`labs/es/lab05_client.ipynb`](../es/lab05_client.ipynb)
#
# Lesson 05 drove servers with `mcpkit.Client`. Now you write the part of it that everything
# else stands on: a `Session` that sends requests to a server process over its pipes and
# hands each caller its own answer, with one reader thread and a future per request.
#
# | part | the checks hold your `Session` to | points |
# | --- | --- | --- |
# | 1 | ids, the pending table, results and errors, notifications, stray and out-of-order answers | 4 |
# | 2 | timeouts that send `notifications/cancelled` and forget the request | 3 |
# | 3 | end of stream failing everything pending at once; `close()` that leaves nothing behind | 3 |
#
# **How to work.** Replace each `# YOUR CODE HERE` / `raise NotImplementedError()` with your
# code, run the cell, then run the **graded cells** below it. A graded cell is read-only. Before
# you run it, it shows the line it prints when every check passes: that is the expected
# output, not your result. Run it, and it either prints that line or lists each case with what
# it expected and what your code returned. When all three pass, save the notebook and grade
# the whole lab from the repository's root:
#
# ```
# ./course.sh grade lab05
# ```
#
# **What your instructor grades.** Only the code in the exercise cell (the one with
# `# YOUR CODE HERE`), run on its own in a fresh Python process, on more generated cases than
# the graded cells here try and with a seed you do not see. Keep every definition it needs in
# that cell, and leave `grading` alone: code that touches the grader scores zero. You may not
# use `mcpkit.client`, `mcpkit.aclient` or `mcpkit.session`: they are what this lab asks you
# to write.
# Exercise code may import mcpkit, what the setup cell imports, and the plainer standard
# modules (`json`, `re`, `itertools`, `collections`, `time`, `threading`, `logging` and a few
# more); a graded cell names any other import it finds, with the whole list.
#
# **Real processes.** Every check starts a real server process, the lab's test server, and
# gives your `Session` its two pipes. The server misbehaves on purpose when asked: it answers
# out of order, sends notifications in between, answers ids nobody used, never answers, or
# dies in the middle of a call. After each check your session is closed and the checks look
# for anything left running: a thread of yours still alive, or a server that did not exit,
# fails the check.

# %% [markdown] lang="es"
# # Laboratorio 05 · El núcleo de una sesión de cliente
#
# > **English:** [`labs/en/lab05_client.ipynb`](../en/lab05_client.ipynb)
#
# La lección 05 controló servidores con `mcpkit.Client`. Ahora escribes la parte sobre la que se
# apoya todo lo demás: una `Session` que envía solicitudes a un proceso servidor por sus
# tuberías y le entrega a quien llama su propia respuesta, con un hilo lector y un future
# (resultado futuro) por solicitud.
#
# | parte | las comprobaciones le exigen a tu `Session` | puntos |
# | --- | --- | --- |
# | 1 | ids, la tabla de pendientes, resultados y errores, notificaciones, respuestas sueltas y fuera de orden | 4 |
# | 2 | tiempos de espera (timeouts) que, al agotarse, envían `notifications/cancelled` y olvidan la solicitud | 3 |
# | 3 | el fin del flujo hace fallar a la vez todo lo pendiente; un `close()` que no deja nada atrás | 3 |
#
# **Cómo trabajar.** Sustituye cada `# YOUR CODE HERE` / `raise NotImplementedError()` por tu
# código, ejecuta la celda y luego ejecuta las **celdas calificadas** que hay debajo. Una celda
# calificada es de solo lectura. Antes de que la ejecutes, ya muestra la línea que imprime cuando
# todas las comprobaciones pasan: es la salida esperada, no tu resultado. Ejecútala, y o bien imprime
# esa línea o enumera cada caso con lo que esperaba y lo que devolvió tu código. Cuando pasen
# las tres, guarda el cuaderno y califica el laboratorio completo desde la raíz del
# repositorio:
#
# ```
# ./course.sh grade lab05
# ```
#
# **Qué califica tu instructor/a.** Solo el código de la celda de ejercicio (la que lleva
# `# YOUR CODE HERE`), ejecutado por separado en un proceso de Python nuevo, con más casos
# generados de los que prueban aquí las celdas calificadas y con una semilla que no ves. Deja
# en esa celda todas las definiciones que necesita, y no toques `grading`: el código que
# manipula el calificador obtiene cero. No puedes usar `mcpkit.client`, `mcpkit.aclient` ni
# `mcpkit.session`: son lo que este laboratorio te pide escribir.
# El código de ejercicio puede importar mcpkit, lo que ya importa la celda de preparación y los
# módulos estándar más sencillos (`json`, `re`, `itertools`, `collections`, `time`,
# `threading`, `logging` y algunos más); una celda calificada nombra cualquier otra
# importación que encuentre, con la lista completa.
#
# **Procesos reales.** Cada comprobación arranca un proceso servidor real, el servidor de
# prueba del laboratorio, y le da a tu `Session` sus dos tuberías. Cuando se le pide, el
# servidor se porta mal a propósito: responde fuera de orden, envía notificaciones intercaladas,
# responde a ids que nadie usó, no responde nunca o muere a mitad de una llamada. Tras cada
# comprobación se cierra tu sesión y se busca lo que siga en marcha: un hilo tuyo todavía vivo
# o un servidor que no terminó hacen fallar la comprobación.

# %% tags=["setup"]
# [en] Setup: run this cell first.
# [es] Preparación: ejecuta esta celda primero.
import itertools
import json
import subprocess
import threading
import time
from concurrent.futures import Future

from mcpkit import grading

grading.set_language("en")


class RequestError(Exception):
    def __init__(self, code, message, data=None):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.data = data


class SessionClosed(Exception):
    pass


def start_server():
    return subprocess.Popen(grading.lab05_server_command(), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)


# %% [markdown] lang="en"
# ## The test server
#
# `start_server()` starts the lab's test server and returns its `Popen`: write requests to
# `process.stdin`, read answers from `process.stdout`, one JSON message per line (bytes). What
# it does depends on the method:
#
# | method | what the server does |
# | --- | --- |
# | `echo` | answers `{"echo": params}` |
# | `notify` | sends `params["count"]` notifications, then answers |
# | `notify_later` | answers at once, then sends a notification a moment later |
# | `error` | answers with the error `params["code"]`, `params["message"]` (and `params["data"]` when given) |
# | `stray` | first sends a response for an id nobody used (each of `params["ids"]` when given, of any JSON type), then its own answer |
# | `junk` | first writes lines that are no message (not JSON, blank, a scalar, an array, an object with neither `method` nor `id`) and a request of its own (a `method` and an `id`), then its answer |
# | `shape` | answers `{"params": params}`, or `{"params": "absent"}` when the request had none |
# | `hold` / `release` | holds requests until a `release` with `{"count": n}`, then answers them newest first |
# | `late` | answers after `params["delay"]` seconds |
# | `linger` | answers at once; at the end of its input, waits `params["seconds"]` before it exits, its output still open |
# | `silent` | never answers |
# | `cancelled` | answers with the methods of the requests that `notifications/cancelled` named, and the reasons it gave |
# | `die` | exits at once, answering nothing |
#
# It refuses (error -32600) an id it has already seen, and one that is not an integer or a
# string. It exits at the end of its input. Here is one exchange by hand:

# %% [markdown] lang="es"
# ## El servidor de prueba
#
# `start_server()` arranca el servidor de prueba del laboratorio y devuelve su `Popen`:
# escribe solicitudes en `process.stdin` y lee respuestas de `process.stdout`, un mensaje JSON
# por línea (bytes). Lo que hace depende del método:
#
# | método | qué hace el servidor |
# | --- | --- |
# | `echo` | responde `{"echo": params}` |
# | `notify` | envía `params["count"]` notificaciones y luego responde |
# | `notify_later` | responde en el acto y envía una notificación un momento después |
# | `error` | responde con el error `params["code"]`, `params["message"]` (y `params["data"]` si se indica) |
# | `stray` | primero envía una respuesta para un id que nadie usó (cada uno de `params["ids"]` si se dan, de cualquier tipo JSON) y luego la suya |
# | `junk` | primero escribe líneas que no son mensajes (no JSON, en blanco, un escalar, un array, un objeto sin `method` ni `id`) y una solicitud propia (con `method` e `id`), y luego su respuesta |
# | `shape` | responde `{"params": params}`, o `{"params": "absent"}` si la solicitud no traía params |
# | `hold` / `release` | retiene solicitudes hasta un `release` con `{"count": n}` y luego las responde empezando por la más reciente |
# | `late` | responde tras `params["delay"]` segundos |
# | `linger` | responde en el acto; al final de su entrada espera `params["seconds"]` antes de terminar, con su salida aún abierta |
# | `silent` | no responde nunca |
# | `cancelled` | responde con los métodos de las solicitudes que nombró `notifications/cancelled` y los motivos que dio |
# | `die` | termina en el acto, sin responder nada |
#
# Rechaza (error -32600) un id que ya vio, y uno que no sea un entero o una cadena. Termina al
# final de su entrada. Este es un intercambio a mano:

# %%
process = start_server()
process.stdin.write(b'{"jsonrpc":"2.0","id":1,"method":"notify","params":{"count":1}}\n')
process.stdin.flush()
print(process.stdout.readline())
print(process.stdout.readline())
process.stdin.close()
print(process.wait(5))
process.stdout.close()

# %% [markdown] lang="en"
# ## Your `Session`
#
# `Session(stdin, stdout)` receives the two pipes of a started server (binary files). Write:
#
# - `__init__`: the state (an id counter, the **pending table** `{id: Future}`, a list for
#   notifications, a lock) and **one reader thread**, started here, running `_read_loop`.
# - `_write(message)`: one message as one line (`json.dumps(...).encode() + b"\n"`), then
#   `flush()`, under the lock, so that two threads never mix their bytes.
# - `request(method, params=None, timeout=5.0)`: a new id (never reused: `itertools.count(1)`),
#   a `Future` put in the pending table **before** the message is written (with `_write`),
#   then a wait on the future. Leave `"params"` out when it is `None`, and send any other
#   `params` as given (`{}` and a list too). It returns the response's `result`, or raises
#   `RequestError(code, message, data)` with the error's own three fields for an error
#   response.
# - **Timeouts** (part 2): when the wait ends with `TimeoutError`, take the id out of the
#   pending table, write the notification
#   `{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": id,
#   "reason": "timeout"}}` and raise the `TimeoutError`. An answer that comes later must be
#   dropped without harm.
# - `_read_loop()`: read lines until the end of `stdout`. A message with a `method` and no `id`
#   is a notification: append it (the whole message) to the list; one with both is a request
#   from the server, which this lab drops. A response settles the
#   future it names (`set_result` or `set_exception`), **popped** from the pending table; a
#   response for an id that is not there is dropped. Ids are compared as JSON values: a
#   response with the id `true`, `1.0` or `"1"` answers none of your requests, though in
#   Python `True == 1` and `1.0 == 1`. A line that is not JSON is skipped.
# - **End of stream** (part 3): when the loop ends, mark the session closed and fail every
#   future still pending with `SessionClosed`, at once. From then on, `request()` raises
#   `SessionClosed` without waiting (and a write that fails with `BrokenPipeError` or
#   `ValueError` means the same).
# - `notifications()`: the notifications received so far, in order, and empties the list.
# - `close()`: close `stdin` (the server exits on end of input; ignore `OSError`), then
#   `join` the reader thread, which ends when the server's output ends, with a timeout of a
#   few seconds: a server slow to go must not hang `close()`.
#
# `request()` may be called from several threads at once (part 1 does it): anything two
# threads change goes under the lock. The reader thread must never block on anything but
# reading, and must never die of a bad message.

# %% [markdown] lang="es"
# ## Tu `Session`
#
# `Session(stdin, stdout)` recibe las dos tuberías de un servidor ya arrancado (archivos
# binarios). Escribe:
#
# - `__init__`: el estado (un contador de ids, la **tabla de pendientes** `{id: Future}`, una
#   lista para las notificaciones, un candado (lock)) y **un hilo lector**, arrancado aquí, que
#   ejecuta `_read_loop`.
# - `_write(message)`: un mensaje como una línea (`json.dumps(...).encode() + b"\n"`) y luego
#   `flush()`, bajo el candado, para que dos hilos nunca mezclen sus bytes.
# - `request(method, params=None, timeout=5.0)`: un id nuevo (que nunca se reutiliza:
#   `itertools.count(1)`), un `Future` puesto en la tabla de pendientes **antes** de escribir
#   el mensaje (con `_write`) y una espera sobre el future. Deja `"params"` fuera cuando es
#   `None` y envía cualquier otro `params` tal cual (también `{}` y una lista). Devuelve el
#   `result` de la respuesta, o lanza `RequestError(code, message, data)` con los tres campos
#   del propio error si la respuesta es un error.
# - **Tiempos de espera** (parte 2): cuando la espera termina con `TimeoutError`, saca el id de
#   la tabla de pendientes, escribe la notificación
#   `{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": id,
#   "reason": "timeout"}}` y lanza el `TimeoutError`. Una respuesta que llegue después debe
#   descartarse sin daño.
# - `_read_loop()`: lee líneas hasta el final de `stdout`. Un mensaje con `method` y sin `id`
#   es una notificación: añádelo (el mensaje completo) a la lista; uno con ambos es una
#   solicitud del servidor, que este laboratorio descarta. Una respuesta resuelve el
#   future que nombra (`set_result` o `set_exception`), **sacado** de la tabla de pendientes;
#   una respuesta para un id que no esté en la tabla se descarta. Los ids se comparan como
#   valores JSON: una respuesta con el id `true`, `1.0` o `"1"` no responde a ninguna de tus
#   solicitudes, aunque en Python `True == 1` y `1.0 == 1`. Una línea que no es JSON se salta.
# - **Fin del flujo** (parte 3): cuando termina el bucle, marca la sesión como cerrada y haz
#   fallar con `SessionClosed` cada future que siga pendiente, en el acto. A partir de ahí,
#   `request()` lanza `SessionClosed` sin esperar (y una escritura que falla con
#   `BrokenPipeError` o `ValueError` significa lo mismo).
# - `notifications()`: las notificaciones recibidas hasta ahora, en orden, y vacía la lista.
# - `close()`: cierra `stdin` (el servidor termina al final de su entrada; ignora `OSError`) y
#   luego espera con `join` al hilo lector, que acaba cuando acaba la salida del servidor, con
#   un tiempo de espera de unos pocos segundos: un servidor que tarda en irse no debe dejar
#   `close()` colgado.
#
# `request()` puede llamarse desde varios hilos a la vez (la parte 1 lo hace): todo lo que
# cambian dos hilos va bajo el candado. El hilo lector no debe bloquearse nunca en nada que no
# sea leer, ni morir por un mensaje malo.

# %%
class Session:
    def __init__(self, stdin, stdout):
        self.stdin = stdin
        self.stdout = stdout
        ### BEGIN SOLUTION
        self.ids = itertools.count(1)
        self.pending = {}
        self.notes = []
        self.lock = threading.Lock()
        self.closed = False
        self.reader = threading.Thread(target=self._read_loop, daemon=True)
        self.reader.start()
        ### END SOLUTION

    def _write(self, message):
        ### BEGIN SOLUTION
        with self.lock:
            self.stdin.write(json.dumps(message).encode() + b"\n")
            self.stdin.flush()
        ### END SOLUTION

    def request(self, method, params=None, timeout=5.0):
        ### BEGIN SOLUTION
        request_id = next(self.ids)
        future = Future()
        with self.lock:
            if self.closed:
                raise SessionClosed("the session has ended")
            self.pending[request_id] = future
        message = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        try:
            self._write(message)
        except (OSError, ValueError):
            self.pending.pop(request_id, None)
            raise SessionClosed("the server's input is closed") from None
        try:
            return future.result(timeout)
        except TimeoutError:
            self.pending.pop(request_id, None)
            try:
                self._write({"jsonrpc": "2.0", "method": "notifications/cancelled",
                             "params": {"requestId": request_id, "reason": "timeout"}})
            except (OSError, ValueError):
                pass
            raise
        ### END SOLUTION

    def _read_loop(self):
        ### BEGIN SOLUTION
        for line in self.stdout:
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if not isinstance(message, dict):
                continue
            if "method" in message and "id" not in message:
                with self.lock:
                    self.notes.append(message)
                continue
            request_id = message.get("id")
            if type(request_id) is not int:
                continue
            future = self.pending.pop(request_id, None)
            if future is None:
                continue
            if "error" in message:
                error = message["error"]
                future.set_exception(RequestError(error.get("code"), error.get("message"),
                                                  error.get("data")))
            else:
                future.set_result(message.get("result"))
        with self.lock:
            self.closed = True
            pending, self.pending = self.pending, {}
        for future in pending.values():
            future.set_exception(SessionClosed("the server's output ended"))
        ### END SOLUTION

    def notifications(self):
        ### BEGIN SOLUTION
        with self.lock:
            notes, self.notes = self.notes, []
        return notes
        ### END SOLUTION

    def close(self):
        ### BEGIN SOLUTION
        try:
            self.stdin.close()
        except OSError:
            pass
        self.reader.join(2)
        ### END SOLUTION


# %% [markdown] lang="en"
# Try it: a request, and the notifications that came before its answer.

# %% [markdown] lang="es"
# Pruébalo: una solicitud y las notificaciones que llegaron antes de su respuesta.

# %%
process = start_server()
session = Session(process.stdin, process.stdout)
print(session.request("notify", {"count": 2}))
print(session.notifications())
session.close()
print(process.wait(5))
process.stdout.close()

# %% [markdown] lang="en"
# ## Part 1 · Requests, results and errors
#
# One result per request, matched by id; errors raised as `RequestError`; notifications kept
# in order; a stray response dropped; three requests from three threads answered newest first,
# each caller getting its own. The last check runs your session and the reference side by side
# on generated sessions.

# %% [markdown] lang="es"
# ## Parte 1 · Solicitudes, resultados y errores
#
# Un resultado por solicitud, emparejado por id; los errores se lanzan como `RequestError`;
# las notificaciones se guardan en orden; una respuesta suelta se descarta; tres solicitudes
# desde tres hilos se responden empezando por la más reciente y cada hilo que llama recibe la
# suya.
# La última comprobación ejecuta tu sesión y la referencia a la par sobre sesiones generadas.

# %% tags=["graded"] points=4
grading.check_requests(Session)

# %% [markdown] lang="en"
# ## Part 2 · Timeouts and cancellation
#
# A request to `silent` must end with `TimeoutError` soon after its timeout, tell the server
# with `notifications/cancelled`, and leave the session as good as new.

# %% [markdown] lang="es"
# ## Parte 2 · Tiempos de espera y cancelación
#
# Una solicitud a `silent` debe terminar con `TimeoutError` poco después de que se agote su
# tiempo de espera, avisar al servidor con `notifications/cancelled` y dejar la sesión como
# nueva.

# %% tags=["graded"] points=3
grading.check_timeouts(Session)

# %% [markdown] lang="en"
# ## Part 3 · End of stream and a clean close
#
# `die` makes the server exit in the middle of a call. Every request waiting must fail with
# `SessionClosed` right away (not after its timeout), the next one too, and `close()` must
# leave no thread and no process behind.

# %% [markdown] lang="es"
# ## Parte 3 · Fin del flujo y un cierre limpio
#
# `die` hace que el servidor termine en mitad de una llamada. Cada solicitud que espera debe
# fallar con `SessionClosed` en el acto (no cuando se agote su tiempo de espera), la siguiente
# también, y `close()` no debe dejar atrás ni hilos ni procesos.

# %% tags=["graded"] points=3
grading.check_end_of_stream(Session)

# %% [markdown] lang="en"
# ## Done?
#
# Compare your `Session` with `mcpkit/session.py` and `mcpkit/client.py`. mcpkit splits it in
# two: `ClientSession` decides (ids, the pending table, what each message means) without any
# I/O, and `Client` only moves bytes and waits, with the same reader thread you wrote. What
# does that split buy? Think of `mcpkit/aclient.py`, which drives the very same session with
# asyncio.

# %% [markdown] lang="es"
# ## ¿Terminaste?
#
# Compara tu `Session` con `mcpkit/session.py` y `mcpkit/client.py`. mcpkit la divide en dos:
# `ClientSession` decide (ids, la tabla de pendientes, qué significa cada mensaje) sin ninguna
# E/S, y `Client` solo mueve bytes y espera, con el mismo hilo lector que escribiste. ¿Qué se
# gana con esa división? Piensa en `mcpkit/aclient.py`, que usa exactamente la misma sesión
# con asyncio.
