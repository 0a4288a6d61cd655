# %% [markdown] lang="en"
# # Lesson 08 · Streamable HTTP
#
# > **Español:** [`notebooks/es/08_http.ipynb`](../es/08_http.ipynb)
#
# Until now every server was a child process on two pipes. Remote servers, and servers that
# many clients share, speak MCP over HTTP instead: one endpoint, `/mcp`, and every client
# message is its own POST. In this lesson, always on 127.0.0.1 and over real HTTP, you will:
#
# 1. POST a request and get its answer as JSON, or as an SSE stream when the server has more
#    to say first;
# 2. read the headers (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, and the legacy
#    `Mcp-Session-Id`), and see why the modern era repeats body fields in headers;
# 3. run a legacy session (initialize, the GET stream, DELETE) beside modern requests;
# 4. close a stream and watch its request get cancelled;
# 5. try a DNS-rebinding attack and a missing bearer token, and see both refused;
# 6. scale out: the two rounds of one request answered by two worker processes, and what a
#    legacy session needs instead;
# 7. run the official conformance suite against the server, when it is installed.
#
# The code: `mcpkit/transports/http.py` (routing and the handler of each era),
# `http_security.py` (the `Guard`: Host, Origin, token, Content-Type, Accept),
# `http_headers.py` (header names, how values travel in them, the modern mirror check),
# `http_protocol.py` (deadlines for slow clients) and `mcpkit/launch.py` (`--workers`).

# %% [markdown] lang="es"
# # Lección 08 · HTTP con flujos (streamable HTTP)
#
# > **English:** [`notebooks/en/08_http.ipynb`](../en/08_http.ipynb)
#
# Hasta ahora cada servidor era un proceso hijo con dos tuberías. Los servidores remotos, y los
# que comparten muchos clientes, hablan MCP sobre HTTP: un único punto de acceso, `/mcp`, y cada
# mensaje del cliente es su propio POST. En esta lección, siempre en 127.0.0.1 y con HTTP real,
# vas a:
#
# 1. enviar una solicitud por POST y recibir la respuesta como JSON, o como un flujo SSE cuando
#    el servidor tiene algo más que decir antes;
# 2. leer las cabeceras (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` y la heredada
#    `Mcp-Session-Id`) y ver por qué la era moderna repite campos del cuerpo en cabeceras;
# 3. mantener una sesión heredada (initialize, el flujo GET, DELETE) junto a solicitudes
#    modernas;
# 4. cerrar un flujo y ver cómo se cancela su solicitud;
# 5. intentar un ataque de DNS rebinding y una solicitud sin token de portador (bearer), y ver
#    cómo se rechazan los dos;
# 6. escalar horizontalmente: las dos rondas de una solicitud respondidas por dos procesos
#    trabajadores, y lo que necesita en cambio una sesión heredada;
# 7. ejecutar el conjunto oficial de pruebas de conformidad contra el servidor, si está
#    instalado.
#
# El código: `mcpkit/transports/http.py` (el enrutamiento y el manejador de cada era),
# `http_security.py` (el `Guard`: Host, Origin, token, Content-Type, Accept),
# `http_headers.py` (nombres de cabecera, cómo viajan los valores en ellas, la comprobación
# moderna de que las cabeceras reflejan el cuerpo), `http_protocol.py` (plazos para clientes
# lentos) y `mcpkit/launch.py` (`--workers`).

# %% tags=["setup"]
# [en] Setup: run this cell first.
# [es] Preparación: ejecuta esta celda primero.
import json
import os
import pathlib
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
import threading
import time

import httpx
from mcpkit import Server, grading, jsonrpc, versions
from mcpkit.context import Context
from mcpkit.examples import notes
from mcpkit.transports import http_headers
from mcpkit.transports.http import serve_in_thread

grading.set_language("en")
notes.reset()

MODERN = "2026-07-28"
META = {versions.META_PROTOCOL_VERSION: MODERN, versions.META_CLIENT_CAPABILITIES: {}}
ACCEPT = "application/json, text/event-stream"


def modern_headers(message):
    headers = {"content-type": "application/json", "accept": ACCEPT,
               "mcp-protocol-version": MODERN, "mcp-method": message["method"]}
    field = http_headers.NAME_FIELDS.get(message["method"])
    if field:
        headers["mcp-name"] = http_headers.encode_header_value(message["params"][field])
    return headers


