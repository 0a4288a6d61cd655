# %% [markdown] lang="en"
# # Lesson 01 · Framing: bytes on a pipe
#
# > **Español:** [`notebooks/es/01_framing.ipynb`](../es/01_framing.ipynb)
#
# A client and a server connected by a pipe exchange **bytes**, not messages. Before anything
# else, each side needs a rule that says where one message ends and the next begins: that rule
# is the **framing**. In this lesson you will:
#
# 1. watch a real pipe merge and split what was written into it;
# 2. frame messages as newline-delimited JSON (NDJSON), MCP's framing on stdio;
# 3. decode a stream chunk by chunk, with messages arriving in pieces or several at a time;
# 4. keep going when a message is broken, and stay bounded when one is huge;
# 5. meet the other framing you will find in the wild, `Content-Length` headers.
#
# The code is `mcpkit/framing.py`: about 400 lines, no I/O at all. Lab 01 has you write it.

# %% [markdown] lang="es"
# # Lección 01 · Enmarcado: bytes en una tubería
#
# > **English:** [`notebooks/en/01_framing.ipynb`](../en/01_framing.ipynb)
#
# Un cliente y un servidor conectados por una tubería intercambian **bytes**, no mensajes.
# Antes que nada, cada lado necesita una regla que diga dónde termina un mensaje y empieza el
# siguiente: esa regla es el **enmarcado (framing)**. En esta lección vas a:
#
# 1. ver cómo una tubería real junta y parte lo que se escribió en ella;
# 2. enmarcar mensajes como JSON delimitado por saltos de línea (NDJSON), el enmarcado de MCP
#    en stdio;
# 3. decodificar un flujo trozo a trozo, con mensajes que llegan en pedazos o de varios en
#    varios;
# 4. seguir adelante cuando un mensaje está roto, y mantener la memoria acotada cuando uno es
#    enorme;
# 5. conocer el otro enmarcado que encontrarás por ahí, las cabeceras `Content-Length`.
#
# El código está en `mcpkit/framing.py`: unas 400 líneas, sin ninguna E/S. En el laboratorio 01
# lo escribes tú.

# %% tags=["setup"]
# [en] Setup: run this cell first.
# [es] Preparación: ejecuta esta celda primero.
import os

from mcpkit import framing
from mcpkit.display import hexdump

# %% [markdown] lang="en"
# ## 1. A pipe has no messages
#
# `os.pipe()` gives a real operating-system pipe: bytes written to one end come out of the
# other. Let's write two JSON messages into it, one `write` each, and then read.

# %% [markdown] lang="es"
# ## 1. Una tubería no tiene mensajes
#
# `os.pipe()` da una tubería real del sistema operativo: los bytes que se escriben en un
# extremo salen por el otro. Escribamos dos mensajes JSON, un `write` cada uno, y luego leamos.

# %%
read_end, write_end = os.pipe()
os.write(write_end, b'{"jsonrpc":"2.0","id":1,"method":"ping"}')
os.write(write_end, b'{"jsonrpc":"2.0","id":2,"method":"ping"}')
os.read(read_end, 1000)

# %% [markdown] lang="en"
# One read returned both messages glued together. The pipe kept the bytes and forgot the
# writes. It can also cut a message in two: a reader gets whatever is available, up to the
# size it asked for.

# %% [markdown] lang="es"
# Una sola lectura devolvió los dos mensajes pegados. La tubería guardó los bytes y olvidó las
# escrituras. También puede cortar un mensaje en dos: quien lee recibe lo que haya disponible,
# hasta el tamaño que pidió.

# %%
os.write(write_end, b'{"jsonrpc":"2.0","id":3,"method":"ping"}')
first = os.read(read_end, 16)
rest = os.read(read_end, 1000)
os.close(read_end)
os.close(write_end)
first, rest

