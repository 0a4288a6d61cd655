# %% [markdown] lang="en"
# # Lab 06 · A host: merge, route, back off, restart
#
# > **Español:** [`labs/es/lab06_host.ipynb`](../es/lab06_host.ipynb)
#
# Lesson 06 ran many servers behind one `mcpkit.Host`. Now you write the four decisions a host
# makes for them: how the servers' tools share one namespace, where a call goes, how long to
# wait before starting a dead server again, and the supervisor that does it.
#
# | part | you write | the checks hold it to | points |
# | --- | --- | --- | --- |
# | 1 | `merge(servers, policy, separator)` | every naming policy, collision errors that name both servers, generated servers | 3 |
# | 2 | `Namespace` | routing, `list_changed` re-merging, config order, removal | 2 |
# | 3 | `Backoff` | doubling delays, the 30 s cap, jitter, the notice after three failures in a row | 2 |
# | 4 | `Supervisor` | restarting a server killed with SIGKILL, a server that cannot start, nothing left behind | 3 |
#
# **How to work.** Replace each `# YOUR CODE HERE` / `raise NotImplementedError()` with your
# code, run the cell, then run the **graded cell** below it. A graded cell is read-only. Before
# you run it, it shows the line it prints when every check passes: that is the expected
# output, not your result. Run it, and it either prints that line or lists each case with what
# it expected and what your code returned. When all four pass, save the notebook and grade
# the whole lab from the repository's root:
#
# ```
# ./course.sh grade lab06
# ```
#
# **What your instructor grades.** Only the code in the exercise cells (the ones with
# `# YOUR CODE HERE`), each graded part run in a fresh Python process, on more generated
# cases than the graded cells here try and with a seed you do not see. Keep every definition
# a part needs in the exercise cells, and leave `grading` alone: code that touches the grader
# scores zero. You may not use `mcpkit.host` (or `mcpkit.Host`): it is what this lab asks you
# to write. Parts 1 to 3 are compared with it on generated inputs.
# Exercise code may import mcpkit, what the setup cell imports, and the plainer standard
# modules (`json`, `re`, `itertools`, `collections`, `time`, `threading`, `logging` and a few
# more); a graded cell names any other import it finds, with the whole list.
#
# **Real processes.** Part 4 starts the lab's test server for real, kills it with SIGKILL and
# watches your supervisor bring it back. Nothing sleeps for real: the checks give your
# supervisor a `sleep` that only records the delay, and a clock they move by hand.

# %% [markdown] lang="es"
# # Laboratorio 06 · Un host: fusionar, enrutar, esperar con retroceso y reiniciar
#
# > **English:** [`labs/en/lab06_host.ipynb`](../en/lab06_host.ipynb)
#
# La lección 06 ejecutó muchos servidores detrás de un `mcpkit.Host`. Ahora escribes las cuatro
# decisiones que toma un host por ellos: cómo comparten las herramientas de los servidores un
# mismo espacio de nombres, adónde va una llamada, cuánto esperar antes de volver a arrancar un
# servidor muerto y el supervisor que lo hace.
#
# | parte | escribes | las comprobaciones le exigen | puntos |
# | --- | --- | --- | --- |
# | 1 | `merge(servers, policy, separator)` | todas las políticas de nombres, errores de colisión que nombran a los dos servidores, servidores generados | 3 |
# | 2 | `Namespace` | el enrutamiento, volver a fusionar con `list_changed`, el orden de la configuración, la retirada de servidores | 2 |
# | 3 | `Backoff` | esperas que se duplican, el tope de 30 s, la variación aleatoria (jitter), el aviso tras tres fallos consecutivos | 2 |
# | 4 | `Supervisor` | reiniciar un servidor al que matan con SIGKILL, un servidor que no puede arrancar, no dejar nada atrás | 3 |
#
# **Cómo trabajar.** Sustituye cada `# YOUR CODE HERE` / `raise NotImplementedError()` por tu
# código, ejecuta la celda y luego ejecuta la **celda calificada** que hay debajo. Una celda
# calificada es de solo lectura. Antes de que la ejecutes, ya muestra la línea que imprime cuando
# todas las comprobaciones pasan: es la salida esperada, no tu resultado. Ejecútala, y o bien imprime
# esa línea o enumera cada caso con lo que esperaba y lo que devolvió tu código. Cuando pasen
# las cuatro, guarda el cuaderno y califica el laboratorio completo desde la raíz del
# repositorio:
#
# ```
# ./course.sh grade lab06
# ```
#
# **Qué califica tu instructor/a.** Solo el código de las celdas de ejercicio (las que llevan
# `# YOUR CODE HERE`), cada parte calificada en un proceso de Python nuevo, con más casos
# generados de los que prueban aquí las celdas calificadas y con una semilla que no ves. Deja
# en las celdas de ejercicio todas las definiciones que necesita cada parte, y no toques
# `grading`: el código que manipula el calificador obtiene cero. No puedes usar `mcpkit.host`
# (ni `mcpkit.Host`): es lo que este laboratorio te pide escribir. Las partes 1 a 3 se comparan
# con él sobre entradas generadas.
# El código de ejercicio puede importar mcpkit, lo que ya importa la celda de preparación y los
# módulos estándar más sencillos (`json`, `re`, `itertools`, `collections`, `time`,
# `threading`, `logging` y algunos más); una celda calificada nombra cualquier otra
# importación que encuentre, con la lista completa.
#
# **Procesos reales.** La parte 4 arranca de verdad el servidor de prueba del laboratorio, lo
# mata con SIGKILL y mira cómo lo vuelve a arrancar tu supervisor. Nada duerme de verdad: las
# comprobaciones le dan a tu supervisor un `sleep` que solo anota la espera y un reloj que mueven
# a mano.

