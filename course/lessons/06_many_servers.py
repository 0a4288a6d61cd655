# %% [markdown] lang="en"
# # Lesson 06 · Many servers: one namespace, routing, restarts
#
# > **Español:** [`notebooks/es/06_many_servers.ipynb`](../es/06_many_servers.ipynb)
#
# Lesson 05 held one session with one server. A host holds many: a file server, a web
# server, a database, each a child process with its own session, and the model must see
# them as **one list of tools**. In this lesson you will:
#
# 1. read the **`mcpServers`** configuration that Claude Desktop, VS Code and Cursor share;
# 2. **start every server at once**, so that a slow or broken one holds nobody up;
# 3. merge their tools into **one namespace**, and meet the **collision policies** (prefix by
#    server, first wins, reject), which host does which, and why;
# 4. follow a call through the **routing table**;
# 5. watch a `list_changed` notification **re-merge** the namespace, renaming another
#    server's tool;
# 6. kill a server again and again and watch the host bring it back with **exponential
#    backoff** (capped at 30 s, with jitter) and **tell the user** after three failures in a
#    row;
# 7. choose between restarting quietly and surfacing the failure;
# 8. watch it all in the **host dashboard**;
# 9. start **100 real servers** and measure what they cost: wall time, memory, tools, and a
#    routing lookup;
# 10. answer, with those numbers, what a host for 100 servers needs instead of a plain dict.
#
# Everything here is `mcpkit/host.py`; the widget is `mcpkit/widgets.py`'s `HostDashboard`.

# %% [markdown] lang="es"
# # Lección 06 · Muchos servidores: un espacio de nombres, enrutamiento, reinicios
#
# > **English:** [`notebooks/en/06_many_servers.ipynb`](../en/06_many_servers.ipynb)
#
# La lección 05 mantuvo una sesión con un servidor. Un host mantiene muchas: un servidor de
# archivos, uno web, una base de datos, cada uno un proceso hijo con su propia sesión, y el
# modelo debe verlos como **una sola lista de herramientas**. En esta lección vas a:
#
# 1. leer la configuración **`mcpServers`** que comparten Claude Desktop, VS Code y Cursor;
# 2. **arrancar todos los servidores a la vez**, para que uno lento o roto no haga esperar a nadie;
# 3. fusionar sus herramientas en **un espacio de nombres** y conocer las **políticas de
#    colisión** (prefijo por servidor, gana el primero, rechazo), qué host usa cada una y por
#    qué;
# 4. seguir una llamada por la **tabla de enrutamiento**;
# 5. ver cómo una notificación `list_changed` **vuelve a fusionar** el espacio de nombres y
#    renombra la herramienta de otro servidor;
# 6. matar un servidor una y otra vez y ver cómo el host lo vuelve a arrancar con un **retroceso
#    (backoff) exponencial** (con un tope de 30 s y variación aleatoria (jitter)) y **avisa al
#    usuario** tras tres fallos consecutivos;
# 7. elegir entre reiniciar en silencio y mostrar el fallo;
# 8. verlo todo en el **panel del host**;
# 9. arrancar **100 servidores reales** y medir lo que cuestan: tiempo real transcurrido,
#    memoria, herramientas y una búsqueda en la tabla de enrutamiento;
# 10. responder, con esas cifras, qué necesita un host de 100 servidores en lugar de un dict
#     simple.
#
# Todo esto es `mcpkit/host.py`; el widget es el `HostDashboard` de `mcpkit/widgets.py`.

# %% tags=["setup"]
# [en] Setup: run this cell first.
# [es] Preparación: ejecuta esta celda primero.
import bisect
import json
import logging
import os
import random
import signal
import sys
import tempfile
import threading
import time
import timeit
from collections import Counter
from pathlib import Path

import ipywidgets
from IPython.display import display

from mcpkit import grading
from mcpkit.host import (
    Backoff,
    ConfigError,
    Host,
    NameCollision,
    UnknownName,
    load_config,
    merge_namespace,
)
from mcpkit.widgets import HostDashboard

# [en] The cells print what matters; mcpkit's own log lines would only repeat it.
# [es] Las celdas imprimen lo que importa; las líneas de registro de mcpkit solo lo repetirían.
logging.getLogger("mcpkit").setLevel(logging.CRITICAL)
# [en] The dashboard's labels follow this language.
# [es] Las etiquetas del panel siguen este idioma.
grading.set_language("en")

FILES = '''
from mcpkit.server import Server

server = Server("files")


@server.tool(read_only=True)
def search(query: str) -> str:
    """Search file names."""
    return f"files matching {query!r}: notes.txt"


@server.tool(read_only=True)
def read(path: str) -> str:
    """Read a file."""
    return f"the contents of {path}"


server.run()
'''

WEB = '''
from mcpkit.server import Server

server = Server("web")


@server.tool(read_only=True)
def fetch(url: str) -> str:
    """Fetch a page."""
    return f"the page at {url}"


@server.tool()
def enable_search() -> str:
    """Add a search tool to this server (it then tells its clients the list changed)."""

    @server.tool(read_only=True)
    def search(query: str) -> str:
        """Search the web."""
        return f"web pages about {query!r}"

    return "search enabled"


server.run()
'''

folder = tempfile.TemporaryDirectory()
for name, code in (("files.py", FILES), ("web.py", WEB)):
    (Path(folder.name) / name).write_text(code)


def entry(script):
    return {"command": sys.executable, "args": [str(Path(folder.name) / script)]}


