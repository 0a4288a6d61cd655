# %% [markdown] lang="en"
# # Lab 11 · MCP Apps
#
# > **Español:** [`labs/es/lab11_apps.ipynb`](../es/lab11_apps.ipynb)
#
# Lesson 11 showed an app from both sides: a server that serves a view (a `ui://` resource of
# HTML) and tools that name it, and a host that renders the view in a sandboxed iframe and
# answers its messages. Now you write both sides yourself:
#
# | part | you write | points |
# | --- | --- | --- |
# | 1 | `supports_apps`, `app_tool_meta`, `view_contents`: what an app server says | 3 |
# | 2 | `build_server`: a whole app server, for clients of both eras | 3 |
# | 3 | `app_visible` and `ViewRouter`: the host's side of a view's messages | 4 |
#
# **How to work.** Replace each `# YOUR CODE HERE` / `raise NotImplementedError()` with your
# code, run the cell, then run the **graded cell** below it. A graded cell is read-only. Before
# you run it, it shows the line it prints when every check passes: that is the expected
# output, not your result. When all three pass, save the notebook and grade the whole lab from
# the repository's root:
#
# ```
# ./course.sh grade lab11
# ```
#
# **What your instructor grades.** Only the code in the exercise cells, run on its own in a
# fresh Python process, on more generated cases than the graded cells here try and with a seed
# you do not see. Keep every definition an exercise needs in its exercise cells (part 2 may
# use your part 1), and leave `grading` alone: code that touches the grader scores zero.
# `mcpkit.apps`, `mcpkit.app_bridge` and `mcpkit.app_widget` do what the lab asks, so they are
# off limits (the setup cell copies the constants you need).
# Exercise code may import mcpkit, what the setup cell imports, and the plainer standard
# modules (`json`, `re`, `itertools`, `collections`, `time`, `threading`, `logging` and a few
# more); a graded cell names any other import it finds, with the whole list.
#
# The checks compare your functions with `mcpkit.apps` on generated inputs; part 2 connects
# real mcpkit clients of both eras to your server and to the same server built with
# `mcpkit.apps`; part 3 sends generated message sequences to your router and to
# `mcpkit.app_bridge.AppBridge`, both in front of real servers behind a real `Host`, and
# compares the answers, what reached the servers, what the user was asked and what the host
# kept.

# %% [markdown] lang="es"
# # Laboratorio 11 · MCP Apps
#
# > **English:** [`labs/en/lab11_apps.ipynb`](../en/lab11_apps.ipynb)
#
# La lección 11 mostró una app desde los dos lados: un servidor que sirve una vista (un
# recurso `ui://` de HTML) y herramientas que la nombran, y un host que muestra la vista en un
# iframe aislado y contesta sus mensajes. Ahora escribes tú los dos lados:
#
# | parte | escribes | puntos |
# | --- | --- | --- |
# | 1 | `supports_apps`, `app_tool_meta`, `view_contents`: lo que dice un servidor de apps | 3 |
# | 2 | `build_server`: un servidor de apps completo, para clientes de las dos eras | 3 |
# | 3 | `app_visible` y `ViewRouter`: el lado del host de los mensajes de una vista | 4 |
#
# **Cómo trabajar.** Sustituye cada `# YOUR CODE HERE` / `raise NotImplementedError()` por tu
# código, ejecuta la celda y luego ejecuta la **celda calificada** que hay debajo. Una celda
# calificada es de solo lectura. Antes de que la ejecutes, ya muestra la línea que imprime cuando
# todas las comprobaciones pasan: es la salida esperada, no tu resultado. Cuando pasen las tres,
# guarda el cuaderno y califica el laboratorio completo desde la raíz del repositorio:
#
# ```
# ./course.sh grade lab11
# ```
#
# **Qué califica tu instructor/a.** Solo el código de las celdas de ejercicio, ejecutado por
# separado en un proceso de Python nuevo, con más casos generados de los que prueban aquí las
# celdas calificadas y con una semilla que no ves. Deja en las celdas de ejercicio todas las
# definiciones que necesitan (la parte 2 puede usar tu parte 1), y no toques `grading`: el
# código que manipula el calificador obtiene cero. `mcpkit.apps`, `mcpkit.app_bridge` y
# `mcpkit.app_widget` hacen lo que pide el laboratorio, así que no puedes usarlos (la celda de
# preparación copia las constantes que necesitas).
# El código de ejercicio puede importar mcpkit, lo que ya importa la celda de preparación y los
# módulos estándar más sencillos (`json`, `re`, `itertools`, `collections`, `time`,
# `threading`, `logging` y algunos más); una celda calificada nombra cualquier otra
# importación que encuentre, con la lista completa.
#
# Las comprobaciones comparan tus funciones con `mcpkit.apps` sobre entradas generadas; la
# parte 2 conecta clientes reales de mcpkit de las dos eras a tu servidor y al mismo servidor
# construido con `mcpkit.apps`; la parte 3 envía secuencias de mensajes generadas a tu enrutador
# (`ViewRouter`) y a `mcpkit.app_bridge.AppBridge`, los dos delante de servidores reales detrás de un `Host`
# real, y compara las respuestas, lo que llegó a los servidores, lo que se preguntó al usuario y
# lo que guardó el host.

