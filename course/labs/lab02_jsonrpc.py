# %% [markdown] lang="en"
# # Lab 02 · JSON-RPC: validation and error responses
#
# > **Español:** [`labs/es/lab02_jsonrpc.ipynb`](../es/lab02_jsonrpc.ipynb)
#
# Lesson 02 used `mcpkit.jsonrpc` to classify messages and answer broken ones. Now you write
# that logic, and then the part of a server that answers `tools/call` with the right kind of
# error.
#
# | part | you write | points |
# | --- | --- | --- |
# | 1 | `classify(message)`: the kind of a message, or `InvalidRequest` | 4 |
# | 2 | `error_for(raw)`: the error response a raw line deserves, or `None` | 3 |
# | 3 | `call_tool(request, tools)`: protocol errors and tool errors | 3 |
#
# **How to work.** Replace each `# YOUR CODE HERE` / `raise NotImplementedError()` with your
# code, run the cell, then run the **graded cell** below it. A graded cell is read-only. Its first
# line, a comment, is the line it prints when every check passes: that is the expected
# output, not your result. Run it, and it either prints that line or lists each case with what
# it expected and what your code returned. When all three pass, save the notebook and get your
# score per part from a terminal at the repository's root:
#
# ```
# ./course.sh grade lab02
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
# This lab does not use your lab 01: decoding is done for you with `json`. You may use the
# builders and error classes of `mcpkit.jsonrpc` imported below, but not `jsonrpc.classify`.

# %% [markdown] lang="es"
# # Laboratorio 02 · JSON-RPC: validación y respuestas de error
#
# > **English:** [`labs/en/lab02_jsonrpc.ipynb`](../en/lab02_jsonrpc.ipynb)
#
# La lección 02 usó `mcpkit.jsonrpc` para clasificar mensajes y responder a los rotos. Ahora
# escribes tú esa lógica, y después la parte de un servidor que responde a `tools/call` con el
# tipo de error correcto.
#
# | parte | escribes | puntos |
# | --- | --- | --- |
# | 1 | `classify(message)`: el tipo de un mensaje, o `InvalidRequest` | 4 |
# | 2 | `error_for(raw)`: la respuesta de error que merece una línea en bruto, o `None` | 3 |
# | 3 | `call_tool(request, tools)`: errores de protocolo y errores de herramienta | 3 |
#
# **Cómo trabajar.** Sustituye cada `# YOUR CODE HERE` / `raise NotImplementedError()` por tu
# código, ejecuta la celda y luego ejecuta la **celda calificada** que hay debajo. Una celda
# calificada es de solo lectura. Su primera línea, un comentario, es la que imprime cuando
# pasan todas las comprobaciones: es la salida esperada, no tu resultado. Ejecútala: o bien
# imprime esa línea o enumera cada caso con lo que esperaba y lo que devolvió tu código. Cuando
# pasen las tres, guarda el cuaderno y obtén tu nota por partes desde una terminal en la raíz
# del repositorio:
#
# ```
# ./course.sh grade lab02
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
# Este laboratorio no usa tu laboratorio 01: la decodificación se hace con `json`. Puedes usar
# los constructores y las clases de error de `mcpkit.jsonrpc` importados abajo, pero no
# `jsonrpc.classify`.

# %% tags=["setup"]
# [en] Setup: run this cell first.
# [es] Preparación: ejecuta esta celda primero.
import json

from mcpkit import grading
from mcpkit.jsonrpc import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    PARSE_ERROR,
    InvalidRequest,
    error_response,
    result_response,
)

grading.set_language("en")