# %% [markdown] lang="en"
# ## 1. The configuration every host reads
#
# Hosts agree on the shape of a server list, if not on the file it lives in. Claude Desktop
# reads `claude_desktop_config.json`, Cursor `.cursor/mcp.json`, both with a `mcpServers`
# object: one entry per server, named by its key, with the program to run (`command`), its
# `args`, and the environment it needs (`env`, often an API key). VS Code's `.vscode/mcp.json`
# says `servers` and adds a `type`; an entry with a `url` is a server reached over streamable
# HTTP (lesson 08) instead of a child process.
#
# ```json
# {
#   "mcpServers": {
#     "files": {"command": "python", "args": ["files.py"]},
#     "web":   {"command": "python", "args": ["web.py"], "env": {"WEB_TOKEN": "..."}}
#   }
# }
# ```
#
# `mcpkit.host.load_config` reads that shape (a file or a dict) into one `ServerConfig` per
# entry, in order, and refuses a broken entry with a message that names the server and the key:

# %% [markdown] lang="es"
# ## 1. La configuración que leen todos los hosts
#
# Los hosts coinciden en la forma de una lista de servidores, aunque no en el archivo donde
# se guarda. Claude Desktop lee `claude_desktop_config.json` y Cursor `.cursor/mcp.json`, los dos
# con un objeto `mcpServers`: una entrada por servidor, con su nombre como clave, el programa
# que hay que ejecutar (`command`), sus `args` y el entorno que necesita (`env`, a menudo una
# clave de API). El `.vscode/mcp.json` de VS Code usa la clave `servers` y añade un `type`; una
# entrada con una `url` es un servidor al que se llega por HTTP con flujos (streamable HTTP,
# lección 08) en lugar de un proceso hijo.
#
# ```json
# {
#   "mcpServers": {
#     "files": {"command": "python", "args": ["files.py"]},
#     "web":   {"command": "python", "args": ["web.py"], "env": {"WEB_TOKEN": "..."}}
#   }
# }
# ```
#
# `mcpkit.host.load_config` lee esa forma (un archivo o un dict) y da un `ServerConfig` por
# entrada, en orden, y rechaza una entrada rota con un mensaje que nombra el servidor y la
# clave:

# %%
claude_style = {"mcpServers": {
    "files": {"command": "python", "args": ["files.py"]},
    "web": {"command": "python", "args": ["web.py"], "env": {"WEB_TOKEN": "..."}},
}}
vscode_style = {"servers": {
    "files": {"type": "stdio", "command": "python", "args": ["files.py"]},
    "remote": {"type": "http", "url": "http://127.0.0.1:8000/mcp"},
}}
for config in (claude_style, vscode_style):
    for server in load_config(config):
        print(server.name, server.transport, server.command, server.args, server.url,
              sorted(server.env))
try:
    load_config({"mcpServers": {"broken": {"args": ["files.py"]}}})
except ConfigError as exc:
    print(exc)

# %% [markdown] lang="en"
# The order of the entries matters: it is the **config order**, and every tie below is broken
# by it, never by which server happened to answer first.
#
# ## 2. Start every server at once
#
# Starting a server is slow next to anything else a host does: a process to spawn, an
# interpreter to load, the era probe or the handshake, then `tools/list`, `prompts/list`,
# `resources/list`. One after another, ten servers cost ten times that, and one that hangs
# holds up all the rest. `Host.start()` starts each server on a thread of its own and waits
# for all of them together, for at most `timeout` seconds. A server still not up by then
# keeps trying in the background; the others are ready to use.
#
# Here a third server is a program that never answers:

# %% [markdown] lang="es"
# El orden de las entradas importa: es el **orden de la configuración**, y todos los empates
# de más abajo se deciden por él, nunca por qué servidor respondió antes.
#
# ## 2. Arrancar todos los servidores a la vez
#
# Arrancar un servidor es lento comparado con cualquier otra cosa que hace un host: un proceso
# que lanzar, un intérprete que cargar, el sondeo de la era o el handshake y luego
# `tools/list`, `prompts/list`, `resources/list`. Uno tras otro, diez servidores cuestan diez
# veces eso, y uno que se cuelga hace esperar a todos los demás. `Host.start()` arranca cada
# servidor en un hilo propio y los espera a todos juntos, como mucho `timeout` segundos. Un
# servidor que para entonces aún no está listo sigue intentándolo en segundo plano; los demás
# ya se pueden usar.
#
# Aquí un tercer servidor es un programa que nunca responde:

# %%
config = {"mcpServers": {
    "files": entry("files.py"),
    "web": entry("web.py"),
    "stuck": {"command": sys.executable, "args": ["-c", "import time; time.sleep(60)"]},
}}
started = time.monotonic()
host = Host(config).start(timeout=1.5)
waited = time.monotonic() - started
# [en] On a busy machine they may need a moment more.
# [es] En una máquina ocupada puede que necesiten un momento más.
host.wait_ready(["files", "web"], timeout=60)
print({name: status.state for name, status in host.status().items()
       if name != "stuck"}, host.status()["stuck"].state in ("starting", "restarting"))
print(waited >= 1.5)
host.close()