def show_response(response, headers=("content-type",)):
    print(response.status_code, {name: response.headers.get(name) for name in headers})
    print(response.text.strip())


notes_http = serve_in_thread(notes.server)
URL = notes_http.url

# %% [markdown] lang="en"
# `serve_in_thread` runs the notes server under uvicorn on a background thread, on a free
# port of 127.0.0.1 (the address changes on every run, so no output prints it). The app
# itself, `McpHttpApp` in `mcpkit/transports/http.py`, is a plain ASGI application: a
# function that receives each HTTP request as events and sends its response as events, with
# no web framework in between.
#
# ## 1. POST, and a JSON answer
#
# A modern request is the same JSON-RPC message as on stdio, as the body of a POST. The
# client says it sends JSON (`Content-Type`) and that it accepts both answer formats
# (`Accept: application/json, text/event-stream`); the server picks one.

# %% [markdown] lang="es"
# `serve_in_thread` ejecuta el servidor de notas con uvicorn en un hilo en segundo plano, en un
# puerto libre de 127.0.0.1 (la dirección cambia en cada ejecución, así que ninguna salida la
# muestra). La aplicación en sí, `McpHttpApp` en `mcpkit/transports/http.py`, es una aplicación
# ASGI normal: una función que recibe cada solicitud HTTP como eventos y envía su respuesta como
# eventos, sin ningún framework web de por medio.
#
# ## 1. POST y una respuesta JSON
#
# Una solicitud moderna es el mismo mensaje JSON-RPC que en stdio, como cuerpo de un POST. El
# cliente dice que envía JSON (`Content-Type`) y que acepta los dos formatos de respuesta
# (`Accept: application/json, text/event-stream`); el servidor elige uno.

# %%
search = jsonrpc.request(1, "tools/call", {"name": "notes_search",
                                           "arguments": {"query": "mcp"}, "_meta": META})
print(json.dumps(modern_headers(search), indent=1))
show_response(httpx.post(URL, json=search, headers=modern_headers(search)))

# %% [markdown] lang="en"
# ## 2. An SSE answer
#
# When the server has something to send **before** the final response (a log line, progress,
# a listen acknowledgment), the answer becomes a stream of Server-Sent Events: status 200,
# `Content-Type: text/event-stream`, and one `event: message` / `data: <JSON>` block per
# message, the final response last. The first message out decides the format: the tool below
# logs a line before it answers (the client asked for `info` and above in `_meta`). Logging
# is deprecated since 2026-07-28 (lesson 07, section 9), progress is not: either opens the
# stream.

# %% [markdown] lang="es"
# ## 2. Una respuesta SSE
#
# Cuando el servidor tiene algo que enviar **antes** de la respuesta final (una línea de
# registro, el progreso, la confirmación de una escucha), la respuesta se convierte en un flujo
# de Server-Sent Events: código de estado 200, `Content-Type: text/event-stream` y un bloque
# `event: message` / `data: <JSON>` por mensaje, y la respuesta final en último lugar. El primer
# mensaje que sale decide el formato: la herramienta de abajo escribe una línea de registro antes
# de responder (el cliente pidió en `_meta` el nivel `info` o superior). El registro está
# obsoleto desde 2026-07-28 (lección 07, sección 9) y el progreso no: cualquiera de los dos abre
# el flujo.

# %%
chatty = Server("chatty", "1.0.0")


@chatty.tool(read_only=True)
def count_words(text: str, ctx: Context) -> int:
    """Count the words of a text, logging what it does."""
    ctx.log("info", f"counting the words of {len(text)} characters")
    return len(text.split())


chatty_http = serve_in_thread(chatty)
count = jsonrpc.request(1, "tools/call", {
    "name": "count_words", "arguments": {"text": "one two three"},
    "_meta": {**META, versions.META_LOG_LEVEL: "info"}})
show_response(httpx.post(chatty_http.url, json=count, headers=modern_headers(count)))

# %% [markdown] lang="en"
# ## 3. Why the modern era repeats the body in headers
#
# Look again at the headers of section 1: `Mcp-Method: tools/call` and `Mcp-Name:
# notes_search` say what the body already says. That is for whatever stands **between**
# client and server: a load balancer, an API gateway or a firewall can route, rate-limit or
# refuse by method and tool name without parsing JSON (the modern era keeps no session to
# route by). The server must then make sure the two agree, or a request could show a
# harmless name to the gateway and run another tool: `HeaderMirror` in `http_headers.py`
# refuses a mismatch with -32020 and HTTP 400. Values that are not plain ASCII travel
# Base64-encoded (`encode_header_value`).

