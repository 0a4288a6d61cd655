# %% [markdown] lang="en"
# # Lesson 04b · The server on a pipe: the stdio loop, a real session, and widgets to see it
#
# > **Español:** [`notebooks/es/04b_stdio.ipynb`](../es/04b_stdio.ipynb)
#
# Lesson 04 built a server with no I/O. Here it goes on a pipe. You will:
#
# 1. run the **stdio loop** and keep `print()` away from the protocol;
# 2. capture the literal bytes of a session with a real server in a **subprocess**: the proof
#    that everything in lesson 04 is just lines of JSON on a pipe;
# 3. glimpse the **modern era**, with no handshake;
# 4. see the same things as widgets you can click: a **tool explorer** that turns a tool's
#    `inputSchema` into a form, a **wire inspector** that draws the timeline of the messages
#    that crossed the pipe, and a **host dashboard** that watches several servers at once
#    (lesson 06 explains hosts; here you only look).
#
# The widgets need JupyterLab (or any front end with ipywidgets). Elsewhere (GitHub, a saved
# notebook) each one shows a plain-text or HTML summary instead. Their labels follow the
# notebook's language.

# %% [markdown] lang="es"
# # Lección 04b · El servidor en una tubería: el bucle stdio, una sesión real y widgets para verlo
#
# > **English:** [`notebooks/en/04b_stdio.ipynb`](../en/04b_stdio.ipynb)
#
# La lección 04 construyó un servidor sin E/S. Aquí lo ponemos en una tubería. Vas a:
#
# 1. ejecutar el **bucle stdio** y mantener `print()` lejos del protocolo;
# 2. capturar los bytes literales de una sesión con un servidor real en un **subproceso**: la
#    prueba de que todo lo de la lección 04 no son más que líneas de JSON en una tubería;
# 3. echar un vistazo a la **era moderna**, sin handshake;
# 4. ver lo mismo con widgets en los que puedes hacer clic: un **explorador de herramientas**
#    que convierte el `inputSchema` de una herramienta en un formulario, un **inspector de la
#    conexión** que dibuja la línea de tiempo de los mensajes que pasaron por la tubería y un
#    **panel** que vigila varios servidores a la vez (la lección 06 explica los hosts; aquí
#    solo miras).
#
# Los widgets necesitan JupyterLab (o cualquier interfaz con ipywidgets). En otros sitios
# (GitHub, un cuaderno guardado) cada uno muestra en su lugar un resumen en texto o en HTML.
# Sus etiquetas siguen el idioma del cuaderno.

# %% tags=["setup"]
# [en] Setup: run this cell first.
# [es] Preparación: ejecuta esta celda primero.
import io
import json
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from IPython.display import Markdown

from mcpkit import Client, Host, framing, grading, jsonrpc, wiretap
from mcpkit.display import hexdump
from mcpkit.examples import notes, verbs
from mcpkit.transports.stdio import serve_stdio
from mcpkit.widgets import HostDashboard, ToolExplorer, WireInspector, show_result

notes.reset()
# [en] The widgets' labels follow this language.
# [es] Las etiquetas de los widgets siguen este idioma.
grading.set_language("en")

# %% [markdown] lang="en"
# ## 1. The stdio loop
#
# Now the transport. Over stdio, the host starts the server as a **subprocess** and talks to
# it through its **standard input** (client to server) and **standard output** (server to
# client), one JSON message per line; **standard error** is free for logs. The loop in
# `mcpkit/transports/stdio.py` is lesson 03's `serve` with a real server in it:
#
# ```mermaid
# flowchart LR
#     I[stdin: read up to 64 KiB] --> D[NdjsonDecoder.feed]
#     D --> R[connection.receive]
#     R --> S["send(message): encode_ndjson, write to stdout"]
#     I -- "b'' (end of input)" --> X[close the connection and return]
# ```
#
# `serve_stdio` also accepts any pair of byte streams, so we can run it right here, on bytes
# prepared in advance:

