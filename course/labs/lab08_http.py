# %% [markdown] lang="en"
# # Lab 08 · An HTTP front for the notes server
#
# > **Español:** [`labs/es/lab08_http.ipynb`](../es/lab08_http.ipynb)
#
# Lesson 08 used mcpkit's `McpHttpApp`. Now you write your own streamable HTTP front, for the
# modern era (2026-07-28, stateless), as a plain ASGI application:
#
# | part | you write | points |
# | --- | --- | --- |
# | 1 | `refusal(method, path, headers, token)`: the checks before any JSON is read | 4 |
# | 2 | `make_app(server, token=None, max_body_size=4096)`: the ASGI app | 6 |
#
# **How to work.** Replace each `# YOUR CODE HERE` / `raise NotImplementedError()` with your
# code, run the cell, then run the **graded cell** below it. A graded cell is read-only. Before
# you run it, it shows the line it prints when every check passes: that is the expected
# output, not your result. When both pass, save the notebook and grade the whole lab from the
# repository's root:
#
# ```
# ./course.sh grade lab08
# ```
#
# **What your instructor grades.** Only the code in the exercise cells, run on its own in a
# fresh Python process, on more generated cases than the graded cells here try and with a seed
# you do not see. Keep every definition an exercise needs in its exercise cells, and leave
# `grading` alone: code that touches the grader scores zero. mcpkit's `Guard` and
# `McpHttpApp` do what the lab asks, so they are off limits.
# Exercise code may import mcpkit, what the setup cell imports, and the plainer standard
# modules (`json`, `re`, `itertools`, `collections`, `time`, `threading`, `logging` and a few
# more); a graded cell names any other import it finds, with the whole list.
#
# The checks run your app under uvicorn on 127.0.0.1 and talk to it over real HTTP, with
# httpx and with mcpkit's own client; then they send the same generated HTTP requests to your
# app and to mcpkit's `McpHttpApp` and compare what comes back.

# %% [markdown] lang="es"
# # Laboratorio 08 · Una capa HTTP delante del servidor de notas
#
# > **English:** [`labs/en/lab08_http.ipynb`](../en/lab08_http.ipynb)
#
# La lección 08 usó el `McpHttpApp` de mcpkit. Ahora escribes tu propia capa de HTTP con
# flujos, para la era moderna (2026-07-28, sin estado), como una aplicación ASGI normal:
#
# | parte | escribes | puntos |
# | --- | --- | --- |
# | 1 | `refusal(method, path, headers, token)`: las comprobaciones antes de leer JSON | 4 |
# | 2 | `make_app(server, token=None, max_body_size=4096)`: la aplicación ASGI | 6 |
#
# **Cómo trabajar.** Sustituye cada `# YOUR CODE HERE` / `raise NotImplementedError()` por tu
# código, ejecuta la celda y luego ejecuta la **celda calificada** que hay debajo. Una celda
# calificada es de solo lectura. Antes de que la ejecutes, ya muestra la línea que imprime cuando
# todas las comprobaciones pasan: es la salida esperada, no tu resultado. Cuando pasen las dos,
# guarda el cuaderno y califica el laboratorio completo desde la raíz del repositorio:
#
# ```
# ./course.sh grade lab08
# ```
#
# **Qué califica tu instructor/a.** Solo el código de las celdas de ejercicio, ejecutado por
# separado en un proceso de Python nuevo, con más casos generados de los que prueban aquí las
# celdas calificadas y con una semilla que no ves. Deja en las celdas de ejercicio todas las
# definiciones que necesitan, y no toques `grading`: el código que manipula el calificador
# obtiene cero. El `Guard` y el `McpHttpApp` de mcpkit hacen lo que pide el laboratorio, así
# que no puedes usarlos.
# El código de ejercicio puede importar mcpkit, lo que ya importa la celda de preparación y los
# módulos estándar más sencillos (`json`, `re`, `itertools`, `collections`, `time`,
# `threading`, `logging` y algunos más); una celda calificada nombra cualquier otra
# importación que encuentre, con la lista completa.
#
# Las comprobaciones ejecutan tu aplicación con uvicorn en 127.0.0.1 y hablan con ella por HTTP
# real, con httpx y con el propio cliente de mcpkit; después envían las mismas solicitudes HTTP
# generadas a tu aplicación y al `McpHttpApp` de mcpkit y comparan lo que vuelve.