# %% [markdown] lang="en"
# ## Part 1 · `classify`
#
# Return `"request"`, `"notification"`, `"result"` or `"error"`, or raise
# `InvalidRequest(reason)` when the value is not a valid MCP JSON-RPC message. Check, in order:
#
# 1. it is a JSON object (a `dict`); a list is a batch, which MCP does not accept;
# 2. `"jsonrpc"` is exactly the string `"2.0"`;
# 3. with a `"method"`: it is a non-empty string; there is no `"result"` or `"error"`;
#    `"params"`, if present, is an object (`null`: your choice, see below). Without `"id"` it
#    is a notification; with one, a request, and the id must be a string or an integer (not
#    `null`, not `true`, not `1.5`);
# 4. without `"method"`: exactly one of `"result"` and `"error"`, and an `"id"`. A result needs
#    a string or integer id and an object `result`. An error's id is a string, an integer or
#    `null` (not `true`, not `1.5`), and its `error` is an object with an integer `code` (not
#    `2.0`) and a string `message`.
#
# Members other than these (say `"trace"`) do not make a message invalid: ignore them.
# Careful: in Python `True` is an `int`, and `0` is falsy.
#
# `"params": null` is yours to decide. JSON-RPC 2.0 says `params`, when present, is an object
# or an array, so `null` is invalid there; some peers send it all the same, and mcpkit lets it
# through as no params, to be lenient with them (lab 03's dispatcher hands the handler `{}`).
# Refusing it or letting it through both pass.

# %% [markdown] lang="es"
# ## Parte 1 · `classify`
#
# Devuelve `"request"`, `"notification"`, `"result"` o `"error"`, o lanza
# `InvalidRequest(motivo)` cuando el valor no es un mensaje JSON-RPC válido para MCP. Comprueba,
# en orden:
#
# 1. que es un objeto JSON (un `dict`); una lista es un lote, que MCP no acepta;
# 2. que `"jsonrpc"` es exactamente la cadena `"2.0"`;
# 3. con `"method"`: que es una cadena no vacía; que no hay `"result"` ni `"error"`; que
#    `"params"`, si está, es un objeto (`null`: tú decides, mira más abajo). Sin `"id"` es una
#    notificación; con él, una solicitud, y el id debe ser una cadena o un entero (ni `null`,
#    ni `true`, ni `1.5`);
# 4. sin `"method"`: exactamente uno de `"result"` y `"error"`, y un `"id"`. Un resultado
#    necesita un id de cadena o entero y un `result` que sea un objeto. El id de un error es
#    una cadena, un entero o `null` (ni `true`, ni `1.5`), y su `error` es un objeto con un
#    `code` entero (no `2.0`) y un `message` de texto.
#
# Los miembros distintos de estos (por ejemplo `"trace"`) no invalidan un mensaje: ignóralos.
# Cuidado: en Python `True` es un `int`, y `0` es falso.
#
# Qué hacer con `"params": null` lo decides tú. JSON-RPC 2.0 dice que `params`, si está, es
# un objeto o un array, así que en JSON-RPC `null` es inválido; aun así, algunos
# interlocutores lo envían, y mcpkit lo deja pasar como si no hubiera params, para ser
# tolerante con ellos (el despachador del laboratorio 03 le da `{}` al manejador). Tanto
# rechazarlo como dejarlo pasar superan las comprobaciones.

# %%
def classify(message):
    ### BEGIN SOLUTION
    def is_id(value):
        return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))

    if not isinstance(message, dict):
        raise InvalidRequest("a message must be a JSON object")
    if message.get("jsonrpc") != "2.0":
        raise InvalidRequest('"jsonrpc" must be "2.0"')
    if "method" in message:
        if not isinstance(message["method"], str) or not message["method"]:
            raise InvalidRequest('"method" must be a non-empty string')
        if "result" in message or "error" in message:
            raise InvalidRequest('a call cannot carry "result" or "error"')
        if message.get("params") is not None and not isinstance(message["params"], dict):
            raise InvalidRequest('"params" must be an object')
        if "id" not in message:
            return "notification"
        if not is_id(message["id"]):
            raise InvalidRequest("a request id must be a string or an integer")
        return "request"
    if ("result" in message) == ("error" in message):
        raise InvalidRequest('a response needs exactly one of "result" and "error"')
    if "id" not in message:
        raise InvalidRequest('a response needs an "id"')
    if "result" in message:
        if not is_id(message["id"]) or not isinstance(message["result"], dict):
            raise InvalidRequest("a result needs a usable id and an object result")
        return "result"
    error = message["error"]
    if message["id"] is not None and not is_id(message["id"]):
        raise InvalidRequest("an error id must be a string, an integer or null")
    if not isinstance(error, dict) or not isinstance(error.get("message"), str):
        raise InvalidRequest('"error" needs a string "message"')
    if not isinstance(error.get("code"), int) or isinstance(error.get("code"), bool):
        raise InvalidRequest('"error.code" must be an integer')
    return "error"
    ### END SOLUTION