# %% tags=["setup"]
# [en] Setup: run this cell first.
# [es] Preparación: ejecuta esta celda primero.
import json
import random
import subprocess
import threading
import time

from mcpkit import grading

grading.set_language("en")


class NameCollision(Exception):
    def __init__(self, message, name, servers):
        super().__init__(message)
        self.name = name
        self.servers = servers


class UnknownTool(LookupError):
    def __init__(self, message, name):
        super().__init__(message)
        self.name = name


def spawn(command):
    return subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)


def ping(process):
    try:
        process.stdin.write(b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n')
        process.stdin.flush()
        return "result" in json.loads(process.stdout.readline() or b"{}")
    except (OSError, ValueError):
        return False


def stop(process):
    try:
        process.stdin.close()
    except OSError:
        pass
    try:
        process.wait(2)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    process.stdout.close()


SERVER = grading.lab06_server_command()


# %% [markdown] lang="en"
# ## Part 1 · One namespace for many servers
#
# Two servers may both offer a tool called `search`; the model must see one list of unique
# names. `servers` is a dict `{server name: [tool dicts]}` in **config order** (the order of
# `mcpServers`), each tool a dict with at least `"name"`. Write
# `merge(servers, policy="prefix-on-collision", separator="__")`, returning
# `(tools, routes, hidden)`:
#
# - `tools`: the merged list, in order (server by server, tool by tool), each a **copy** of
#   the server's tool with `"name"` set to its *exposed* name. Never change the server's dicts.
# - `routes`: `{exposed name: (server, original name)}`.
# - `hidden`: the `(server, original name)` of every tool left out, in order.
#
# The exposed name, by policy (the same four as `mcpkit.host`):
#
# | policy | exposed name | who does this (lesson 06) |
# | --- | --- | --- |
# | `"prefix"` | always `server + separator + name` | Claude Desktop, VS Code |
# | `"prefix-on-collision"` | the prefixed name for a name that **two or more servers** offer; the plain name otherwise | mcpkit's default |
# | `"first-wins"` | the plain name; a later server's tool with a name already taken is hidden | the silent override, made visible |
# | `"reject"` | the plain name; a name already taken by **another server** raises `NameCollision(message, name, (first, second))` | Cursor |
#
# Two more rules hold under every policy. If an exposed name is already taken (a server listing
# the same name twice, or a prefixed name that happens to equal another: `a` + `b__c` and
# `a__b` + `c`), the later tool is hidden: the first one wins. Under `"reject"` only a name
# taken by a *different* server raises; the message must name the tool and both servers (when
# several names collide, raising for any one of them will do). An unknown policy raises
# `ValueError`, even with no tool to merge.

# %% [markdown] lang="es"
# ## Parte 1 · Un espacio de nombres para muchos servidores
#
# Puede que dos servidores ofrezcan una herramienta llamada `search`; el modelo debe ver una
# sola lista de nombres únicos. `servers` es un dict `{nombre del servidor: [dicts de
# herramientas]}` en el **orden de la configuración** (el orden de `mcpServers`), cada
# herramienta un dict con al menos `"name"`. Escribe
# `merge(servers, policy="prefix-on-collision", separator="__")`, que devuelve
# `(tools, routes, hidden)`:
#
# - `tools`: la lista fusionada, en orden (servidor a servidor, herramienta a herramienta), cada
#   una es una **copia** de la herramienta del servidor con `"name"` cambiado a su nombre
#   *expuesto*. No cambies nunca los dicts del servidor.
# - `routes`: `{nombre expuesto: (servidor, nombre original)}`.
# - `hidden`: el `(servidor, nombre original)` de cada herramienta que queda fuera, en orden.
#
# El nombre expuesto, según la política (las mismas cuatro de `mcpkit.host`):
#
# | política | nombre expuesto | quién lo hace (lección 06) |
# | --- | --- | --- |
# | `"prefix"` | siempre `server + separator + name` | Claude Desktop, VS Code |
# | `"prefix-on-collision"` | el nombre con prefijo para un nombre que ofrecen **dos o más servidores**; el nombre simple en otro caso | la opción por defecto de mcpkit |
# | `"first-wins"` | el nombre simple; la herramienta de un servidor posterior con un nombre ya ocupado queda oculta | la sobrescritura silenciosa, hecha visible |
# | `"reject"` | el nombre simple; un nombre ya ocupado por **otro servidor** lanza `NameCollision(message, name, (first, second))` | Cursor |
#
# Dos reglas más valen con cualquier política. Si un nombre expuesto ya está ocupado (un
# servidor que enumera el mismo nombre dos veces, o un nombre con prefijo que resulta igual a
# otro: `a` + `b__c` y `a__b` + `c`), la herramienta posterior queda oculta: gana la primera.
# Con `"reject"`, solo se lanza `NameCollision` si el nombre lo ocupa un servidor *distinto*; el
# mensaje debe nombrar la herramienta y los dos servidores (si hay varias colisiones, basta con
# lanzarla por cualquiera de ellos). Una política desconocida lanza `ValueError`, aunque no haya
# ninguna herramienta que fusionar.

# %%
def merge(servers, policy="prefix-on-collision", separator="__"):
    ### BEGIN SOLUTION
    if policy not in ("prefix", "prefix-on-collision", "first-wins", "reject"):
        raise ValueError(f"unknown naming policy {policy!r}")
    holders = {}
    for server, items in servers.items():
        for tool in items:
            holders.setdefault(tool["name"], set()).add(server)
    tools, routes, hidden = [], {}, []
    for server, items in servers.items():
        for tool in items:
            name = tool["name"]
            shared = len(holders[name]) > 1
            if policy == "prefix" or (policy == "prefix-on-collision" and shared):
                exposed = server + separator + name
            else:
                exposed = name
            if exposed in routes:
                first = routes[exposed][0]
                if policy == "reject" and first != server:
                    raise NameCollision(f"tool {name!r} is offered by both server {first!r} "
                                        f"and server {server!r}", name, (first, server))
                hidden.append((server, name))
                continue
            routes[exposed] = (server, name)
            tools.append({**tool, "name": exposed})
    return tools, routes, hidden
    ### END SOLUTION


# %% [markdown] lang="en"
# Try it on the lesson's two servers:

# %% [markdown] lang="es"
# Pruébalo con los dos servidores de la lección:

# %%
servers = {"files": [{"name": "search"}, {"name": "read"}],
           "web": [{"name": "search"}, {"name": "fetch"}]}
for policy in ("prefix", "prefix-on-collision", "first-wins"):
    tools, routes, hidden = merge(servers, policy)
    print(policy, [t["name"] for t in tools], hidden)
try:
    merge(servers, "reject")
except NameCollision as exc:
    print(exc.name, exc.servers)

# %% tags=["graded"] points=3
grading.check_merge(merge)

# %% [markdown] lang="en"
# ## Part 2 · Routing, and merging again when a list changes
#
# A host keeps the merged view and changes it whenever a server's list does: a server that
# starts, a `notifications/tools/list_changed` (the host fetches the list again), a server
# that fails for good. Merge **everything again, from scratch**, every time: one server's new
# tool can rename another server's (under `"prefix-on-collision"` a name becomes shared).
#
# `Namespace(servers, policy="prefix-on-collision", separator="__")` gets the server names in
# config order. Write:
#
# - `update(server, tools)`: `server`'s list is now `tools`; merge again, **in config order**
#   (whatever order the servers came up in). Under `"reject"`, a collision raises
#   `NameCollision` and leaves the namespace as it was. A `server` that is not in the config
#   is ignored: its tools are never merged.
# - `remove(server)`: the server is gone, and its tools with it (a server never updated:
#   nothing changes). If it comes back, a later `update(server, tools)` merges it again.
# - `tools()`: the merged tools.
# - `route(name)`: `(server, original name)` for an exposed name, or raise
#   `UnknownTool(message, name)`.
#
# `_merge(lists)` is a helper for both: merge `lists` (`{server: tools}`) and, if that did not
# raise, keep them and the result. You may use your `merge` from part 1.

# %% [markdown] lang="es"
# ## Parte 2 · Enrutar, y fusionar otra vez cuando cambia una lista
#
# Un host guarda la vista fusionada y la cambia cada vez que cambia la lista de un servidor: un
# servidor que arranca, un `notifications/tools/list_changed` (el host vuelve a pedir la
# lista), un servidor que falla definitivamente. Vuelve a fusionar **todo, desde cero**, cada
# vez: la herramienta nueva de un servidor puede renombrar la de otro (con
# `"prefix-on-collision"` un nombre pasa a estar compartido).
#
# `Namespace(servers, policy="prefix-on-collision", separator="__")` recibe los nombres de los
# servidores en el orden de la configuración. Escribe:
#
# - `update(server, tools)`: la lista de `server` pasa a ser `tools`; vuelve a fusionar, **en el
#   orden de la configuración** (sea cual sea el orden en que arrancaron los servidores). Con
#   `"reject"`, una colisión lanza `NameCollision` y deja el espacio de nombres como estaba. Un
#   `server` que no está en la configuración se ignora: sus herramientas nunca se fusionan.
# - `remove(server)`: el servidor se fue, y sus herramientas con él (si nunca se actualizó, no
#   cambia nada). Si vuelve, un `update(server, tools)` posterior lo fusiona de nuevo.
# - `tools()`: las herramientas fusionadas.
# - `route(name)`: `(servidor, nombre original)` para un nombre expuesto, o lanza
#   `UnknownTool(message, name)`.
#
# `_merge(lists)` es una función auxiliar para los dos: fusiona `lists` (`{server: tools}`) y, si
# la fusión no lanza ninguna excepción, guarda las listas junto con el resultado. Puedes usar tu
# `merge` de la parte 1.

# %%
class Namespace:
    def __init__(self, servers, policy="prefix-on-collision", separator="__"):
        ### BEGIN SOLUTION
        self.order = list(servers)
        self.policy = policy
        self.separator = separator
        self.lists = {}
        self.merged = []
        self.routes = {}
        ### END SOLUTION

    def update(self, server, tools):
        ### BEGIN SOLUTION
        self._merge({**self.lists, server: list(tools)})
        ### END SOLUTION

    def remove(self, server):
        ### BEGIN SOLUTION
        lists = dict(self.lists)
        lists.pop(server, None)
        self._merge(lists)
        ### END SOLUTION

    def _merge(self, lists):
        ### BEGIN SOLUTION
        ordered = {s: lists[s] for s in self.order if s in lists}
        merged, routes, _hidden = merge(ordered, self.policy, self.separator)
        self.lists, self.merged, self.routes = lists, merged, routes
        ### END SOLUTION

    def tools(self):
        ### BEGIN SOLUTION
        return list(self.merged)
        ### END SOLUTION

    def route(self, name):
        ### BEGIN SOLUTION
        if name not in self.routes:
            raise UnknownTool(f"no server offers a tool named {name!r}", name)
        return self.routes[name]
        ### END SOLUTION


# %%
namespace = Namespace(["files", "web"])
namespace.update("files", [{"name": "search"}, {"name": "read"}])
print(namespace.route("search"))
# [en] web's list changed: now both have search.
# [es] Cambió la lista de web: ahora los dos tienen search.
namespace.update("web", [{"name": "search"}])
print([t["name"] for t in namespace.tools()], namespace.route("web__search"))

# %% tags=["graded"] points=2
grading.check_namespace(Namespace)

# %% [markdown] lang="en"
# ## Part 3 · How long to wait: exponential backoff, capped, with jitter
#
# A server that died is started again, but not at once and not at a fixed pace: after the
# `n`-th consecutive failure the host waits `base * factor ** (n - 1)` seconds (0.5, 1, 2, 4,
# ...), at most `cap` (30 s), then randomised by ±`jitter` (20 %) so that servers that died
# together do not all come back in the same instant, and never above `cap` after the jitter
# either. After `notice_after` (3) failures in a row, the user is told, once.
#
# `Backoff(rng, base=0.5, factor=2.0, cap=30.0, jitter=0.2, notice_after=3)`; `rng` is a
# `random.Random` (or the checks' scripted stand-in). Write:
#
# - `delay(failures)`: the delay after that many consecutive failures (`failures >= 1`): the
#   capped exponential times `1 + rng.uniform(-jitter, jitter)` (draw only when `jitter` is not
#   0), then at most `cap`. A very large `failures` must still give a delay, not an
#   `OverflowError`.
# - `failure()`: count one more failure in a row (`self.failures`); return `(delay, notice)`,
#   the delay for that count and whether this is the failure to tell the user about (exactly
#   the `notice_after`-th of the streak).
# - `success()`: the streak is over: `self.failures = 0`.

# %% [markdown] lang="es"
# ## Parte 3 · Cuánto esperar: retroceso (backoff) exponencial, con tope y variación aleatoria
#
# Un servidor que murió se vuelve a arrancar, pero no en el acto ni a ritmo fijo: tras el
# `n`-ésimo fallo consecutivo, el host espera `base * factor ** (n - 1)` segundos (0.5, 1, 2, 4,
# ...), como mucho `cap` (30 s), y luego lo varía al azar en ±`jitter` (un 20 %) para que los
# servidores que murieron juntos no vuelvan todos en el mismo instante; y, tras la variación,
# nunca por encima de `cap`. Tras `notice_after` (3) fallos consecutivos, se avisa al usuario,
# una vez.
#
# `Backoff(rng, base=0.5, factor=2.0, cap=30.0, jitter=0.2, notice_after=3)`; `rng` es un
# `random.Random` (o el sustituto guionizado de las comprobaciones). Escribe:
#
# - `delay(failures)`: la espera tras ese número de fallos consecutivos (`failures >= 1`): la
#   exponencial con tope multiplicada por `1 + rng.uniform(-jitter, jitter)` (genera un número
#   aleatorio solo cuando `jitter` no es 0) y luego como mucho `cap`. Un `failures` muy grande
#   debe seguir dando una espera, no un `OverflowError`.
# - `failure()`: cuenta un fallo consecutivo más (`self.failures`); devuelve `(delay, notice)`,
#   la espera para esa cuenta y si este es el fallo del que hay que avisar al usuario (justo el
#   `notice_after`-ésimo de la racha).
# - `success()`: la racha terminó: `self.failures = 0`.

# %%
class Backoff:
    def __init__(self, rng, base=0.5, factor=2.0, cap=30.0, jitter=0.2, notice_after=3):
        ### BEGIN SOLUTION
        self.rng = rng
        self.base = base
        self.factor = factor
        self.cap = cap
        self.jitter = jitter
        self.notice_after = notice_after
        self.failures = 0
        ### END SOLUTION

    def delay(self, failures):
        ### BEGIN SOLUTION
        try:
            delay = min(self.cap, self.base * self.factor ** (failures - 1))
        except OverflowError:
            delay = self.cap
        if self.jitter:
            delay *= 1 + self.rng.uniform(-self.jitter, self.jitter)
        return max(0.0, min(delay, self.cap))
        ### END SOLUTION

    def failure(self):
        ### BEGIN SOLUTION
        self.failures += 1
        return self.delay(self.failures), self.failures == self.notice_after
        ### END SOLUTION

    def success(self):
        ### BEGIN SOLUTION
        self.failures = 0
        ### END SOLUTION


# %%
plain = Backoff(random.Random(0), jitter=0.0)
print([plain.delay(n) for n in range(1, 10)])
print([plain.failure() for _ in range(4)])

# %% tags=["graded"] points=2
grading.check_backoff(Backoff)

# %% [markdown] lang="en"
# ## Part 4 · A supervisor that brings a dead server back
#
# `Supervisor(name, command, backoff, sleep=None, notify=print, clock=time.monotonic,
# stable_after=10.0)` keeps one server running. The setup cell gives you `spawn(command)` (a
# `Popen` with pipes; a missing program raises `OSError`), `ping(process)` (true when the
# server answers a request: it is up) and `stop(process)` (close its input, wait, kill if
# need be, reap it: no zombie). Write:
#
# - `start()`: one attempt to start the server (`spawn`, then `ping`; a server that does not
#   answer is stopped: a failed start), then a **thread** that watches it; return whether the
#   attempt succeeded. While a server is up, `self.pid` is its process id (otherwise `None`).
# - The watching thread, until `close()`: wait for the process to end (`process.wait()`).
#   When it dies, stop it, and if it had been up `stable_after` seconds or more (by
#   `self.clock()`), call `backoff.success()` first: a new streak. Every failure (a death, or
#   a failed start) is one `delay, notice = backoff.failure()`; if `notice`, call
#   `notify(message)`, with the server's name and the number of failures in the message; then
#   `sleep(delay)` and try to start it again.
# - `sleep`: the checks pass one that does not really wait. When none is given, wait on a
#   `threading.Event` that `close()` sets, so that closing never waits out a 30 s delay.
# - `close()`: stop watching, stop the server, join the thread. Nothing may be left: no
#   thread, no process (not even a zombie).
#
# Three helpers give the work a shape: `_attempt()` (one start; true if the server answers),
# `_failed()` (one failure: count it, tell the user if need be, sleep) and `_watch()` (the
# thread's loop). Use `backoff` only through `failure()`, `success()` and `failures`: the
# checks give you their own, which records the calls (part 3 is graded apart).

# %% [markdown] lang="es"
# ## Parte 4 · Un supervisor que vuelve a arrancar un servidor muerto
#
# `Supervisor(name, command, backoff, sleep=None, notify=print, clock=time.monotonic,
# stable_after=10.0)` mantiene un servidor en marcha. La celda de preparación te da
# `spawn(command)` (un `Popen` con tuberías; si falta el programa, lanza `OSError`),
# `ping(process)` (verdadero cuando el servidor responde a una solicitud: está listo) y
# `stop(process)` (cierra su entrada, espera, lo mata si hace falta y lo recoge: ningún zombi).
# Escribe:
#
# - `start()`: un intento de arrancar el servidor (`spawn` y luego `ping`; se detiene el servidor
#   que no responde: un arranque fallido) y luego un **hilo** que lo vigila; devuelve si el
#   intento salió bien. Mientras un servidor está en marcha, `self.pid` es su id de proceso (si no,
#   `None`).
# - El hilo que vigila, hasta `close()`: espera a que termine el proceso (`process.wait()`).
#   Cuando muere, detenlo y, si llevaba en marcha `stable_after` segundos o más (según
#   `self.clock()`), llama antes a `backoff.success()`: una racha nueva. Cada fallo (una
#   muerte, o un arranque fallido) es un `delay, notice = backoff.failure()`; si `notice`, llama
#   a `notify(message)`, con el nombre del servidor y el número de fallos en el mensaje; luego
#   `sleep(delay)` y vuelve a intentar arrancarlo.
# - `sleep`: las comprobaciones pasan uno que no espera de verdad. Si no se da ninguno, espera
#   sobre un `threading.Event` que activa `close()`, para que cerrar nunca tenga que esperar
#   30 s.
# - `close()`: deja de vigilar, detén el servidor y espera al hilo (join). No puede quedar nada:
#   ni hilos ni procesos (ni siquiera un zombi).
#
# Tres funciones auxiliares le dan forma al trabajo: `_attempt()` (un arranque; verdadero si el
# servidor responde), `_failed()` (un fallo: contarlo, avisar al usuario si corresponde y
# dormir) y `_watch()` (el bucle del hilo). Usa `backoff` solo mediante `failure()`, `success()`
# y `failures`: las comprobaciones te dan el suyo, que anota las llamadas (la parte 3 se
# califica aparte).

# %%
class Supervisor:
    def __init__(self, name, command, backoff, sleep=None, notify=print, clock=time.monotonic,
                 stable_after=10.0):
        self.name = name
        self.command = command
        self.backoff = backoff
        self.notify = notify
        self.clock = clock
        self.stable_after = stable_after
        self.pid = None
        ### BEGIN SOLUTION
        self.stopping = threading.Event()
        self.sleep = sleep or self.stopping.wait
        self.lock = threading.Lock()
        self.process = None
        self.started_at = 0.0
        self.thread = None
        ### END SOLUTION

    def _attempt(self):
        ### BEGIN SOLUTION
        try:
            process = spawn(self.command)
        except OSError:
            return False
        if not ping(process):
            stop(process)
            return False
        with self.lock:
            if self.stopping.is_set():
                stop(process)
                return False
            self.process, self.pid = process, process.pid
            self.started_at = self.clock()
        return True
        ### END SOLUTION

    def _failed(self):
        ### BEGIN SOLUTION
        delay, notice = self.backoff.failure()
        if notice:
            self.notify(f"{self.name}: {self.backoff.failures} failures in a row")
        self.sleep(delay)
        ### END SOLUTION

    def _watch(self):
        ### BEGIN SOLUTION
        while not self.stopping.is_set():
            process = self.process
            if process is None:
                self._failed()
                if not self.stopping.is_set():
                    self._attempt()
                continue
            process.wait()
            if self.stopping.is_set():
                break
            if self.clock() - self.started_at >= self.stable_after:
                self.backoff.success()
            stop(process)
            with self.lock:
                self.process, self.pid = None, None
        ### END SOLUTION

    def start(self):
        ### BEGIN SOLUTION
        started = self._attempt()
        self.thread = threading.Thread(target=self._watch, daemon=True)
        self.thread.start()
        return started
        ### END SOLUTION

    def close(self):
        ### BEGIN SOLUTION
        self.stopping.set()
        with self.lock:
            process, self.process, self.pid = self.process, None, None
        if process is not None:
            stop(process)
        if self.thread is not None:
            self.thread.join(5)
        ### END SOLUTION


# %% [markdown] lang="en"
# Try it with a real server and a real (short) backoff: kill it, and watch it come back.

# %% [markdown] lang="es"
# Pruébalo con un servidor real y un retroceso real (corto): mátalo y mira cómo vuelve.

# %%
import os  # noqa: E402
import signal  # noqa: E402

notices = []
supervisor = Supervisor("notes", SERVER, Backoff(random.Random(0), base=0.05),
                        notify=notices.append)
print(supervisor.start())
first = supervisor.pid
os.kill(first, signal.SIGKILL)
deadline = time.monotonic() + 30
while supervisor.pid in (None, first) and time.monotonic() < deadline:
    time.sleep(0.01)
print(supervisor.pid not in (None, first), supervisor.backoff.failures)
supervisor.close()

# %% tags=["graded"] points=3
grading.check_supervisor(Supervisor)

# %% [markdown] lang="en"
# ## Done?
#
# Compare your four pieces with `mcpkit/host.py`: `merge_namespace`, the `_View` that
# `Host._rebuild` swaps in whole, `Backoff`, and `Host._supervise` with `_on_closed`. mcpkit
# runs one supervisor thread per failing server, not one per server: why is that enough? And
# what would you change for 100 servers that all die at once (lesson 06 measured them)?

# %% [markdown] lang="es"
# ## ¿Terminaste?
#
# Compara tus cuatro piezas con `mcpkit/host.py`: `merge_namespace`, la `_View` que
# `Host._rebuild` sustituye entera de una vez, `Backoff` y `Host._supervise` con `_on_closed`. mcpkit usa un hilo supervisor por servidor que falla, no
# uno por servidor: ¿por qué basta? ¿Y qué cambiarías para 100 servidores que mueren todos a la
# vez (la lección 06 los midió)?