# %% [markdown] lang="es"
# ## 3. Por qué la era moderna repite el cuerpo en cabeceras
#
# Mira otra vez las cabeceras de la sección 1: `Mcp-Method: tools/call` y `Mcp-Name:
# notes_search` dicen lo que ya dice el cuerpo. Es para lo que está **entre** cliente y
# servidor: un balanceador de carga, una pasarela de API o un cortafuegos pueden enrutar,
# limitar la tasa de solicitudes o rechazar por método y nombre de herramienta sin analizar JSON
# (la era moderna no guarda ninguna sesión por la que enrutar). Entonces el servidor debe
# asegurarse de que las dos cosas coinciden, o una solicitud podría mostrarle a la pasarela un
# nombre inofensivo y ejecutar otra herramienta: `HeaderMirror` en `http_headers.py` rechaza la
# discrepancia con -32020 y HTTP 400. Los valores que no son ASCII simple viajan en Base64
# (`encode_header_value`).

# %%
lying = {**modern_headers(search), "mcp-name": "notes_list"}
show_response(httpx.post(URL, json=search, headers=lying))
print(http_headers.encode_header_value("café"), http_headers.encode_header_value("notes_list"))

# %% [markdown] lang="en"
# Modern errors get HTTP statuses of their own (400 for most, 404 for an unknown method), so
# that the same gateway can see a failure without reading the body. And a request with no
# `_meta` at all is -32602, as on stdio:

# %% [markdown] lang="es"
# Los errores modernos tienen códigos de estado HTTP propios (400 para la mayoría, 404 para un
# método desconocido), para que la misma pasarela vea un fallo sin leer el cuerpo. Y una
# solicitud sin ningún `_meta` es -32602, como en stdio:

# %%
unknown = jsonrpc.request(2, "tools/unknown", {"_meta": META})
show_response(httpx.post(URL, json=unknown, headers=modern_headers(unknown)))
bare = jsonrpc.request(3, "tools/list")
show_response(httpx.post(URL, json=bare, headers={"content-type": "application/json",
                                                  "accept": ACCEPT}))

# %% [markdown] lang="en"
# ## 4. A legacy session on the same endpoint
#
# The same endpoint serves the legacy era (2025-11-25 and earlier). There, `initialize` opens
# a **session**: the response carries an `Mcp-Session-Id` header (256 random bits), and the
# client sends it on every later request. The session holds what the handshake fixed, and a
# client may open a **GET** stream on it for what the server sends outside any request
# (list changes, resource updates). **DELETE** ends the session; after that, its id is
# unknown: 404.

# %% [markdown] lang="es"
# ## 4. Una sesión heredada en el mismo punto de acceso
#
# El mismo punto de acceso sirve la era heredada (2025-11-25 y anteriores). Ahí, `initialize`
# abre una **sesión**: la respuesta lleva una cabecera `Mcp-Session-Id` (256 bits aleatorios),
# y el cliente la envía en cada solicitud posterior. La sesión guarda lo que fijó el handshake,
# y el cliente puede abrir sobre ella un flujo **GET** para lo que el servidor envía fuera de
# cualquier solicitud (cambios de lista, actualizaciones de recursos). **DELETE** termina la
# sesión; después, su id es desconocido: 404.

# %%
LEGACY = {"content-type": "application/json", "accept": ACCEPT}
hello = httpx.post(URL, headers=LEGACY, json=jsonrpc.request(1, "initialize", {
    "protocolVersion": "2025-11-25", "capabilities": {},
    "clientInfo": {"name": "lesson-08", "version": "1.0"}}))
session_id = hello.headers["mcp-session-id"]
print(hello.status_code, "Mcp-Session-Id:", len(session_id), grading._("characters", "caracteres"))
in_session = {**LEGACY, "mcp-session-id": session_id, "mcp-protocol-version": "2025-11-25"}
initialized = httpx.post(URL, headers=in_session,
                         json=jsonrpc.notification("notifications/initialized"))