# %% [markdown] lang="es"
# ## 1. El bucle stdio
#
# Ahora, el transporte. Por stdio, el host lanza el servidor como **subproceso** y le habla a
# través de su **entrada estándar** (del cliente al servidor) y su **salida estándar** (del
# servidor al cliente), un mensaje JSON por línea; el **error estándar** queda libre para los
# registros. El bucle de `mcpkit/transports/stdio.py` es el `serve` de la lección 03 con un
# servidor real dentro:
#
# ```mermaid
# flowchart LR
#     I[stdin: leer hasta 64 KiB] --> D[NdjsonDecoder.feed]
#     D --> R[connection.receive]
#     R --> S["send(message): encode_ndjson, escribir en stdout"]
#     I -- "b'' (fin de la entrada)" --> X[cerrar la conexión y volver]
# ```
#
# `serve_stdio` también acepta cualquier par de flujos de bytes, así que podemos ejecutarlo
# aquí mismo, sobre bytes preparados de antemano:

# %%
INITIALIZE = jsonrpc.request(1, "initialize", {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "lesson-04", "version": "1.0"},
})
incoming = b"".join(framing.encode_ndjson(message) for message in [
    INITIALIZE,
    jsonrpc.notification("notifications/initialized"),
    jsonrpc.request(2, "tools/call", {"name": "conjugate", "arguments": {"verb": "be"}}),
])
outgoing = io.BytesIO()
serve_stdio(verbs.server, stdin=io.BytesIO(incoming), stdout=outgoing)
for line in outgoing.getvalue().splitlines(keepends=True):
    print(line)

# %% [markdown] lang="en"
# Three messages in, two lines out: the notification got no answer. The loop ended by itself
# when the input ran out, which is how a stdio server learns that the host has gone: end of
# input, not a special message.
#
# ### `print()` must never reach standard output
#
# On stdio, standard output *is* the protocol channel (lesson 01 showed what a stray line does
# to the client's decoder). But tools are ordinary Python, and ordinary Python prints. So when
# `serve_stdio` starts with the real standard output, it sets it aside for protocol messages
# only: it keeps a private copy of file descriptor 1, then points descriptor 1 and
# `sys.stdout` at standard error. From then on a `print()`, in a tool or in any program the
# tool starts, lands in the log.
#
# *From then on* is the catch. Here is a chatty server: it prints when its module loads, and
# its tool prints while it works. We run it as a real subprocess and send it a handshake and
# one call, all at once:

# %% [markdown] lang="es"
# Tres mensajes de entrada, dos líneas de salida: la notificación no recibió respuesta. El
# bucle terminó solo cuando se acabó la entrada, que es como un servidor stdio se entera de que
# el host se ha ido: fin de la entrada, no un mensaje especial.
#
# ### `print()` nunca debe llegar a la salida estándar
#
# En stdio, la salida estándar *es* el canal del protocolo (la lección 01 mostró lo que le hace
# una línea suelta al decodificador del cliente). Pero las herramientas son Python normal, y
# el Python normal imprime. Así que cuando `serve_stdio` arranca con la salida estándar real, la
# reserva solo para los mensajes del protocolo: guarda una copia privada del descriptor de
# archivo 1 y luego apunta el descriptor 1 y `sys.stdout` al error estándar. A partir de ese
# momento, un `print()`, en una herramienta o en cualquier programa que lance la herramienta,
# acaba en el registro.
#
# *A partir de ese momento* es la trampa. Aquí tienes un servidor parlanchín: imprime al cargar
# su módulo, y su herramienta imprime mientras trabaja. Lo ejecutamos como un subproceso real y
# le enviamos un handshake y una llamada, todo de una vez:

# %%
CHATTY = """
from mcpkit import Server

print("loading the chatty server")
server = Server("chatty")


@server.tool
def shout(text: str) -> str:
    print("debug: shouting", text)
    return text.upper() + "!"


server.run()
"""
incoming = b"".join(framing.encode_ndjson(message) for message in [
    INITIALIZE,
    jsonrpc.notification("notifications/initialized"),
    jsonrpc.request(2, "tools/call", {"name": "shout", "arguments": {"text": "hola"}}),
])
done = subprocess.run([sys.executable, "-c", CHATTY], input=incoming, capture_output=True,
                      timeout=60)