# %% tags=["setup"]
# [en] Setup: run this cell first.
# [es] Preparación: ejecuta esta celda primero.
import json
import re
from urllib.parse import urlsplit

from mcpkit import Server, grading
from mcpkit.agent import needs_confirmation
from mcpkit.client import Client, ServerError, SessionError

grading.set_language("en")
EXTENSION = "io.modelcontextprotocol/ui"
MIME_TYPE = "text/html;profile=mcp-app"
CSP_FIELDS = ("connectDomains", "resourceDomains", "frameDomains", "baseUriDomains")
ORIGIN = re.compile(r"(https?|wss?)://(\*\.)?[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*"
                    r"(:(\d{1,5}|\*))?(/[A-Za-z0-9._~%/-]*)?")
BOARD = "ui://counter/board"
CSP = {"resourceDomains": ["https://cdn.example.com"]}


def counter_tools():
    count = {"value": 0}

    def counter_show() -> dict:
        """The counter's value, on its board."""
        return {"value": count["value"]}

    def counter_add(step: int = 1) -> dict:
        """Add step to the counter (the board's button)."""
        count["value"] += step
        return {"value": count["value"]}

    return counter_show, counter_add


def initialize_result(definition):
    return {
        "protocolVersion": "2026-01-26",
        "hostInfo": {"name": "mcpkit-notebook", "version": "1.0.0"},
        "hostCapabilities": {"openLinks": {}, "serverTools": {}},
        "hostContext": {"toolInfo": {"tool": definition}, "theme": "light",
                        "displayMode": "inline", "locale": "en-US", "platform": "web"},
    }

# %% [markdown] lang="en"
# The setup cell gives you the extension's name `EXTENSION`, the view's `MIME_TYPE` (with its
# profile), the four `CSP_FIELDS`, `ORIGIN` (a pattern for one origin a view may declare:
# `https://api.example.com`, `https://*.example.com`, `wss://live.example.com:8443`),
# `counter_tools()` and `initialize_result(definition)` for parts 2 and 3, and
# `needs_confirmation(tool)` (lab 10's rule: unless `readOnlyHint` is true or
# `destructiveHint` is false, a tool may be destructive).
#
# ## Part 1 · What an app server says
#
# Three facts make an app on the wire: the client says it shows views, a tool names its view
# and who may call it, and the view's resource carries its HTML and its needs. Write:
#
# - `supports_apps(capabilities)`: whether a client's capabilities (a dict, or `None`) declare
#   the extension with HTML views: `capabilities["extensions"][EXTENSION]` is a dict whose
#   `"mimeTypes"` is a list that holds `MIME_TYPE`. Anything else (a level missing or of
#   another type) is `False`, never an exception.
# - `app_tool_meta(view, visibility=("model", "app"))`: a tool's `_meta`,
#   `{"ui": {"resourceUri": view, "visibility": [...]}}`. `view` is `None` (no view: leave
#   `resourceUri` out) or a URI that starts with `ui://`. `visibility` is a list or tuple of
#   strings, each `"model"` or `"app"`, at least one; repeats are dropped, keeping the first
#   order. Anything else (a view that is not a string starting with `ui://`, a string or a set
#   instead of a list, an empty list, another word) raises `ValueError`.
# - `view_contents(uri, html, csp=None, prefers_border=None)`: the one entry of `contents` that
#   `resources/read` returns for a view: `{"uri": uri, "mimeType": MIME_TYPE, "text": html}`,
#   plus `"_meta": {"ui": {...}}` when there is something to say: `"csp"` when `csp` is not
#   `None` (even `{}`), `"prefersBorder"` when `prefers_border` is not `None` (even `False`).
#   `uri` must start with `ui://` and have something after it. `csp` maps some of the
#   `CSP_FIELDS` to lists (or tuples) of origins, each a string that `ORIGIN.fullmatch`
#   accepts; keep them in order. A field that is not one of the four, a value that
#   is not a list or tuple of strings, an entry that is not an origin (`"*"`, `"data:"`,
#   `"https://a.example; script-src *"`): `ValueError`. A host puts the view in a policy
#   built from these origins, so an entry that is not a plain origin could widen it.