print(initialized.status_code, repr(initialized.text))
listed = httpx.post(URL, headers=in_session, json=jsonrpc.request(2, "tools/list"))
print(listed.status_code, [tool["name"] for tool in listed.json()["result"]["tools"]])

# %%
with httpx.stream("GET", URL, timeout=10, headers={"accept": "text/event-stream",
                                                   "mcp-session-id": session_id}) as stream:
    print("GET", stream.status_code, stream.headers["content-type"])
    # [en] While it is open, a change made by another client reaches this session:
    # [es] Mientras está abierto, un cambio hecho por otro cliente llega a esta sesión:
    httpx.post(URL, headers=in_session, json=jsonrpc.request(3, "resources/subscribe", {
        "uri": "notes://4"}))
    create = jsonrpc.request(4, "tools/call", {"name": "notes_create", "arguments": {
        "title": "Tea", "body": "Green."}, "_meta": META})
    httpx.post(URL, json=create, headers=modern_headers(create))
    for line in stream.iter_lines():
        if line.startswith("data:"):
            print(line)
            break
notes.reset()
print("DELETE", httpx.delete(URL, headers={"mcp-session-id": session_id}).status_code)
after = httpx.post(URL, headers=in_session, json=jsonrpc.request(5, "tools/list"))
print(after.status_code, after.json()["error"]["message"][:60])
print(grading._("GET without a session:", "GET sin sesión:"),
      httpx.get(URL, headers={"accept": "text/event-stream"}).status_code)

# %% [markdown] lang="en"
# ## 5. Closing a stream cancels its request
#
# In the modern era there is no `notifications/cancelled` to send over HTTP: the request *is*
# its HTTP exchange, and a client that closes the response stream cancels the request. The
# tool below reports that it started (so the answer becomes a stream), then works until it is
# done or cancelled; we read the first event and hang up.

# %% [markdown] lang="es"
# ## 5. Cerrar un flujo cancela su solicitud
#
# En la era moderna no hay un `notifications/cancelled` que enviar por HTTP: la solicitud *es*
# su intercambio HTTP, y un cliente que cierra el flujo de la respuesta cancela la solicitud.
# La herramienta de abajo avisa de que empezó (así la respuesta se convierte en un flujo) y
# después trabaja hasta terminar o hasta que la cancelan; leemos el primer evento y colgamos.

# %%
slow = Server("slow", "1.0.0")
ended = threading.Event()
how_it_ended = []


@slow.tool(read_only=True)
def long_job(ctx: Context) -> str:
    """Work for up to a minute."""
    ctx.log("info", "started")
    finished = not ctx.cancelled.wait(60)
    how_it_ended.append(grading._("finished", "terminada") if finished
                        else grading._("cancelled", "cancelada"))
    ended.set()
    return "done"


slow_http = serve_in_thread(slow)
job = jsonrpc.request(1, "tools/call", {"name": "long_job", "arguments": {},
                                        "_meta": {**META, versions.META_LOG_LEVEL: "info"}})
with httpx.stream("POST", slow_http.url, json=job, headers=modern_headers(job),
                  timeout=10) as stream:
    first_event = next(line for line in stream.iter_lines() if line.startswith("data:"))
print(first_event)
ended.wait(60)
print(how_it_ended)

# %% [markdown] lang="en"
# (In the legacy era closing a stream does **not** cancel: the session outlives any one
# response, and the client says `notifications/cancelled` instead.)
#
# ## 6. Security on 127.0.0.1
#
# A server on your laptop is not safe just because it listens on 127.0.0.1. A web page you
# visit can make your browser send requests to `http://127.0.0.1:PORT`, and with **DNS
# rebinding** it can even do so under a name of its own: `evil.example` first resolves to the
# attacker's machine, then to 127.0.0.1, and the browser thinks it is still talking to
# `evil.example`. What gives it away is in the request: the `Host` header names
# `evil.example`, and a browser adds an `Origin` header naming the page. So the `Guard` of
# `http_security.py` admits only a `Host` that names this machine and an `Origin`, if there is
# one, on this machine (a server bound elsewhere is told which names to serve with
# `allowed_hosts` and `allowed_origins`).

