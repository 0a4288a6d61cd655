# %% [markdown] lang="en"
# # Lab 01 · Framing
#
# > **Español:** [`labs/es/lab01_framing.ipynb`](../es/lab01_framing.ipynb)
#
# In lesson 01 you used `mcpkit.framing` to turn a byte stream into messages. Now you write
# the same machinery yourself:
#
# | part | you write | points |
# | --- | --- | --- |
# | 1 | `encode_ndjson`, `encode_content_length` | 2 |
# | 2 | `parse_message`: one body to one value, or an error | 2 |
# | 3 | `NdjsonDecoder`: newline-delimited JSON, incrementally | 3 |
# | 4 | `ContentLengthDecoder`: LSP-style headers, incrementally | 3 |
#
# **How to work.** Replace each `# YOUR CODE HERE` / `raise NotImplementedError()` with your
# code, run the cell, then run the **graded cell** below it. A graded cell is read-only. Its first
# line, a comment, is the line it prints when every check passes: that is the expected
# output, not your result. Run it, and it either prints that line or lists each case with what
# it expected and what your code returned. When all four pass, save the notebook and get your
# score per part from a terminal at the repository's root:
#
# ```
# ./course.sh grade lab01
# ```
#
# **What your instructor grades.** Only the code in the exercise cells (those with
# `# YOUR CODE HERE`), run on its own in a fresh Python process, on more generated cases than
# the graded cells here try and with a seed you do not see. Keep every definition an exercise
# needs in its exercise cells, and leave `grading` alone: code that touches the grader scores
# zero.
# Exercise code may import mcpkit, what the setup cell imports, and the plainer standard
# modules (`json`, `re`, `itertools`, `collections`, `time`, `threading`, `logging` and a few
# more); a graded cell names any other import it finds, with the whole list.
#
# Your code must not do any I/O: decoders take bytes in and hand items out, exactly like
# `mcpkit.framing`. You may reuse the error classes of `mcpkit.framing` (imported below), but
# not its encoders or decoders: that is what you are writing.

# %% [markdown] lang="es"
# # Laboratorio 01 · Enmarcado
#
# > **English:** [`labs/en/lab01_framing.ipynb`](../en/lab01_framing.ipynb)
#
# En la lección 01 usaste `mcpkit.framing` para convertir un flujo de bytes en mensajes. Ahora
# escribes tú esa misma maquinaria:
#
# | parte | escribes | puntos |
# | --- | --- | --- |
# | 1 | `encode_ndjson`, `encode_content_length` | 2 |
# | 2 | `parse_message`: un cuerpo a un valor, o a un error | 2 |
# | 3 | `NdjsonDecoder`: JSON delimitado por saltos de línea, incremental | 3 |
# | 4 | `ContentLengthDecoder`: cabeceras al estilo LSP, incremental | 3 |
#
# **Cómo trabajar.** Sustituye cada `# YOUR CODE HERE` / `raise NotImplementedError()` por tu
# código, ejecuta la celda y luego ejecuta la **celda calificada** que hay debajo. Una celda
# calificada es de solo lectura. Su primera línea, un comentario, es la que imprime cuando
# pasan todas las comprobaciones: es la salida esperada, no tu resultado. Ejecútala: o bien
# imprime esa línea o enumera cada caso con lo que esperaba y lo que devolvió tu código. Cuando
# pasen las cuatro, guarda el cuaderno y obtén tu nota por partes desde una terminal en la raíz
# del repositorio:
#
# ```
# ./course.sh grade lab01
# ```
#
# **Qué califica tu instructor/a.** Solo el código de las celdas de ejercicio (las que llevan
# `# YOUR CODE HERE`), ejecutado por separado en un proceso de Python nuevo, con más casos
# generados de los que prueban aquí las celdas calificadas y con una semilla que no ves. Deja
# en las celdas de ejercicio todas las definiciones que necesitan, y no toques `grading`: el
# código que manipula el calificador obtiene cero.
# El código de ejercicio puede importar mcpkit, lo que ya importa la celda de preparación y los
# módulos estándar más sencillos (`json`, `re`, `itertools`, `collections`, `time`,
# `threading`, `logging` y algunos más); una celda calificada nombra cualquier otra
# importación que encuentre, con la lista completa.
#
# Tu código no debe hacer ninguna E/S: los decodificadores reciben bytes y entregan elementos,
# exactamente como `mcpkit.framing`. Puedes reutilizar las clases de error de `mcpkit.framing`
# (importadas abajo), pero no sus codificadores ni decodificadores: eso es lo que escribes tú.