# %% [markdown] lang="en"
# Two servers ready, one still starting: the host waited a second and a half, not for ever,
# and `close()` stopped the stuck one too (stdin closed, then SIGTERM, then SIGKILL, as in
# lesson 05).
#
# ## 3. One namespace, and what to do when two names collide
#
# Both `files` and (soon) `web` offer a tool called `search`. The model gets one list and
# answers with one name, so the host must make every name unique, and there is no single
# right way. The source material of this course describes three answers hosts give:
#
# | policy | what the model sees | who does it, in the source material | the price |
# | --- | --- | --- | --- |
# | **prefix by server** | `files__search`, `web__search` | Claude Desktop, VS Code | longer names; every name carries its server |
# | **first wins** (or, worse, last wins) | one `search`; the other is hidden | a silent override | the model never learns the second tool exists; with *last* wins, installing a server changes what an existing name does (tool shadowing) |
# | **reject** | nothing until the user renames | Cursor | safe and explicit, but one bad pair blocks start-up |
#
# Hosts change between releases, so check yours; the trade-offs do not change. mcpkit offers
# all of them, plus the one it uses by default, **prefix on collision**: plain names until
# two servers share one, then both get their prefix. Short names in the common case, no
# ambiguity ever, and a name never depends on which server started first.
#
# `merge_namespace(sources, policy=...)` is the whole decision, with no I/O. Its input is
# `[(server, tools)]` in config order; it returns the merged tools (copies, renamed), the
# routes, and warnings about hidden tools:

# %% [markdown] lang="es"
# Dos servidores listos y uno que aún arranca: el host esperó segundo y medio, no para
# siempre, y `close()` también detuvo al atascado (stdin cerrada, luego SIGTERM y luego
# SIGKILL, como en la lección 05).
#
# ## 3. Un espacio de nombres, y qué hacer cuando dos nombres entran en colisión
#
# Tanto `files` como (pronto) `web` ofrecen una herramienta llamada `search`. El modelo recibe
# una sola lista y responde con un solo nombre, así que el host debe hacer únicos todos los
# nombres, y no hay una única manera correcta. El material de origen de este curso describe
# tres respuestas que dan los hosts:
#
# | política | lo que ve el modelo | quién la usa, según el material de origen | el precio |
# | --- | --- | --- | --- |
# | **prefijo por servidor** | `files__search`, `web__search` | Claude Desktop, VS Code | nombres más largos; cada nombre lleva su servidor |
# | **gana el primero** (o, peor, gana el último) | una sola `search`; la otra queda oculta | una sobrescritura silenciosa | el modelo nunca se entera de que existe la segunda; si gana el *último*, instalar un servidor cambia lo que hace un nombre que ya existía (suplantación de herramientas, *tool shadowing*) |
# | **rechazo** | nada, hasta que el usuario renombre | Cursor | segura y explícita, pero basta un par de nombres en conflicto para bloquear el arranque |
#
# Los hosts cambian de una versión a otra, así que comprueba el tuyo; las ventajas e
# inconvenientes no cambian. mcpkit ofrece todas, más la que usa por defecto, **prefijo en caso
# de colisión**: nombres simples hasta que dos servidores comparten uno, y entonces los dos
# llevan su prefijo. Nombres cortos en el caso común, ninguna ambigüedad, y un nombre nunca
# depende de qué servidor arrancó antes.
#
# `merge_namespace(sources, policy=...)` es toda la decisión, sin E/S. Su entrada es
# `[(server, tools)]` en el orden de la configuración; devuelve las herramientas
# fusionadas (copias, renombradas), las rutas y avisos sobre las herramientas ocultas:

# %%
sources = [("files", [{"name": "search"}, {"name": "read"}]),
           ("web", [{"name": "search"}, {"name": "fetch"}])]
for policy in ("prefix", "prefix-on-collision", "first-wins"):
    tools, routes, warnings = merge_namespace(sources, policy=policy)
    print(f"{policy:20}", [tool["name"] for tool in tools], warnings)
try:
    merge_namespace(sources, policy="reject")
except NameCollision as exc:
    print(exc.servers, exc)

# %% [markdown] lang="en"
# Prefixes bring two traps of their own:
#
# - **The separator may appear in names.** `a` + `b__c` and `a__b` + `c` both become
#   `a__b__c`. The merge checks the *exposed* name against the names already taken, so the
#   second is hidden with a warning rather than routed to the wrong server.
# - **Length and characters.** MCP tool names should stay within 128 characters, and model
#   APIs are often stricter still (letters, digits, `_` and `-`, at most 64). A prefix eats into that;
#   `mcpkit.toolformats` maps names to what a model accepts, and back (lesson 10).

# %% [markdown] lang="es"
# Los prefijos traen dos trampas propias:
#
# - **El separador puede aparecer en los nombres.** `a` + `b__c` y `a__b` + `c` dan los dos
#   `a__b__c`. La fusión compara el nombre *expuesto* con los nombres ya ocupados, así que el
#   segundo queda oculto con un aviso en lugar de enrutarse al servidor equivocado.
# - **Longitud y caracteres.** Los nombres de herramienta de MCP deberían quedarse en 128
#   caracteres, y las API de los modelos suelen ser aún más estrictas (letras, dígitos, `_` y
#   `-`, como mucho 64). Un prefijo consume parte de ese margen; `mcpkit.toolformats` traduce los
#   nombres a lo que acepta un modelo, y viceversa (lección 10).

# %%
tricky = [("a", [{"name": "b__c"}]), ("a__b", [{"name": "c"}])]
tools, routes, warnings = merge_namespace(tricky, policy="prefix")
print(routes)
print(warnings)