# %% [markdown] lang="es"
# (En la era heredada cerrar un flujo **no** cancela: la sesión sobrevive a cada respuesta, y
# el cliente envía `notifications/cancelled` en su lugar.)
#
# ## 6. Seguridad en 127.0.0.1
#
# Un servidor en tu equipo no está a salvo solo porque escuche en 127.0.0.1. Una página web
# que visites puede hacer que tu navegador envíe solicitudes a `http://127.0.0.1:PUERTO`, y con
# **DNS rebinding** puede hacerlo incluso con un nombre propio: `evil.example` resuelve primero
# a la máquina del atacante y después a 127.0.0.1, y el navegador cree que sigue hablando con
# `evil.example`. Lo que la delata está en la solicitud: la cabecera `Host` nombra
# `evil.example`, y un navegador añade una cabecera `Origin` con la página. Por eso el `Guard`
# de `http_security.py` solo admite un `Host` que nombre esta máquina y un `Origin`, si lo hay,
# de esta máquina (a un servidor que escucha en otra dirección se le dice qué nombres
# servir con `allowed_hosts` y `allowed_origins`).

# %%
tools_list = jsonrpc.request(1, "tools/list", {"_meta": META})
attempts = {
    "Host: evil.example": {"host": "evil.example"},
    "Origin: http://evil.example": {"origin": "http://evil.example"},
    "Origin: http://localhost:3000": {"origin": "http://localhost:3000"},
    "Content-Type: text/plain": {"content-type": "text/plain"},
    "Accept: application/json": {"accept": "application/json"},
}
for label, extra in attempts.items():
    response = httpx.post(URL, json=tools_list, headers={**modern_headers(tools_list), **extra})
    error = response.json().get("error", {}).get("message", "")
    print(f"{label:<32} {response.status_code} {error[:58]}")

# %% [markdown] lang="en"
# The Host check is the one that stops rebinding; the Origin check stops any page on
# another site, rebinding or not. The last two lines are not attacks: a POST must say it sends
# JSON (415) and accept both answer formats (406).
#
# Bind to **loopback by default** (`mcpkit serve --http` uses 127.0.0.1): a server on
# `0.0.0.0` is reachable by everyone on your network. A server meant for others needs
# credentials: with a `token`, every request must carry `Authorization: Bearer <token>`, and
# the comparison runs in constant time (`hmac.compare_digest`), so timing tells an attacker
# nothing about a guess.

# %% [markdown] lang="es"
# La comprobación de Host es la que detiene el rebinding; la de Origin detiene cualquier página
# de otro sitio, con rebinding o sin él. Las dos últimas líneas no son ataques: un POST debe
# decir que envía JSON (415) y aceptar los dos formatos de respuesta (406).
#
# Escucha **en loopback (interfaz de bucle local) por defecto** (`mcpkit serve --http` usa
# 127.0.0.1): un servidor en `0.0.0.0` está al alcance de cualquiera en tu red. Un servidor
# pensado para otros necesita credenciales: con un `token`, cada solicitud debe llevar
# `Authorization: Bearer <token>`, y la comparación tarda siempre lo mismo
# (`hmac.compare_digest`), así que el tiempo no le dice nada a un atacante sobre un intento.

# %%
guarded_http = serve_in_thread(notes.server, token="s3cret-token")
for label, extra in ((grading._("no token", "sin token"), {}),
                     (grading._("wrong token", "token equivocado"),
                      {"authorization": "Bearer guess"}),
                     (grading._("right token", "token correcto"),
                      {"authorization": "Bearer s3cret-token"})):
    response = httpx.post(guarded_http.url, json=tools_list,
                          headers={**modern_headers(tools_list), **extra})
    print(f"{label:<16} {response.status_code} {response.headers.get('www-authenticate')}")

# %% [markdown] lang="en"
# ## 7. Scaling out: any worker answers any request
#
# Lesson 07 said that a modern server keeps nothing between requests. Here is the proof, with
# `mcpkit serve --http --workers 2`: two uvicorn processes on one socket, the kernel handing
# each new connection to one of them. The tool asks the user a question (`input_required`),
# and both rounds say which process served them (`ctx.state` travels in the sealed
# `requestState`). The workers share the secret that seals the state, `MCPKIT_STATE_SECRET`.
# Each round is a new connection, so sooner or later the two rounds land on different
# processes; we try until they do.

