# %% [markdown] lang="en"
# # Lab 07 · A dual-era server, and the client's probe
#
# > **Español:** [`labs/es/lab07_modern.ipynb`](../es/lab07_modern.ipynb)
#
# Lesson 07 showed the same work done in both eras. In this lab you write the four decisions
# that make that possible, as small functions over plain values (dicts, strings, numbers):
#
# | part | you write | points |
# | --- | --- | --- |
# | 1 | `request_era(method, params, initialized)`: legacy, modern, or which error | 3 |
# | 2 | `discover_result(info, capabilities, instructions, ttl_ms, cache_scope)` | 2 |
# | 3 | `seal_state(...)` and `open_state(...)`: a `requestState` a client cannot forge | 3 |
# | 4 | `next_step(sent, reply, attempt)`: the client's probe and its fallback | 2 |
#
# **How to work.** Replace each `# YOUR CODE HERE` / `raise NotImplementedError()` with your
# code, run the cell, then run the **graded cell** below it. A graded cell is read-only. Before
# you run it, it shows the line it prints when every check passes: that is the expected
# output, not your result. When all four pass, save the notebook and grade the whole lab from
# the repository's root:
#
# ```
# ./course.sh grade lab07
# ```
#
# **What your instructor grades.** Only the code in the exercise cells, run on its own in a
# fresh Python process, on more generated cases than the graded cells here try and with a seed
# you do not see. Keep every definition an exercise needs in its exercise cells, and leave
# `grading` alone: code that touches the grader scores zero. `mcpkit.mrtr.StateSealer` and
# `mcpkit.connection.Connection` do what parts 1 and 3 ask, so they are off limits; the rest of
# `mcpkit` (`versions`, `jsonrpc`, `mrtr.request_fingerprint`) is yours to use.
# Exercise code may import mcpkit, what the setup cell imports, and the plainer standard
# modules (`json`, `re`, `itertools`, `collections`, `time`, `threading`, `logging` and a few
# more); a graded cell names any other import it finds, with the whole list.
#
# The checks compare your functions with mcpkit's real code: a real server process answers a
# set of requests in each era, a real `Connection` decides the era of every generated request
# and answers `server/discover` for generated servers, a real `StateSealer` opens the states
# you seal, and your `open_state` opens one that a real server issued in the middle of a tool
# call.

# %% [markdown] lang="es"
# # Laboratorio 07 · Un servidor de las dos eras, y el sondeo del cliente
#
# > **English:** [`labs/en/lab07_modern.ipynb`](../en/lab07_modern.ipynb)
#
# La lección 07 mostró el mismo trabajo hecho en las dos eras. En este laboratorio escribes las
# cuatro decisiones que lo hacen posible, como funciones pequeñas sobre valores simples (dicts,
# cadenas, números):
#
# | parte | escribes | puntos |
# | --- | --- | --- |
# | 1 | `request_era(method, params, initialized)`: heredada, moderna o qué error | 3 |
# | 2 | `discover_result(info, capabilities, instructions, ttl_ms, cache_scope)` | 2 |
# | 3 | `seal_state(...)` y `open_state(...)`: un `requestState` que un cliente no puede falsificar | 3 |
# | 4 | `next_step(sent, reply, attempt)`: el sondeo del cliente y cuándo recurre a la era heredada | 2 |
#
# **Cómo trabajar.** Sustituye cada `# YOUR CODE HERE` / `raise NotImplementedError()` por tu
# código, ejecuta la celda y luego ejecuta la **celda calificada** que hay debajo. Una celda
# calificada es de solo lectura. Antes de que la ejecutes, ya muestra la línea que imprime cuando
# todas las comprobaciones pasan: es la salida esperada, no tu resultado. Cuando pasen las cuatro,
# guarda el cuaderno y califica el laboratorio completo desde la raíz del repositorio:
#
# ```
# ./course.sh grade lab07
# ```
#
# **Qué califica tu instructor/a.** Solo el código de las celdas de ejercicio, ejecutado por
# separado en un proceso de Python nuevo, con más casos generados de los que prueban aquí las
# celdas calificadas y con una semilla que no ves. Deja en las celdas de ejercicio todas las
# definiciones que necesitan, y no toques `grading`: el código que manipula el calificador
# obtiene cero. `mcpkit.mrtr.StateSealer` y `mcpkit.connection.Connection` hacen lo que piden
# las partes 1 y 3, así que no puedes usarlos; el resto de `mcpkit` (`versions`, `jsonrpc`,
# `mrtr.request_fingerprint`) puedes usarlo.
# El código de ejercicio puede importar mcpkit, lo que ya importa la celda de preparación y los
# módulos estándar más sencillos (`json`, `re`, `itertools`, `collections`, `time`,
# `threading`, `logging` y algunos más); una celda calificada nombra cualquier otra
# importación que encuentre, con la lista completa.
#
# Las comprobaciones comparan tus funciones con el código real de mcpkit: un proceso servidor
# real responde un conjunto de solicitudes en cada era, una `Connection` real decide la era de
# cada solicitud generada y responde `server/discover` para servidores generados, un
# `StateSealer` real abre los estados que sellas, y tu `open_state` abre uno que emitió un
# servidor real en mitad de una llamada a una herramienta.