# %% tags=["setup"]
# [en] Setup: run this cell first.
# [es] Preparación: ejecuta esta celda primero.
import json

from mcpkit import grading
from mcpkit.framing import (
    FramingError,
    InvalidHeader,
    InvalidJson,
    InvalidUtf8,
    MessageTooLarge,
)

grading.set_language("en")

# %% [markdown] lang="en"
# ## Part 1 · Encoders
#
# Write two functions that take a message (any JSON-serializable value) and return `bytes`:
#
# - `encode_ndjson(message)`: the message as **one line** of UTF-8 JSON, then `b"\n"`. The
#   newline is the frame's end, so the JSON itself must not contain a raw newline (a newline
#   *inside a string* is fine: JSON writes it as the two characters `\n`).
# - `encode_content_length(message)`: the header `Content-Length: N`, a blank line, then the
#   body. On the wire: `b"Content-Length: N\r\n\r\n"` followed by exactly N bytes of UTF-8
#   JSON. N counts **bytes**, not characters.
#
# `json.dumps(message, separators=(",", ":"), ensure_ascii=False)` gives compact JSON that
# keeps accents as they are; `.encode("utf-8")` turns it into bytes.

# %% [markdown] lang="es"
# ## Parte 1 · Codificadores
#
# Escribe dos funciones que reciben un mensaje (cualquier valor serializable como JSON) y
# devuelven `bytes`:
#
# - `encode_ndjson(message)`: el mensaje como **una línea** de JSON en UTF-8, seguida de
#   `b"\n"`. El salto de línea marca el final del mensaje, así que el JSON no puede contener
#   un salto de línea literal (uno *dentro de una cadena* no molesta: JSON lo escribe como los
#   dos caracteres `\n`).
# - `encode_content_length(message)`: la cabecera `Content-Length: N`, una línea en blanco y
#   luego el cuerpo. Tal como viaja por la tubería: `b"Content-Length: N\r\n\r\n"` seguido
#   de exactamente N bytes de JSON en UTF-8. N cuenta **bytes**, no caracteres.
#
# `json.dumps(message, separators=(",", ":"), ensure_ascii=False)` da un JSON compacto que
# conserva las tildes tal cual; `.encode("utf-8")` lo convierte en bytes.

# %%
def encode_ndjson(message):
    ### BEGIN SOLUTION
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode("utf-8") + b"\n"
    ### END SOLUTION


def encode_content_length(message):
    ### BEGIN SOLUTION
    body = json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n" % len(body) + body
    ### END SOLUTION


# %% [markdown] lang="en"
# Try your encoders before grading them. The message has an accent and a newline in a string:
# how many characters does the body have, and how many bytes?

# %% [markdown] lang="es"
# Prueba tus codificadores antes de calificarlos. El mensaje tiene una tilde y un salto de línea
# en una cadena: ¿cuántos caracteres tiene el cuerpo y cuántos bytes?

# %%
sample = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "é\nè"}}
print(encode_ndjson(sample))
print(encode_content_length(sample))

# %% tags=["graded"] points=2
grading.check_encoders(encode_ndjson, encode_content_length)

# %% [markdown] lang="en"
# ## Part 2 · One body, one value
#
# Both decoders end up with the complete bytes of one message. Write `parse_message(body)`,
# which turns them into a value. It never raises for bad input; it **returns** an error
# instance instead, so that a decoder can report one bad message and carry on with the next:
#
# | the bytes | return |
# | --- | --- |
# | valid UTF-8 and valid JSON | the decoded value (any JSON value, not only objects) |
# | not valid UTF-8 | `InvalidUtf8("...")` |
# | valid UTF-8 but not JSON | `InvalidJson("...")` |
#
# Decode the UTF-8 yourself before parsing: `json.loads` accepts bytes too, but then a UTF-8
# problem comes out as a JSON one. `NaN`, `Infinity` and `-Infinity` are not JSON (RFC 8259),
# though `json.loads` accepts them: they give `InvalidJson` too (`json.loads(text,
# parse_constant=...)` calls a function of yours on each of them), but the same words inside
# a string are just text. A byte order mark (`b"\xef\xbb\xbf"`) before the JSON is not JSON
# either. And watch for hostile input: a body of 100,000 nested `[` makes `json.loads` raise
# `RecursionError`, which is not a `ValueError`.