# %% [markdown] lang="es"
# La celda de preparación te da el nombre de la extensión, `EXTENSION`, el `MIME_TYPE` de la
# vista (con su perfil), los cuatro `CSP_FIELDS`, `ORIGIN` (un patrón para un origen que una
# vista puede declarar: `https://api.example.com`, `https://*.example.com`,
# `wss://live.example.com:8443`), `counter_tools()` e `initialize_result(definition)` para las
# partes 2 y 3, y `needs_confirmation(tool)` (la regla del laboratorio 10: salvo que
# `readOnlyHint` sea true o `destructiveHint` sea false, una herramienta puede ser
# destructiva).
#
# ## Parte 1 · Lo que dice un servidor de apps
#
# Tres datos en la conexión forman una app: el cliente dice que muestra vistas, una
# herramienta nombra su vista y quién puede llamarla, y el recurso de la vista lleva su HTML y
# lo que necesita. Escribe:
#
# - `supports_apps(capabilities)`: si las capacidades de un cliente (un dict, o `None`)
#   declaran la extensión con vistas HTML: `capabilities["extensions"][EXTENSION]` es un dict
#   cuyo `"mimeTypes"` es una lista que contiene `MIME_TYPE`. Cualquier otra cosa (un nivel que
#   falta o es de otro tipo) es `False`, nunca una excepción.
# - `app_tool_meta(view, visibility=("model", "app"))`: el `_meta` de una herramienta,
#   `{"ui": {"resourceUri": view, "visibility": [...]}}`. `view` es `None` (sin vista: deja
#   fuera `resourceUri`) o un URI que empieza por `ui://`. `visibility` es una lista o tupla de
#   cadenas, cada una `"model"` o `"app"`, al menos una; se quitan los repetidos y se conserva
#   el orden en que aparece cada valor por primera vez. Cualquier otra cosa (una vista que no es una cadena
#   que empiece por `ui://`, una cadena o un conjunto en lugar de una lista, una lista vacía,
#   otra palabra) lanza `ValueError`.
# - `view_contents(uri, html, csp=None, prefers_border=None)`: la única entrada de `contents`
#   que devuelve `resources/read` para una vista: `{"uri": uri, "mimeType": MIME_TYPE, "text":
#   html}`, más `"_meta": {"ui": {...}}` cuando hay algo que decir: `"csp"` cuando `csp` no es
#   `None` (aunque sea `{}`), `"prefersBorder"` cuando `prefers_border` no es `None` (aunque
#   sea `False`). `uri` debe empezar por `ui://` y tener algo después. `csp` asigna a algunos
#   de los `CSP_FIELDS` listas (o tuplas) de orígenes, cada uno una cadena que
#   `ORIGIN.fullmatch` acepta; conserva su orden. Un campo que no es uno de los
#   cuatro, un valor que no es una lista o tupla de cadenas, una entrada que no es un origen
#   (`"*"`, `"data:"`, `"https://a.example; script-src *"`): `ValueError`. Un host pone la
#   vista bajo una política construida con estos orígenes, así que una entrada que no es un
#   origen simple podría ampliarla.

# %%
def supports_apps(capabilities):
    ### BEGIN SOLUTION
    extensions = (capabilities or {}).get("extensions")
    settings = extensions.get(EXTENSION) if isinstance(extensions, dict) else None
    if not isinstance(settings, dict):
        return False
    mime_types = settings.get("mimeTypes")
    return isinstance(mime_types, list) and MIME_TYPE in mime_types
    ### END SOLUTION


def app_tool_meta(view, visibility=("model", "app")):
    ### BEGIN SOLUTION
    if not isinstance(visibility, list | tuple) or not visibility or any(
            who not in ("model", "app") for who in visibility):
        raise ValueError(f"visibility must list 'model' and/or 'app', not {visibility!r}")
    ui = {}
    if view is not None:
        if not isinstance(view, str):
            raise ValueError(f"a view's URI is a string (got {view!r})")
        if not view.startswith("ui://"):
            raise ValueError(f"a view's URI must start with ui:// (got {view!r})")
        ui["resourceUri"] = view
    ui["visibility"] = list(dict.fromkeys(visibility))
    return {"ui": ui}
    ### END SOLUTION


def view_contents(uri, html, csp=None, prefers_border=None):
    ### BEGIN SOLUTION
    if not isinstance(uri, str) or not uri.startswith("ui://") or uri == "ui://":
        raise ValueError(f"a view's URI must start with ui:// (got {uri!r})")
    ui = {}
    if csp is not None:
        checked = {}
        for field, origins in csp.items():
            if field not in CSP_FIELDS:
                raise ValueError(f"unknown csp field {field!r}")
            if not isinstance(origins, list | tuple) or not all(
                    isinstance(o, str) and ORIGIN.fullmatch(o) for o in origins):
                raise ValueError(f"csp[{field!r}] must be a list of origins")
            checked[field] = list(origins)
        ui["csp"] = checked
    if prefers_border is not None:
        ui["prefersBorder"] = bool(prefers_border)
    contents = {"uri": uri, "mimeType": MIME_TYPE, "text": html}
    if ui:
        contents["_meta"] = {"ui": ui}
    return contents
    ### END SOLUTION