# %% tags=["setup"]
# [en] Setup: run this cell first.
# [es] Preparación: ejecuta esta celda primero.
import asyncio
import hmac
import json
import queue
from urllib.parse import urlsplit

from mcpkit import grading, jsonrpc
from mcpkit.jsonrpc import JsonRpcError

grading.set_language("en")
LOOPBACK = ("localhost", "127.0.0.1", "::1")


def host_name(authority):
    try:
        return urlsplit("//" + authority).hostname
    except ValueError:
        return None


def origin_parts(origin):
    try:
        parts = urlsplit(origin)
        return parts.scheme, parts.hostname
    except ValueError:
        return None, None


def media_types(value):
    found = []
    for item in (value or "").split(","):
        media, *params = (part.replace(" ", "").lower() for part in item.split(";"))
        if media and not any(p in ("q=0", "q=0.0", "q=0.00", "q=0.000") for p in params):
            found.append(media)
    return found


def same_secret(given, expected):
    return hmac.compare_digest(given.encode(), expected.encode())


def header_dict(scope):
    headers = {}
    for name, value in scope["headers"]:
        key, text = name.decode("latin-1").lower(), value.decode("latin-1").strip(" \t")
        headers[key] = f"{headers[key]}, {text}" if key in headers else text
    return headers


def exchange(server, message):
    replies = queue.Queue()
    connection = server.connect(replies.put)
    connection.receive(message)
    out = []
    while not out or "method" in out[-1]:
        out.append(replies.get(timeout=10))
    connection.close()
    return out


async def answer(server, message):
    return await asyncio.to_thread(exchange, server, message)


async def send_json(send, status, body, headers=()):
    data = json.dumps(body).encode()
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(data)).encode()),
        *((k.encode(), v.encode()) for k, v in headers)]})
    await send({"type": "http.response.body", "body": data})


async def send_error(send, status, message, code=jsonrpc.INVALID_REQUEST, headers=()):
    body = {"jsonrpc": "2.0", "error": {"code": code, "message": message}}
    await send_json(send, status, body, headers)

# %% [markdown] lang="en"
# The setup cell gives you small helpers, so that the lab is about the decisions:
#
# - `host_name("127.0.0.1:8000")` is `"127.0.0.1"` (lowercase, no port, `[::1]` without its
#   brackets); `origin_parts("http://localhost:3000")` is `("http", "localhost")`;
#   `media_types("application/json; charset=utf-8, */*;q=0")` is `["application/json"]`
#   (parameters dropped, and types with `q=0`, "not acceptable", left out);
#   `same_secret(a, b)` compares two strings in constant time; `LOOPBACK` is the three names of
#   this machine.
# - `header_dict(scope)`: an ASGI request's headers as a dict with lowercase names (a header
#   sent in several lines is joined with `", "`, as HTTP reads it).
# - `await answer(server, message)`: hands one JSON-RPC message to a fresh connection of
#   `server` (stateless: one per request) and returns every message the server sent, the
#   final response last; on a thread, so the event loop stays free.
# - `await send_json(send, status, body, headers=())` and
#   `await send_error(send, status, message, code=-32600, headers=())`.
#
# ## Part 1 · The checks before any JSON is read
#
# Write `refusal(method, path, headers, token)`: `headers` is a dict with lowercase names,
# `token` the bearer token the server requires (or `None`). Return `None` when the request
# may go on, or `(status, message)` for the first rule it breaks, in this order:
#
# 1. the path, without its trailing `/`s (`/mcp/` and `/mcp//` are `/mcp`), is not `/mcp`: 404;
# 2. no `host` header, or its `host_name` is not in `LOOPBACK`: 403;
# 3. an `origin` header whose scheme is not `http`/`https` or whose host is not in
#    `LOOPBACK`: 403;
# 4. with a `token` (`None` or `""`: no token): `authorization` must be `Bearer <credentials>` (split at the first space;
#    the scheme in any case; credentials not empty), and the credentials, stripped, must be
#    `same_secret` as the token: else 401;
# 5. a method other than GET, POST or DELETE: 405;
# 6. a POST only: `content-type`'s media types must include `application/json` (415), and
#    unless `accept` is missing (which accepts anything; present but empty, it accepts
#    nothing), its media types must accept both
#    `application/json` and `text/event-stream`, each by its exact name, its family
#    (`application/*`, `text/*`) or `*/*` (406).