# %% [markdown] lang="es"
# ## Parte 2 · Un cuerpo, un valor
#
# Los dos decodificadores acaban teniendo los bytes completos de un mensaje. Escribe
# `parse_message(body)`, que los convierte en un valor. Nunca lanza excepciones por una entrada
# errónea; **devuelve** una instancia de error, para que un decodificador pueda informar de un
# mensaje malo y seguir con el siguiente:
#
# | los bytes | devuelve |
# | --- | --- |
# | UTF-8 válido y JSON válido | el valor decodificado (cualquier valor JSON, no solo objetos) |
# | UTF-8 no válido | `InvalidUtf8("...")` |
# | UTF-8 válido pero no JSON | `InvalidJson("...")` |
#
# Decodifica tú el UTF-8 antes de analizar: `json.loads` también acepta bytes, pero entonces un
# problema de UTF-8 sale como uno de JSON. `NaN`, `Infinity` y `-Infinity` no son JSON (RFC
# 8259), aunque `json.loads` los acepta: también dan `InvalidJson` (`json.loads(text,
# parse_constant=...)` llama a una función tuya con cada uno), pero esas mismas palabras dentro
# de una cadena son texto sin más. Una marca de orden de bytes (`b"\xef\xbb\xbf"`) antes del
# JSON tampoco es JSON. Y cuidado con la entrada hostil: un cuerpo con 100.000 `[` anidados
# hace que `json.loads` lance `RecursionError`, que no es un `ValueError`.

# %%
def parse_message(body):
    ### BEGIN SOLUTION
    try:
        text = bytes(body).decode("utf-8")
    except UnicodeDecodeError as exc:
        return InvalidUtf8(f"not UTF-8: {exc.reason}", body)
    def refuse(name):  # NaN, Infinity, -Infinity
        raise ValueError(f"{name} is not JSON")

    try:
        return json.loads(text, parse_constant=refuse)
    except (ValueError, RecursionError) as exc:
        return InvalidJson(f"not JSON: {exc}", body)
    ### END SOLUTION


# %%
parse_message(b'{"id": 1}'), parse_message(b"{oops}"), parse_message(b"caf\xe9")

# %% tags=["graded"] points=2
grading.check_parse_message(parse_message)

# %% [markdown] lang="en"
# ## Part 3 · `NdjsonDecoder`
#
# A pipe delivers bytes in chunks of any size: half a message, three messages and a bit, one
# byte. `NdjsonDecoder.feed(data)` receives the next chunk and returns a **list** with one item
# per line that chunk completed, in order. An item is the decoded value or an error instance.
#
# The rules, each one checked:
#
# 1. Keep the bytes of an unfinished line between calls; return nothing for it until its
#    `b"\n"` arrives. Buffer **bytes** and decode complete lines only: a chunk may end in the
#    middle of a multi-byte UTF-8 character.
# 2. Skip lines that are empty or only whitespace. A `\r` before the `\n` is whitespace, so
#    `\r\n` line ends work on their own.
# 3. Each line goes through `parse_message`: bad lines give error items, and decoding continues.
# 4. `max_message_size` is the most bytes a line may have, not counting its `\n`. A longer
#    complete line gives `MessageTooLarge(size, limit)`. An unfinished line that grows past the
#    limit is reported **once**, as soon as it does; then drop it and ignore everything up to
#    the next `\n`, so memory stays bounded however long the line gets.