# %% [markdown] lang="es"
# ## 7. Escalar horizontalmente: cualquier trabajador responde a cualquier solicitud
#
# La lección 07 dijo que un servidor moderno no guarda nada entre solicitudes. Aquí tienes la
# prueba, con `mcpkit serve --http --workers 2`: dos procesos de uvicorn en un mismo socket, y
# el kernel del sistema operativo le entrega cada conexión nueva a uno de ellos. La herramienta
# le hace una pregunta al usuario (`input_required`), y las dos rondas dicen qué proceso las
# atendió (`ctx.state` viaja en el `requestState` sellado). Los trabajadores comparten el
# secreto que sella el estado, `MCPKIT_STATE_SECRET`. Cada ronda es una conexión nueva, así que
# tarde o temprano las dos rondas caen en procesos distintos; lo intentamos hasta que ocurra.

# %%
workdir = pathlib.Path(tempfile.mkdtemp())
(workdir / "workers.py").write_text(textwrap.dedent('''
    import os

    from mcpkit import Context, Server

    server = Server("workers", "1.0.0")


    @server.tool()
    def greet(ctx: Context) -> str:
        """Ask for a name, then greet; say which processes asked and answered."""
        ctx.state.setdefault("asked_by", os.getpid())
        answer = ctx.elicit("Your name?", {"type": "object", "properties": {
            "name": {"type": "string"}}, "required": ["name"]}, key="name")
        return f"{ctx.state['asked_by']} {os.getpid()} Hello, {answer['content']['name']}!"
'''), encoding="utf-8")

with socket.socket() as probe:
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
env = {**os.environ, "MCPKIT_STATE_SECRET": "lesson-08-shared-secret"}
workers = subprocess.Popen(
    [sys.executable, "-m", "mcpkit", "serve", str(workdir / "workers.py"), "--http",
     "--port", str(port), "--workers", "2", "--log-level", "warning"],
    env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
WORKERS_URL = f"http://127.0.0.1:{port}/mcp"
deadline = time.monotonic() + 30
while time.monotonic() < deadline:
    try:
        httpx.get(WORKERS_URL, timeout=1)
        break
    except httpx.TransportError:
        time.sleep(0.1)

ASK_META = {**META, versions.META_CLIENT_CAPABILITIES: {"elicitation": {}}}
GREET = {"name": "greet", "arguments": {}}


def one_round(params):
    message = jsonrpc.request(1, "tools/call", params)
    with httpx.Client() as fresh_connection:
        return fresh_connection.post(WORKERS_URL, json=message,
                                     headers=modern_headers(message)).json()["result"]


# [en] Until two different workers answered: on a busy machine the second may start late.
# [es] Hasta que respondan dos trabajadores distintos: en una máquina ocupada el segundo puede
# [es] arrancar tarde.
deadline = time.monotonic() + 60
while time.monotonic() < deadline:
    first_round = one_round({**GREET, "_meta": ASK_META})
    second_round = one_round({**GREET, "_meta": ASK_META, "requestState":
                              first_round["requestState"], "inputResponses": {
                                  "name": {"action": "accept", "content": {"name": "Ana"}}}})
    asked_by, answered_by, greeting = second_round["content"][0]["text"].split(" ", 2)
    if asked_by != answered_by:
        break
print(first_round["resultType"], "->", second_round["resultType"], greeting)
print(grading._("two processes:", "dos procesos:"), asked_by != answered_by)

# %% [markdown] lang="en"
# A legacy session cannot do that. It lives in the worker that answered `initialize`; a later
# request that the kernel hands to the other worker names a session that process never saw:

# %% [markdown] lang="es"
# Una sesión heredada no puede hacerlo. Vive en el trabajador que respondió `initialize`; una
# solicitud posterior que el kernel del sistema operativo entrega al otro trabajador nombra una
# sesión que ese proceso nunca vio:

# %%
statuses = set()
deadline = time.monotonic() + 60
while time.monotonic() < deadline:
    with httpx.Client() as fresh_connection:
        opened = fresh_connection.post(WORKERS_URL, headers=LEGACY, json=jsonrpc.request(
            1, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                              "clientInfo": {"name": "lesson-08", "version": "1.0"}}))
    for _ in range(4):
        with httpx.Client() as fresh_connection:
            statuses.add(fresh_connection.post(WORKERS_URL, json=jsonrpc.request(
                2, "tools/list"), headers={**LEGACY, "mcp-session-id": opened.headers[
                    "mcp-session-id"], "mcp-protocol-version": "2025-11-25"}).status_code)
    if statuses >= {200, 404}:
        break