# %%
print(supports_apps({"extensions": {EXTENSION: {"mimeTypes": [MIME_TYPE]}}}))
print(app_tool_meta(BOARD, ["app"]))
print(json.dumps(view_contents(BOARD, "<p>0</p>", CSP, True), indent=1))

# %% tags=["graded"] points=3
grading.check_what_a_server_says(supports_apps, app_tool_meta, view_contents)

# %% [markdown] lang="en"
# ## Part 2 · An app server
#
# Write `build_server(html)`: a new mcpkit `Server("counter", "1.0.0")` each time it is
# called, serving the counter app:
#
# - the view: the resource `BOARD`, registered with `server.resource(BOARD, name="board",
#   description="The counter's board.", mime_type=MIME_TYPE, meta={"ui": ...})` on a function
#   that returns `[view_contents(BOARD, html, CSP, True)]`. The `_meta.ui` is in both places:
#   on the listed resource (a host may review a view's needs when it connects) and in what
#   `resources/read` returns;
# - the tools: the two functions a call of `counter_tools()` returns (a new count for each
#   server). `counter_show` is for the model and the view, read-only (`read_only=True`);
#   `counter_add` is for the view only (`visibility ["app"]`) and not destructive
#   (`destructive=False`: a host would otherwise ask the user at every press of the board's
#   button). Both name `BOARD` in their
#   `_meta` (`server.tool(meta=...)`). A client that does not show views must not be sent
#   `counter_add` in `tools/list`: it could only hand it to a model. `server.tool(...,
#   listed_if=f)` lists a tool only to clients whose capabilities `f(capabilities)` accepts;
# - the declaration: `server.extensions[EXTENSION] = {"mimeTypes": [MIME_TYPE]}`. mcpkit puts
#   it in the server's capabilities in both eras (in `initialize` for 2025-11-25 and in
#   `server/discover` for 2026-07-28).

# %% [markdown] lang="es"
# ## Parte 2 · Un servidor de apps
#
# Escribe `build_server(html)`: un `Server("counter", "1.0.0")` nuevo de mcpkit cada vez que se
# llama, que sirva la app del contador:
#
# - la vista: el recurso `BOARD`, registrado con `server.resource(BOARD, name="board",
#   description="The counter's board.", mime_type=MIME_TYPE, meta={"ui": ...})` aplicado a una
#   función que devuelve `[view_contents(BOARD, html, CSP, True)]`. El `_meta.ui` está en los
#   dos sitios: en el recurso tal como aparece en `resources/list` (un host puede revisar lo que necesita una vista al
#   conectarse) y en lo que devuelve `resources/read`;
# - las herramientas: las dos funciones que devuelve una llamada a `counter_tools()` (una cuenta
#   nueva para cada servidor). `counter_show` es para el modelo y la vista, de solo lectura
#   (`read_only=True`); `counter_add` es solo para la vista (`visibility ["app"]`) y no es
#   destructiva (`destructive=False`: sin esa marca, un host preguntaría al usuario cada vez que
#   se pulsara el botón del tablero). Las dos
#   nombran `BOARD` en su `_meta` (`server.tool(meta=...)`). A un cliente que no muestra vistas
#   no se le debe enviar `counter_add` en `tools/list`: solo podría dársela a un modelo.
#   `server.tool(..., listed_if=f)` incluye una herramienta en `tools/list` solo para los
#   clientes cuyas capacidades acepta `f(capabilities)`;
# - la declaración: `server.extensions[EXTENSION] = {"mimeTypes": [MIME_TYPE]}`. mcpkit la pone
#   en las capacidades del servidor en las dos eras (en `initialize` para 2025-11-25 y en
#   `server/discover` para 2026-07-28).

# %%
def build_server(html):
    ### BEGIN SOLUTION
    server = Server("counter", "1.0.0")
    counter_show, counter_add = counter_tools()
    board = view_contents(BOARD, html, CSP, True)

    @server.resource(BOARD, name="board", description="The counter's board.",
                     mime_type=MIME_TYPE, meta=board["_meta"])
    def read_board():
        return [view_contents(BOARD, html, CSP, True)]

    server.tool(read_only=True, meta=app_tool_meta(BOARD))(counter_show)
    server.tool(destructive=False, meta=app_tool_meta(BOARD, ["app"]),
                listed_if=supports_apps)(counter_add)
    server.extensions[EXTENSION] = {"mimeTypes": [MIME_TYPE]}
    return server
    ### END SOLUTION