# %% [markdown] lang="es"
# La celda de preparación te da funciones auxiliares pequeñas, para que el laboratorio se centre en
# las decisiones:
#
# - `host_name("127.0.0.1:8000")` es `"127.0.0.1"` (en minúsculas, sin puerto, `[::1]` sin sus
#   corchetes); `origin_parts("http://localhost:3000")` es `("http", "localhost")`;
#   `media_types("application/json; charset=utf-8, */*;q=0")` es `["application/json"]` (sin
#   parámetros, y sin los tipos con `q=0`, "no aceptable"); `same_secret(a, b)` compara dos
#   cadenas en tiempo constante; `LOOPBACK` son los tres nombres de esta máquina.
# - `header_dict(scope)`: las cabeceras de una solicitud ASGI como un dict con nombres en
#   minúsculas (una cabecera enviada en varias líneas queda unida con `", "`, como la lee
#   HTTP).
# - `await answer(server, message)`: entrega un mensaje JSON-RPC a una conexión nueva de
#   `server` (sin estado: una por solicitud) y devuelve todos los mensajes que envió el
#   servidor, con la respuesta final en último lugar; en un hilo, para que el bucle de eventos quede
#   libre.
# - `await send_json(send, status, body, headers=())` y
#   `await send_error(send, status, message, code=-32600, headers=())`.
#
# ## Parte 1 · Las comprobaciones antes de leer JSON
#
# Escribe `refusal(method, path, headers, token)`: `headers` es un dict con nombres en
# minúsculas, `token` el token de portador que exige el servidor (o `None`). Devuelve `None`
# cuando la solicitud puede seguir, o `(status, message)` para la primera regla que incumple,
# en este orden:
#
# 1. la ruta, sin sus `/` finales (`/mcp/` y `/mcp//` son `/mcp`), no es `/mcp`: 404;
# 2. no hay cabecera `host`, o su `host_name` no está en `LOOPBACK`: 403;
# 3. una cabecera `origin` cuyo esquema no es `http`/`https` o cuyo host no está en
#    `LOOPBACK`: 403;
# 4. con un `token` (`None` o `""`: sin token): `authorization` debe ser `Bearer <credenciales>`
#    (dividida en el primer espacio; el esquema en mayúsculas o minúsculas; credenciales no
#    vacías), y las credenciales, sin espacios alrededor, deben ser `same_secret` con el token:
#    si no, 401;
# 5. un método que no es GET, POST ni DELETE: 405;
# 6. solo en un POST: los tipos de medio de `content-type` deben incluir `application/json`
#    (415) y, salvo que falte `accept` (que acepta cualquier cosa; presente pero vacío, no
#    acepta nada), sus tipos de medio deben aceptar los dos, `application/json` y
#    `text/event-stream`, cada uno por su nombre exacto, su familia (`application/*`,
#    `text/*`) o `*/*` (406).

