# %% [markdown] lang="en"
# # Lesson 07 · Modern MCP (2026-07-28) beside the handshake
#
# > **Español:** [`notebooks/es/07_modern.ipynb`](../es/07_modern.ipynb)
#
# Lesson 04 ended with a glimpse: the same server answered a request that came with no
# `initialize` at all. This lesson takes that revision, 2026-07-28, apart. You will:
#
# 1. capture the **same work in both eras** from a real server process, and compare the bytes;
# 2. read what a modern request carries in `params._meta`, and how a dual-era server decides
#    the **era** of each request (and which error it answers when it cannot);
# 3. ask `server/discover`, read `resultType` and the **caching hints** `ttlMs` and
#    `cacheScope`;
# 4. watch a real client **probe** a modern server and a legacy one, and fall back;
# 5. see a missing client capability refused with -32021;
# 6. follow a **multi round-trip request**: a tool asks the user something, the result is
#    `input_required`, the client answers and retries with a sealed `requestState`; and see a
#    tampered, replayed and expired state refused;
# 7. open a `subscriptions/listen` stream and get notifications tagged with its id;
# 8. sum up what changed for server authors, and why: **any replica can answer any request**.
#
# The code is in `mcpkit/versions.py` (revisions, eras, `_meta` keys), `mcpkit/params.py`
# (the shape of `_meta`), `mcpkit/connection.py` (the era decision, `_modern_context`,
# `_modern_wrap`) and `mcpkit/mrtr.py` (`input_required`, `requestState`).

# %% [markdown] lang="es"
# # Lección 07 · MCP moderno (2026-07-28) junto al handshake
#
# > **English:** [`notebooks/en/07_modern.ipynb`](../en/07_modern.ipynb)
#
# La lección 04 terminó con un vistazo: el mismo servidor respondió una solicitud que llegó sin
# ningún `initialize`. Esta lección desmonta esa revisión, la 2026-07-28. Vas a:
#
# 1. capturar **el mismo trabajo en las dos eras** de un proceso servidor real y comparar los
#    bytes;
# 2. leer lo que lleva una solicitud moderna en `params._meta` y cómo decide un servidor de las
#    dos eras la **era** de cada solicitud (y qué error responde cuando no puede);
# 3. preguntar `server/discover` y leer `resultType` y las **indicaciones de caché** `ttlMs` y
#    `cacheScope`;
# 4. ver cómo un cliente real **sondea** un servidor moderno y uno heredado, y recurre a la era
#    heredada;
# 5. ver cómo se rechaza con -32021 una capacidad del cliente que falta;
# 6. seguir una **solicitud de múltiples idas y vueltas (MRTR)**: una herramienta le pregunta
#    algo al usuario, el resultado es `input_required`, el cliente responde y reintenta con un
#    `requestState` sellado; y ver cómo se rechaza un estado manipulado, reenviado o caducado;
# 7. abrir un flujo `subscriptions/listen` y recibir notificaciones marcadas con su id;
# 8. resumir qué cambió para quien escribe servidores, y por qué: **cualquier réplica puede
#    responder a cualquier solicitud**.
#
# El código está en `mcpkit/versions.py` (revisiones, eras, claves de `_meta`),
# `mcpkit/params.py` (la forma de `_meta`), `mcpkit/connection.py` (la decisión de era,
# `_modern_context`, `_modern_wrap`) y `mcpkit/mrtr.py` (`input_required`, `requestState`).

# %% tags=["setup"]
# [en] Setup: run this cell first.
# [es] Preparación: ejecuta esta celda primero.
import json
import pathlib
import shutil
import subprocess
import sys
import tempfile
import textwrap

from mcpkit import Server, framing, grading, jsonrpc, mrtr, versions
from mcpkit.client import Client
from mcpkit.context import Context
from mcpkit.examples import notes

NOTES = [sys.executable, "-m", "mcpkit", "serve", "mcpkit.examples.notes:server"]
grading.set_language("en")  # [en] the cells' own sentences  [es] las frases de las celdas
META = {versions.META_PROTOCOL_VERSION: "2026-07-28",
        versions.META_CLIENT_CAPABILITIES: {}}


def run_process(command, messages):
    incoming = b"".join(framing.encode_ndjson(message) for message in messages)
    done = subprocess.run(command, input=incoming, capture_output=True, timeout=60)
    return incoming.splitlines(keepends=True), done.stdout.splitlines(keepends=True)


def show_trace(sent, received):
    for line in sent:
        print("C->S", line)
    for line in received:
        print("S->C", line)


def answer(server, message, initialized=False):
    sent = []
    connection = server.connect(sent.append)
    if initialized:
        connection.receive(jsonrpc.request(0, "initialize", {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "lesson-07", "version": "1.0"}}))
        connection.receive(jsonrpc.notification("notifications/initialized"))
    connection.receive(message)
    connection.close(2.0)
    return sent[-1]


notes.reset()

# %% [markdown] lang="en"
# ## 1. The same work in both eras
#
# Here is one small job, *search the notes for "mcp"*, done twice against the real notes
# server, each time in a fresh process started with `python -m mcpkit serve`. The first
# conversation is legacy (revision 2025-11-25): a handshake, then the call. The second is
# modern (2026-07-28): the call alone, carrying in `params._meta` what the handshake used to
# say once.

# %% [markdown] lang="es"
# ## 1. El mismo trabajo en las dos eras
#
# Aquí tienes un trabajo pequeño, *buscar "mcp" en las notas*, hecho dos veces con el
# servidor de notas real, cada vez en un proceso nuevo iniciado con `python -m mcpkit serve`.
# La primera conversación es heredada (revisión 2025-11-25): un handshake y después la llamada.
# La segunda es moderna (2026-07-28): solo la llamada, que lleva en `params._meta` lo que antes
# se decía una sola vez en el handshake.

# %%
SEARCH = {"name": "notes_search", "arguments": {"query": "mcp"}}
legacy_sent, legacy_received = run_process(NOTES, [
    jsonrpc.request(1, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                      "clientInfo": {"name": "lesson-07", "version": "1.0"}}),
    jsonrpc.notification("notifications/initialized"),
    jsonrpc.request(2, "tools/call", SEARCH),
])
show_trace(legacy_sent, legacy_received)

# %%
modern_sent, modern_received = run_process(NOTES, [
    jsonrpc.request(1, "tools/call", {**SEARCH, "_meta": {
        **META, versions.META_CLIENT_INFO: {"name": "lesson-07", "version": "1.0"}}}),
])
show_trace(modern_sent, modern_received)