# %%
classify({"jsonrpc": "2.0", "id": 0, "method": "ping"})

# %% tags=["graded"] points=4
grading.check_classify(classify)

# %% [markdown] lang="en"
# ## Part 2 · `error_for`
#
# A receiver gets one line of bytes (without its newline) and must decide whether it deserves
# an error response. Write `error_for(raw)`, returning the response dict or `None`:
#
# | the line | return |
# | --- | --- |
# | not UTF-8, or not JSON | a -32700 error response with id `None` |
# | JSON, but `classify` raises `InvalidRequest` | a -32600 error response |
# | a valid message of any kind | `None` |
#
# The -32600 response carries the message's own id when it has a usable one (a string or an
# integer), and `None` otherwise; a -32700 always has id `None`, since nothing was read. The
# error `message` text is yours to choose, and so is a `data` member with details (add one or
# not); `error_response(id, code, message)` builds the response. Use your `classify` from
# part 1.
#
# "Not JSON" includes a line nested so deeply that `json.loads` raises `RecursionError`, and
# a raw control character (a tab, say) inside a string.
#
# One trap: `NaN`, `Infinity` and `-Infinity` are not JSON (RFC 8259 has no such values),
# but Python's `json.loads` accepts them. Refuse them with its `parse_constant` argument, a
# function called with the literal's text: raise `ValueError` there.

# %% [markdown] lang="es"
# ## Parte 2 · `error_for`
#
# Quien recibe obtiene una línea de bytes (sin su salto de línea) y debe decidir si merece una
# respuesta de error. Escribe `error_for(raw)`, que devuelve el dict de la respuesta o `None`:
#
# | la línea | devuelve |
# | --- | --- |
# | no es UTF-8, o no es JSON | una respuesta de error -32700 con id `None` |
# | es JSON, pero `classify` lanza `InvalidRequest` | una respuesta de error -32600 |
# | un mensaje válido de cualquier tipo | `None` |
#
# La respuesta -32600 lleva el id del propio mensaje cuando tiene uno utilizable (una cadena o
# un entero), y `None` en otro caso; una respuesta -32700 siempre lleva id `None`, porque no
# se leyó nada. El texto del `message` del error lo eliges tú, y también un miembro `data` con
# detalles (añádelo o no); `error_response(id, code, message)` construye la respuesta. Usa tu
# `classify` de la parte 1.
#
# "No es JSON" incluye una línea tan anidada que `json.loads` lanza `RecursionError`, y un
# carácter de control literal (un tabulador, por ejemplo) dentro de una cadena.
#
# Una trampa: `NaN`, `Infinity` y `-Infinity` no son JSON (RFC 8259 no tiene esos valores),
# pero `json.loads` de Python los acepta. Recházalos con su argumento `parse_constant`, una
# función que recibe el texto del literal: lanza `ValueError` en ella.

# %%
def error_for(raw):
    ### BEGIN SOLUTION
    def not_json(literal):
        raise ValueError(f"{literal} is not JSON")

    try:
        message = json.loads(raw.decode("utf-8"), parse_constant=not_json)
    except (UnicodeDecodeError, ValueError, RecursionError):
        return error_response(None, PARSE_ERROR, "Parse error")
    try:
        classify(message)
    except InvalidRequest as exc:
        usable = isinstance(message, dict) and (
            isinstance(message.get("id"), str)
            or (isinstance(message.get("id"), int) and not isinstance(message.get("id"), bool))
        )
        return error_response(message["id"] if usable else None, INVALID_REQUEST, str(exc))
    return None
    ### END SOLUTION


# %%
error_for(b'{"jsonrpc":"2.0","id":5,"method":"ping"'), error_for(b'{"jsonrpc":"2.0","id":5}')

# %% tags=["graded"] points=3
grading.check_error_for(error_for)