# %% [markdown] lang="es"
# ## Parte 3 · `NdjsonDecoder`
#
# Una tubería entrega bytes en trozos de cualquier tamaño: medio mensaje, tres mensajes y un
# poco, un byte. `NdjsonDecoder.feed(data)` recibe el siguiente trozo y devuelve una **lista**
# con un elemento por cada línea que ese trozo completó, en orden. Un elemento es el valor
# decodificado o una instancia de error.
#
# Las reglas, cada una comprobada:
#
# 1. Guarda los bytes de una línea inacabada entre llamadas; no devuelvas nada por ella hasta
#    que llegue su `b"\n"`. Acumula **bytes** y decodifica solo líneas completas: un trozo puede
#    terminar en mitad de un carácter UTF-8 de varios bytes.
# 2. Salta las líneas vacías o con solo espacios. Un `\r` antes del `\n` es un espacio, así que
#    los finales de línea `\r\n` funcionan sin más.
# 3. Cada línea pasa por `parse_message`: las líneas malas dan elementos de error y la
#    decodificación continúa.
# 4. `max_message_size` es el máximo de bytes de una línea, sin contar su `\n`. Una línea
#    completa más larga da `MessageTooLarge(size, limit)`. Una línea inacabada que supera el
#    límite se notifica como error **una sola vez**, en cuanto lo supera; después descártala e
#    ignora todo hasta el siguiente `\n`, para que la memoria siga acotada por larga que sea
#    la línea.

# %%
class NdjsonDecoder:
    def __init__(self, max_message_size=1024 * 1024):
        self.max_message_size = max_message_size
        ### BEGIN SOLUTION
        self.buffer = bytearray()  # the start of a line whose b"\n" has not arrived
        self.skipping = False  # inside a line already reported as too large
        ### END SOLUTION

    def feed(self, data):
        ### BEGIN SOLUTION
        items = []
        self.buffer += data
        while (end := self.buffer.find(b"\n")) >= 0:
            line = bytes(self.buffer[:end])
            del self.buffer[: end + 1]
            if self.skipping:
                self.skipping = False  # that was the tail of the oversized line
            elif len(line) > self.max_message_size:
                items.append(MessageTooLarge(len(line), self.max_message_size, line))
            elif line.strip():
                items.append(parse_message(line))
        if self.skipping:
            self.buffer.clear()
        elif len(self.buffer) > self.max_message_size:
            items.append(MessageTooLarge(len(self.buffer), self.max_message_size, self.buffer))
            self.buffer.clear()
            self.skipping = True
        return items
        ### END SOLUTION


# %% [markdown] lang="en"
# Try it: a message split in two chunks, then two messages in one chunk.

# %% [markdown] lang="es"
# Pruébalo: un mensaje partido en dos trozos y luego dos mensajes en un solo trozo.

# %%
decoder = NdjsonDecoder()
print(decoder.feed(b'{"id": 1, "met'))
print(decoder.feed(b'hod": "ping"}\n{"id": 2}\n{"id": 3}\n'))

# %% tags=["graded"] points=3
grading.check_ndjson_decoder(NdjsonDecoder)

# %% [markdown] lang="en"
# ## Part 4 · `ContentLengthDecoder`
#
# Same interface, other framing: each message is a header section, then a body.
#
# ```
# Content-Length: 36\r\n
# Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n
# \r\n
# {"jsonrpc":"2.0","id":1,"result":{}}
# ```
#
# 1. The header section ends at the first `b"\r\n\r\n"`. Each header line is `Name: value`;
#    names are case-insensitive and every header except `Content-Length` is ignored.
# 2. Then take **exactly** `Content-Length` bytes as the body (it may contain `\r\n\r\n` and
#    anything else), and pass them to `parse_message`.
# 3. A header section with no `Content-Length`, or one whose value is not a non-negative
#    integer written in ASCII digits (`0` to `9` only: no sign, no other script's digits;
#    spaces around it are fine), gives `InvalidHeader("...")`; drop that header section and
#    go on with what follows.
# 4. A declared length over `max_message_size` gives `MessageTooLarge(length, limit)` at once,
#    before the body arrives. Then skip exactly that many bytes, without keeping them.
#
# As before, any of this may arrive split across chunks at any byte.