# %%
legacy_result = json.loads(legacy_received[-1])["result"]
modern_result = json.loads(modern_received[-1])["result"]
legacy, modern = grading._("legacy", "heredada"), grading._("modern", "moderna")
print(grading._("bytes sent:    ", "bytes enviados: "), sum(map(len, legacy_sent)), f"{legacy},",
      sum(map(len, modern_sent)), modern)
print(grading._("messages:      ", "mensajes:       "), len(legacy_sent) + len(legacy_received),
      f"{legacy},", len(modern_sent) + len(modern_received), modern)
print(grading._("same content:  ", "mismo contenido:"),
      legacy_result["content"] == modern_result["content"])
print(grading._("only in modern:", "solo en moderna:"),
      sorted(set(modern_result) - set(legacy_result)))

# %% [markdown] lang="en"
# The tool's answer is the same. What differs is everything around it:
#
# - **No handshake.** The modern request says its revision, who the client is and what it can
#   do in `params._meta`, under keys named `io.modelcontextprotocol/...` (the constants
#   `META_*` of `mcpkit/versions.py`). The legacy connection said it once, in `initialize`,
#   and the server had to *remember* it for the rest of the connection.
# - **Every modern result says what kind of result it is**, `"resultType": "complete"` (later
#   in this lesson you will meet `"input_required"`), and who answered, in
#   `_meta["io.modelcontextprotocol/serverInfo"]`: there was no `initialize` result to carry
#   it. `Connection._modern_wrap` adds both to every modern result.
# - Four messages became two. That matters less on a pipe than over HTTP, where each one is a
#   request through a proxy (lesson 08).

# %% [markdown] lang="es"
# La respuesta de la herramienta es la misma. Lo que cambia es todo lo que la rodea:
#
# - **Sin handshake.** La solicitud moderna dice su revisión, quién es el cliente y qué puede
#   hacer en `params._meta`, con claves llamadas `io.modelcontextprotocol/...` (las constantes
#   `META_*` de `mcpkit/versions.py`). La conexión heredada lo dijo una sola vez, en `initialize`, y
#   el servidor tuvo que *recordarlo* durante el resto de la conexión.
# - **Cada resultado moderno dice qué tipo de resultado es**, `"resultType": "complete"` (más
#   adelante en esta lección verás `"input_required"`), y quién respondió, en
#   `_meta["io.modelcontextprotocol/serverInfo"]`: no hubo un resultado de `initialize` que lo
#   llevara. `Connection._modern_wrap` añade las dos cosas a cada resultado moderno.
# - Cuatro mensajes se convirtieron en dos. En una tubería importa menos que en HTTP, donde
#   cada uno es una solicitud que atraviesa un proxy (lección 08).

# %% [markdown] lang="en"
# ## 2. What `_meta` carries, and the era of a request
#
# A modern request's `_meta` may hold four keys of the protocol's own (other keys, with a
# prefix of your own such as `com.example/trace`, are allowed and ignored):

# %% [markdown] lang="es"
# ## 2. Qué lleva `_meta`, y la era de una solicitud
#
# El `_meta` de una solicitud moderna puede llevar cuatro claves propias del protocolo (se
# permiten otras claves, con un prefijo propio como `com.example/trace`, y se ignoran):

# %%
for name in ("META_PROTOCOL_VERSION", "META_CLIENT_CAPABILITIES", "META_CLIENT_INFO",
             "META_LOG_LEVEL"):
    print(f"{name:<25}", getattr(versions, name))
print()
print(grading._("legacy: ", "heredadas: "), versions.LEGACY_VERSIONS)
print(grading._("modern: ", "modernas:  "), versions.MODERN_VERSIONS)
print(grading._("levels: ", "niveles:   "), versions.LOG_LEVELS)

# %% [markdown] lang="en"
# The log level travels with each request too: there is no `logging/setLevel` to remember
# (legacy only). A server that speaks both eras decides, for every request, which era it
# belongs to. `Connection._context_for` in `mcpkit/connection.py` does it in a few lines:
#
# 1. `_meta` of the wrong shape is -32602 in either era (`params.check_meta`, first, because
#    `_meta` is what decides the era);
# 2. a connection that completed `initialize` is **legacy for life**, whatever `_meta` says;
#    `server/discover` and `subscriptions/listen` do not exist there (-32601);
# 3. no handshake and no version in `_meta`: only `ping` is allowed; anything else is -32602,
#    malformed in both eras;
# 4. then `_modern_context`: capabilities required (-32602), a version this server speaks
#    (-32022, **with the list of supported versions**, so the client can retry), a method that
#    exists in the modern era (-32601 for `ping`, `logging/setLevel`, `resources/subscribe`),
#    a known log level.
#
# Let us send one request of each kind to an in-process server (`answer(...)` in the setup
# cell connects, optionally does the handshake, and returns the reply):

# %% [markdown] lang="es"
# El nivel de registro también viaja con cada solicitud: no hay `logging/setLevel` que
# recordar (solo existe en la era heredada). Un servidor que habla las dos eras decide, para
# cada solicitud, a qué era pertenece. `Connection._context_for` en `mcpkit/connection.py` lo
# hace en pocas líneas:
#
# 1. un `_meta` con la forma equivocada es -32602 en las dos eras (`params.check_meta`,
#    primero, porque `_meta` es lo que decide la era);
# 2. una conexión que completó `initialize` es **heredada para siempre**, diga lo que diga
#    `_meta`; ahí no existen `server/discover` ni `subscriptions/listen` (-32601);
# 3. sin handshake y sin versión en `_meta`: solo se permite `ping`; cualquier otra cosa es
#    -32602, mal formada en las dos eras;
# 4. después, `_modern_context`: capacidades obligatorias (-32602), una versión que este
#    servidor hable (-32022, **con la lista de versiones admitidas**, para que el cliente
#    pueda reintentar), un método que exista en la era moderna (-32601 para `ping`,
#    `logging/setLevel`, `resources/subscribe`) y un nivel de registro conocido.
#
# Enviemos una solicitud de cada tipo a un servidor en este mismo proceso (`answer(...)`, en la
# celda de preparación, conecta, hace el handshake si se le pide y devuelve la respuesta):

# %%
demo = Server("era-demo", "1.0.0")


@demo.tool(read_only=True)
def echo(text: str) -> str:
    """Say it back."""
    return text


def outcome(reply):
    if "error" in reply:
        return reply["error"]["code"], reply["error"]["message"][:60]
    if "resultType" in reply["result"]:
        return grading._("modern", "moderna"), ""
    return grading._("legacy", "heredada"), ""