# %%
def refusal(method, path, headers, token):
    ### BEGIN SOLUTION
    if path.rstrip("/") != "/mcp":
        return 404, f"no MCP endpoint at {path}; it is at /mcp"
    host = headers.get("host")
    if host is None or host_name(host) not in LOOPBACK:
        return 403, f"Host {host!r} is not allowed (DNS rebinding protection)"
    origin = headers.get("origin")
    if origin is not None:
        scheme, name = origin_parts(origin)
        if scheme not in ("http", "https") or name not in LOOPBACK:
            return 403, f"Origin {origin!r} is not allowed (DNS rebinding protection)"
    if token:
        scheme, _, credentials = headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not credentials:
            return 401, "this server needs Authorization: Bearer <token>"
        if not same_secret(credentials.strip(), token):
            return 401, "the bearer token is not valid"
    if method not in ("GET", "POST", "DELETE"):
        return 405, f"{method} is not used by MCP"
    if method == "POST":
        if "application/json" not in media_types(headers.get("content-type")):
            return 415, "POST a JSON-RPC message with Content-Type: application/json"
        if "accept" in headers:
            accepted = media_types(headers["accept"])
            for wanted in ("application/json", "text/event-stream"):
                family = wanted.split("/")[0] + "/*"
                if not any(m in (wanted, family, "*/*") for m in accepted):
                    return 406, "Accept must list application/json and text/event-stream"
    return None
    ### END SOLUTION


# %%
[refusal("POST", "/mcp", {"host": "127.0.0.1:8000", "content-type": "application/json"}, None),
 refusal("POST", "/mcp", {"host": "evil.example"}, None)]

# %% tags=["graded"] points=4
grading.check_refusal(refusal)

# %% [markdown] lang="en"
# ## Part 2 · The ASGI app
#
# An ASGI application is `async def app(scope, receive, send)`. For an HTTP request,
# `scope["type"]` is `"http"` and `scope["method"]`, `scope["path"]` and `scope["headers"]`
# describe it; `await receive()` gives the body in pieces, events
# `{"type": "http.request", "body": b"...", "more_body": True/False}`; you answer with
# `await send({"type": "http.response.start", "status": ..., "headers": [(b"name", b"value"),
# ...]})` then one or more `await send({"type": "http.response.body", "body": b"...",
# "more_body": ...})`. The last body event of every response has `more_body` False (or leaves
# it out): until it is sent, the response is not over.
#
# Write `make_app(server, token=None, max_body_size=4096)`, which returns such an app. A scope
# of another type (uvicorn also sends `"lifespan"`) needs nothing from this app: return at
# once. For every request whose `scope["type"]` is `"http"`:
#
# 1. `refusal(...)` (part 1) with its method, path, `header_dict(scope)` and `token`: if it
#    refuses, `send_error(send, status, message)`.
# 2. GET and DELETE: `send_error(send, 405, ..., headers=[("allow", "POST")])`: a stateless
#    server has no sessions to end and no stream to open outside a request.
# 3. Read the body, event by event, counting its bytes: **as soon as** it is longer than
#    `max_body_size`, 413 (a client could otherwise send gigabytes; `send_error`'s default
#    code is fine). Exactly `max_body_size` bytes is fine. An `http.disconnect` event: the
#    client has gone, so return without answering.
# 4. Not JSON (`json.loads` raises `ValueError`): 400 with code -32700. Not an object, or not
#    a JSON-RPC request or notification (`jsonrpc.classify` raises `JsonRpcError`, or says it
#    is a `"result"` or an `"error"`): 400 with code -32600.
# 5. A notification: 202 with no body (`http.response.start` with status 202, then an empty
#    body), whatever its method and params; it does not go to the server (in this era no
#    client notification travels over HTTP, and `answer` would wait for a response).
# 6. A request: `replies = await answer(server, message)`. The final response is
#    `replies[-1]`. If it is the only message, answer it with `send_json`: status 404 if its
#    error code is -32601, 400 for the other protocol errors (-32700, -32600, -32602, -32020,
#    -32021, -32022), else 200. If notifications came first, answer with an SSE stream
#    instead: status 200, `content-type: text/event-stream`, then for each message in order a
#    body piece `b"event: message\ndata: " + json + b"\n\n"`, and an empty last piece.