# %% [markdown] lang="en"
# In a real program the cut falls wherever timing and buffer sizes put it, and it changes from
# run to run. So a reader must handle both cases, always:
#
# ```mermaid
# sequenceDiagram
#     participant W as Writer
#     participant P as Pipe
#     participant R as Reader
#     W->>P: message 1
#     W->>P: message 2
#     P->>R: read(): message 1 + half of message 2
#     Note over R: one message done, keep the half
#     P->>R: read(): rest of message 2
#     Note over R: now message 2 is done
# ```
#
# The framing marks the ends, and the reader keeps unfinished bytes until their end arrives.

# %% [markdown] lang="es"
# En un programa real, el corte cae donde lo ponen los tiempos y los tamaños de los búferes, y
# cambia de una ejecución a otra. Así que quien lee debe manejar ambos casos, siempre:
#
# ```mermaid
# sequenceDiagram
#     participant W as Escritor
#     participant P as Tubería
#     participant R as Lector
#     W->>P: mensaje 1
#     W->>P: mensaje 2
#     P->>R: read(): mensaje 1 + mitad del mensaje 2
#     Note over R: un mensaje listo, guarda la mitad
#     P->>R: read(): resto del mensaje 2
#     Note over R: ahora el mensaje 2 está listo
# ```
#
# El enmarcado marca los finales, y quien lee guarda los bytes inacabados hasta que llega su
# final.

# %% [markdown] lang="en"
# ## 2. Newline-delimited JSON
#
# MCP's stdio transport uses the simplest framing there is: each message is one line of UTF-8
# JSON, ended by `\n`, and a message must not contain a raw newline. That is never a problem,
# because JSON writes a newline *inside a string* as the two characters `\` and `n`:

# %% [markdown] lang="es"
# ## 2. JSON delimitado por saltos de línea
#
# El transporte stdio de MCP usa el enmarcado más simple que existe: cada mensaje es una línea
# de JSON en UTF-8 terminada en `\n`, y un mensaje no puede contener un salto de línea literal.
# Eso nunca es un problema, porque JSON escribe un salto de línea *dentro de una cadena* como los
# dos caracteres `\` y `n`:

# %%
message = {
    "jsonrpc": "2.0",
    "method": "notifications/message",
    "params": {"level": "info", "data": "line one\nline two"},
}
line = framing.encode_ndjson(message)
line

# %%
line.count(b"\n"), line.endswith(b"\n")

# %% [markdown] lang="en"
# In the hex dump, the newline inside the string is `5c 6e` (a backslash and an `n`); the one
# real newline, `0a`, is the last byte.

# %% [markdown] lang="es"
# En el volcado hexadecimal, el salto de línea de dentro de la cadena es `5c 6e` (una barra
# invertida y una `n`); el único salto de línea real, `0a`, es el último byte.

# %%
hexdump(line[-28:])

# %% [markdown] lang="en"
# Text that is not ASCII travels as UTF-8, where one character may take several bytes. Keep
# the difference between characters and bytes in mind: it comes back in every section below.

# %% [markdown] lang="es"
# El texto que no es ASCII viaja como UTF-8, donde un carácter puede ocupar varios bytes. Ten
# presente la diferencia entre caracteres y bytes: vuelve a aparecer en todas las secciones de
# abajo.

# %%
coffee = framing.encode_ndjson({"text": "café ☕"})
coffee, len("café ☕"), len("café ☕".encode())

# %% [markdown] lang="en"
# ## 3. Decoding, one chunk at a time
#
# A decoder is fed each chunk as it arrives and returns the messages that chunk completed. It
# keeps the start of an unfinished line for next time (`buffered` says how many bytes).

# %% [markdown] lang="es"
# ## 3. Decodificar, trozo a trozo
#
# A un decodificador se le pasa cada trozo según llega y devuelve los mensajes que ese trozo
# completó. Guarda el comienzo de una línea inacabada para la próxima vez (`buffered` dice
# cuántos bytes).

# %%
decoder = framing.NdjsonDecoder()
decoder.feed(b'{"jsonrpc":"2.0","id":1,')