print("stdout:")
for line in done.stdout.splitlines(keepends=True):
    print("   ", line)
print("stderr:")
for line in done.stderr.splitlines(keepends=True):
    print("   ", line)

# %% [markdown] lang="en"
# The `print` inside the tool went to standard error, where it belongs. The one at import time
# ran before `server.run()` had claimed standard output, so it went out on the wire, and the
# client's decoder chokes on it:

# %% [markdown] lang="es"
# El `print` de dentro de la herramienta fue al error estándar, donde debe estar. El del
# momento de la importación se ejecutó antes de que `server.run()` reservara la salida
# estándar, así que salió por la conexión, y el decodificador del cliente se atraganta con él:

# %%
[type(item).__name__ if isinstance(item, framing.FramingError) else item["id"]
 for item in framing.NdjsonDecoder().feed(done.stdout)]

# %% [markdown] lang="en"
# This client survives, because the junk came before any real message. Clients differ,
# though: some give up on the first line that is not JSON. The rules for a stdio server:
# **log to standard error** (`logging` does by default), keep module imports quiet, and never
# write to file descriptor 1 yourself.
#
# ## 2. A real session, byte by byte
#
# Everything so far ran inside this notebook. Now the real thing: the notes server as a
# separate process, started exactly as a host would start it,
#
# ```
# python -m mcpkit serve mcpkit.examples.notes:server
# ```
#
# and a client that writes bytes to its standard input and reads lines from its standard
# output. Reading must not block the notebook, so a **reader thread** reads each line and puts
# it in a queue, and the notebook takes them from there. The thread never prints: output from
# a thread would land in whatever cell happens to be running.

# %% [markdown] lang="es"
# Este cliente sobrevive, porque la basura llegó antes que cualquier mensaje real. Pero no todos
# los clientes son iguales: algunos se rinden con la primera línea que no es JSON. Las reglas
# para un servidor stdio: **registra en el error estándar** (`logging` lo hace por defecto),
# mantén en silencio la importación de los módulos y nunca escribas tú en el descriptor de
# archivo 1.
#
# ## 2. Una sesión real, byte a byte
#
# Todo lo anterior se ejecutó dentro de este cuaderno. Ahora, lo real: el servidor de notas
# como un proceso aparte, lanzado exactamente como lo lanzaría un host,
#
# ```
# python -m mcpkit serve mcpkit.examples.notes:server
# ```
#
# y un cliente que escribe bytes en su entrada estándar y lee líneas de su salida estándar. La
# lectura no debe bloquear el cuaderno, así que un **hilo lector** lee cada línea y la pone en
# una cola, y el cuaderno las recoge de ahí. El hilo nunca imprime: la salida de un hilo
# acabaría en la celda que se esté ejecutando en ese momento.

# %%
process = subprocess.Popen(
    [sys.executable, "-m", "mcpkit", "serve", "mcpkit.examples.notes:server"],
    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
)
lines = queue.Queue()


def read_lines():
    for line in process.stdout:
        lines.put(line)
    lines.put(None)


reader = threading.Thread(target=read_lines, daemon=True)
reader.start()
trace = []


def send(message):
    data = framing.encode_ndjson(message)
    trace.append(("C->S", data))
    process.stdin.write(data)
    process.stdin.flush()


def wait_for(request_id):
    while True:
        line = lines.get(timeout=30)
        if line is None:
            raise EOFError("the server closed its standard output")
        trace.append(("S->C", line))
        if json.loads(line).get("id") == request_id:
            return json.loads(line)

# %% [markdown] lang="en"
# The conversation, as a client would hold it: wait for each response before going on.
# Between the `tools/list` and the rest, the client subscribes to `notes://4` and creates a
# note, to see a message the server sends on its own.

# %% [markdown] lang="es"
# La conversación, como la mantendría un cliente: esperar cada respuesta antes de seguir.
# Entre `tools/list` y lo demás, el cliente se suscribe a `notes://4` y crea una nota, para ver
# un mensaje que el servidor envía por iniciativa propia.