# %% [markdown] lang="en"
# A real host with `naming="reject"` refuses to start when two servers collide, naming both:

# %% [markdown] lang="es"
# Un host real con `naming="reject"` se niega a arrancar cuando hay una colisión entre dos
# servidores, y nombra a los dos:

# %%
clash = {"mcpServers": {"files": entry("files.py"), "files-copy": entry("files.py")}}
try:
    Host(clash, naming="reject").start()
except NameCollision as exc:
    print(exc.name, exc.servers)

# %% [markdown] lang="en"
# ## 4. The routing table
#
# The merge also builds the **routing table**: exposed name -> (server, original name). A
# call from the model is a lookup there, then a `tools/call` with the *original* name on that
# server's session. The server never sees the prefix.
#
# ```mermaid
# sequenceDiagram
#     participant M as model
#     participant H as host
#     participant F as files (server)
#     M->>H: call files__search {query}
#     H->>H: routes["files__search"] = ("files", "search")
#     H->>F: tools/call search {query}
#     F-->>H: result
#     H-->>M: result
# ```
#
# Start the two real servers, with the default policy. No collision yet, so no prefixes:

# %% [markdown] lang="es"
# ## 4. La tabla de enrutamiento
#
# La fusión también construye la **tabla de enrutamiento**: nombre expuesto -> (servidor,
# nombre original). Una llamada del modelo es una búsqueda ahí y luego un `tools/call` con el
# nombre *original* en la sesión de ese servidor. El servidor nunca ve el prefijo.
#
# ```mermaid
# sequenceDiagram
#     participant M as modelo
#     participant H as host
#     participant F as files (servidor)
#     M->>H: llamada a files__search {query}
#     H->>H: routes["files__search"] = ("files", "search")
#     H->>F: tools/call search {query}
#     F-->>H: resultado
#     H-->>M: resultado
# ```
#
# Arranca los dos servidores reales, con la política por defecto. Aún no hay colisión, así que
# no hay prefijos:

# %%
events = []
changed = threading.Event()


def on_event(event):
    events.append(event)
    if event.kind == "list_changed":
        changed.set()


config = {"mcpServers": {"files": entry("files.py"), "web": entry("web.py")}}
host = Host(config, on_event=on_event, stable_after=60.0,
            backoff=Backoff(base=0.05, factor=2.0, cap=0.4, jitter=0.0)).start()
print([tool["name"] for tool in host.tools()])
print(host.route("search"), host.route("fetch"))
print(host.call_tool("search", {"query": "mcp"})["content"][0]["text"])
try:
    host.route("delete_everything")
except UnknownName as exc:
    print(exc)

# %% [markdown] lang="en"
# ## 5. `list_changed`: merging again
#
# A server's tools can change while it runs. It then sends
# `notifications/tools/list_changed`; the client fetches `tools/list` again, and the host
# **merges everything again, from scratch**, in config order, and swaps the new view in
# whole (a call in flight never sees half a merge). From scratch, because one server's new
# tool can rename another's. Ask `web` to grow a `search` of its own:

# %% [markdown] lang="es"
# ## 5. `list_changed`: fusionar otra vez
#
# Las herramientas de un servidor pueden cambiar mientras se ejecuta. Entonces envía
# `notifications/tools/list_changed`; el cliente vuelve a pedir `tools/list`, y el host **vuelve
# a fusionarlo todo, desde cero**, en el orden de la configuración, y sustituye de una vez la
# vista anterior por la nueva (una llamada en curso nunca ve media fusión). Desde cero, porque la
# herramienta nueva de un servidor puede renombrar la de otro. Pídele a `web` que añada una
# `search` propia:

# %%
print(host.call_tool("enable_search")["content"][0]["text"])
changed.wait(60)
print([event.server for event in events if event.kind == "list_changed"])
print([tool["name"] for tool in host.tools()])
print(host.route("files__search"), host.route("web__search"))
try:
    host.route("search")
except UnknownName as exc:
    print(exc)

# %% [markdown] lang="en"
# `files`' tool did not change at all, yet its exposed name did: `search` is gone, and a
# model (or a saved prompt) that used it gets an unknown tool. That is the price of prefixing
# only on collision; the host tells the model the new list, and hosts that always prefix
# never pay it.
#
# ## 6. When a server dies: backoff, a cap, jitter, and a notice
#
# A server process can die at any time: a bug, the OOM killer, someone's `kill`. The client
# sees the end of stdout (lesson 05); the host's supervisor then starts it again, but not at
# once and not at a fixed pace:
#
# - the delay grows with each **consecutive** failure: `base * factor ** (n - 1)`, so 0.5 s,
#   1 s, 2 s, 4 s... A server that crashes at start-up is not restarted a thousand times a
#   second;
# - it is **capped** (30 s by default): a server that was down for an hour comes back within
#   half a minute of being fixed;
# - it carries **jitter** (±20 %): ten servers that died together (their machine woke up, a
#   shared dependency failed) do not all come back in the same instant;
# - after **three failures in a row**, the user is told, once: quiet retries are right for a
#   hiccup, wrong for a server that will not start;
# - a server that stayed up for a while (`stable_after`, 10 s) starts a new streak. A
#   successful start alone proves nothing: the server may crash again at once.
#
# The delays, computed (nothing sleeps for 30 s here):