# %% [markdown] lang="en"
# ## Part 3 · `call_tool`: the two kinds of error
#
# `call_tool(request, tools)` receives a valid `tools/call` request and a dict from tool name
# to a Python function, and returns the response:
#
# - **protocol errors** (nothing ran), each a -32602 error response with the request's id:
#   `params` missing or not an object; no string `name`; an unknown tool (names are compared
#   exactly); `arguments` present but not an object. Their `message` text, and a `data`
#   member if you want one, are yours to choose;
# - otherwise call the tool with the arguments as keyword arguments (missing `arguments` means
#   `{}`) and answer with a **result**:
#   - it returned a string `text`:
#     `{"content": [{"type": "text", "text": text}], "isError": False}`;
#   - it raised any exception `exc`, including a `TypeError` for missing arguments: the same
#     shape with `"isError": True` and the text `f"{type(exc).__name__}: {exc}"`
#     (`"ValueError: "` when the exception has no message), so the model can read what went
#     wrong.
#
# `result_response(id, result)` and `error_response(id, code, message)` build the responses.

# %% [markdown] lang="es"
# ## Parte 3 · `call_tool`: los dos tipos de error
#
# `call_tool(request, tools)` recibe una solicitud `tools/call` válida y un dict que va del
# nombre de cada herramienta a una función de Python, y devuelve la respuesta:
#
# - **errores de protocolo** (no se ejecutó nada), cada uno una respuesta de error -32602 con
#   el id de la solicitud: `params` ausentes o que no son un objeto; sin `name` de texto; una
#   herramienta desconocida (los nombres se comparan tal cual); `arguments` presentes pero que
#   no son un objeto. El texto de su `message`, y un miembro `data` si quieres añadirlo, los
#   eliges tú;
# - en otro caso, llama a la herramienta con los argumentos como argumentos con nombre
#   (`arguments` ausentes equivalen a `{}`) y responde con un **resultado**:
#   - si devolvió una cadena `text`:
#     `{"content": [{"type": "text", "text": text}], "isError": False}`;
#   - si lanzó cualquier excepción `exc`, incluido un `TypeError` por faltar argumentos: la
#     misma forma con `"isError": True` y el texto `f"{type(exc).__name__}: {exc}"`
#     (`"ValueError: "` si la excepción no trae mensaje), para que el modelo pueda leer qué
#     salió mal.
#
# `result_response(id, result)` y `error_response(id, code, message)` construyen las
# respuestas.

# %%
def call_tool(request, tools):
    ### BEGIN SOLUTION
    request_id = request["id"]
    params = request.get("params")
    if not isinstance(params, dict) or not isinstance(params.get("name"), str):
        return error_response(request_id, INVALID_PARAMS, 'tools/call needs a string "name"')
    tool = tools.get(params["name"])
    if tool is None:
        return error_response(request_id, INVALID_PARAMS, f"Unknown tool: {params['name']}")
    arguments = params.get("arguments", {})
    if not isinstance(arguments, dict):
        return error_response(request_id, INVALID_PARAMS, '"arguments" must be an object')
    try:
        text, is_error = tool(**arguments), False
    except Exception as exc:
        text, is_error = f"{type(exc).__name__}: {exc}", True
    return result_response(request_id, {
        "content": [{"type": "text", "text": text}],
        "isError": is_error,
    })
    ### END SOLUTION


# %%
def weather(city):
    if city != "Lima":
        raise LookupError(f"no forecast for {city}")
    return "Lima: 19 °C, cloudy"


for name, arguments in [("weather", {"city": "Lima"}), ("weather", {"city": "Atlantis"}),
                        ("forecast", {})]:
    request = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
               "params": {"name": name, "arguments": arguments}}
    print(call_tool(request, {"weather": weather}))

# %% tags=["graded"] points=3
grading.check_call_tool(call_tool)

# %% [markdown] lang="en"
# ## Done?
#
# Compare your `classify` with `mcpkit/jsonrpc.py`, and your `call_tool` with `_tools_call`
# in `mcpkit/server.py`. The server does more before calling a tool: it validates the
# arguments against the tool's input schema, and depending on the protocol revision reports a
# mismatch as a protocol error or, since 2025-11-25, as a tool error the model can correct.
# Why might the newer rule be the better one?

# %% [markdown] lang="es"
# ## ¿Terminaste?
#
# Compara tu `classify` con `mcpkit/jsonrpc.py`, y tu `call_tool` con `_tools_call` en
# `mcpkit/server.py`. El servidor hace más antes de llamar a una herramienta: valida los
# argumentos contra el esquema de entrada de la herramienta y, según la revisión del protocolo,
# informa de un desajuste como error de protocolo o, desde la 2025-11-25, como error de
# herramienta que el modelo puede corregir. ¿Por qué podría ser mejor la regla más reciente?