# %%
conversation = [
    INITIALIZE,
    jsonrpc.notification("notifications/initialized"),
    jsonrpc.request(2, "tools/list"),
    jsonrpc.request(3, "tools/call", {"name": "notes_search", "arguments": {"query": "mcp"}}),
    jsonrpc.request(4, "resources/subscribe", {"uri": "notes://4"}),
    jsonrpc.request(5, "tools/call", {"name": "notes_create",
                                      "arguments": {"title": "Tea", "body": "Green, no sugar."}}),
    jsonrpc.request(6, "resources/read", {"uri": "notes://2"}),
    jsonrpc.request(7, "prompts/get", {"name": "review_note", "arguments": {"id": "2"}}),
]
for message in conversation:
    send(message)
    if "id" in message:
        wait_for(message["id"])

process.stdin.close()
process.wait(timeout=30)
reader.join(timeout=30)
stderr = process.stderr.read()
process.stdout.close()
process.stderr.close()
process.returncode, reader.is_alive(), stderr

# %% [markdown] lang="en"
# Closing the server's standard input was the goodbye: the server saw the end of its input,
# closed the connection and exited with status 0; the reader thread saw the end of the
# server's output and finished; nothing was written to standard error. Here is every byte that
# crossed the two pipes, in order, exactly as sent (`C->S` from client to server, `S->C` back):

# %% [markdown] lang="es"
# Cerrar la entrada estándar del servidor fue la despedida: el servidor vio el fin de su
# entrada, cerró la conexión y salió con estado 0; el hilo lector vio el fin de la salida del
# servidor y terminó; no se escribió nada en el error estándar. Aquí está cada byte que cruzó
# las dos tuberías, en orden, tal como se envió (`C->S` del cliente al servidor, `S->C` de
# vuelta):

# %%
for direction, data in trace:
    print(direction, data)

# %% [markdown] lang="en"
# ```mermaid
# sequenceDiagram
#     participant C as Client (this notebook)
#     participant S as python -m mcpkit serve notes
#     C->>S: 1 initialize (protocolVersion 2025-11-25)
#     S-->>C: 1 result: protocolVersion, capabilities, serverInfo
#     C-)S: notifications/initialized
#     C->>S: 2 tools/list
#     S-->>C: 2 result: four tools
#     C->>S: 3 tools/call notes_search
#     S-->>C: 3 result: one text block
#     C->>S: 4 resources/subscribe notes://4
#     S-->>C: 4 result {}
#     C->>S: 5 tools/call notes_create
#     S--)C: notifications/resources/updated notes://4
#     S-->>C: 5 result: created note 4
#     C->>S: 6 resources/read notes://2
#     S-->>C: 6 result: contents
#     C->>S: 7 prompts/get review_note
#     S-->>C: 7 result: messages
#     Note over C,S: the client closes stdin, the server exits with status 0
# ```
#
# Nothing in the stream was ever anything but a line of UTF-8 JSON and a `\n`. The hex dump of
# the one message the server sent without being asked shows it, down to the final `0a`:

# %% [markdown] lang="es"
# ```mermaid
# sequenceDiagram
#     participant C as Cliente (este cuaderno)
#     participant S as python -m mcpkit serve notes
#     C->>S: 1 initialize (protocolVersion 2025-11-25)
#     S-->>C: 1 resultado: protocolVersion, capabilities, serverInfo
#     C-)S: notifications/initialized
#     C->>S: 2 tools/list
#     S-->>C: 2 resultado: cuatro herramientas
#     C->>S: 3 tools/call notes_search
#     S-->>C: 3 resultado: un bloque de texto
#     C->>S: 4 resources/subscribe notes://4
#     S-->>C: 4 resultado {}
#     C->>S: 5 tools/call notes_create
#     S--)C: notifications/resources/updated notes://4
#     S-->>C: 5 resultado: created note 4
#     C->>S: 6 resources/read notes://2
#     S-->>C: 6 resultado: contents
#     C->>S: 7 prompts/get review_note
#     S-->>C: 7 resultado: messages
#     Note over C,S: el cliente cierra stdin, el servidor sale con estado 0
# ```
#
# En el flujo nunca hubo otra cosa que una línea de JSON en UTF-8 y un `\n`. El volcado
# hexadecimal del único mensaje que el servidor envió sin que se lo pidieran lo muestra, hasta
# el `0a` final:

# %%
updated = next(data for direction, data in trace if b"resources/updated" in data)
hexdump(updated)

# %% [markdown] lang="en"
# ### The bytes as proof
#
# The trace is also evidence that the server kept the rules of the earlier lessons. Decode
# both directions with the decoder of lesson 01 and classify every message as in lesson 02:

# %% [markdown] lang="es"
# ### Los bytes como prueba
#
# La captura es además una prueba de que el servidor cumplió las reglas de las lecciones
# anteriores. Decodifica las dos direcciones con el decodificador de la lección 01 y clasifica
# cada mensaje como en la lección 02:

# %%
client_bytes = b"".join(data for direction, data in trace if direction == "C->S")
server_bytes = b"".join(data for direction, data in trace if direction == "S->C")
sent = framing.NdjsonDecoder().feed(client_bytes)
received = framing.NdjsonDecoder().feed(server_bytes)
request_ids = [m["id"] for m in sent if jsonrpc.classify(m) == "request"]
response_ids = [m["id"] for m in received if jsonrpc.classify(m) in ("result", "error")]
print(len(client_bytes), "bytes sent,", len(server_bytes), "bytes received")
print("requests: ", request_ids)
print("responses:", response_ids)
print("notifications sent:    ", [m["method"] for m in sent if "id" not in m])
print("notifications received:", [m["method"] for m in received if "id" not in m])

# %% [markdown] lang="en"
# Every request was answered exactly once, in order; the client's notification was not
# answered; every byte on standard output was protocol.
#
# ### Flushing, and a client that goes away
#
# Two more rules of the loop. First, each message must leave the process as soon as it is
# written. A `sys.stdout` left buffered keeps an answer inside the server while the client
# waits for it, so a hand-written loop calls `flush()` after every line; `mcpkit` writes each
# message straight to the file descriptor, with no buffer in between. Second, the client may
# go away while the server still has something to say. Writing to a pipe that nobody reads
# makes the kernel send `SIGPIPE`; Python ignores that signal from the start, so the write
# fails with `BrokenPipeError` instead. A server should neither die of it with a traceback
# nor hide it: `mcpkit`'s loop logs one warning on standard error, stops writing, and reads on
# until the end of its input. Here the client closes its end of the server's standard output
# before it sends anything (the timestamps are cut from the log lines):

# %% [markdown] lang="es"
# Cada solicitud se respondió exactamente una vez, en orden; la notificación del cliente no se
# respondió; cada byte de la salida estándar fue protocolo.
#
# ### Vaciar el búfer, y un cliente que se va
#
# Dos reglas más del bucle. La primera: cada mensaje debe salir del proceso en cuanto se
# escribe. Un `sys.stdout` con búfer retiene una respuesta dentro del servidor mientras el
# cliente la espera, así que un bucle escrito a mano llama a `flush()` tras cada línea; `mcpkit`
# escribe cada mensaje directamente en el descriptor de archivo, sin búfer de por medio. La
# segunda: el cliente puede irse cuando el servidor aún tiene algo que decir. Escribir en una
# tubería que nadie lee hace que el kernel del sistema operativo envíe `SIGPIPE`; Python ignora
# esa señal desde el arranque, así que la escritura falla con `BrokenPipeError`. Un servidor no
# debería morir por ello con una traza de error ni ocultarlo: el bucle de `mcpkit` registra un
# aviso en el error estándar, deja de escribir y sigue leyendo hasta el final de su entrada.
# Aquí el cliente cierra su extremo de la salida estándar del servidor antes de enviar nada (a
# las líneas del registro se les quita la hora):