# %% [markdown] lang="es"
# La herramienta de `files` no cambió en absoluto, pero su nombre expuesto sí: `search` ya no
# existe, y un modelo (o un prompt guardado) que la usaba recibe una herramienta desconocida.
# Es el precio de poner prefijo solo cuando hay colisión; el host le da al modelo la lista
# nueva, y los hosts que siempre ponen prefijo nunca lo pagan.
#
# ## 6. Cuando un servidor muere: retroceso, tope, variación aleatoria y aviso
#
# Un proceso servidor puede morir en cualquier momento: un error, el OOM killer, el `kill` de
# alguien. El cliente ve el final de stdout (lección 05); el supervisor del host lo vuelve a
# arrancar, pero no en el acto ni a ritmo fijo:
#
# - la espera crece con cada fallo **consecutivo**: `base * factor ** (n - 1)`, o sea 0.5 s, 1 s,
#   2 s, 4 s... Un servidor que se cae al arrancar no se reinicia mil veces por segundo;
# - tiene un **tope** (30 s por defecto): un servidor que estuvo caído una hora vuelve como mucho
#   medio minuto después de que lo arreglen;
# - lleva **variación aleatoria** (jitter, ±20 %): diez servidores que murieron juntos (su
#   máquina salió de la suspensión, falló una dependencia común) no vuelven todos en el mismo instante;
# - tras **tres fallos consecutivos** se avisa al usuario, una vez: reintentar en silencio está
#   bien para un tropiezo, mal para un servidor que no logra arrancar;
# - un servidor que aguantó un rato en marcha (`stable_after`, 10 s) empieza una racha nueva.
#   Un arranque correcto por sí solo no prueba nada: el servidor puede volver a caerse en el
#   acto.
#
# Las esperas, calculadas (aquí nada duerme 30 s):

# %%
policy = Backoff()
print([Backoff(jitter=0.0).delay(n) for n in range(1, 11)])
rng = random.Random(6)
for n in (1, 3, 7, 10):
    draws = [policy.delay(n, rng) for _ in range(2000)]
    print(n, round(min(draws), 1), round(max(draws), 1))

# %% [markdown] lang="en"
# Exactly 30 s from the seventh failure on, before jitter; with it, 0.4 to 0.6 s for the
# first, 1.6 to 2.4 s for the third, and 24 to 30 s at the cap: jitter still spreads the
# capped delays, downwards only.
#
# A restart, as the host does it:
#
# ```mermaid
# sequenceDiagram
#     participant U as user
#     participant H as host (supervisor)
#     participant S as server process
#     S--xH: EOF on stdout (the process died)
#     H->>H: failures = 1: wait 0.5 s ± 20 %
#     H->>S: start again: probe, tools/list
#     S--xH: dies again
#     H->>H: failures = 2: wait 1 s ± 20 %
#     H->>S: start again
#     S--xH: dies again
#     H-->>U: notice: 3 failures in a row
#     H->>H: failures = 3: wait 2 s ± 20 %
#     H->>S: start again
#     S-->>H: ready
# ```
#
# Now for real. The host of section 4 has a short backoff (from 0.05 s, doubling, capped at
# 0.4 s, no jitter, so that the delays it reports are the same on every run) and
# `stable_after=60`, so every kill below continues the streak. Kill `files` four times, each
# time waiting until it is back:

# %% [markdown] lang="es"
# Exactamente 30 s a partir del séptimo fallo, antes de la variación; con ella, de 0.4 a 0.6 s
# en el primero, de 1.6 a 2.4 s en el tercero y de 24 a 30 s en el tope: la variación sigue
# repartiendo las esperas que ya están en el tope, solo hacia abajo.
#
# Un reinicio, tal como lo hace el host:
#
# ```mermaid
# sequenceDiagram
#     participant U as usuario
#     participant H as host (supervisor)
#     participant S as proceso servidor
#     S--xH: EOF en stdout (el proceso murió)
#     H->>H: failures = 1: espera 0.5 s ± 20 %
#     H->>S: arrancar otra vez: sondeo, tools/list
#     S--xH: muere otra vez
#     H->>H: failures = 2: espera 1 s ± 20 %
#     H->>S: arrancar otra vez
#     S--xH: muere otra vez
#     H-->>U: aviso: 3 fallos consecutivos
#     H->>H: failures = 3: espera 2 s ± 20 %
#     H->>S: arrancar otra vez
#     S-->>H: listo
# ```
#
# Ahora de verdad. El host de la sección 4 tiene un retroceso corto (desde 0.05 s, duplicándose,
# con tope de 0.4 s y sin variación, para que las esperas que anuncia sean las mismas en cada
# ejecución) y `stable_after=60`, así que cada muerte que provocamos abajo alarga la racha. Mata a
# `files` cuatro veces, esperando cada vez a que vuelva:

# %%
def readies(name):
    return sum(event.kind == "ready" and event.server == name for event in list(events))


def kill_and_wait(name):
    pid, before = host.status()[name].pid, readies(name)
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 60
    # [en] Back, and its "ready" event delivered.
    # [es] De vuelta, y con su evento "ready" ya entregado.
    while time.monotonic() < deadline:
        if readies(name) > before and host.status()[name].pid not in (None, pid):
            return True
        time.sleep(0.01)
    return False


events.clear()
print([kill_and_wait("files") for _ in range(4)])
for event in events:
    if event.server == "files":
        print(f"{event.kind:10}", event.message.split(";")[0])