# %%
decoder.buffered

# %%
decoder.feed(b'"method":"ping"}\n{"jsonrpc":"2.0","id":2,"method":"ping"}\n')

# %% [markdown] lang="en"
# The worst case is a stream that arrives one byte at a time. The decoder does not care: it
# hands out each message on the byte that completes it, here its newline.

# %% [markdown] lang="es"
# El peor caso es un flujo que llega byte a byte. Al decodificador le da igual: entrega cada
# mensaje con el byte que lo completa, aquí su salto de línea.

# %%
stream = framing.encode_ndjson({"id": 1}) + framing.encode_ndjson({"id": 2})
decoder = framing.NdjsonDecoder()
for position in range(len(stream)):
    items = decoder.feed(stream[position : position + 1])
    if items:
        print(position, stream[position : position + 1], items)

# %% [markdown] lang="en"
# ### Why the buffer holds bytes, not text
#
# A chunk boundary can fall inside a character. Here the cut splits the two bytes of `é`:

# %% [markdown] lang="es"
# ### Por qué el búfer guarda bytes y no texto
#
# El límite de un trozo puede caer dentro de un carácter. Aquí el corte separa los dos bytes de
# la `é`:

# %%
data = framing.encode_ndjson({"text": "é"})
cut = data.index(b"\xc3") + 1
first, second = data[:cut], data[cut:]
first, second

# %% [markdown] lang="en"
# Decoding each chunk to text as it arrives fails on the first half, although nothing is wrong
# with the stream:

# %% [markdown] lang="es"
# Decodificar cada trozo a texto según llega falla con la primera mitad, aunque el flujo no
# tiene nada de malo:

# %%
try:
    first.decode("utf-8")
except UnicodeDecodeError as exc:
    print(type(exc).__name__, exc.start, exc.end)

# %% [markdown] lang="en"
# Buffering bytes and decoding only complete lines avoids the problem, because a newline byte
# (`0a`) never occurs inside a multi-byte UTF-8 character:

# %% [markdown] lang="es"
# Acumular bytes y decodificar solo líneas completas evita el problema, porque un byte de salto
# de línea (`0a`) nunca aparece dentro de un carácter UTF-8 de varios bytes:

# %%
decoder = framing.NdjsonDecoder()
decoder.feed(first), decoder.feed(second)

# %% [markdown] lang="en"
# ## 4. Broken messages are items, not exceptions
#
# A peer can send a line that is not JSON, or not even UTF-8. If the decoder raised, the
# messages behind the bad one, possibly in the same chunk, would be lost. Instead it returns
# an error *instance* in their place and carries on. The receiver answers it with a parse error
# (lesson 02) and keeps serving.

# %% [markdown] lang="es"
# ## 4. Los mensajes rotos son elementos, no excepciones
#
# Un interlocutor puede enviar una línea que no es JSON, o que ni siquiera es UTF-8. Si el
# decodificador lanzara una excepción, los mensajes que vienen detrás del malo, quizá en el
# mismo trozo, se perderían. En su lugar devuelve una *instancia* de error en su sitio y sigue.
# Quien recibe responde con un error de análisis (lección 02) y continúa atendiendo.

# %%
decoder = framing.NdjsonDecoder()
items = decoder.feed(b'{"id":1}\n{"id": 2,,}\n\xff\xfe\n{"id":3}\n')
[type(item).__name__ if isinstance(item, framing.FramingError) else item for item in items]

# %% [markdown] lang="en"
# Each error keeps (a preview of) the bytes that caused it, for the log:

# %% [markdown] lang="es"
# Cada error conserva (un extracto de) los bytes que lo causaron, para el registro:

# %%
items[1].raw, items[2].raw

# %% [markdown] lang="en"
# ### A limit on size
#
# A decoder that waits for a newline can be made to wait forever while its buffer grows. So
# every decoder has a `max_message_size`. A line that outgrows it is reported once, as soon as
# it does; the decoder then drops the bytes it kept and skips the rest of that line, so memory
# stays bounded whatever the peer sends. The next message decodes normally.