# %% tags=["setup"]
# [en] Setup: run this cell first.
# [es] Preparación: ejecuta esta celda primero.
import base64
import hashlib
import hmac
import json

from mcpkit import grading, jsonrpc
from mcpkit.jsonrpc import InvalidParams, JsonRpcError, MethodNotFound
from mcpkit.mrtr import STATE_VERSION, request_fingerprint
from mcpkit.versions import (
    LOG_LEVELS,
    META_CLIENT_CAPABILITIES,
    META_LOG_LEVEL,
    META_PROTOCOL_VERSION,
    META_SERVER_INFO,
    MODERN_VERSIONS,
    SUPPORTED_VERSIONS,
)

grading.set_language("en")


def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def unb64(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def sign(secret, data):
    return hmac.new(secret, data, hashlib.sha256).digest()

# %% [markdown] lang="en"
# The setup cell gives you the `_meta` keys and version lists of `mcpkit.versions`, the errors
# of `mcpkit.jsonrpc`, and three helpers for part 3: `b64(data)` and `unb64(text)` (URL-safe
# base64 without `=` padding) and `sign(secret, data)` (HMAC-SHA256).
#
# ## Part 1 · Which era is this request?
#
# A server that speaks both eras decides, for every request, which one it belongs to, by the
# rules below. Write `request_era(method, params, initialized)`: `params` is the request's
# params, always a dict (the JSON-RPC layer has already turned missing params into `{}` and
# refused any other type); `initialized` says whether this connection completed an
# `initialize` handshake. Return `"legacy"` or `"modern"`, or **raise** the JSON-RPC error the
# request gets. In this order:
#
# 1. `params["_meta"]`, when present and not `None`, must be an object, and its known keys must
#    have the right type, in **either** era: `META_PROTOCOL_VERSION` and `META_LOG_LEVEL`
#    strings, `META_CLIENT_CAPABILITIES` and `"io.modelcontextprotocol/clientInfo"` objects
#    (`None` counts as absent). Otherwise `InvalidParams` (-32602).
# 2. After `initialize`, the connection is legacy for life: `"legacy"`, except for the
#    modern-only methods `server/discover` and `subscriptions/listen`: `MethodNotFound`
#    (-32601).
# 3. No handshake and no version in `_meta`: `"legacy"` for `ping` (the one request allowed
#    before `initialize`); anything else is malformed, `InvalidParams`. Any string is a
#    version here, even `""` (it fails at step 5).
# 4. Modern from here on. `META_CLIENT_CAPABILITIES` missing: `InvalidParams` (an empty
#    object is how a client says it has none).
# 5. A version that is not in `MODERN_VERSIONS` (a future date, or a legacy one: legacy
#    versions are negotiated by `initialize`, never sent in `_meta`):
#    `JsonRpcError(-32022, message, {"supported": list(SUPPORTED_VERSIONS), "requested":
#    version})`.
# 6. A legacy-only method (`ping`, `logging/setLevel`, `resources/subscribe`,
#    `resources/unsubscribe`, `initialize`): `MethodNotFound`.
# 7. A log level in `_meta` that is not one of `LOG_LEVELS`: `InvalidParams`.
# 8. Otherwise: `"modern"`.

# %% [markdown] lang="es"
# La celda de preparación te da las claves de `_meta` y las listas de versiones de
# `mcpkit.versions`, los errores de `mcpkit.jsonrpc` y tres funciones auxiliares para la parte 3:
# `b64(data)` y `unb64(text)` (base64 apto para URL, sin el relleno `=`) y
# `sign(secret, data)` (HMAC-SHA256).
#
# ## Parte 1 · ¿De qué era es esta solicitud?
#
# Un servidor que habla las dos eras decide, para cada solicitud, a cuál pertenece, con las
# reglas de abajo. Escribe `request_era(method, params, initialized)`: `params` son los params
# de la solicitud, siempre un dict (la capa JSON-RPC ya convirtió unos params ausentes en `{}`
# y rechazó cualquier otro tipo); `initialized` dice si esta conexión completó un handshake
# `initialize`. Devuelve `"legacy"` o `"modern"`, o **lanza** el error JSON-RPC que recibe la
# solicitud. En este orden:
#
# 1. `params["_meta"]`, si está y no es `None`, debe ser un objeto, y sus claves conocidas deben
#    tener el tipo correcto, en **las dos** eras: `META_PROTOCOL_VERSION` y `META_LOG_LEVEL`
#    cadenas, `META_CLIENT_CAPABILITIES` y `"io.modelcontextprotocol/clientInfo"` objetos
#    (`None` cuenta como ausente). Si no, `InvalidParams` (-32602).
# 2. Tras `initialize`, la conexión es heredada para siempre: `"legacy"`, salvo los métodos
#    solo modernos `server/discover` y `subscriptions/listen`: `MethodNotFound` (-32601).
# 3. Sin handshake y sin versión en `_meta`: `"legacy"` para `ping` (la única solicitud
#    permitida antes de `initialize`); cualquier otra está mal formada, `InvalidParams`.
#    Cualquier cadena es aquí una versión, incluso `""` (falla en el paso 5).
# 4. A partir de aquí, moderna. Si falta `META_CLIENT_CAPABILITIES`: `InvalidParams` (un objeto
#    vacío es la forma en que un cliente dice que no tiene ninguna).
# 5. Una versión que no está en `MODERN_VERSIONS` (una fecha futura o una heredada: las
#    versiones heredadas se negocian con `initialize`, nunca se envían en `_meta`):
#    `JsonRpcError(-32022, message, {"supported": list(SUPPORTED_VERSIONS), "requested":
#    version})`.
# 6. Un método solo heredado (`ping`, `logging/setLevel`, `resources/subscribe`,
#    `resources/unsubscribe`, `initialize`): `MethodNotFound`.
# 7. Un nivel de registro en `_meta` que no es uno de `LOG_LEVELS`: `InvalidParams`.
# 8. Si no: `"modern"`.

# %%
def request_era(method, params, initialized):
    ### BEGIN SOLUTION
    meta = params.get("_meta")
    if meta is not None:
        if not isinstance(meta, dict):
            raise InvalidParams("params._meta must be an object")
        kinds = {META_PROTOCOL_VERSION: str, META_LOG_LEVEL: str, META_CLIENT_CAPABILITIES: dict,
                 "io.modelcontextprotocol/clientInfo": dict}
        for key, kind in kinds.items():
            value = meta.get(key)
            if value is not None and not isinstance(value, kind):
                raise InvalidParams(f"params._meta[{key!r}] must be a {kind.__name__}")
    else:
        meta = {}
    if initialized:
        if method in ("server/discover", "subscriptions/listen"):
            raise MethodNotFound(method)
        return "legacy"
    version = meta.get(META_PROTOCOL_VERSION)
    if version is None:
        if method == "ping":
            return "legacy"
        raise InvalidParams(f"{method} needs a protocol version in _meta, or initialize first")
    if meta.get(META_CLIENT_CAPABILITIES) is None:
        raise InvalidParams("clientCapabilities is required (an empty object if none)")
    if version not in MODERN_VERSIONS:
        raise JsonRpcError(jsonrpc.UNSUPPORTED_PROTOCOL_VERSION,
                           f"Unsupported protocol version: {version}",
                           {"supported": list(SUPPORTED_VERSIONS), "requested": version})
    if method in ("initialize", "ping", "logging/setLevel", "resources/subscribe",
                  "resources/unsubscribe"):
        raise MethodNotFound(method)
    level = meta.get(META_LOG_LEVEL)
    if level is not None and level not in LOG_LEVELS:
        raise InvalidParams(f"unknown log level {level!r}")
    return "modern"
    ### END SOLUTION


# %%
modern_meta = {META_PROTOCOL_VERSION: "2026-07-28", META_CLIENT_CAPABILITIES: {}}
[request_era("tools/list", {"_meta": modern_meta}, False),
 request_era("tools/list", {}, True),
 request_era("ping", {}, False)]

# %% tags=["graded"] points=3
grading.check_request_era(request_era)

# %% [markdown] lang="en"
# ## Part 2 · The `server/discover` result
#
# In the modern era there is no `initialize` result to learn a server from: a client asks
# `server/discover`. Write `discover_result(info, capabilities, instructions, ttl_ms,
# cache_scope)`, which returns the whole result as it goes on the wire:
#
# - `"supportedVersions"`: every revision this server speaks, newest first
#   (`list(SUPPORTED_VERSIONS)`: a client that probes with a version we lack picks from it);
# - `"capabilities"`: `capabilities`, as given;
# - `"instructions"`: only when `instructions` is a non-empty string, as given (`None` or
#   `""`: leave the key out; a string of spaces is not empty: keep it);
# - the caching hints `"ttlMs": ttl_ms` and `"cacheScope": cache_scope`: how long, and for
#   whom (`"public"`: any user of this client; `"private"`: this user only), a client may keep
#   the result before asking again;
# - `"resultType": "complete"`, which every modern result carries;
# - `"_meta": {META_SERVER_INFO: info}`: who answered (modern results say it on every answer,
#   since no handshake said it once).

# %% [markdown] lang="es"
# ## Parte 2 · El resultado de `server/discover`
#
# En la era moderna no hay un resultado de `initialize` que le diga al cliente cómo es el
# servidor: el cliente pregunta con `server/discover`. Escribe `discover_result(info, capabilities,
# instructions, ttl_ms, cache_scope)`, que devuelve el resultado completo tal como viaja por la
# conexión:
#
# - `"supportedVersions"`: todas las revisiones que habla este servidor, empezando por la más
#   reciente (`list(SUPPORTED_VERSIONS)`: un cliente que sondea con una versión que no tenemos
#   elige de aquí);
# - `"capabilities"`: `capabilities`, tal cual;
# - `"instructions"`: solo cuando `instructions` es una cadena no vacía, tal cual (`None` o
#   `""`: omite la clave; una cadena de espacios no está vacía: consérvala);
# - las indicaciones de caché `"ttlMs": ttl_ms` y `"cacheScope": cache_scope`: cuánto tiempo, y para
#   quién (`"public"`: cualquier usuario de este cliente; `"private"`: solo este usuario), puede
#   guardar un cliente el resultado antes de volver a preguntar;
# - `"resultType": "complete"`, que lleva todo resultado moderno;
# - `"_meta": {META_SERVER_INFO: info}`: quién respondió (los resultados modernos lo dicen en
#   cada respuesta, porque no hubo un handshake que lo dijera una sola vez).

# %%
def discover_result(info, capabilities, instructions, ttl_ms, cache_scope):
    ### BEGIN SOLUTION
    result = {"supportedVersions": list(SUPPORTED_VERSIONS), "capabilities": capabilities}
    if instructions:
        result["instructions"] = instructions
    result.update({"ttlMs": ttl_ms, "cacheScope": cache_scope, "resultType": "complete",
                   "_meta": {META_SERVER_INFO: info}})
    return result
    ### END SOLUTION


# %%
discover_result({"name": "notes", "version": "1.0.0"}, {"tools": {"listChanged": True}},
                None, 60000, "public")

# %% tags=["graded"] points=2
grading.check_discover_result(discover_result)

# %% [markdown] lang="en"
# ## Part 3 · A `requestState` nobody can forge
#
# A tool that asks the user something returns `input_required` with a `requestState`; the
# client sends it back, unchanged, with the answers. The server keeps nothing in between, so
# **the state is client-held data**: sign it, or a client can rewrite the answers it already
# gave, keep a state alive for ever, or replay it on another request. Write mcpkit's format
# (so that any replica running `mcpkit.mrtr.StateSealer` with the same secret can open it):
#
# - `seal_state(secret, method, params, payload, now, ttl_s=900)`: the body is
#   `{"v": STATE_VERSION, "f": request_fingerprint(method, params), "exp": int(now + ttl_s),
#   "p": payload}`, encoded as compact JSON with sorted keys
#   (`json.dumps(body, separators=(",", ":"), sort_keys=True).encode()`); the state is
#   `b64(body) + "." + b64(sign(secret, body))`. (`v` is the format's version, for a later
#   format to be told apart; `open_state` need not check it.) The checks compare your state
#   with mcpkit's, byte for byte, for the same inputs.
# - `open_state(secret, method, params, state, now)`: the payload, or `InvalidParams` when the
#   state is malformed (not a string, not exactly two parts, not base64: `unb64` raises a
#   `ValueError` then, not JSON), its MAC does not
#   match (compare with `hmac.compare_digest`: a plain `==` leaks, by its timing, how much of
#   a guess was right), its fingerprint is not this request's, or it has expired
#   (`exp < now`).
#
# `request_fingerprint` hashes the method and the params **without** `_meta`,
# `inputResponses` and `requestState`: those change from one round to the next; the tool's
# name and arguments must not.

# %% [markdown] lang="es"
# ## Parte 3 · Un `requestState` que nadie puede falsificar
#
# Una herramienta que pregunta algo al usuario devuelve `input_required` con un
# `requestState`; el cliente lo devuelve, sin cambios, junto con las respuestas. El servidor no
# guarda nada mientras tanto, así que **el estado son datos en manos del cliente**: fírmalo, o un
# cliente podrá reescribir las respuestas que ya dio, mantener vivo un estado para siempre o
# reenviarlo en otra solicitud. Escribe el formato de mcpkit (para que cualquier réplica que
# ejecute `mcpkit.mrtr.StateSealer` con el mismo secreto pueda abrirlo):
#
# - `seal_state(secret, method, params, payload, now, ttl_s=900)`: el cuerpo es
#   `{"v": STATE_VERSION, "f": request_fingerprint(method, params), "exp": int(now + ttl_s),
#   "p": payload}`, codificado como JSON compacto con las claves ordenadas
#   (`json.dumps(body, separators=(",", ":"), sort_keys=True).encode()`); el estado es
#   `b64(body) + "." + b64(sign(secret, body))`. (`v` es la versión del formato, para
#   distinguir un formato posterior; `open_state` no necesita comprobarla.) Las comprobaciones
#   comparan tu estado con el de mcpkit, byte a byte, para las mismas entradas.
# - `open_state(secret, method, params, state, now)`: la carga útil (payload), o `InvalidParams`
#   cuando el estado está mal formado (no es una cadena, no tiene exactamente dos partes, no es
#   base64: `unb64` lanza entonces un `ValueError`, no es JSON), su MAC no coincide (compara con `hmac.compare_digest`: un `==` normal revela, por
#   lo que tarda, qué parte de un intento era correcta), su huella no es la de esta solicitud o ha
#   caducado (`exp < now`).
#
# `request_fingerprint` calcula un hash del método y de los params **sin** `_meta`,
# `inputResponses` ni `requestState`: esos cambian de una ronda a otra; el nombre de la
# herramienta y sus argumentos no.

# %%
def seal_state(secret, method, params, payload, now, ttl_s=900):
    ### BEGIN SOLUTION
    body = {"v": STATE_VERSION, "f": request_fingerprint(method, params),
            "exp": int(now + ttl_s), "p": payload}
    raw = json.dumps(body, separators=(",", ":"), sort_keys=True).encode()
    return b64(raw) + "." + b64(sign(secret, raw))
    ### END SOLUTION


def open_state(secret, method, params, state, now):
    ### BEGIN SOLUTION
    if not isinstance(state, str) or state.count(".") != 1:
        raise InvalidParams("requestState is malformed: echo it back exactly as received")
    body_text, mac_text = state.split(".")
    try:
        raw, mac = unb64(body_text), unb64(mac_text)
    except ValueError:
        raise InvalidParams("requestState is malformed") from None
    if not hmac.compare_digest(mac, sign(secret, raw)):
        raise InvalidParams("requestState failed its integrity check")
    body = json.loads(raw)
    if body.get("f") != request_fingerprint(method, params):
        raise InvalidParams("requestState belongs to a different request")
    if body.get("exp", 0) < now:
        raise InvalidParams("requestState has expired: start the request again")
    return body["p"]
    ### END SOLUTION


# %%
call = {"name": "book_table", "arguments": {"guests": 2}}
state = seal_state(b"secret", "tools/call", call, {"answers": {}}, now=1_800_000_000)
open_state(b"secret", "tools/call", call, state, now=1_800_000_000)

# %% tags=["graded"] points=3
grading.check_request_state(seal_state, open_state)

# %% [markdown] lang="en"
# ## Part 4 · The client's probe
#
# A client that does not know its server's era sends `server/discover` with the newest
# version it speaks and reads the reply, as `Client._probe` does in `mcpkit/client.py`. Write
# `next_step(sent, reply, attempt)`: `sent` is the version the probe carried, `attempt` is 0
# for the first probe and 1 for the retry, and `reply` is one of
# `{"result": {...}}`, `{"error": {"code": ..., "message": ..., "data": ...}}`,
# `{"timeout": True}` (no answer in time) or `{"http_status": 404}` (an HTTP status with no
# JSON-RPC body). Return a pair:
#
# - a result with a `"supportedVersions"` list: `("modern", sent)` if `sent` is in it, else
#   `("modern", v)` for the newest of `MODERN_VERSIONS` in it; with no modern version in it,
#   `("initialize", None)` if it lists a legacy one, else `("fail", None)`. A result without
#   that list (or with anything but a list there) is not a DiscoverResult:
#   `("initialize", None)`.
# - error -32022: the list is `error["data"]["supported"]` (its strings; missing or not a
#   list: empty). On the first attempt, with a modern version in common:
#   `("retry", newest common)`. Otherwise `("initialize", None)` if it lists a legacy version,
#   else `("fail", None)`.
# - error -32021 or -32020: a modern server refused something else: `("modern", sent)`.
# - any other error, or silence: a legacy server, `("initialize", None)`.
# - HTTP 400, 404 or 405: `("initialize", None)`; any other status (401, 403, 409, 429,
#   500...): `("fail", None)`: without credentials no era gets any further.
#
# "A legacy one" is a legacy version this client knows: one of `SUPPORTED_VERSIONS` that is not
# in `MODERN_VERSIONS` (`versions.LEGACY_VERSIONS`, any of them); an unknown older date is not.
# mcpkit knows one modern version today, so "the newest" is checked by running your function
# once more with two: while it runs, `MODERN_VERSIONS` and `SUPPORTED_VERSIONS` (the setup
# cell's and `mcpkit.versions`') hold a newer one too. Read them when `next_step` is called,
# not into a copy made beforehand.

# %% [markdown] lang="es"
# ## Parte 4 · El sondeo del cliente
#
# Un cliente que no sabe de qué era es su servidor envía `server/discover` con la versión más
# reciente que habla y lee la respuesta, como hace `Client._probe` en `mcpkit/client.py`. Escribe
# `next_step(sent, reply, attempt)`: `sent` es la versión que llevó el sondeo, `attempt` es 0
# para el primer sondeo y 1 para el reintento, y `reply` es uno de `{"result": {...}}`,
# `{"error": {"code": ..., "message": ..., "data": ...}}`, `{"timeout": True}` (ninguna respuesta
# a tiempo) o `{"http_status": 404}` (un código de estado HTTP sin cuerpo JSON-RPC). Devuelve un
# par:
#
# - un resultado con una lista `"supportedVersions"`: `("modern", sent)` si `sent` está en ella,
#   si no `("modern", v)` con la más reciente de `MODERN_VERSIONS` que esté en ella; sin ninguna
#   versión moderna, `("initialize", None)` si lista alguna heredada, y si no `("fail", None)`.
#   Un resultado sin esa lista (o con algo que no sea una lista) no es un DiscoverResult:
#   `("initialize", None)`.
# - el error -32022: la lista es `error["data"]["supported"]` (sus cadenas; si falta o no es
#   una lista, vacía). En el primer intento, con una versión moderna en común:
#   `("retry", la más reciente en común)`. Si no, `("initialize", None)` si lista una heredada, y
#   si no `("fail", None)`.
# - el error -32021 o -32020: un servidor moderno rechazó otra cosa: `("modern", sent)`.
# - cualquier otro error, o el silencio: un servidor heredado, `("initialize", None)`.
# - HTTP 400, 404 o 405: `("initialize", None)`; cualquier otro código de estado (401, 403, 409,
#   429, 500...): `("fail", None)`: sin credenciales ninguna era llega más lejos.
#
# "Alguna heredada" es una versión heredada que este cliente conoce: una de `SUPPORTED_VERSIONS`
# que no está en `MODERN_VERSIONS` (`versions.LEGACY_VERSIONS`, cualquiera de ellas); una fecha
# antigua desconocida no lo es. Hoy mcpkit conoce una sola versión moderna, así que "la más
# reciente" se comprueba ejecutando tu función otra vez con dos: mientras se ejecuta,
# `MODERN_VERSIONS` y `SUPPORTED_VERSIONS` (los de la celda de preparación y los de
# `mcpkit.versions`) incluyen también una más reciente. Léelos cuando se llama a `next_step`,
# no en una copia hecha antes.

# %%
def next_step(sent, reply, attempt):
    ### BEGIN SOLUTION
    modern = list(MODERN_VERSIONS[::-1])  # [en] newest first  [es] la más reciente primero

    def legacy_or_fail(supported):
        if any(v in supported for v in SUPPORTED_VERSIONS if v not in MODERN_VERSIONS):
            return ("initialize", None)
        return ("fail", None)

    if "timeout" in reply:
        return ("initialize", None)
    if "http_status" in reply:
        return ("initialize", None) if reply["http_status"] in (400, 404, 405) else ("fail", None)
    if "error" in reply:
        error = reply["error"]
        if error.get("code") == jsonrpc.UNSUPPORTED_PROTOCOL_VERSION:
            data = error.get("data")
            listed = data.get("supported") if isinstance(data, dict) else None
            supported = [v for v in listed if isinstance(v, str)] if isinstance(listed, list) \
                else []
            mutual = [v for v in modern if v in supported]
            if mutual and attempt == 0:
                return ("retry", mutual[0])
            return legacy_or_fail(supported)
        if error.get("code") in (jsonrpc.HEADER_MISMATCH,
                                 jsonrpc.MISSING_REQUIRED_CLIENT_CAPABILITY):
            return ("modern", sent)
        return ("initialize", None)
    supported = reply["result"].get("supportedVersions")
    if not isinstance(supported, list):
        return ("initialize", None)
    if sent in supported:
        return ("modern", sent)
    mutual = [v for v in modern if v in supported]
    if mutual:
        return ("modern", mutual[0])
    return legacy_or_fail(supported)
    ### END SOLUTION


# %%
next_step("2026-07-28", {"error": {"code": -32601, "message": "Method not found"}}, 0)

# %% tags=["graded"] points=2
grading.check_next_step(next_step)

# %% [markdown] lang="en"
# ## Done?
#
# Compare your four functions with the code they stand for: `Connection._context_for` and
# `_modern_context` in `mcpkit/connection.py`, `Registry._discover` in `mcpkit/registry.py`,
# `StateSealer` in `mcpkit/mrtr.py` and `Client._probe` in `mcpkit/client.py`. Two things to
# try:
#
# - Part 3 binds a state to one request. Could a client replay a *complete* round (the answers
#   and the state) a second time, to run the tool twice? What would the server need to stop
#   that, and why would it cost the statelessness the modern era is for?
# - In part 4, what happens to a client that probes a legacy server which never answers
#   unknown requests, with a probe timeout of 10 s? Why does mcpkit's client not cancel the
#   probe before it sends `initialize`?

# %% [markdown] lang="es"
# ## ¿Terminaste?
#
# Compara tus cuatro funciones con el código al que corresponden: `Connection._context_for` y
# `_modern_context` en `mcpkit/connection.py`, `Registry._discover` en `mcpkit/registry.py`,
# `StateSealer` en `mcpkit/mrtr.py` y `Client._probe` en `mcpkit/client.py`. Dos cosas que
# probar:
#
# - La parte 3 liga un estado a una solicitud. ¿Podría un cliente repetir una ronda *completa*
#   (las respuestas y el estado) una segunda vez, para ejecutar la herramienta dos veces? ¿Qué
#   necesitaría el servidor para impedirlo, y por qué le costaría la ausencia de estado para la
#   que existe la era moderna?
# - En la parte 4, ¿qué le pasa a un cliente que sondea un servidor heredado que nunca responde
#   a solicitudes desconocidas, con un tiempo de espera de sondeo de 10 s? ¿Por qué el cliente
#   de mcpkit no cancela el sondeo antes de enviar `initialize`?