tries = [
    (grading._("modern tools/list", "tools/list moderno"),
     jsonrpc.request(1, "tools/list", {"_meta": META}), False),
    (grading._("legacy tools/list", "tools/list heredado"),
     jsonrpc.request(1, "tools/list"), True),
    (grading._("legacy + modern _meta", "heredada + _meta moderno"),
     jsonrpc.request(1, "tools/list", {"_meta": META}), True),
    (grading._("no handshake, no _meta", "sin handshake ni _meta"),
     jsonrpc.request(1, "tools/list"), False),
    (grading._("ping, no _meta", "ping sin _meta"), jsonrpc.request(1, "ping"), False),
    (grading._("ping, modern", "ping moderno"),
     jsonrpc.request(1, "ping", {"_meta": META}), False),
    (grading._("discover after initialize", "discover tras initialize"),
     jsonrpc.request(1, "server/discover"), True),
    (grading._("no capabilities", "sin capacidades"),
     jsonrpc.request(1, "tools/list", {"_meta": {versions.META_PROTOCOL_VERSION: "2026-07-28"}}),
     False),
    (grading._("log level 'loud'", "nivel de registro 'loud'"),
     jsonrpc.request(1, "tools/list", {"_meta": {**META, versions.META_LOG_LEVEL: "loud"}}),
     False),
]
for label, message, initialized in tries:
    code, text = outcome(answer(demo, message, initialized))
    print(f"{label:<27} {code!s:<7} {text}")

# %% [markdown] lang="en"
# And a version the server does not speak: a date from the future, and a legacy date sent in
# `_meta` (legacy versions are negotiated by `initialize`, never sent per request). The error
# is -32022, and its `data` lists what the server supports, newest first:

# %% [markdown] lang="es"
# Y una versión que el servidor no habla: una fecha del futuro y una fecha heredada enviada en
# `_meta` (las versiones heredadas se negocian con `initialize`, nunca se envían en cada
# solicitud). El error es -32022, y su `data` enumera las versiones que admite el servidor,
# empezando por la más reciente:

# %%
for version in ("2027-01-01", "2025-11-25"):
    reply = answer(demo, jsonrpc.request(1, "tools/list", {"_meta": {
        **META, versions.META_PROTOCOL_VERSION: version}}))
    print(json.dumps(reply["error"]))

# %% [markdown] lang="en"
# ## 3. `server/discover`, `resultType` and caching hints
#
# With no `initialize` result, how does a client learn what a server offers? It asks:
# `server/discover` returns the supported versions, the capabilities and the instructions.
# It is an ordinary request, which a client may send whenever it likes, and its answer may be
# **cached**: `ttlMs` says for how many milliseconds, `cacheScope` for whom (`"public"`: the
# answer is the same for every user of this client; `"private"`: for this user only). The
# server chooses both (`Server(cache_ttl_ms=..., cache_scope=...)`); list results carry the
# same hints.

# %% [markdown] lang="es"
# ## 3. `server/discover`, `resultType` e indicaciones de caché
#
# Sin un resultado de `initialize`, ¿cómo sabe un cliente qué ofrece un servidor? Lo pregunta:
# `server/discover` devuelve las versiones admitidas, las capacidades y las instrucciones. Es
# una solicitud normal, que el cliente puede enviar cuando quiera, y su respuesta se puede
# **guardar en caché**: `ttlMs` dice durante cuántos milisegundos y `cacheScope` para quién
# (`"public"`: la respuesta es la misma para cualquier usuario de este cliente; `"private"`:
# solo para este usuario). El servidor elige las dos (`Server(cache_ttl_ms=...,
# cache_scope=...)`); los resultados de las listas llevan las mismas indicaciones.

# %%
cached = Server("weather", "2.1.0", instructions="Ask for a city first.",
                cache_ttl_ms=60_000, cache_scope="private")


@cached.tool(read_only=True)
def forecast(city: str) -> str:
    """Tomorrow's weather in a city."""
    return f"Sunny in {city}."


discovered = answer(cached, jsonrpc.request(1, "server/discover", {"_meta": META}))["result"]
print(json.dumps(discovered, indent=1))
listed = answer(cached, jsonrpc.request(2, "tools/list", {"_meta": META}))["result"]
print({key: listed[key] for key in ("ttlMs", "cacheScope", "resultType")})

# %% [markdown] lang="en"
# What does a client do with the hints? It keeps the result, keyed by the method, its params
# and (for `"private"`) the user, until `ttlMs` has passed, and answers from the cache
# meanwhile. `ttlMs: 0` means "do not reuse". Here is the whole rule, with a clock you move by
# hand so the output never changes:

# %% [markdown] lang="es"
# ¿Qué hace un cliente con las indicaciones? Guarda el resultado, usando como clave el método,
# sus params y (para `"private"`) el usuario, hasta que pasa `ttlMs`, y mientras tanto responde
# desde la caché. `ttlMs: 0` significa "no reutilizar". Esta es la regla completa, con un reloj
# que mueves a mano para que la salida nunca cambie:

# %%
class HintCache:
    def __init__(self):
        self.entries = {}

    def key(self, method, params, user, scope):
        return (method, json.dumps(params, sort_keys=True), user if scope == "private" else None)

    def get(self, method, params, user, now_ms):
        for scope in ("private", "public"):
            entry = self.entries.get(self.key(method, params, user, scope))
            if entry and entry[0] > now_ms:
                return entry[1]
        return None

    def put(self, method, params, user, result, now_ms):
        if result.get("ttlMs", 0) > 0:
            key = self.key(method, params, user, result.get("cacheScope", "public"))
            self.entries[key] = (now_ms + result["ttlMs"], result)


cache = HintCache()
cache.put("tools/list", {}, "ana", listed, now_ms=0)
print(grading._("ana at 59 s:  ", "ana a los 59 s:  "),
      cache.get("tools/list", {}, "ana", now_ms=59_000) is not None)
print(grading._("bruno at 59 s:", "bruno a los 59 s:"),
      cache.get("tools/list", {}, "bruno", now_ms=59_000) is not None)
print(grading._("ana at 61 s:  ", "ana a los 61 s:  "),
      cache.get("tools/list", {}, "ana", now_ms=61_000) is not None)

# %% [markdown] lang="en"
# ## 4. The probe: how a client finds out the era
#
# A client that does not know its server sends `server/discover` first, with the newest
# version it speaks. The rules (2026-07-28, backward compatibility), as `Client._probe` in
# `mcpkit/client.py` follows them:
#
# - a DiscoverResult: **modern**, with our version if listed, else the newest modern one both
#   speak;
# - -32022: modern, but not our version: retry **once** with a version from
#   `error.data.supported`; if only legacy versions are listed, fall back;
# - -32021 or -32020: a modern server refusing something else: stay modern;
# - any other error (a legacy server answers -32601 or -32602 to a method it does not know)
#   or **no answer before the probe timeout**: legacy, send `initialize`;
# - over HTTP (lesson 08), a 400, 404 or 405 with no JSON-RPC body means legacy too; 401 and
#   403 mean credentials, in either era: no fallback.
#
# Here is a real client doing it against the modern notes server:

# %% [markdown] lang="es"
# ## 4. El sondeo: cómo averigua un cliente la era
#
# Un cliente que no conoce a su servidor envía primero `server/discover`, con la versión más
# reciente que habla. Las reglas (2026-07-28, compatibilidad hacia atrás), tal como las sigue
# `Client._probe` en `mcpkit/client.py`:
#
# - un DiscoverResult: **moderna**, con nuestra versión si está en la lista y, si no, la
#   moderna más reciente que hablen los dos;
# - -32022: moderna, pero no nuestra versión: reintenta **una vez** con una versión de
#   `error.data.supported`; si solo lista versiones heredadas, recurre a la era heredada;
# - -32021 o -32020: un servidor moderno que rechaza otra cosa: sigue en la moderna;
# - cualquier otro error (un servidor heredado responde -32601 o -32602 a un método que no
#   conoce) o **ninguna respuesta antes del tiempo de espera del sondeo**: heredada, envía
#   `initialize`;
# - en HTTP (lección 08), un 400, 404 o 405 sin cuerpo JSON-RPC también significa heredada;
#   401 y 403 indican un problema de credenciales, en las dos eras: no se recurre a la era
#   heredada.
#
# Aquí tienes un cliente real haciéndolo con el servidor de notas moderno:

# %%
with Client(NOTES[0], NOTES[1:]).connect() as modern_client:
    print(modern_client.era, modern_client.protocol_version, modern_client.server_info["name"])
    print([tool["name"] for tool in modern_client.list_tools()])

# %% [markdown] lang="en"
# And against a server written before 2026: the few lines below are a complete legacy-only
# server (it knows `initialize`, `tools/list` and nothing else) that also writes every line it
# reads to its standard error, so we can see what the client sent. Lesson 05 builds the
# client's side of this properly; here we only watch it.

# %% [markdown] lang="es"
# Y con un servidor escrito antes de 2026: las pocas líneas de abajo son un servidor
# heredado completo (conoce `initialize`, `tools/list` y nada más) que además escribe en su
# error estándar cada línea que lee, para que veamos qué envió el cliente. La lección 05
# construye como es debido el lado del cliente; aquí solo lo observamos.

# %%
OLD_SERVER = textwrap.dedent('''
    import json, sys
    for line in sys.stdin:
        print("read", line.strip(), file=sys.stderr, flush=True)
        message = json.loads(line)
        if "id" not in message:
            continue
        if message["method"] == "initialize":
            result = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                      "serverInfo": {"name": "old-server", "version": "0.9"}}
        elif message["method"] == "tools/list":
            result = {"tools": []}
        else:
            error = {"code": -32601, "message": "Method not found"}
            print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "error": error}),
                  flush=True)
            continue
        print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}),
              flush=True)
''')
workdir = pathlib.Path(tempfile.mkdtemp())
(workdir / "old_server.py").write_text(OLD_SERVER, encoding="utf-8")

seen_by_old = []
with Client(sys.executable, [str(workdir / "old_server.py")],
            on_stderr=seen_by_old.append).connect() as legacy_client:
    print(legacy_client.era, legacy_client.protocol_version, legacy_client.server_info["name"])
    legacy_client.list_tools()
shutil.rmtree(workdir, ignore_errors=True)
for line in seen_by_old:
    print(line[:150])

# %% [markdown] lang="en"
# The first line the old server read is the probe; it answered -32601, and the client started
# over with `initialize` at the newest legacy version, accepted the server's 2025-06-18, and
# from then on spoke legacy. On stdio, a legacy server that **ignores** unknown requests (no
# answer at all) costs the probe timeout, ten seconds in mcpkit's client; the spec asks for "a
# reasonable timeout", and a Python server that takes a second to import must not be mistaken
# for a silent legacy one. A client that knows its server's era can skip the probe:
# `Client(..., version="legacy")` or `version="modern"`.

# %% [markdown] lang="es"
# La primera línea que leyó el servidor antiguo es el sondeo; respondió -32601, y el cliente volvió
# a empezar con `initialize` en la versión heredada más reciente, aceptó la 2025-06-18 del servidor
# y desde entonces habló en la era heredada. En stdio, un servidor heredado que **ignora** las
# solicitudes desconocidas (sin responder nada) cuesta el tiempo de espera del sondeo, diez segundos
# en el cliente de mcpkit; la especificación pide "un tiempo de espera razonable", y un servidor de
# Python que tarda un segundo en importar no debe confundirse con uno heredado que calla. Un cliente
# que conoce la era de su servidor puede saltarse el sondeo: `Client(..., version="legacy")` o
# `version="modern"`.

# %% [markdown] lang="en"
# ## 5. A missing client capability: -32021
#
# In the legacy era the client's capabilities were fixed at the handshake. In the modern era
# they come with each request, and a request that needs one the client did not declare is
# refused with -32021, naming what is missing. A tool that asks the user something needs
# `elicitation`:

# %% [markdown] lang="es"
# ## 5. Una capacidad del cliente que falta: -32021
#
# En la era heredada las capacidades del cliente quedaban fijadas en el handshake. En la era
# moderna llegan con cada solicitud, y una solicitud que necesita una que el cliente no declaró
# se rechaza con -32021, que nombra lo que falta. Una herramienta que le pregunta algo al
# usuario necesita `elicitation`:

# %%
booking = Server("booking", "1.0.0", state_secret=b"shared by every replica")
TIME_FORM = {"type": "object", "properties": {"time": {"type": "string"}}, "required": ["time"]}


@booking.tool()
def book_table(guests: int, ctx: Context) -> str:
    """Book a table; asks the user for the time."""
    reply = ctx.elicit(f"What time for {guests}?", TIME_FORM, key="when")
    if reply["action"] != "accept":
        return "Nothing booked."
    return f"Booked a table for {guests} at {reply['content']['time']}."


BOOK = {"name": "book_table", "arguments": {"guests": 2}}
print(json.dumps(answer(booking, jsonrpc.request(1, "tools/call", {**BOOK, "_meta": META}))))

# %% [markdown] lang="en"
# ## 6. Multi round-trip requests: `input_required`
#
# In the legacy era, `ctx.elicit` sends a request *to the client* in the middle of the call and
# waits for the answer on the same connection: the server holds the call open, and the answer
# must come back to the very process that asked. The modern era does not allow that. The
# server **returns**: a result with `"resultType": "input_required"`, the questions in
# `inputRequests`, and a `requestState`. The client obtains the answers (asks the user) and
# sends the **same request again** with `inputResponses` and the `requestState`, unchanged.
# The same tool code serves both eras: in the modern one, mcpkit replays the tool from the
# start on every round, answering `ctx.elicit` from the answers given so far (see the theory
# of operation at the top of `mcpkit/mrtr.py`).