print(sorted(statuses))
workers.terminate()
exit_code = workers.wait(10)
shutil.rmtree(workdir, ignore_errors=True)

# %% [markdown] lang="en"
# 200 when the request reached the session's worker, 404 (*session not found*) when it
# reached the other one. A legacy deployment with several processes needs **affinity**: a
# balancer that sends every request carrying one `Mcp-Session-Id` to the same backend
# (`tests/balancer.py` sets up HAProxy with a stick table for exactly this). And it must keep
# that process alive for the whole session, which is why a stateful session on a platform that
# starts a fresh instance per request (a cold-starting function) is an anti-pattern: the next
# request finds a process that never heard of the session. A modern server has neither
# problem: any worker, or a function started a millisecond ago, answers.

# %% [markdown] lang="es"
# 200 cuando la solicitud llegó al trabajador de la sesión, 404 (*sesión no encontrada*) cuando
# llegó al otro. Un despliegue heredado con varios procesos necesita **afinidad**: un
# balanceador que envíe al mismo servidor de destino cada solicitud que lleve un mismo
# `Mcp-Session-Id` (`tests/balancer.py` configura HAProxy con una tabla de persistencia, una *stick
# table*, justo para esto). Y debe mantener vivo ese proceso durante toda la sesión; por eso una
# sesión con estado en una plataforma que arranca una instancia nueva por solicitud (una función
# con arranque en frío) es un antipatrón: la siguiente solicitud encuentra un proceso que nunca
# oyó hablar de la sesión. Un servidor moderno no tiene ninguno de los dos problemas: responde
# cualquier trabajador, o una función que arrancó hace un milisegundo.

# %% [markdown] lang="en"
# ## 8. The official conformance suite
#
# The MCP project publishes a conformance suite, a Node program that drives a server through
# scenarios of both revisions and reports each one. `conformance/mcpkit-server.sh` runs it
# against mcpkit's "everything" server over HTTP. The cell below runs it when the suite and
# a Node new enough for it (22 or later) are already installed, with a time limit; otherwise
# it prints the command that installs them (it needs `npm`, and fetches from the npm registry
# only), and the rest of the notebook runs as usual. A notebook cell may run for a minute at
# most, so the run stops after 50 s (a terminal has no such limit). What it prints depends
# on your machine, so it goes into an output widget, which you see but the saved notebook
# does not keep.

# %% [markdown] lang="es"
# ## 8. El conjunto oficial de pruebas de conformidad
#
# El proyecto MCP publica un conjunto de pruebas de conformidad, un programa de Node que somete
# a un servidor a escenarios de las dos revisiones e informa el resultado de cada uno.
# `conformance/mcpkit-server.sh` lo ejecuta contra el servidor "everything" de mcpkit por HTTP.
# La celda de abajo lo ejecuta cuando el conjunto y un Node lo bastante nuevo (22 o posterior)
# ya están instalados, con un límite de tiempo; si no, muestra el comando que los instala
# (necesita `npm` y solo descarga del registro de npm), y el resto del cuaderno se ejecuta como
# siempre. Una celda del cuaderno puede durar como mucho un minuto, así que la ejecución se
# detiene a los 50 s (una terminal no tiene ese límite). Lo que muestra depende de tu máquina,
# así que va a un widget de salida, que ves pero que el cuaderno guardado no conserva.

# %% tags=["nbval-ignore-output"]
# [en] The report goes into an output widget: what it says depends on this machine, so it is
# [en] shown live but never stored in the notebook.
# [es] El informe va a un widget de salida: lo que dice depende de esta máquina, así que se
# [es] muestra en vivo pero nunca se guarda en el cuaderno.
import ipywidgets
from IPython.display import display

repository = pathlib.Path(versions.__file__).resolve().parents[1]
suite_dir = pathlib.Path(os.environ.get("CONFORMANCE_DIR")
                         or pathlib.Path(tempfile.gettempdir()) / "conf")
script = repository / "conformance" / "mcpkit-server.sh"


def node_major(node):
    try:
        done = subprocess.run([node, "-p", "process.versions.node.split('.')[0]"],
                              capture_output=True, text=True, timeout=10)
        return int(done.stdout.strip() or 0)
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return 0