# %%
for capabilities in (None, {"extensions": {EXTENSION: {"mimeTypes": [MIME_TYPE]}}}):
    with Client(server=build_server("<p>0</p>"), version="2026-07-28",
                capabilities=capabilities) as client:
        print([tool["name"] for tool in client.list_tools()],
              client.server_capabilities.get("extensions"))

# %% tags=["graded"] points=3
grading.check_app_server(build_server)

# %% [markdown] lang="en"
# ## Part 3 · The host's side of a view
#
# A view is an MCP client of its host: it posts JSON-RPC messages, and the host answers. Write
# `app_visible(tool)`: whether a view may call a tool definition. Its `_meta.ui.visibility`
# decides: missing or `None` (or no `_meta.ui` at all) means both, so `True`; not a list means
# nobody
# (a host that cannot read the rule must not guess in the tool's favour); otherwise whether
# `"app"` is in it.
#
# Then write `ViewRouter(host, server, tool, arguments, confirm, open_link)`, the host's side
# of one view of `server`'s `tool`, called with `arguments`. `confirm(name, arguments)` and
# `open_link(url)` ask the user and return `True` or `False`. It keeps `audit` (a list),
# `messages` (a list) and `model_context` (`None` at first). The checks call
# `app_visible` on tool definitions of their own, and two methods of the router,
# `deliver_result` and `receive`; the skeleton splits `receive` into helpers you may use or
# reshape: `definition(name)` (the tool's definition, or `None`), and `answer(method, params)`
# and `call_tool(params)`, which return `(result, None)` or `(None, (code, message))`.
#
# `deliver_result(result)` returns the two notifications that tell the view the tool's input
# and result: `{"jsonrpc": "2.0", "method": "ui/notifications/tool-input", "params":
# {"arguments": arguments}}`, then `ui/notifications/tool-result` with the result as its
# `params`. Until the view has sent `ui/notifications/initialized`, nothing goes to it: keep
# them (every call before it waits, in order) and return `[]`; return everything kept, in
# order, as the answer to the first `ui/notifications/initialized`; a later one gets `[]`.
#
# `receive(message)` takes one message the view posted and returns the list of messages to
# post back (an answer is `{"jsonrpc": "2.0", "id": ..., "result": ...}` or `{..., "error":
# {"code": ..., "message": ...}}`; the message is a string, yours to word). In this order:
#
# 1. not a dict, or `"jsonrpc"` is not `"2.0"`: error -32600 with id `None`;
# 2. no `"method"` key: a response (to nothing this host sent): nothing back;
# 3. a method that is not a string (`null` included): -32600, with the message's id if it is a
#    string or an int (not a bool), else `None`;
# 4. no `"id"` key: a notification. Its `"params"`, if not a dict, count as `{}`. Only
#    `ui/notifications/initialized` does something (above); no notification is answered;
# 5. an id that is not a string or an int (a bool, `None`, a float, a list): -32600 with id
#    `None`;
# 6. `"params"` missing is `{}`; not a dict: -32602;
# 7. before `ui/notifications/initialized`, only `ui/initialize` and `ping` are answered; any
#    other request: -32600;
# 8. a method not in the list below: -32601.
#
# The methods (the `definition` of a tool is the dict among `host.server_tools(server)` with
# that `"name"`):
#
# - `ui/initialize`: the result `initialize_result(definition)` of `tool` (`{"name": tool}`
#   if the server lists no such tool); `ping`: `{}`.
# - `tools/call` (`params`: `"name"`, `"arguments"`, missing arguments are `{}`). First append
#   `{"tool": name, "arguments": arguments, "outcome": ...}` to `audit`, whatever happens
#   next; then, in order: a name that is not a string or arguments that are not a dict:
#   -32602, outcome `"invalid"`; if the definition is app-visible and `needs_confirmation`,
#   ask `confirm(name, dict(arguments))`; no: -32000, `"declined"`; no definition on this
#   server (a view never reaches another server's tools): -32602, `"unknown"`; not
#   `app_visible`: -32000, `"refused"`; then `host.client(server).call_tool(name, arguments)`:
#   a `ServerError` is an error with its `.code` (`"protocol-error"`), a `SessionError`
#   -32603 (`"protocol-error"`); a result is the answer, outcome `"tool-error"` if its
#   `isError` is `True`, else `"ok"`.
# - `ui/message` (`"role"`, `"content"`): the role must be `"user"` and the content a
#   non-empty list of text blocks (`{"type": "text", "text": <a string>}`; one block on its
#   own counts as a list of one); append `{"role": "user", "content": blocks}` to `messages`
#   and answer `{}`; else -32602.
# - `ui/update-model-context` (`"content"`, `"structuredContent"`): `content` a list or
#   missing/`None`, `structuredContent` a dict or missing/`None`, else -32602; `model_context`
#   becomes a dict of the ones that are not `None` (it replaces what was there); answer `{}`.
# - `ui/open-link` (`"url"`): a string whose scheme (`urlsplit`) is `http` or `https`, with a
#   host name (`urlsplit(url).hostname`), else -32602 (so is a URL that `urlsplit` cannot
#   parse: it raises `ValueError`); then `open_link(url)`: no: -32000; yes: `{}`.
#
# `host` is a real `Host` whose tools `host.server_tools(server)` lists (app-only ones
# included); call them through `host.client(server)`. `Host.call_tool_from_app` does all of
# `tools/call` for you, so the host you are given refuses it.