# %% [markdown] lang="es"
# ## Parte 2 · La aplicación ASGI
#
# Una aplicación ASGI es `async def app(scope, receive, send)`. Para una solicitud HTTP,
# `scope["type"]` es `"http"` y `scope["method"]`, `scope["path"]` y `scope["headers"]` la
# describen; `await receive()` da el cuerpo por partes, eventos
# `{"type": "http.request", "body": b"...", "more_body": True/False}`; respondes con
# `await send({"type": "http.response.start", "status": ..., "headers": [(b"name",
# b"value"), ...]})` y después uno o más `await send({"type": "http.response.body", "body":
# b"...", "more_body": ...})`. El último evento de cuerpo de cada respuesta lleva `more_body`
# en False (o no lo lleva): hasta que se envía, la respuesta no ha terminado.
#
# Escribe `make_app(server, token=None, max_body_size=4096)`, que devuelve una aplicación así.
# Un scope de otro tipo (uvicorn también envía `"lifespan"`) no necesita nada de esta
# aplicación: retorna en el acto. Para cada solicitud cuyo `scope["type"]` sea `"http"`:
#
# 1. `refusal(...)` (parte 1) con su método, su ruta, `header_dict(scope)` y `token`: si la
#    rechaza, `send_error(send, status, message)`.
# 2. GET y DELETE: `send_error(send, 405, ..., headers=[("allow", "POST")])`: un servidor sin
#    estado no tiene sesiones que terminar ni flujo que abrir fuera de una solicitud.
# 3. Lee el cuerpo, evento a evento, contando sus bytes: **en cuanto** supere
#    `max_body_size`, 413 (si no, un cliente podría enviar gigabytes; el código por defecto
#    de `send_error` vale). Exactamente `max_body_size` bytes está bien. Un evento
#    `http.disconnect`: el cliente se ha ido, así que retorna sin responder.
# 4. No es JSON (`json.loads` lanza `ValueError`): 400 con el código -32700. No es un objeto,
#    o no es una solicitud ni una notificación JSON-RPC (`jsonrpc.classify` lanza
#    `JsonRpcError`, o dice que es un `"result"` o un `"error"`): 400 con el código -32600.
# 5. Una notificación: 202 sin cuerpo (`http.response.start` con código de estado 202 y después
#    un cuerpo vacío), sean cuales sean su método y sus params; no va al servidor (en esta era
#    ninguna notificación del cliente viaja por HTTP, y `answer` esperaría una respuesta).
# 6. Una solicitud: `replies = await answer(server, message)`. La respuesta final es
#    `replies[-1]`. Si es el único mensaje, respóndela con `send_json`: código de estado 404 si
#    su código de error es -32601, 400 para los demás errores de protocolo (-32700, -32600,
#    -32602, -32020, -32021, -32022) y 200 en otro caso. Si antes llegaron notificaciones,
#    responde en cambio con un flujo SSE: código de estado 200, `content-type: text/event-stream`
#    y, por cada mensaje en orden, un trozo de cuerpo
#    `b"event: message\ndata: " + json + b"\n\n"`, y un último trozo vacío.