# %% [markdown] lang="en"
# Each death is `exited`, then `restarting` with its delay: 0.05, 0.10, 0.20, then 0.40 s,
# the cap. At the third death in a row comes `failing`, the notice: `on_event` is where a
# host shows it to the user (a toast, a red dot). It comes once per streak, not on every
# later failure.

# %% [markdown] lang="es"
# Cada muerte es `exited` y luego `restarting` con su espera: 0.05, 0.10, 0.20 y luego 0.40 s,
# el tope. En la tercera muerte consecutiva llega `failing`, el aviso: `on_event` es donde un
# host se lo muestra al usuario (una notificación emergente, un punto rojo). Llega una vez por
# racha, no en cada fallo posterior.

# %% [markdown] lang="en"
# ## 7. Restart quietly, or surface the failure?
#
# Restarting is right for a **read-only** server: a search index, a documentation server. A
# new process is as good as the old one. It is wrong for a **stateful** one: a server that
# held an open transaction, a logged-in browser, a half-written file. A quiet restart hides
# that the state is gone. With `restart="surface"` (for the whole host, or one server's
# `"restart"` key), a dead server is marked `failed`, the user is told, and nothing happens
# until someone calls `host.restart(name)`:

# %% [markdown] lang="es"
# ## 7. ¿Reiniciar en silencio o mostrar el fallo?
#
# Reiniciar está bien para un servidor de **solo lectura**: un índice de búsqueda, un servidor
# de documentación. Un proceso nuevo vale lo mismo que el viejo. Está mal para uno **con
# estado**: un servidor que tenía una transacción abierta, un navegador con la sesión iniciada,
# un archivo a medio escribir. Un reinicio silencioso oculta que el estado se perdió. Con
# `restart="surface"` (para todo el host, o con la clave `"restart"` de un servidor), un
# servidor muerto queda `failed`, se avisa al usuario y no pasa nada hasta que alguien llama a
# `host.restart(name)`:

# %%
surfaced = {"mcpServers": {"files": {**entry("files.py"), "restart": "surface"}}}
with Host(surfaced) as careful:
    os.kill(careful.status()["files"].pid, signal.SIGKILL)
    deadline = time.monotonic() + 60
    while careful.status()["files"].state != "failed" and time.monotonic() < deadline:
        time.sleep(0.01)
    print(careful.status()["files"].state, [tool["name"] for tool in careful.tools()])
    print(careful.restart("files").state, [tool["name"] for tool in careful.tools()])

# %% [markdown] lang="en"
# While it is failed its tools leave the namespace: the model is not offered what cannot
# answer.
#
# ## 8. The host dashboard
#
# `HostDashboard(host)` shows each server's state, era, tool count and restarts, with the
# last lines it wrote to stderr; `live=True` keeps it up to date while you kill servers from
# another cell. Saved notebooks (and this one's stored output) show its plain-text summary:

# %% [markdown] lang="es"
# Mientras está `failed`, sus herramientas salen del espacio de nombres: al modelo no se le
# ofrece lo que no puede responder.
#
# ## 8. El panel del host
#
# `HostDashboard(host)` muestra el estado de cada servidor, su era, su número de herramientas y
# de reinicios, con las últimas líneas que escribió en stderr; `live=True` lo mantiene al día
# mientras matas servidores desde otra celda. Los cuadernos guardados (y la salida guardada de
# este) muestran su resumen en texto:

# %%
dashboard = HostDashboard(host)
dashboard

# %%
dashboard.close()
host.close()

# %% [markdown] lang="en"
# ## 9. One hundred servers, measured
#
# People do run hosts with dozens of servers. What does it cost? Start 100 real servers (the
# notes server of lesson 04, 4 tools each) under one host, and measure: the wall time until
# all are ready, their memory, the size of the merged namespace, a lookup in the routing
# table, and a real call. The numbers are your machine's, so they appear live in an output
# box and are never saved with the notebook; the cell after it keeps only what does not
# depend on the machine.
#
# (It takes a few seconds and about 2 GB of memory on Linux; memory is read from `/proc`, so
# it shows 0 elsewhere.)

# %% [markdown] lang="es"
# ## 9. Cien servidores, medidos
#
# Hay quien usa hosts con decenas de servidores. ¿Cuánto cuesta? Arranca 100 servidores reales
# (el servidor de notas de la lección 04, con 4 herramientas cada uno) bajo un host y mide: el
# tiempo real transcurrido hasta que todos están listos, su memoria, el tamaño del espacio de
# nombres fusionado, una búsqueda en la tabla de enrutamiento y una llamada real. Las cifras son
# de tu máquina, así que aparecen en vivo en un recuadro de salida y nunca se guardan con el
# cuaderno; la celda siguiente conserva solo lo que no depende de la máquina.
#
# (Tarda unos segundos y usa unos 2 GB de memoria en Linux; la memoria se lee de `/proc`, así
# que en otros sistemas sale 0.)

# %% tags=["nbval-ignore-output"]
def rss_mib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


NOTES = {"command": sys.executable, "args": ["-m", "mcpkit", "serve",
                                             "mcpkit.examples.notes:server"]}
many = {"mcpServers": {f"notes{i}": NOTES for i in range(100)}}
started = time.perf_counter()
crowd = Host(many, ready_timeout=120).start()
ready = crowd.wait_ready(timeout=120)
wall = time.perf_counter() - started
statuses = crowd.status().values()
memory = sum(rss_mib(s.pid) for s in statuses if s.pid)
names = [tool["name"] for tool in crowd.tools()]
lookup = min(timeit.repeat(lambda: crowd.route("notes57__notes_search"), number=20000,
                           repeat=3)) / 20000