# %% [markdown] lang="es"
# ### Un límite de tamaño
#
# A un decodificador que espera un salto de línea se le puede hacer esperar para siempre
# mientras su búfer crece. Por eso cada decodificador tiene un `max_message_size`. Una línea que
# lo supera se notifica como error una sola vez, en cuanto lo supera; después el
# decodificador descarta los bytes que guardaba y se salta el resto de esa línea, así que la
# memoria sigue acotada envíe lo que envíe el interlocutor. El siguiente mensaje se decodifica
# con normalidad.

# %%
decoder = framing.NdjsonDecoder(max_message_size=32)
chunks = [b'{"text":"' + b"x" * 20, b"x" * 20, b"x" * 20, b'"}\n{"id":4}\n']
for chunk in chunks:
    items = decoder.feed(chunk)
    print([type(i).__name__ if isinstance(i, framing.FramingError) else i for i in items],
          decoder.buffered)

# %% [markdown] lang="en"
# ## 5. On stdio, standard output belongs to the protocol
#
# When a host starts a server as a subprocess, the server's standard output *is* the channel
# to the client. A single stray `print("loading notes...")` in the server lands in the middle
# of the message stream:

# %% [markdown] lang="es"
# ## 5. En stdio, la salida estándar pertenece al protocolo
#
# Cuando un host lanza un servidor como subproceso, la salida estándar del servidor *es* el
# canal hacia el cliente. Un solo `print("loading notes...")` suelto en el servidor cae en
# mitad del flujo de mensajes:

# %%
server_stdout = (
    framing.encode_ndjson({"jsonrpc": "2.0", "id": 1, "result": {}})
    + b"loading notes...\n"
    + framing.encode_ndjson({"jsonrpc": "2.0", "id": 2, "result": {}})
)
items = framing.NdjsonDecoder().feed(server_stdout)
[type(i).__name__ if isinstance(i, framing.FramingError) else i for i in items]

# %% [markdown] lang="en"
# The client survives (it gets an `InvalidJson` item and moves on), but a print that happens
# to contain a `{` or that lacks its newline can corrupt a real message. The rule for servers:
# **logs go to standard error**, never to standard output. The host usually shows or saves
# what a server writes to standard error.

# %% [markdown] lang="es"
# El cliente sobrevive (recibe un elemento `InvalidJson` y sigue), pero un `print` que por
# casualidad contenga una `{` o al que le falte su salto de línea puede corromper un mensaje
# real. La regla para los servidores: **los registros van al error estándar**, nunca a la salida
# estándar. El host suele mostrar o guardar lo que un servidor escribe en el error estándar.

# %% [markdown] lang="en"
# ## 6. The other framing: `Content-Length` headers
#
# The Language Server Protocol frames each message with a header section, like HTTP: a
# `Content-Length` header giving the body's size **in bytes**, a blank line (`\r\n\r\n`), then
# exactly that many bytes of JSON. You will meet it in older MCP material and in tools that
# grew out of language servers; `mcpkit` speaks both.

# %% [markdown] lang="es"
# ## 6. El otro enmarcado: cabeceras `Content-Length`
#
# El Language Server Protocol enmarca cada mensaje con una sección de cabeceras, como HTTP: una
# cabecera `Content-Length` con el tamaño del cuerpo **en bytes**, una línea en blanco
# (`\r\n\r\n`) y después exactamente esos bytes de JSON. Lo encontrarás en material antiguo de
# MCP y en herramientas nacidas de los servidores de lenguaje; `mcpkit` habla los dos.

# %%
framed = framing.encode_content_length({"jsonrpc": "2.0", "id": 1, "result": {"text": "café"}})
framed

# %%
hexdump(framed)

# %% [markdown] lang="en"
# The header says 50: the body has 50 bytes but only 49 characters, because `é` takes two. A
# sender that counts characters declares one byte too few, and the receiver cuts the message
# short: the classic bug of this framing.

