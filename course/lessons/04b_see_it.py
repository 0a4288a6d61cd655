# %% [markdown] lang="en"
# # Lesson 04b · See it: the tool explorer, the wire inspector, the host dashboard
#
# > **Español:** [`notebooks/es/04b_see_it.ipynb`](../es/04b_see_it.ipynb)
#
# Lesson 04 built a server and read its bytes as text. This short lesson shows the same things
# as widgets you can click: a **tool explorer** that turns a tool's `inputSchema` into a form,
# a **wire inspector** that draws the timeline of the messages that crossed the pipe, and a
# **host dashboard** that watches several servers at once (lesson 06 explains hosts; here you
# only look).
#
# The widgets need JupyterLab (or any front end with ipywidgets). Elsewhere (GitHub, a saved
# notebook) each one shows a plain-text or HTML summary instead. Their labels follow the
# notebook's language.

# %% [markdown] lang="es"
# # Lección 04b · Míralo: el explorador de herramientas, el inspector de la conexión y el panel del host
#
# > **English:** [`notebooks/en/04b_see_it.ipynb`](../en/04b_see_it.ipynb)
#
# La lección 04 construyó un servidor y leyó sus bytes como texto. Esta lección corta muestra
# lo mismo con widgets en los que puedes hacer clic: un **explorador de herramientas** que
# convierte el `inputSchema` de una herramienta en un formulario, un **inspector de la
# conexión** que dibuja la línea de tiempo de los mensajes que pasaron por la tubería y un
# **panel** que vigila varios servidores a la vez (la lección 06 explica los hosts; aquí solo
# miras).
#
# Los widgets necesitan JupyterLab (o cualquier interfaz con ipywidgets). En otros sitios
# (GitHub, un cuaderno guardado) cada uno muestra en su lugar un resumen en texto o en HTML.
# Sus etiquetas siguen el idioma del cuaderno.

# %% tags=["setup"]
# [en] Setup: run this cell first.
# [es] Preparación: ejecuta esta celda primero.
import sys
import tempfile
from pathlib import Path

from IPython.display import Markdown

from mcpkit import Client, Host, grading, wiretap
from mcpkit.widgets import HostDashboard, ToolExplorer, WireInspector, show_result

# [en] The widgets' labels follow this language.
# [es] Las etiquetas de los widgets siguen este idioma.
grading.set_language("en")

# %% [markdown] lang="en"
# ## 1. A client, watched
#
# The client of lesson 05 starts the notes server as a subprocess. To see its traffic we do
# not change the client: we put a **relay** between the two. `wiretap.command(log, command)`
# wraps the server's command in `python -m mcpkit.wiretap LOG -- ...`, a small process that
# passes every line through untouched and writes it, with the time it passed, to `LOG`.

# %% [markdown] lang="es"
# ## 1. Un cliente, observado
#
# El cliente de la lección 05 lanza el servidor de notas como subproceso. Para ver su tráfico
# no cambiamos el cliente: ponemos un **intermediario (relay)** entre los dos.
# `wiretap.command(log, command)` envuelve la orden del servidor en
# `python -m mcpkit.wiretap LOG -- ...`, un pequeño proceso que deja pasar cada línea sin
# tocarla y la escribe en `LOG`, con el momento en que pasó.

# %%
folder = Path(tempfile.mkdtemp(prefix="mcpkit-04b-"))
log = folder / "notes.wire"
notes_command = [sys.executable, "-m", "mcpkit", "serve", "mcpkit.examples.notes:server"]
client = Client(wiretap.command(log, notes_command), version="legacy").connect()
client.server_info["name"], client.era

# %% [markdown] lang="en"
# ## 2. The tool explorer
#
# Pick a tool, fill in the form, press **Call**. The form comes from the tool's `inputSchema`:
# a text box per string, a number box per number, a checkbox per boolean, a menu per `enum`,
# one item per line for an array, and JSON text for anything nested. Required fields are
# marked `*`, and defaults are filled in. The result is drawn by content type: text as text,
# images as images, structured content as a tree, and a tool error (`isError`) framed in red.

# %% [markdown] lang="es"
# ## 2. El explorador de herramientas
#
# Elige una herramienta, rellena el formulario y pulsa **Llamar**. El formulario sale del
# `inputSchema` de la herramienta: una caja de texto por cada cadena, una caja numérica por
# cada número, una casilla por cada booleano, un menú por cada `enum`, un elemento por línea
# para un array y texto JSON para todo lo anidado. Los campos obligatorios llevan `*` y los
# valores por defecto aparecen ya puestos. El resultado se dibuja según el tipo de contenido:
# el texto como texto, las imágenes como imágenes, la salida estructurada como un árbol, y un
# error de herramienta (`isError`) enmarcado en rojo.

# %%
explorer = ToolExplorer(client)
explorer

# %% [markdown] lang="en"
# The widget does nothing a cell cannot do. The same call from code, which is also what the
# widget shows after it:

# %% [markdown] lang="es"
# El widget no hace nada que no pueda hacer una celda. La misma llamada desde código, que es
# también lo que el widget muestra después:

# %%
explorer.picker.value = "notes_search"
explorer.fill(query="mcp")
show_result(explorer.call())

# %% [markdown] lang="en"
# **Try it.** In the widget, call `notes_delete` with an id that does not exist: the result
# comes back framed in red, a tool error the model can read. Then call `notes_create` and
# search again.

# %% [markdown] lang="es"
# **Pruébalo.** En el widget, llama a `notes_delete` con un id que no existe: el resultado
# vuelve enmarcado en rojo, un error de herramienta que el modelo puede leer. Después llama a
# `notes_create` y vuelve a buscar.

# %% [markdown] lang="en"
# ## 3. The wire inspector
#
# Every message the relay saw, in order: its direction, its kind, its method (a response
# shows the method of the request it answers), its id, its size in bytes and, for a response,
# how long it took. Open a row to see its JSON. The filters narrow the list; **Mermaid** and
# **Bytes** export what is shown as a sequence diagram or as the literal bytes. With
# `live=True` it follows the session: call a tool in the explorer above and watch a new pair
# of rows appear.

# %% [markdown] lang="es"
# ## 3. El inspector de la conexión
#
# Cada mensaje que vio el intermediario, en orden: su dirección, su tipo, su método (una
# respuesta muestra el método de la solicitud a la que responde), su id, su tamaño en bytes y,
# si es una respuesta, cuánto tardó. Abre una fila para ver su JSON. Los filtros acotan la
# lista; **Mermaid** y **Bytes** exportan lo que se ve como diagrama de secuencia o como los
# bytes literales. Con `live=True` sigue la sesión: llama a una herramienta en el explorador de
# arriba y verás aparecer un nuevo par de filas.

# %%
inspector = WireInspector(log, live=True)
inspector.method.value = "tools/"
inspector

# %% [markdown] lang="en"
# The same trace as a diagram (JupyterLab draws Mermaid in Markdown), and as the bytes that
# went to the server:

# %% [markdown] lang="es"
# La misma traza como diagrama (JupyterLab dibuja Mermaid en Markdown), y como los bytes que
# fueron al servidor:

# %%
trace = wiretap.Trace.from_file(log)
Markdown("```mermaid\n" + trace.filter(method="tools/call").to_mermaid() + "\n```")

# %%
trace.filter(method="tools/call").to_bytes("C->S")

# %% [markdown] lang="en"
# ## 4. The host dashboard
#
# A host runs many servers and merges their tools into one namespace. The dashboard shows each
# server's state, era, number of tools and restarts, with the last lines it wrote to standard
# error, and keeps itself up to date. The tool explorer works on a host too: its menu then
# lists the tools of every server.

# %% [markdown] lang="es"
# ## 4. El panel del host
#
# Un host ejecuta muchos servidores y reúne sus herramientas en un solo espacio de nombres. El
# panel muestra el estado de cada servidor, su era, su número de herramientas y de reinicios,
# con las últimas líneas que escribió en el error estándar, y se mantiene al día. El explorador
# de herramientas también funciona con un host: su menú enumera entonces las herramientas de
# todos los servidores.

# %%
config = {"mcpServers": {
    "notes": {"command": sys.executable,
              "args": ["-m", "mcpkit", "serve", "mcpkit.examples.notes:server"]},
    "verbs": {"command": sys.executable,
              "args": ["-m", "mcpkit", "serve", "mcpkit.examples.verbs:server"]},
}}
host = Host(config).start()
host.wait_ready()
dashboard = HostDashboard(host, live=True)
dashboard

# %%
ToolExplorer(host)

# %% [markdown] lang="en"
# When you are done, close what you opened: the widgets' refresh threads, the host (both
# servers) and the client (its server, and the relay).

# %% [markdown] lang="es"
# Cuando termines, cierra lo que abriste: los hilos que refrescan los widgets, el host (los dos
# servidores) y el cliente (su servidor, y el intermediario).

# %%
inspector.close()
dashboard.close()
host.close()
client.close()

# %% [markdown] lang="en"
# ## Summary
#
# - A relay between client and server sees every byte without changing either:
#   `wiretap.command(log, command)` records a session, `wiretap.Trace` reads it back.
# - The tool explorer is a form made from `inputSchema`, a call, and the result drawn by
#   content type; the wire inspector is the trace as a timeline, a diagram or bytes; the host
#   dashboard is `host.status()`, live.
#
# Next, **lesson 05**: the client side of the pipe.

# %% [markdown] lang="es"
# ## Resumen
#
# - Un intermediario entre cliente y servidor ve cada byte sin cambiar a ninguno de los dos:
#   `wiretap.command(log, command)` graba una sesión y `wiretap.Trace` la vuelve a leer.
# - El explorador de herramientas es un formulario hecho a partir del `inputSchema`, una
#   llamada y el resultado dibujado según el tipo de contenido; el inspector de la conexión es
#   la traza como línea de tiempo, como diagrama o como bytes; el panel del host es
#   `host.status()`, en vivo.
#
# Después, la **lección 05**: el lado del cliente de la tubería.