# %%
gone = subprocess.Popen(
    [sys.executable, "-m", "mcpkit", "serve", "mcpkit.examples.notes:server"],
    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
)
gone.stdout.close()
gone.stdin.write(framing.encode_ndjson(INITIALIZE))
gone.stdin.write(framing.encode_ndjson(jsonrpc.request(2, "ping")))
gone.stdin.close()
gone.wait(timeout=30)
log_lines = gone.stderr.read().decode().splitlines()
gone.stderr.close()
print("exit status", gone.returncode)
for line in log_lines:
    print(line.split(" ", 2)[2])

# %% [markdown] lang="en"
# One warning for two answers that could not be delivered, and a clean exit: the failure is
# on record, and nothing else broke.
#
# ## 3. A glimpse of the modern era
#
# Everything above used the **legacy era** handshake: `initialize` fixes the revision and the
# capabilities for the whole connection. In the **modern era** (revision 2026-07-28, lesson 07)
# there is no handshake. Each request carries the revision and the client's capabilities in
# `params._meta`, and a client that wants to know what a server offers asks `server/discover`.
# The same server answers both eras; here is a fresh process, with no `initialize` at all:

# %% [markdown] lang="es"
# Un solo aviso para dos respuestas que no se pudieron entregar, y una salida limpia: el fallo
# queda registrado y nada más se rompió.
#
# ## 3. Un vistazo a la era moderna
#
# Todo lo anterior usó el handshake de la **era heredada**: `initialize` fija la revisión y las
# capacidades para toda la conexión. En la **era moderna** (revisión 2026-07-28, lección 07) no
# hay handshake. Cada solicitud lleva la revisión y las capacidades del cliente en
# `params._meta`, y un cliente que quiere saber qué ofrece un servidor pregunta
# `server/discover`. El mismo servidor responde en las dos eras; aquí tienes un proceso nuevo,
# sin ningún `initialize`:

# %%
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}
incoming = b"".join(framing.encode_ndjson(message) for message in [
    jsonrpc.request(1, "server/discover", {"_meta": META}),
    jsonrpc.request(2, "tools/call", {"name": "notes_search",
                                      "arguments": {"query": "mcp"}, "_meta": META}),
    jsonrpc.request(3, "tools/list"),
])
done = subprocess.run([sys.executable, "-m", "mcpkit", "serve", "mcpkit.examples.notes:server"],
                      input=incoming, capture_output=True, timeout=60)
for line in done.stdout.splitlines(keepends=True):
    print("S->C", line)

# %% [markdown] lang="en"
# The discovery result lists every revision the server speaks and the same capabilities as
# before; modern results say `resultType` and carry `serverInfo` in `_meta`, since there was no
# handshake to send it in. The last request had neither a handshake nor `_meta`, so the server
# cannot tell which revision it speaks: -32602. Lesson 07 takes it from here.
#
# **Try it.** Add a `resources/read` of `notes://99` to `conversation` in section 2 and run
# the cells again: which kind of error comes back, and with which code? Then change
# `"protocolVersion"` in `INITIALIZE` to `"2024-11-05"`: what disappears from `tools/list`?

# %% [markdown] lang="es"
# El resultado del descubrimiento enumera todas las revisiones que habla el servidor y las
# mismas capacidades que antes; los resultados modernos dicen `resultType` y llevan
# `serverInfo` en `_meta`, ya que no hubo handshake en el que enviarlo. La última solicitud no
# tenía ni handshake ni `_meta`, así que el servidor no puede saber qué revisión habla: -32602.
# La lección 07 sigue desde aquí.
#
# **Pruébalo.** Añade un `resources/read` de `notes://99` a `conversation` en la sección 2 y
# vuelve a ejecutar las celdas: ¿qué tipo de error vuelve, y con qué código? Después cambia
# `"protocolVersion"` en `INITIALIZE` a `"2024-11-05"`: ¿qué desaparece de `tools/list`?