# %% [markdown] lang="es"
# ## Parte 4 · `ContentLengthDecoder`
#
# Misma interfaz, otro enmarcado: cada mensaje es una sección de cabeceras y luego un cuerpo.
#
# ```
# Content-Length: 36\r\n
# Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n
# \r\n
# {"jsonrpc":"2.0","id":1,"result":{}}
# ```
#
# 1. La sección de cabeceras termina en el primer `b"\r\n\r\n"`. Cada línea de cabecera es
#    `Nombre: valor`; los nombres no distinguen mayúsculas de minúsculas y se ignoran todas las
#    cabeceras salvo `Content-Length`.
# 2. Después toma **exactamente** `Content-Length` bytes como cuerpo (puede contener
#    `\r\n\r\n` y cualquier otra cosa) y pásalos a `parse_message`.
# 3. Una sección de cabeceras sin `Content-Length`, o con un valor que no es un entero no
#    negativo escrito con dígitos ASCII (solo del `0` al `9`: sin signo ni dígitos de otras
#    escrituras; los espacios alrededor no molestan), da `InvalidHeader("...")`; descarta esa
#    sección de cabeceras y sigue con lo que venga después.
# 4. Una longitud declarada mayor que `max_message_size` da `MessageTooLarge(length, limit)` de
#    inmediato, antes de que llegue el cuerpo. Luego salta exactamente esos bytes, sin
#    guardarlos.
#
# Como antes, cualquiera de estas cosas puede llegar partida entre trozos en cualquier byte.

# %%
class ContentLengthDecoder:
    def __init__(self, max_message_size=1024 * 1024):
        self.max_message_size = max_message_size
        ### BEGIN SOLUTION
        self.buffer = bytearray()
        self.length = None  # the body length, once its header section has been read
        self.to_skip = 0  # bytes of an oversized body still to drop
        ### END SOLUTION

    def feed(self, data):
        ### BEGIN SOLUTION
        def declared_length(header):
            value = None
            for line in header.split(b"\r\n"):
                name, colon, rest = line.partition(b":")
                if colon and name.strip().lower() == b"content-length":
                    value = rest.strip()
            if value is None:
                return InvalidHeader("no Content-Length header", header)
            if not value.isdigit():
                return InvalidHeader(f"bad Content-Length {value!r}", header)
            return int(value)

        items = []
        self.buffer += data
        while True:
            if self.to_skip:
                dropped = min(self.to_skip, len(self.buffer))
                del self.buffer[:dropped]
                self.to_skip -= dropped
                if self.to_skip:
                    break
            if self.length is None:
                end = self.buffer.find(b"\r\n\r\n")
                if end < 0:
                    break
                header = bytes(self.buffer[:end])
                del self.buffer[: end + 4]
                length = declared_length(header)
                if isinstance(length, FramingError):
                    items.append(length)
                elif length > self.max_message_size:
                    items.append(MessageTooLarge(length, self.max_message_size, header))
                    self.to_skip = length
                else:
                    self.length = length
                continue
            if len(self.buffer) < self.length:
                break
            body = bytes(self.buffer[: self.length])
            del self.buffer[: self.length]
            self.length = None
            items.append(parse_message(body))
        return items
        ### END SOLUTION


# %%
# [en] 'é' is 2 bytes in UTF-8, so this 9-character body is 10 bytes long.
# [es] 'é' ocupa 2 bytes en UTF-8, así que este cuerpo de 9 caracteres mide 10 bytes.
decoder = ContentLengthDecoder()
print(decoder.feed(b"Content-Length: 10\r\n\r\n"))
print(decoder.feed('{"a":"é"}'.encode()))

# %% tags=["graded"] points=3
grading.check_content_length_decoder(ContentLengthDecoder)

# %% [markdown] lang="en"
# ## Done?
#
# Compare your decoders with `mcpkit/framing.py`. It keeps the same rules but avoids some
# work yours probably does: it never searches the same bytes twice for a newline, splits a
# chunk of whole lines without copying it into a buffer, and resynchronises after a bad
# header by scanning for the next `Content-Length:`. Which of those would matter for a server
# receiving 10,000 small messages a second?

# %% [markdown] lang="es"
# ## ¿Terminaste?
#
# Compara tus decodificadores con `mcpkit/framing.py`. Sigue las mismas reglas pero se ahorra
# trabajo que el tuyo probablemente hace: nunca busca dos veces un salto de línea en los mismos
# bytes, divide un trozo de líneas completas sin copiarlo a un búfer y se resincroniza tras una
# cabecera errónea buscando el siguiente `Content-Length:`. ¿Cuáles de esas cosas importarían
# en un servidor que recibe 10.000 mensajes pequeños por segundo?