# %% [markdown] lang="es"
# ## Parte 3 · El lado del host de una vista
#
# Una vista es un cliente MCP de su host: envía mensajes JSON-RPC y el host los contesta.
# Escribe `app_visible(tool)`: si una vista puede llamar a una definición de herramienta.
# Lo decide su `_meta.ui.visibility`: si falta o es `None` (o no hay `_meta.ui`), vale para los
# dos, así que
# `True`; si no es una lista, para nadie (un host que no puede leer la regla no debe resolver la
# duda a favor de la herramienta); en otro caso, si `"app"` está en ella.
#
# Luego escribe `ViewRouter(host, server, tool, arguments, confirm, open_link)`, el lado del
# host de una vista de la herramienta `tool` de `server`, llamada con `arguments`.
# `confirm(name, arguments)` y `open_link(url)` preguntan al usuario y devuelven `True` o
# `False`. `ViewRouter` guarda `audit` (una lista), `messages` (una lista) y `model_context` (`None` al
# principio). Las comprobaciones llaman a `app_visible` con sus propias definiciones
# de herramientas, y a dos métodos del enrutador, `deliver_result` y `receive`; el
# esqueleto divide `receive` en funciones auxiliares que puedes usar o reorganizar:
# `definition(name)` (la definición de la herramienta, o `None`), y `answer(method, params)` y
# `call_tool(params)`, que devuelven `(result, None)` o `(None, (code, message))`.
#
# `deliver_result(result)` devuelve las dos notificaciones que comunican a la vista la entrada y el
# resultado de la herramienta: `{"jsonrpc": "2.0", "method": "ui/notifications/tool-input",
# "params": {"arguments": arguments}}` y luego `ui/notifications/tool-result` con el resultado
# como `params`. Hasta que la vista haya enviado `ui/notifications/initialized`, no le llega
# nada: guárdalas (las de cada llamada anterior a esa notificación esperan, en orden) y devuelve `[]`; devuelve todo lo
# guardado, en orden, como respuesta a la primera notificación `ui/notifications/initialized`; las
# siguientes reciben `[]`.
#
# `receive(message)` recibe un mensaje que envió la vista y devuelve la lista de mensajes
# que hay que enviarle (una respuesta es `{"jsonrpc": "2.0", "id": ..., "result": ...}` o
# `{..., "error": {"code": ..., "message": ...}}`; `message` es una cadena cuyo texto redactas
# tú). En este orden:
#
# 1. no es un dict, o `"jsonrpc"` no es `"2.0"`: error -32600 con id `None`;
# 2. sin la clave `"method"`: una respuesta (a nada que haya enviado este host): no se devuelve
#    nada;
# 3. un `"method"` que no es una cadena (también `null`): -32600, con el id del mensaje si es una
#    cadena o un int (no un bool) y, si no, `None`;
# 4. sin clave `"id"`: una notificación. Sus `"params"`, si no son un dict, cuentan como `{}`.
#    Solo `ui/notifications/initialized` hace algo (ver arriba); ninguna notificación se contesta;
# 5. un id que no es una cadena ni un int (un bool, `None`, un float, una lista): -32600 con
#    id `None`;
# 6. si faltan `"params"`, valen `{}`; si no son un dict: -32602;
# 7. antes de `ui/notifications/initialized`, solo se contestan `ui/initialize` y `ping`;
#    cualquier otra solicitud: -32600;
# 8. un método que no está en la lista de abajo: -32601.
#
# Los métodos (la `definition` de una herramienta es el dict de `host.server_tools(server)`
# con ese `"name"`):
#
# - `ui/initialize`: el resultado es `initialize_result(definition)` con la definición de
#   `tool` (o con `{"name": tool}` si el servidor no lista esa herramienta); `ping`: `{}`.
# - `tools/call` (`params`: `"name"`, `"arguments"`; si faltan los `arguments`, valen `{}`).
#   Primero añade `{"tool": name, "arguments": arguments, "outcome": ...}` a `audit`, pase lo
#   que pase después; luego, en orden: un `name` que no es una cadena o unos `arguments` que no
#   son un dict: -32602, outcome `"invalid"`; si la definición es visible para la app y
#   `needs_confirmation(definition)` es verdadero, pregunta a `confirm(name, dict(arguments))`; si dice que no:
#   -32000, `"declined"`; sin definición en este servidor (una vista nunca llega a las
#   herramientas de otro servidor): -32602, `"unknown"`; si no es `app_visible`: -32000,
#   `"refused"`; luego `host.client(server).call_tool(name, arguments)`: un `ServerError` es
#   un error con su `.code` (`"protocol-error"`), un `SessionError`, -32603
#   (`"protocol-error"`); un resultado es la respuesta, con outcome `"tool-error"` si su
#   `isError` es `True` y, si no, `"ok"`.
# - `ui/message` (`"role"`, `"content"`): `role` debe ser `"user"` y `content`, una lista
#   no vacía de bloques de texto (`{"type": "text", "text": <una cadena>}`; un bloque suelto
#   cuenta como una lista de uno); añade `{"role": "user", "content": blocks}` a `messages` y
#   contesta `{}`; si no, -32602.
# - `ui/update-model-context` (`"content"`, `"structuredContent"`): `content`, una lista o
#   ausente/`None`; `structuredContent`, un dict o ausente/`None`; si no, -32602;
#   `model_context` pasa a ser un dict con las claves que no son `None` (sustituye lo que
#   hubiera); contesta `{}`.
# - `ui/open-link` (`"url"`): una cadena cuyo esquema (`urlsplit`) es `http` o `https`, con
#   nombre de host (`urlsplit(url).hostname`); si no, -32602 (lo mismo para una URL que
#   `urlsplit` no puede analizar: lanza `ValueError`); luego `open_link(url)`: si dice que no, -32000; si dice que sí, `{}`.
#
# `host` es un `Host` real cuyas herramientas lista `host.server_tools(server)` (incluidas
# las que son solo para la app); llámalas a través de `host.client(server)`.
# `Host.call_tool_from_app` hace por ti todo el trabajo de `tools/call`, así que el host que
# recibes se niega a ejecutarla.