started = time.perf_counter()
for i in range(100):
    crowd.call_tool(f"notes{i}__notes_list")
call = (time.perf_counter() - started) / 100
# [en] Shown live in an output widget, never stored: the numbers are this machine's.
# [es] Se muestra en vivo en un widget de salida, nunca se guarda: las cifras son de esta
# [es] máquina.
measured = ipywidgets.Output()
display(measured)
with measured:
    print(f"ready={ready}  wall={wall:.2f} s")
    print(f"memory={memory:,.0f} MiB  per_server={memory / 100:.1f} MiB")
    print(f"tools={len(names)}")
    print(f"route()={lookup * 1e9:.0f} ns  tools/call={call * 1e6:.0f} µs")
    print(grading._("route() over a hundred times cheaper than tools/call:",
                    "route() más de cien veces más barato que tools/call:"), lookup * 100 < call)

# %% [markdown] lang="en"
# What holds on any machine:

# %% [markdown] lang="es"
# Lo que se cumple en cualquier máquina:

# %%
routes = {name: crowd.route(name) for name in names}
per_server = Counter(server for server, _original in routes.values())
listing = json.dumps(crowd.tools())
print(ready, len(statuses), len(names), len(set(names)))
print(Counter(per_server.values()))
print(names[:2], names[-1])
print(f"tools/list: {len(listing) // 1024} KiB ~ {len(listing) // 4 // 1000}k tokens")

# %% [markdown] lang="en"
# All 100 ready, 400 unique names (every `notes_list` collides, so every name is prefixed),
# 4 tools per server. On the machine this lesson was written on, the 100 were ready in about
# 3 s (a bare Python interpreter takes about a third of that to start and answer), used
# about 20 MiB each, 2 GB together; a routing lookup took some tens of nanoseconds, a real
# call under a millisecond; the box above shows whether the lookup is over a hundred times
# cheaper than the call on yours too.
#
# ## 10. What replaces the plain dict?
#
# The seed question of this lesson: *sketch a client for 100 concurrent servers; what
# replaces the plain dispatch dict?* The usual answers are a **trie** for prefixed names and
# a **per-server tool count**. The numbers above say where the costs really are:
#
# - **The lookup is not one of them.** A dict finds an exact name in tens of nanoseconds at
#   400 names, or at 40,000. A trie walks a name one character at a time in Python, slower for the
#   one thing routing does. Keep the dict.
# - **Prefix questions are.** "Every tool of `notes57`" (to drop them when it fails for good,
#   to show them in a menu) is a scan of every name in a dict. A trie answers it by walking
#   the prefix; so does a sorted list of names with `bisect`, which is what the standard
#   library offers. Or keep a second dict, server -> its names, beside the routes.
# - **Per-server counts** are cheap to keep (a `Counter` over the routes) and worth it: one
#   server with 300 tools is a different problem from 100 servers with 3.
# - **The real limits are elsewhere**: memory (a process per server, about 20 MB each here)
#   and, above all, the model. 400 tool definitions are tens of thousands of tokens sent with
#   every request, and a model choosing among 400 tools chooses worse. A host for 100 servers
#   filters: only the servers (or tools) the task needs reach the model.
#
# The prefix question, measured both ways:

# %% [markdown] lang="es"
# Los 100 listos, 400 nombres únicos (todos los `notes_list` entran en colisión, así que todos
# los nombres llevan prefijo), 4 herramientas por servidor. En la máquina donde se escribió esta
# lección, los 100 estuvieron listos en unos 3 s (un intérprete de Python sin nada más tarda
# alrededor de un tercio de eso en arrancar y responder), usaron unos 20 MiB cada uno, 2 GB entre
# todos; una búsqueda en la tabla de enrutamiento tardó unas decenas de nanosegundos, una llamada
# real menos de un milisegundo; el recuadro de arriba muestra si la búsqueda es más de cien veces
# más barata que la llamada también en la tuya.
#
# ## 10. ¿Qué sustituye al dict simple?
#
# La pregunta de partida de esta lección: *esboza un cliente para 100 servidores a la vez; ¿qué
# sustituye al dict de despacho simple?* Las respuestas habituales son un **trie** (árbol de
# prefijos) para los nombres con prefijo y un **recuento de herramientas por servidor**. Las
# cifras de arriba dicen dónde están de verdad los costes:
#
# - **La búsqueda no es uno de ellos.** Un dict encuentra un nombre exacto en unas decenas de
#   nanosegundos con 400 nombres, o con 40 000. Un trie recorre el nombre carácter a carácter
#   en Python: más lento para lo único que hace el enrutamiento. Quédate con el dict.
# - **Las preguntas por prefijo sí lo son.** "Todas las herramientas de `notes57`" (para
#   quitarlas cuando falla definitivamente, para mostrarlas en un menú) es recorrer todos los
#   nombres de un dict. Un trie la responde recorriendo el prefijo; también una lista ordenada de
#   nombres con `bisect`, que es lo que ofrece la biblioteca estándar. O guarda un segundo dict,
#   servidor -> sus nombres, junto a las rutas.
# - **Los recuentos por servidor** son baratos de mantener (un `Counter` sobre las rutas) y
#   valen la pena: un servidor con 300 herramientas es un problema distinto de 100 servidores
#   con 3.
# - **Los límites reales están en otra parte**: la memoria (un proceso por servidor, unos 20 MB
#   cada uno aquí) y, sobre todo, el modelo. 400 definiciones de herramientas son decenas de
#   miles de tokens enviados con cada solicitud, y un modelo que elige entre 400 herramientas
#   elige peor. Un host para 100 servidores filtra: al modelo solo llegan los servidores (o las
#   herramientas) que necesita la tarea.
#
# La pregunta por prefijo, medida de las dos maneras:

# %% tags=["nbval-ignore-output"]
ordered = sorted(routes)


def by_scan(server):
    return [name for name in routes if name.startswith(server + "__")]


def by_bisect(server):
    start = bisect.bisect_left(ordered, server + "__")
    end = bisect.bisect_left(ordered, server + "__\U0010ffff")
    return ordered[start:end]


scan = min(timeit.repeat(lambda: by_scan("notes57"), number=2000, repeat=3)) / 2000
cut = min(timeit.repeat(lambda: by_bisect("notes57"), number=2000, repeat=3)) / 2000
prefix_costs = ipywidgets.Output()
display(prefix_costs)
with prefix_costs:
    print(f"scan={scan * 1e6:.1f} µs  bisect={cut * 1e6:.2f} µs  route()={lookup * 1e9:.0f} ns")
    print(grading._("bisect faster than scan:", "bisect más rápido que el recorrido:"), cut < scan)

# %%
print(sorted(by_scan("notes57")) == by_bisect("notes57"), by_bisect("notes57"))
crowd.close()
folder.cleanup()

# %% [markdown] lang="en"
# The same four names either way; the scan touches all 400 names, the bisect only the ones it
# returns, so the gap grows with the number of servers. Exact lookups stay in the dict.
#
# ## Summary
#
# - Hosts read a list of servers in the `mcpServers` shape (VS Code: `servers`): a `command`
#   with `args` and `env` for a child process, or a `url` for HTTP. Config order breaks every
#   tie.
# - Start every server at once, with a bound on the wait; a stuck server keeps trying in the
#   background and holds nobody up.
# - One namespace for the model: **prefix** (always unambiguous, longer), **first wins**
#   (hides tools; *last* wins is a security hole), **reject** (explicit, blocks start-up), or
#   mcpkit's **prefix on collision**. Check the exposed name, since a separator can hide in a
#   name.
# - The routing table maps an exposed name to (server, original name); the server never sees
#   the prefix. `list_changed` means merging everything again, which can rename another
#   server's tools.
# - A dead server comes back after `base * factor ** (n - 1)` seconds, capped (30 s), with
#   jitter; after three failures in a row the user is told, once; a stable run resets the
#   count. Restart read-only servers; surface stateful ones.
# - 100 servers: seconds to start, about 2 GB, 400 names, routing in tens of nanoseconds.
#   The dict stays; add a per-server index (or a trie) for prefix questions, count tools per
#   server, and filter what reaches the model.
#
# **Lab 06** (`labs/en/lab06_host.ipynb`): write the merge, the namespace with its routing,
# the backoff policy and a supervisor that restarts a real server killed under it. Next,
# **lesson 07**: modern MCP, stateless requests and discovery.

# %% [markdown] lang="es"
# Los mismos cuatro nombres de las dos maneras; el recorrido toca los 400 nombres, la
# bisección solo los que devuelve, así que la diferencia crece con el número de servidores.
# Las búsquedas exactas siguen en el dict.
#
# ## Resumen
#
# - Los hosts leen una lista de servidores con la forma `mcpServers` (VS Code: `servers`): un
#   `command` con `args` y `env` para un proceso hijo, o una `url` para HTTP. El orden de la
#   configuración decide todos los empates.
# - Arranca todos los servidores a la vez, con un límite para la espera; un servidor atascado
#   sigue intentándolo en segundo plano y no hace esperar a nadie.
# - Un espacio de nombres para el modelo: **prefijo** (nunca ambiguo, más largo), **gana el
#   primero** (oculta herramientas; que gane el *último* es un agujero de seguridad),
#   **rechazo** (explícito, bloquea el arranque) o el **prefijo en caso de colisión** de
#   mcpkit. Comprueba el nombre expuesto, porque un separador puede esconderse en un nombre.
# - La tabla de enrutamiento lleva un nombre expuesto a (servidor, nombre original); el
#   servidor nunca ve el prefijo. `list_changed` significa volver a fusionarlo todo, lo que
#   puede renombrar las herramientas de otro servidor.
# - Un servidor muerto vuelve tras `base * factor ** (n - 1)` segundos, con tope (30 s) y
#   variación aleatoria; tras tres fallos consecutivos se avisa al usuario, una vez; un
#   periodo estable pone la cuenta a cero. Reinicia los servidores de solo lectura; muestra el
#   fallo de los que tienen estado.
# - 100 servidores: segundos para arrancar, unos 2 GB, 400 nombres, enrutamiento en unas
#   decenas de nanosegundos. El dict se queda; añade un índice por servidor (o un trie) para
#   las preguntas por prefijo, cuenta las herramientas por servidor y filtra lo que llega al
#   modelo.
#
# **Laboratorio 06** (`labs/es/lab06_host.ipynb`): escribe la fusión, el espacio de nombres con
# su enrutamiento, la política de retroceso y un supervisor que reinicia un servidor real al
# que matan. Después, la **lección 07**: MCP moderno, solicitudes sin estado y descubrimiento.