def run_conformance(limit_s=50):
    # [en] Its own process group, so that the time limit stops the suite and the server too.
    # [es] Su propio grupo de procesos, para que el límite pare también el conjunto y el
    # [es] servidor.
    run = subprocess.Popen(["bash", str(script), MODERN], cwd=repository, text=True,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           env={**os.environ, "PYTHON": sys.executable},
                           start_new_session=True)
    try:
        output, _ = run.communicate(timeout=limit_s)
        print("\n".join(output.splitlines()[-25:]))
    except subprocess.TimeoutExpired:
        os.killpg(run.pid, 9)
        run.communicate()
        print(grading._("The conformance run took more than 50 s and was stopped; run "
                        "conformance/mcpkit-server.sh in a terminal to see it all.",
                        "La ejecución de conformidad tardó más de 50 s y se detuvo; ejecuta "
                        "conformance/mcpkit-server.sh en una terminal para verla completa."))


nodes = [shutil.which("node"), str(suite_dir / "node" / "bin" / "node")]
installed = ((suite_dir / "conformance").exists() and script.exists()
             and any(node and node_major(node) >= 22 for node in nodes))
conformance_report = ipywidgets.Output()
display(conformance_report)
with conformance_report:
    if installed:
        run_conformance()
    else:
        print(grading._("The conformance suite is not installed. To install it (and Node 24 if "
                        "yours is older than 22), run from the repository's root:",
                        "El conjunto de pruebas de conformidad no está instalado. Para "
                        "instalarlo (y Node 24 si el tuyo es anterior al 22), ejecuta desde la "
                        "raíz del repositorio:"))
        print("    bash conformance/install.sh")


# %%
for running in (notes_http, chatty_http, slow_http, guarded_http):
    running.stop()
notes.reset()

# %% [markdown] lang="en"
# ## Summary
#
# - Streamable HTTP: one endpoint; every client message is a POST of one JSON-RPC message;
#   the answer is JSON, or an SSE stream when notifications come first; a notification gets
#   202 and no body.
# - Modern requests repeat their method and name in `Mcp-Method` and `Mcp-Name`, so proxies
#   can route without parsing JSON; the server refuses a mismatch (-32020). Modern errors get
#   HTTP statuses (400, 404).
# - Legacy sessions: `initialize` returns `Mcp-Session-Id`; GET opens the session's stream;
#   DELETE ends it. In the modern era, closing a response stream cancels its request.
# - Security: check `Host` and `Origin` (DNS rebinding), bind loopback by default, require a
#   bearer token for anything shared, compare it in constant time; a POST must send JSON and
#   accept both formats.
# - Scaling: modern requests can go to any worker (share `MCPKIT_STATE_SECRET`); legacy
#   sessions need affinity, and never belong on a cold-starting function.
#
# **Lab 08** (`labs/en/lab08_http.ipynb`): an HTTP front for the notes server, your own ASGI
# app. Then **lesson 09**: the real world.

# %% [markdown] lang="es"
# ## Resumen
#
# - HTTP con flujos: un único punto de acceso; cada mensaje del cliente es un POST con un
#   mensaje JSON-RPC; la respuesta es JSON, o un flujo SSE cuando antes llegan notificaciones;
#   una notificación recibe 202 y ningún cuerpo.
# - Las solicitudes modernas repiten su método y su nombre en `Mcp-Method` y `Mcp-Name`, para
#   que los proxies enruten sin analizar JSON; el servidor rechaza una discrepancia (-32020).
#   Los errores modernos tienen códigos de estado HTTP (400, 404).
# - Sesiones heredadas: `initialize` devuelve `Mcp-Session-Id`; GET abre el flujo de la sesión;
#   DELETE la termina. En la era moderna, cerrar el flujo de una respuesta cancela su
#   solicitud.
# - Seguridad: comprueba `Host` y `Origin` (DNS rebinding), escucha en loopback por defecto,
#   exige un token de portador para todo lo compartido y compáralo en tiempo constante; un POST
#   debe enviar JSON y aceptar los dos formatos.
# - Escalado horizontal: las solicitudes modernas pueden ir a cualquier trabajador (comparte
#   `MCPKIT_STATE_SECRET`); las sesiones heredadas necesitan afinidad, y nunca deben ir en una
#   función con arranque en frío.
#
# **Laboratorio 08** (`labs/es/lab08_http.ipynb`): una capa HTTP delante del servidor de notas,
# tu propia aplicación ASGI. Después, la **lección 09**: el mundo real.