# %% [markdown] lang="es"
# ## 6. Solicitudes de múltiples idas y vueltas: `input_required`
#
# En la era heredada, `ctx.elicit` envía una solicitud *al cliente* en mitad de la llamada y
# espera la respuesta en la misma conexión: el servidor mantiene abierta la llamada, y la
# respuesta tiene que volver al mismo proceso que preguntó. La era moderna no lo permite. El
# servidor **devuelve**: un resultado con `"resultType": "input_required"`, las preguntas en
# `inputRequests` y un `requestState`. El cliente obtiene las respuestas (le pregunta al usuario)
# y envía **la misma solicitud otra vez** con `inputResponses` y el `requestState`, sin cambios.
# El mismo código de herramienta sirve a las dos eras: en la moderna, mcpkit vuelve a ejecutar la
# herramienta desde el principio en cada ronda y responde a `ctx.elicit` con las respuestas dadas
# hasta entonces (mira la explicación de cómo funciona, al principio de `mcpkit/mrtr.py`).

# %%
ELICIT_META = {**META, versions.META_CLIENT_CAPABILITIES: {"elicitation": {}}}
first = answer(booking, jsonrpc.request(1, "tools/call", {**BOOK, "_meta": ELICIT_META}))
round_one = first["result"]
print(round_one["resultType"])
print(json.dumps(round_one["inputRequests"], indent=1))
state = round_one["requestState"]
print(type(state).__name__, state.count("."), grading._("dot", "punto"))

# %%
ANSWERS = {"when": {"action": "accept", "content": {"time": "20:30"}}}
second = answer(booking, jsonrpc.request(2, "tools/call", {
    **BOOK, "_meta": ELICIT_META, "inputResponses": ANSWERS, "requestState": state}))
print(second["result"]["resultType"], second["result"]["content"])

# %% [markdown] lang="en"
# The server kept nothing between the two rounds: the first round's questions (and any
# answers from earlier rounds) travelled **in the state**. That is why any replica can serve
# the second round, as long as it shares the secret the state is sealed with. Here are two
# more "replicas", fresh `Server` objects with the same tool: one with the same secret, one
# with another:

# %% [markdown] lang="es"
# El servidor no guardó nada entre las dos rondas: las preguntas de la primera (y las
# respuestas de rondas anteriores) viajaron **en el estado**. Por eso cualquier réplica puede
# servir la segunda ronda, siempre que comparta el secreto con el que se sella el estado. Aquí
# tienes dos "réplicas" más, objetos `Server` nuevos con la misma herramienta: una con el mismo
# secreto y otra con uno distinto:

# %%
def replica(secret):
    server = Server("booking", "1.0.0", state_secret=secret)
    server.tool()(book_table)
    return server


ROUND_TWO = {**BOOK, "_meta": ELICIT_META, "inputResponses": ANSWERS, "requestState": state}
for secret in (b"shared by every replica", b"another deployment"):
    reply = answer(replica(secret), jsonrpc.request(2, "tools/call", ROUND_TWO))
    print(secret, "->", reply.get("result", {}).get("content") or reply["error"])

# %% [markdown] lang="en"
# ### Why the state is sealed
#
# The state comes back from the client, so the server must not trust it as it is. It is
# JSON, signed with HMAC-SHA256 (`StateSealer` in `mcpkit/mrtr.py`): `base64(body) + "." +
# base64(mac)`. The body binds it to **this request** (a fingerprint of the method and params,
# without `_meta`, `inputResponses` and `requestState`, which change between rounds) and gives
# it an **expiry**. Let us read the body (it is signed, not encrypted: never put secrets in
# it), then try the three attacks: change an answer inside it, replay it on a request with
# other arguments, and use it after it expired.

# %% [markdown] lang="es"
# ### Por qué se sella el estado
#
# El estado vuelve del cliente, así que el servidor no debe fiarse de él tal cual. Es JSON,
# firmado con HMAC-SHA256 (`StateSealer` en `mcpkit/mrtr.py`): `base64(body) + "." +
# base64(mac)`. El cuerpo lo liga a **esta solicitud** (una huella del método y de los params,
# sin `_meta`, `inputResponses` ni `requestState`, que cambian entre rondas) y le da una
# **caducidad**. Leamos el cuerpo (está firmado, no cifrado: nunca pongas secretos en él) y
# después probemos los tres ataques: cambiar una respuesta dentro de él, reenviarlo en una
# solicitud con otros argumentos y usarlo una vez caducado.

# %%
body_text, mac_text = state.split(".")
body = json.loads(mrtr._unb64(body_text))
print(sorted(body), "v =", body["v"], "f =", body["f"] == mrtr.request_fingerprint(
    "tools/call", BOOK))
print(json.dumps(body["p"]["asked"]["when"]["params"]["message"]))

body["p"]["answers"] = {"when": {"action": "accept", "content": {"time": "03:00"}}}
forged = mrtr._b64(json.dumps(body, separators=(",", ":"), sort_keys=True).encode())
attacks = {
    grading._("tampered", "manipulado"): {**ROUND_TWO, "requestState": forged + "." + mac_text},
    grading._("other params", "otros params"): {**ROUND_TWO, "arguments": {"guests": 12}},
}
for label, params in attacks.items():
    print(f"{label:<13}", answer(booking, jsonrpc.request(3, "tools/call", params))["error"])

expired_booking = replica(b"shared by every replica")
expired_booking.sealer = mrtr.StateSealer(b"shared by every replica", ttl_s=-1)
old = answer(expired_booking, jsonrpc.request(4, "tools/call", {**BOOK, "_meta": ELICIT_META}))
late = {**ROUND_TWO, "requestState": old["result"]["requestState"]}
print(f"{grading._('expired', 'caducado'):<13}",
      answer(expired_booking, jsonrpc.request(5, "tools/call", late))["error"])

# %% [markdown] lang="en"
# All three are -32602, invalid params: the client sent something the server did not issue
# for this request. (The MAC check comes first, so a forged expiry cannot rescue a state
# either.) A real client does all of this for you: given an `elicitation` callback, mcpkit's
# client answers `input_required` and retries, up to `max_rounds` times. Here it is against
# the same `booking` server, reached in memory: `Client(server=booking)` starts no process,
# yet runs the same session and stdio code (the server's loop on a thread). The callback
# stands in for the user:

# %% [markdown] lang="es"
# Los tres son -32602, parámetros no válidos: el cliente envió algo que el servidor no emitió
# para esta solicitud. (El MAC se comprueba primero, así que una caducidad falsificada tampoco
# puede salvar un estado.) Un cliente real hace todo esto por ti: con un callback
# `elicitation`, el cliente de mcpkit responde a `input_required` y reintenta, hasta
# `max_rounds` veces. Aquí lo tienes con el mismo servidor `booking`, al que se accede en
# memoria: `Client(server=booking)` no arranca ningún proceso, pero ejecuta el mismo código de
# sesión y de stdio (el bucle del servidor, en un hilo). El callback hace las veces del
# usuario:

# %%
questions = []


def user(params):
    questions.append(params["message"])
    return {"action": "accept", "content": {"time": "21:00"}}


for era in ("modern", "legacy"):
    with Client(server=booking, version=era, elicitation=user).connect() as client:
        result = client.call_tool("book_table", {"guests": 4})
        print(era, client.protocol_version, result["content"][0]["text"])
print(questions)

# %% [markdown] lang="en"
# The same tool, the same callback, the same answer in both eras; only the wire differs: in
# the legacy era the server sent `elicitation/create` to the client and waited; in the modern
# one the client sent `tools/call` twice.

# %% [markdown] lang="es"
# La misma herramienta, el mismo callback, la misma respuesta en las dos eras; solo cambia lo
# que viaja por la conexión: en la era heredada el servidor envió `elicitation/create` al
# cliente y esperó; en la moderna, el cliente envió `tools/call` dos veces.

# %% [markdown] lang="en"
# ## 7. `subscriptions/listen`: notifications on a stream of their own
#
# A legacy client subscribed with `resources/subscribe` and got notifications on its
# connection, which the server had to remember. A modern client opens a **listen** request,
# `subscriptions/listen`, saying which notifications it wants. The server acknowledges what it
# can deliver and keeps the request open; every notification it sends on it carries the
# listen's id as `_meta["io.modelcontextprotocol/subscriptionId"]`, so a client with several
# streams knows which one a notification belongs to. Closing the stream (over HTTP, lesson 08)
# or cancelling the request ends it.

# %% [markdown] lang="es"
# ## 7. `subscriptions/listen`: notificaciones en un flujo propio
#
# Un cliente heredado se suscribía con `resources/subscribe` y recibía las notificaciones en
# su conexión, que el servidor tenía que recordar. Un cliente moderno abre una solicitud de
# **escucha**, `subscriptions/listen`, diciendo qué notificaciones quiere. El servidor confirma
# lo que puede entregar y mantiene abierta la solicitud; cada notificación que envía por ella
# lleva el id de la escucha en `_meta["io.modelcontextprotocol/subscriptionId"]`, para que un
# cliente con varios flujos sepa a cuál pertenece. Cerrar el flujo (en HTTP, lección 08) o
# cancelar la solicitud la termina.

# %%
notes.reset()
stream = []
listening = notes.server.connect(stream.append)
listening.receive(jsonrpc.request("listen-1", "subscriptions/listen", {
    "_meta": META, "notifications": {"toolsListChanged": True, "resourceSubscriptions": [
        "notes://4"]}}))
caller = notes.server.connect(lambda message: None)
caller.receive(jsonrpc.request(1, "tools/call", {
    "name": "notes_create", "arguments": {"title": "Tea", "body": "Green."}, "_meta": META}))
listening.receive(jsonrpc.notification("notifications/cancelled", {"requestId": "listen-1"}))
for message in stream:
    print(json.dumps(message))
listening.close()
caller.close()
notes.reset()

# %% [markdown] lang="en"
# The note was created through **another connection**: the listen stream heard of it all the
# same, because subscriptions belong to the server, not to a session.
#
# ## 8. What changed for server authors, and why
#
# | | legacy (2024-11-05 .. 2025-11-25) | modern (2026-07-28) |
# | --- | --- | --- |
# | version, capabilities, log level | once, in `initialize`, kept | in every request's `_meta` |
# | what the server offers | the `initialize` result | `server/discover`, cacheable |
# | asking the client (elicitation...) | a request to the client | `input_required`, a retry |
# | state between rounds | in the server's memory | in the sealed `requestState` |
# | notifications | on the session | on a `subscriptions/listen` stream |
# | who answers the next request | the process with the session | **any replica** |
#
# The last row is the reason for all the others. A legacy session lives in one process: put
# such a server behind a load balancer and every request of a session must reach the same
# process (*affinity*), and a server on a platform that starts a fresh instance per request (a
# *cold-starting function*) loses its sessions all the time: the source material's
# anti-pattern of a stateful HTTP server on such a platform. A modern server keeps nothing
# between requests, so any copy of it can answer any request, and one that just started knows
# as much as one that has been running for a week. Lesson 08 shows it over HTTP, with two
# worker processes answering the two rounds of one request.
#
# What a server author must still get right: share the `state_secret` (or
# `MCPKIT_STATE_SECRET`) between replicas; keep the state small (it travels on every round);
# never put secrets in it (signed, not encrypted); and make tools **safe to replay**, since a
# modern tool runs again from the start on every round (do the side effect after the last
# question, as `book_table` does).

# %% [markdown] lang="es"
# La nota se creó a través de **otra conexión**: el flujo de escucha se enteró igualmente,
# porque las suscripciones pertenecen al servidor, no a una sesión.
#
# ## 8. Qué cambió para quien escribe servidores, y por qué
#
# | | heredada (2024-11-05 .. 2025-11-25) | moderna (2026-07-28) |
# | --- | --- | --- |
# | versión, capacidades, nivel de registro | una vez, en `initialize`, y se guarda | en el `_meta` de cada solicitud |
# | lo que ofrece el servidor | el resultado de `initialize` | `server/discover`, se puede guardar en caché |
# | preguntar al cliente (elicitation...) | una solicitud al cliente | `input_required`, reintento |
# | estado entre rondas | en la memoria del servidor | en el `requestState` sellado |
# | notificaciones | en la sesión | en un flujo `subscriptions/listen` |
# | quién responde la siguiente solicitud | el proceso de la sesión | **cualquier réplica** |
#
# La última fila es la razón de todas las demás. Una sesión heredada vive en un proceso: pon
# un servidor así detrás de un balanceador de carga y cada solicitud de una sesión tendrá que
# llegar al mismo proceso (*afinidad*), y un servidor en una plataforma que arranca una
# instancia nueva por solicitud (una *función con arranque en frío*) pierde sus sesiones todo
# el tiempo: el antipatrón que describe el material de origen, un servidor HTTP con estado en
# una plataforma así. Un servidor moderno no guarda nada entre solicitudes, así que cualquier copia
# suya puede responder a cualquier solicitud, y una que acaba de arrancar sabe tanto como una
# que lleva una semana funcionando. La lección 08 lo muestra sobre HTTP, con dos procesos
# trabajadores que responden a las dos rondas de una misma solicitud.
#
# Lo que quien escribe un servidor aún debe hacer bien: compartir el `state_secret` (o
# `MCPKIT_STATE_SECRET`) entre réplicas; mantener pequeño el estado (viaja en cada ronda); no
# poner nunca secretos en él (está firmado, no cifrado); y hacer que las herramientas **se
# puedan repetir sin riesgo**, porque una herramienta moderna vuelve a ejecutarse desde el
# principio en cada ronda (haz el efecto secundario después de la última pregunta, como hace
# `book_table`).