# %%
def make_app(server, token=None, max_body_size=4096):
    ### BEGIN SOLUTION
    bad_request = {-32700, -32600, -32602, -32020, -32021, -32022}

    def status_of(response):
        code = response.get("error", {}).get("code")
        return 404 if code == -32601 else 400 if code in bad_request else 200

    async def app(scope, receive, send):
        if scope["type"] != "http":
            return
        method = scope["method"]
        refused = refusal(method, scope["path"], header_dict(scope), token)
        if refused:
            await send_error(send, *refused)
            return
        if method != "POST":
            await send_error(send, 405, "no sessions here: POST one JSON-RPC message",
                             headers=[("allow", "POST")])
            return
        body, more = b"", True
        while more:
            event = await receive()
            if event["type"] == "http.disconnect":
                return
            body += event.get("body", b"")
            more = event.get("more_body", False)
            if len(body) > max_body_size:
                await send_error(send, 413, f"request body larger than {max_body_size} bytes")
                return
        try:
            message = json.loads(body)
        except ValueError:
            await send_error(send, 400, "parse error", code=jsonrpc.PARSE_ERROR)
            return
        try:
            kind = jsonrpc.classify(message)
        except JsonRpcError as exc:
            await send_error(send, 400, exc.message, code=exc.code)
            return
        if kind not in ("request", "notification"):
            await send_error(send, 400, "a modern server sends no requests to answer")
            return
        if kind == "notification":
            await send({"type": "http.response.start", "status": 202,
                        "headers": [(b"content-length", b"0")]})
            await send({"type": "http.response.body", "body": b""})
            return
        replies = await answer(server, message)
        if len(replies) == 1:
            await send_json(send, status_of(replies[0]), replies[0])
            return
        await send({"type": "http.response.start", "status": 200, "headers": [
            (b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")]})
        for reply in replies:
            data = json.dumps(reply).encode()
            await send({"type": "http.response.body", "more_body": True,
                        "body": b"event: message\ndata: " + data + b"\n\n"})
        await send({"type": "http.response.body", "body": b""})

    return app
    ### END SOLUTION


# %%
front = make_app(grading.notes_front_server())
sent = grading.drive(front, "POST", "/mcp", list(grading.modern_headers(
    grading.lab08.COUNT).items()), [json.dumps(grading.lab08.COUNT).encode()])
grading.http_outcome(sent)

# %% tags=["graded"] points=6
grading.check_notes_front(make_app)

# %% [markdown] lang="en"
# ## Done?
#
# Compare your app with `McpHttpApp` in `mcpkit/transports/http.py`, which also serves the
# legacy era on the same endpoint (sessions, the GET stream, DELETE), checks that the
# `Mcp-Method` and `Mcp-Name` headers mirror the body (-32020), cancels a request whose
# stream the client closed, and bounds how long a slow client may take to send its body
# (`http_protocol.py`). Two things to try:
#
# - Serve your app for real: `grading.lab08._Uvicorn(make_app(grading.notes_front_server()))`
#   is a context manager with a `.url`; point `mcpkit.client.Client(url=..., version="modern",
#   listen=False)` at it and call `notes_search`.
# - Your app calls `answer(...)`, which runs the server on a thread. What would go wrong if
#   it called `exchange(...)` directly, with a tool that takes a second, and ten clients?

# %% [markdown] lang="es"
# ## ¿Terminaste?
#
# Compara tu aplicación con `McpHttpApp` en `mcpkit/transports/http.py`, que además sirve la
# era heredada en el mismo punto de acceso (sesiones, el flujo GET, DELETE), comprueba que las
# cabeceras `Mcp-Method` y `Mcp-Name` reflejan el cuerpo (-32020), cancela una solicitud cuyo
# flujo cerró el cliente y limita cuánto puede tardar un cliente lento en enviar su cuerpo
# (`http_protocol.py`). Dos cosas que probar:
#
# - Sirve tu aplicación de verdad:
#   `grading.lab08._Uvicorn(make_app(grading.notes_front_server()))` es un gestor de contexto
#   con un `.url`; conéctate a él con `mcpkit.client.Client(url=..., version="modern",
#   listen=False)` y llama a `notes_search`.
# - Tu aplicación llama a `answer(...)`, que ejecuta el servidor en un hilo. ¿Qué fallaría si
#   llamara directamente a `exchange(...)`, con una herramienta que tarda un segundo y diez
#   clientes?