# %% [markdown] lang="es"
# La cabecera dice 50: el cuerpo tiene 50 bytes pero solo 49 caracteres, porque la `é` ocupa
# dos. Un emisor que cuenta caracteres declara un byte de menos, y el receptor corta el mensaje
# antes de tiempo: el error clásico de este enmarcado.

# %%
header, body = framed.split(b"\r\n\r\n", 1)
header, len(body), len(body.decode("utf-8"))

# %% [markdown] lang="en"
# The decoder has the same interface. A split can fall in the header or in the body, and other
# headers are ignored:

# %% [markdown] lang="es"
# El decodificador tiene la misma interfaz. Un corte puede caer en la cabecera o en el cuerpo,
# y las demás cabeceras se ignoran:

# %%
decoder = framing.ContentLengthDecoder()
for chunk in (framed[:10], framed[10:30], framed[30:]):
    print(chunk, "->", decoder.feed(chunk))

# %%
typed = b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n" + framed
framing.ContentLengthDecoder().feed(typed)

# %% [markdown] lang="en"
# ### Two framings side by side
#
# | | NDJSON | `Content-Length` |
# | --- | --- | --- |
# | used by | MCP over stdio | LSP, older MCP material |
# | end of a message | the next `\n` | after exactly N bytes |
# | after garbage | resynchronises at the next `\n` | scans for the next header |
# | a message must not contain | a raw newline (JSON never writes one) | nothing |
# | easy to inspect by eye | yes, one message per line | mostly |
#
# Both share the hard part: buffering bytes across reads, several messages per read, broken
# messages as items, and a size limit.

# %% [markdown] lang="es"
# ### Dos enmarcados, uno junto al otro
#
# | | NDJSON | `Content-Length` |
# | --- | --- | --- |
# | lo usa | MCP sobre stdio | LSP, material antiguo de MCP |
# | fin de un mensaje | el siguiente `\n` | tras exactamente N bytes |
# | tras datos basura | se resincroniza en el siguiente `\n` | busca la siguiente cabecera |
# | un mensaje no puede contener | un salto de línea literal (JSON nunca lo escribe) | nada |
# | fácil de leer a simple vista | sí, un mensaje por línea | casi siempre |
#
# Los dos comparten la parte difícil: acumular bytes entre lecturas, varios mensajes por
# lectura, mensajes rotos como elementos y un límite de tamaño.

# %% [markdown] lang="en"
# ## Summary
#
# - A pipe carries bytes; the framing says where messages end.
# - MCP on stdio uses NDJSON: one line of UTF-8 JSON per message.
# - Decoders are fed chunks and return the messages they completed; they buffer **bytes**.
# - Broken input becomes error items so the stream survives; a size limit keeps memory bounded.
# - A stdio server writes only protocol messages to standard output.
# - `Content-Length` counts bytes, not characters.
#
# **Lab 01** (`labs/en/lab01_framing.ipynb`): write both decoders yourself.
# Next, **lesson 02**: what the messages inside the frames mean.

# %% [markdown] lang="es"
# ## Resumen
#
# - Una tubería transporta bytes; el enmarcado dice dónde terminan los mensajes.
# - MCP en stdio usa NDJSON: una línea de JSON en UTF-8 por mensaje.
# - A los decodificadores se les pasan trozos y devuelven los mensajes que completaron;
#   acumulan **bytes**.
# - La entrada rota se convierte en elementos de error para que el flujo sobreviva; un límite
#   de tamaño mantiene la memoria acotada.
# - Un servidor stdio escribe en la salida estándar solo mensajes del protocolo.
# - `Content-Length` cuenta bytes, no caracteres.
#
# **Laboratorio 01** (`labs/es/lab01_framing.ipynb`): escribe tú los dos decodificadores.
# Siguiente, **lección 02**: qué significan los mensajes que van dentro de los marcos.