# %% [markdown] lang="en"
# ## 9. What 2026-07-28 deprecates, and moving a server to it
#
# A *deprecated* feature still works: it stays in the specification, unchanged, until the
# first revision released on or after its earliest removal date, and a server must keep
# serving it until then. New code should not adopt it. The revision's registry:
#
# | feature | deprecated in | instead | removable from |
# | --- | --- | --- | --- |
# | roots (`roots/list`, lesson 05) | 2026-07-28 | directories and files as tool arguments, resource URIs or server configuration | the first revision on or after 2027-07-28 |
# | sampling (`sampling/createMessage`, lesson 05) | 2026-07-28 | the server calls its LLM provider's API itself | the first revision on or after 2027-07-28 |
# | logging (`notifications/message`, `logging/setLevel`, the log level in `_meta`) | 2026-07-28 | stderr (stdio), or OpenTelemetry | the first revision on or after 2027-07-28 |
# | OAuth dynamic client registration | 2026-07-28 | Client ID Metadata Documents (`OAuth(client_metadata_url=...)`) | the first revision on or after 2027-07-28 |
# | sampling's `includeContext` `"thisServer"` / `"allServers"` | 2025-11-25 | leave it out, or `"none"` | with sampling |
# | the HTTP+SSE transport of 2024-11-05 (mcpkit never had it) | 2025-03-26 | streamable HTTP (lesson 08) | three months after SEP-2596 is final |
#
# `mcpkit` keeps all of them working in both eras. When an application relies on one in the
# modern era (a tool that calls `ctx.log` or `ctx.sample`, a client that offers roots), it
# logs **one** warning per feature and process on the `mcpkit.deprecations` logger, saying what
# replaces it; the legacy era, where these features belong, gets none.
#
# **Moving a 2025-11-25 server and client to 2026-07-28 with mcpkit.** The server's code does
# not change: the same `Server` answers both eras (section 1 shows the two wires side by
# side). What changes on the wire: no `initialize` and no `notifications/initialized`; the
# version, the client's info and capabilities in every request's `_meta`; `server/discover`
# instead of the `initialize` result; `input_required` rounds instead of requests to the
# client; `subscriptions/listen` instead of session notifications; no `Mcp-Session-Id` over
# HTTP. What the author should change: tools that ask the client survive replays (section 6),
# and anything that relied on the deprecated features above moves to what replaces it. The
# client's code does not change either: `Client` probes and picks the newest era both sides
# speak (section 4); `version="2025-11-25"` pins the old one while a peer catches up.
#
# The cell below runs a tool that logs, twice, in the modern era, and counts the warnings:

# %% [markdown] lang="es"
# ## 9. Lo que la revisión 2026-07-28 declara obsoleto, y cómo pasar un servidor a ella
#
# Una funcionalidad *obsoleta* (*deprecated*) sigue funcionando: permanece en la especificación, sin
# cambios, hasta la primera revisión que se publique a partir de su fecha de eliminación más
# temprana, y un servidor tiene que seguir ofreciéndola hasta entonces. El código nuevo no
# debería adoptarla. El catálogo de funcionalidades obsoletas de la revisión:
#
# | funcionalidad | obsoleta desde | en su lugar | se puede eliminar a partir de |
# | --- | --- | --- | --- |
# | raíces (`roots/list`, lección 05) | 2026-07-28 | directorios y archivos como argumentos de herramienta, URI de recursos o configuración del servidor | la primera revisión a partir de 2027-07-28 |
# | muestreo (`sampling/createMessage`, lección 05) | 2026-07-28 | el servidor llama él mismo a la API de su proveedor de LLM | la primera revisión a partir de 2027-07-28 |
# | registro (`notifications/message`, `logging/setLevel`, el nivel de registro en `_meta`) | 2026-07-28 | stderr (stdio), u OpenTelemetry | la primera revisión a partir de 2027-07-28 |
# | registro dinámico de clientes de OAuth (dynamic client registration) | 2026-07-28 | documentos de metadatos del ID de cliente (Client ID Metadata Documents, `OAuth(client_metadata_url=...)`) | la primera revisión a partir de 2027-07-28 |
# | `includeContext` `"thisServer"` / `"allServers"` del muestreo | 2025-11-25 | omitirlo, o `"none"` | junto con el muestreo |
# | el transporte HTTP+SSE de 2024-11-05 (mcpkit nunca lo tuvo) | 2025-03-26 | HTTP con flujos (lección 08) | tres meses después de que SEP-2596 sea definitiva |
#
# `mcpkit` las mantiene todas funcionando en las dos eras. Cuando una aplicación depende de
# una en la era moderna (una herramienta que llama a `ctx.log` o a `ctx.sample`, un cliente que
# ofrece raíces), `mcpkit` registra **un** aviso por funcionalidad y por proceso en el logger
# `mcpkit.deprecations`, que indica qué la sustituye; en la era heredada, a la que pertenecen
# estas funcionalidades, no se emite ninguno.
#
# **Pasar un servidor y un cliente de 2025-11-25 a 2026-07-28 con mcpkit.** El código del
# servidor no cambia: el mismo `Server` responde en las dos eras (la sección 1 muestra lado a
# lado los bytes que viajan en cada era). Lo que cambia en la conexión: no hay `initialize`
# ni `notifications/initialized`; la versión, la información y las capacidades del cliente van en
# el `_meta` de cada solicitud; `server/discover` en lugar del resultado de `initialize`; rondas
# `input_required` en lugar de solicitudes al cliente; `subscriptions/listen` en lugar de las
# notificaciones de la sesión; sobre HTTP, ningún `Mcp-Session-Id`. Lo que sí debería cambiar
# quien escribe el servidor: que las herramientas que preguntan al cliente se puedan volver a
# ejecutar sin riesgo (sección 6), y que lo que dependía de las funcionalidades obsoletas de
# arriba pase a lo que las sustituye. El código del cliente tampoco cambia: `Client` sondea y
# elige la era más reciente que admiten los dos (sección 4); `version="2025-11-25"` fija la
# antigua mientras el interlocutor se pone al día.
#
# La celda siguiente ejecuta dos veces, en la era moderna, una herramienta que escribe en el
# registro, y cuenta los avisos:

# %%
import logging  # noqa: E402

from mcpkit import deprecations  # noqa: E402

chatty = Server("chatty", "1.0.0")


@chatty.tool
def remember(ctx: Context, text: str) -> str:
    """Log the text at level info, and give it back."""
    ctx.log("info", text)
    return text


warned = []
watcher = logging.Handler()
watcher.emit = warned.append
logging.getLogger("mcpkit.deprecations").addHandler(watcher)
deprecations.reset()
for text in ("one", "two"):
    connection = chatty.connect(lambda message: None)
    connection.receive(jsonrpc.request(1, "tools/call", {
        "name": "remember", "arguments": {"text": text}, "_meta": META}))
    connection.close()
logging.getLogger("mcpkit.deprecations").removeHandler(watcher)
print(len(warned), "·", warned[0].name)

# %% [markdown] lang="en"
# One warning, however many calls. What replaces logging for watching a server at work is
# tracing: every mcpkit request carries its W3C trace context (`traceparent`) in `_meta`, the
# key the specification reserves for it, and when the application has set an OpenTelemetry
# tracer provider, client and server each record a span. Here one trace runs from the
# application through a `Host` and its client into the notes server (over loopback HTTP), and
# the SDK's console exporter prints each span as it ends: its kind, its name, and its parent's
# name (the IDs change on every run, so they are left out).

# %% [markdown] lang="es"
# Un aviso, da igual cuántas llamadas haya. Lo que sustituye al registro para observar a un
# servidor mientras trabaja son las trazas: cada solicitud de mcpkit lleva su contexto de traza W3C
# (`traceparent`) en `_meta`, la clave que la especificación reserva para ello, y cuando la
# aplicación ha configurado un proveedor de trazas de OpenTelemetry, el cliente y el servidor
# registran cada uno un span. Aquí una sola traza va desde la aplicación, a través de un
# `Host` y su cliente, hasta el servidor de notas (por HTTP sobre loopback, la interfaz de bucle
# local), y el exportador de consola del SDK imprime cada span en cuanto este termina: su tipo,
# su nombre y el nombre de su padre (los ID cambian en cada ejecución, así que se omiten).

# %%
from opentelemetry import trace  # noqa: E402
from opentelemetry.sdk.trace import SpanProcessor, TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor  # noqa: E402

from mcpkit import Host  # noqa: E402
from mcpkit.transports.http import HttpServerThread  # noqa: E402


class Names(SpanProcessor):
    # [en] Remembers each span's name when it starts: children end first, and name parents.
    # [es] Recuerda el nombre de cada span al empezar: los hijos terminan primero y así
    # [es] pueden nombrar a su padre.

    names = {}
    turn = None  # [en] the trace of the application's span: the one printed  [es] la traza del span de la aplicación: la que se imprime

    def on_start(self, span, parent_context=None):
        self.names[span.context.span_id] = span.name
        if span.name == "turn":
            Names.turn = span.context.trace_id


def one_line(span):
    if span.context.trace_id != Names.turn:
        return ""  # [en] the host's own start-up requests: traces of their own  [es] las solicitudes de arranque del propio host: trazas propias
    parent = Names.names[span.parent.span_id] if span.parent else "-"
    return f"{span.kind.name:<8} {span.name:<24} {grading._('parent:', 'padre:')} {parent}\n"


provider = TracerProvider()
provider.add_span_processor(Names())
provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter(formatter=one_line)))
trace.set_tracer_provider(provider)

with HttpServerThread(notes.server) as http, \
        Host({"mcpServers": {"notes": {"url": http.url}}}) as host:
    with trace.get_tracer("notebook").start_as_current_span("turn"):
        host.call_tool("notes_search", {"query": "mcp"})
notes.reset()

# %% [markdown] lang="en"
# ## Summary
#
# - Modern requests carry the version, the client's info and capabilities and the log level in
#   `params._meta`; there is no handshake, and nothing to remember between requests.
# - A dual-era server decides each request's era: a completed `initialize` makes a connection
#   legacy for life; otherwise a version in `_meta` makes the request modern; neither is -32602
#   (except `ping`). Errors: -32022 with the supported versions, -32601 for the other era's
#   methods, -32021 for a missing client capability.
# - `server/discover` tells what a server offers; every modern result says its `resultType`
#   and the server's info; `ttlMs` and `cacheScope` say how long, and for whom, a result may be
#   reused.
# - A client probes with `server/discover` and falls back to `initialize` on another error or
#   silence; -32022 means retry once with a listed version.
# - A tool that needs the user returns `input_required`; the client retries with
#   `inputResponses` and the `requestState`, which is HMAC-sealed, bound to the request and
#   short-lived, so a stateless server can trust it and any replica can serve the next round.
# - `subscriptions/listen` puts notifications on a stream of their own, tagged with its id.
#
# **Lab 07** (`labs/en/lab07_modern.ipynb`): write the era decision, the discovery result, the
# sealing and the probe yourself. Next, **lesson 08**: all of this over streamable HTTP.

# %% [markdown] lang="es"
# ## Resumen
#
# - Las solicitudes modernas llevan la versión, la información y las capacidades del cliente y
#   el nivel de registro en `params._meta`; no hay handshake, ni nada que recordar entre
#   solicitudes.
# - Un servidor de las dos eras decide la era de cada solicitud: un `initialize` completado
#   hace heredada una conexión para siempre; si no, una versión en `_meta` hace moderna la
#   solicitud; sin ninguna de las dos es -32602 (salvo `ping`). Errores: -32022 con las
#   versiones admitidas, -32601 para los métodos de la otra era, -32021 cuando falta una
#   capacidad del cliente.
# - `server/discover` dice qué ofrece un servidor; cada resultado moderno dice su `resultType`
#   y la información del servidor; `ttlMs` y `cacheScope` dicen cuánto tiempo, y para quién, se
#   puede reutilizar un resultado.
# - Un cliente sondea con `server/discover` y recurre a `initialize` (el handshake heredado)
#   ante otro error o el silencio; -32022 significa reintentar una vez con una versión de la lista.
# - Una herramienta que necesita al usuario devuelve `input_required`; el cliente reintenta
#   con `inputResponses` y el `requestState`, que va sellado con HMAC, ligado a la solicitud y
#   con una vida corta, para que un servidor sin estado pueda fiarse de él y cualquier réplica
#   pueda servir la siguiente ronda.
# - `subscriptions/listen` lleva las notificaciones en un flujo propio, marcadas con su id.
#
# **Laboratorio 07** (`labs/es/lab07_modern.ipynb`): escribe tú la decisión de era, el
# resultado del descubrimiento, el sellado y el sondeo. Después, la **lección 08**: todo esto
# sobre HTTP con flujos (streamable HTTP).