# %%
def app_visible(tool):
    ### BEGIN SOLUTION
    meta = tool.get("_meta")
    ui = meta.get("ui") if isinstance(meta, dict) else None
    who = ui.get("visibility") if isinstance(ui, dict) else None
    if who is None:
        return True
    return isinstance(who, list) and "app" in who
    ### END SOLUTION


# %%
class ViewRouter:
    def __init__(self, host, server, tool, arguments, confirm, open_link):
        ### BEGIN SOLUTION
        self.host, self.server, self.tool = host, server, tool
        self.arguments = dict(arguments)
        self.confirm, self.open_link = confirm, open_link
        self.audit, self.messages, self.model_context = [], [], None
        self.initialized, self.pending = False, []
        ### END SOLUTION

    def deliver_result(self, result):
        ### BEGIN SOLUTION
        out = [{"jsonrpc": "2.0", "method": "ui/notifications/tool-input",
                "params": {"arguments": self.arguments}},
               {"jsonrpc": "2.0", "method": "ui/notifications/tool-result",
                "params": dict(result)}]
        if self.initialized:
            return out
        self.pending += out
        return []
        ### END SOLUTION

    def receive(self, message):
        ### BEGIN SOLUTION
        def error(request_id, code, text):
            return [{"jsonrpc": "2.0", "id": request_id,
                     "error": {"code": code, "message": text}}]

        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            return error(None, -32600, "not a JSON-RPC 2.0 message")
        if "method" not in message:
            return []
        method = message["method"]
        request_id = message.get("id")
        if not isinstance(request_id, str | int) or isinstance(request_id, bool):
            request_id = None
        if not isinstance(method, str):
            return error(request_id, -32600, '"method" must be a string')
        params = message.get("params", {})
        if "id" not in message:
            if method == "ui/notifications/initialized" and not self.initialized:
                self.initialized = True
                pending, self.pending = self.pending, []
                return pending
            return []
        if request_id is None:
            return error(None, -32600, '"id" must be a string or an integer')
        if not isinstance(params, dict):
            return error(request_id, -32602, '"params" must be an object')
        if not self.initialized and method not in ("ui/initialize", "ping"):
            return error(request_id, -32600, f"{method} before initialized")
        result, refusal = self.answer(method, params)
        if refusal is not None:
            return error(request_id, *refusal)
        return [{"jsonrpc": "2.0", "id": request_id, "result": result}]
        ### END SOLUTION

    def answer(self, method, params):
        ### BEGIN SOLUTION
        if method == "ui/initialize":
            return initialize_result(self.definition(self.tool) or {"name": self.tool}), None
        if method == "ping":
            return {}, None
        if method == "tools/call":
            return self.call_tool(params)
        if method == "ui/message":
            content = params.get("content")
            blocks = content if isinstance(content, list) else [content]
            if params.get("role") != "user" or not blocks or not all(
                    isinstance(b, dict) and b.get("type") == "text"
                    and isinstance(b.get("text"), str) for b in blocks):
                return None, (-32602, 'ui/message takes role "user" and text content')
            self.messages.append({"role": "user", "content": blocks})
            return {}, None
        if method == "ui/update-model-context":
            content, structured = params.get("content"), params.get("structuredContent")
            if (content is not None and not isinstance(content, list)) or (
                    structured is not None and not isinstance(structured, dict)):
                return None, (-32602, "content must be a list, structuredContent an object")
            self.model_context = {k: v for k, v in (("content", content),
                                                    ("structuredContent", structured))
                                  if v is not None}
            return {}, None
        if method == "ui/open-link":
            url = params.get("url")
            try:
                parts = urlsplit(url) if isinstance(url, str) else None
            except ValueError:
                parts = None
            if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
                return None, (-32602, "only http and https links with a host open")
            if not self.open_link(url):
                return None, (-32000, "the user did not open the link")
            return {}, None
        return None, (-32601, f"this host does not handle {method}")
        ### END SOLUTION

    def definition(self, name):
        ### BEGIN SOLUTION
        return next((t for t in self.host.server_tools(self.server)
                     if t.get("name") == name), None)
        ### END SOLUTION

    def call_tool(self, params):
        ### BEGIN SOLUTION
        name, arguments = params.get("name"), params.get("arguments", {})
        entry = {"tool": name, "arguments": arguments}
        self.audit.append(entry)

        def refuse(outcome, code, text):
            entry["outcome"] = outcome
            return None, (code, text)

        if not isinstance(name, str) or not isinstance(arguments, dict):
            return refuse("invalid", -32602, "tools/call needs a string name, object arguments")
        definition = self.definition(name)
        if definition is not None and app_visible(definition) and needs_confirmation(
                definition) and not self.confirm(name, dict(arguments)):
            return refuse("declined", -32000, f"the user declined the call to {name}")
        if definition is None:
            return refuse("unknown", -32602, f"Unknown tool: {name}")
        if not app_visible(definition):
            return refuse("refused", -32000, f"{name} is not for views")
        try:
            result = self.host.client(self.server).call_tool(name, arguments)
        except ServerError as exc:
            return refuse("protocol-error", exc.code, exc.message)
        except SessionError as exc:
            return refuse("protocol-error", -32603, str(exc))
        entry["outcome"] = "tool-error" if result.get("isError") is True else "ok"
        return result, None
        ### END SOLUTION