# %% [markdown] lang="en"
# ## 4. A client, watched
#
# The client of lesson 05 starts the notes server as a subprocess. To see its traffic we do
# not change the client: we put a **relay** between the two. `wiretap.command(log, command)`
# wraps the server's command in `python -m mcpkit.wiretap LOG -- ...`, a small process that
# passes every line through untouched and writes it, with the time it passed, to `LOG`.

# %% [markdown] lang="es"
# ## 4. Un cliente, observado
#
# El cliente de la lección 05 lanza el servidor de notas como subproceso. Para ver su tráfico
# no cambiamos el cliente: ponemos un **intermediario (relay)** entre los dos.
# `wiretap.command(log, command)` envuelve el comando del servidor en
# `python -m mcpkit.wiretap LOG -- ...`, un pequeño proceso que deja pasar cada línea sin
# tocarla y la escribe en `LOG`, con el momento en que pasó.

# %%
folder = Path(tempfile.mkdtemp(prefix="mcpkit-04b-"))
log = folder / "notes.wire"
notes_command = [sys.executable, "-m", "mcpkit", "serve", "mcpkit.examples.notes:server"]
client = Client(wiretap.command(log, notes_command), version="legacy").connect()
client.server_info["name"], client.era

# %% [markdown] lang="en"
# ## 5. The tool explorer
#
# Pick a tool, fill in the form, press **Call**. The form comes from the tool's `inputSchema`:
# a text box per string, a number box per number, a checkbox per boolean, a menu per `enum`,
# one item per line for an array, and JSON text for anything nested. Required fields are
# marked `*`, and defaults are filled in. The result is drawn by content type: text as text,
# images as images, structured content as a tree, and a tool error (`isError`) framed in red.

# %% [markdown] lang="es"
# ## 5. El explorador de herramientas
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
# ## 6. The wire inspector
#
# Every message the relay saw, in order: its direction, its kind, its method (a response
# shows the method of the request it answers), its id, its size in bytes and, for a response,
# how long it took. Open a row to see its JSON. The filters narrow the list; **Mermaid** and
# **Bytes** export what is shown as a sequence diagram or as the literal bytes. With
# `live=True` it follows the session: call a tool in the explorer above and watch a new pair
# of rows appear.

# %% [markdown] lang="es"
# ## 6. El inspector de la conexión
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
# ## 7. The host dashboard
#
# A host runs many servers and merges their tools into one namespace. The dashboard shows each
# server's state, era, number of tools and restarts, with the last lines it wrote to standard
# error, and keeps itself up to date. The tool explorer works on a host too: its menu then
# lists the tools of every server.

# %% [markdown] lang="es"
# ## 7. El panel del host
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
# servers) and the client (its server, and the relay); then remove the folder of the relay's log.

# %% [markdown] lang="es"
# Cuando termines, cierra lo que abriste: los hilos que refrescan los widgets, el host (los dos
# servidores) y el cliente (su servidor, y el intermediario); después borra la carpeta del
# registro del intermediario.

# %%
inspector.close()
dashboard.close()
host.close()
client.close()
shutil.rmtree(folder, ignore_errors=True)

# %% [markdown] lang="en"
# ## Summary
#
# - On stdio, standard output carries protocol only: `mcpkit` moves `print()` to standard
#   error once serving starts. End of input ends the session.
# - A real session is lines of JSON on two pipes, and the bytes prove it.
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
# - En stdio, la salida estándar solo lleva protocolo: `mcpkit` desvía `print()` al error
#   estándar en cuanto empieza a servir. El fin de la entrada termina la sesión.
# - Una sesión real son líneas de JSON en dos tuberías, y los bytes lo demuestran.
# - Un intermediario entre cliente y servidor ve cada byte sin cambiar a ninguno de los dos:
#   `wiretap.command(log, command)` graba una sesión y `wiretap.Trace` la vuelve a leer.
# - El explorador de herramientas es un formulario hecho a partir del `inputSchema`, una
#   llamada y el resultado dibujado según el tipo de contenido; el inspector de la conexión es
#   la traza como línea de tiempo, como diagrama o como bytes; el panel del host es
#   `host.status()`, en vivo.
#
# Después, la **lección 05**: el lado del cliente de la tubería.