# %%
with grading.lab11.view_host() as host:
    router = ViewRouter(host, "board", "board_show", {}, lambda name, arguments: False,
                        lambda url: False)
    for message in [{"jsonrpc": "2.0", "id": 1, "method": "ui/initialize", "params": {}},
                    {"jsonrpc": "2.0", "method": "ui/notifications/initialized"},
                    {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                     "params": {"name": "board_add", "arguments": {"step": 2}}},
                    {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                     "params": {"name": "board_clear"}}]:
        print(json.dumps(router.receive(message))[:150])
    print(router.audit)

# %% tags=["graded"] points=4
grading.check_view_router(ViewRouter, app_visible)

# %% [markdown] lang="en"
# ## Done?
#
# Compare your code with `mcpkit/apps.py` and `mcpkit/app_bridge.py`. mcpkit's bridge does a
# few things more: it reads the view itself (`resources/read` of the tool's `ui://` URI) and
# builds the Content-Security-Policy around it, answers the view's `resources/read` and its
# log messages, and tears the view down. Two things to try:
#
# - Put your server behind lesson 11's notebook host (`mcpkit.app_widget.AppView`) and press
#   the board's button. Which of your part-3 rules does the widget's wire log show at work?
# - Write a view that calls `counter_add` a thousand times a second. What should a host do
#   about it, and where in your router would it go?

# %% [markdown] lang="es"
# ## ¿Terminaste?
#
# Compara tu código con `mcpkit/apps.py` y `mcpkit/app_bridge.py`. El puente de mcpkit hace
# unas cuantas cosas más: lee la vista por su cuenta (`resources/read` del URI `ui://` de
# la herramienta) y construye a su alrededor la política de seguridad de contenido (CSP),
# contesta el `resources/read` de la vista y sus mensajes de registro, y desmonta la vista al terminar.
# Dos cosas que probar:
#
# - Pon tu servidor detrás del host del cuaderno de la lección 11
#   (`mcpkit.app_widget.AppView`) y pulsa el botón del tablero. ¿Cuáles de tus reglas de la
#   parte 3 se ven en acción en el registro de la conexión del widget?
# - Escribe una vista que llame a `counter_add` mil veces por segundo. ¿Qué debería hacer un
#   host al respecto, y en qué parte de tu enrutador iría?
