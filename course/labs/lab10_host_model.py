# %% [markdown] lang="en"
# # Lab 10 · Host and model
#
# > **Español:** [`labs/es/lab10_host_model.ipynb`](../es/lab10_host_model.ipynb)
#
# Lesson 10 put a model behind a host: the host translates the servers' tools into the
# model API's format, turns the model's tool calls into `tools/call`, hands the results back,
# and checks every call on the way. Now you write that host side yourself:
#
# | part | you write | points |
# | --- | --- | --- |
# | 1 | `api_names`, `anthropic_tools`, `openai_tools`: tools in the two model formats | 3 |
# | 2 | `call_params`, `openai_call_params`, `tool_result`, `tool_message`: calls and results | 3 |
# | 3 | `needs_confirmation` and `run_agent`: the agent loop with the host's checks | 4 |
#
# **How to work.** Replace each `# YOUR CODE HERE` / `raise NotImplementedError()` with your
# code, run the cell, then run the **graded cell** below it. A graded cell is read-only. Before
# you run it, it shows the line it prints when every check passes: that is the expected
# output, not your result. When all three pass, save the notebook and grade the whole lab from
# the repository's root:
#
# ```
# ./course.sh grade lab10
# ```
#
# **What your instructor grades.** Only the code in the exercise cells, run on its own in a
# fresh Python process, on more generated cases than the graded cells here try and with a seed
# you do not see. Keep every definition an exercise needs in its exercise cells (part 3 may
# use your parts 1 and 2), and leave `grading` alone: code that touches the grader scores
# zero. `mcpkit.toolformats` and `mcpkit.agent` do what the lab asks, so they are off limits
# (except `looks_injected`, which the setup cell hands you).
# Exercise code may import mcpkit, what the setup cell imports, and the plainer standard
# modules (`json`, `re`, `itertools`, `collections`, `time`, `threading`, `logging` and a few
# more); a graded cell names any other import it finds, with the whole list.
#
# The checks compare your functions with `mcpkit.toolformats` on generated tool lists, calls
# and results; part 3 runs your loop and `mcpkit.agent.run_agent` against two real server
# processes behind a real `Host`, driven by the same offline scripted model, and compares
# what the model saw, what the user was asked, what reached the servers and the audit log.

# %% [markdown] lang="es"
# # Laboratorio 10 · Host y modelo
#
# > **English:** [`labs/en/lab10_host_model.ipynb`](../en/lab10_host_model.ipynb)
#
# La lección 10 puso un modelo detrás de un host: el host traduce las herramientas de los
# servidores al formato de la API del modelo, convierte las llamadas a herramientas del modelo
# en `tools/call`, le devuelve los resultados y comprueba cada llamada por el camino. Ahora
# escribes tú ese lado del host:
#
# | parte | escribes | puntos |
# | --- | --- | --- |
# | 1 | `api_names`, `anthropic_tools`, `openai_tools`: las herramientas en los formatos de las dos API de modelos | 3 |
# | 2 | `call_params`, `openai_call_params`, `tool_result` y `tool_message`: llamadas y resultados | 3 |
# | 3 | `needs_confirmation` y `run_agent`: el bucle del agente y las comprobaciones del host | 4 |
#
# **Cómo trabajar.** Sustituye cada `# YOUR CODE HERE` / `raise NotImplementedError()` por tu
# código, ejecuta la celda y luego ejecuta la **celda calificada** que hay debajo. Una celda
# calificada es de solo lectura. Antes de que la ejecutes, ya muestra la línea que imprime cuando
# todas las comprobaciones pasan: es la salida esperada, no tu resultado. Cuando pasen las tres,
# guarda el cuaderno y califica el laboratorio completo desde la raíz del repositorio:
#
# ```
# ./course.sh grade lab10
# ```
#
# **Qué califica tu instructor/a.** Solo el código de las celdas de ejercicio, ejecutado por
# separado en un proceso de Python nuevo, con más casos generados de los que prueban aquí las
# celdas calificadas y con una semilla que no ves. Deja en las celdas de ejercicio todas las
# definiciones que necesitan (la parte 3 puede usar tus partes 1 y 2), y no toques `grading`:
# el código que manipula el calificador obtiene cero. `mcpkit.toolformats` y `mcpkit.agent`
# hacen lo que pide el laboratorio, así que no puedes usarlos (salvo `looks_injected`, que te
# da la celda de preparación).
# El código de ejercicio puede importar mcpkit, lo que ya importa la celda de preparación y los
# módulos estándar más sencillos (`json`, `re`, `itertools`, `collections`, `time`,
# `threading`, `logging` y algunos más); una celda calificada nombra cualquier otra
# importación que encuentre, con la lista completa.
#
# Las comprobaciones comparan tus funciones con `mcpkit.toolformats` sobre listas de
# herramientas, llamadas y resultados generados; la parte 3 ejecuta tu bucle y
# `mcpkit.agent.run_agent` contra dos procesos servidor reales detrás de un `Host` real,
# dirigidos por el mismo modelo guionizado sin conexión, y compara lo que vio el modelo, lo que se
# preguntó al usuario, lo que llegó a los servidores y el registro de auditoría.

# %% tags=["setup"]
# [en] Setup: run this cell first.
# [es] Preparación: ejecuta esta celda primero.
import hashlib
import json
import re

from mcpkit import grading
from mcpkit.agent import ScriptedModel, call, looks_injected
from mcpkit.client import ServerError, SessionError
from mcpkit.host import Host, HostError
from mcpkit.validation import compile_schema

grading.set_language("en")
API_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def block_text(block):
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind in ("image", "audio"):
        return f"[{kind} ({block.get('mimeType', 'unknown type')}) not shown]"
    if kind == "resource":
        resource = block.get("resource") or {}
        if "text" in resource:
            return f"[resource {resource.get('uri', '')}]\n{resource['text']}"
        return f"[binary resource {resource.get('uri', '')} ({resource.get('mimeType', '')})]"
    if kind == "resource_link":
        return f"[resource link: {block.get('name', '')} <{block.get('uri', '')}>]"
    return json.dumps(block, ensure_ascii=False)

# %% [markdown] lang="en"
# The setup cell gives you:
#
# - `API_NAME`, the pattern model APIs accept for a tool name, and `hashlib` for part 1;
# - `block_text(block)`: one MCP content block as text (an image becomes
#   `[image (image/png) not shown]`, a resource its URI and text, ...);
# - `looks_injected(text)`: whether a text reads like orders to the model ("ignore previous
#   instructions", "<IMPORTANT>", ...), and `compile_schema(schema)`, which returns a function
#   `problems(value) -> list[str]` (empty when the value is valid);
# - `ScriptedModel` and `call` (lesson 10's offline model), `Host`, and the errors a call can
#   raise: `ServerError` (a JSON-RPC error: `.code`, `.message`), `SessionError`, `HostError`.
#
# ## Part 1 · Tools in the model's format
#
# MCP tool names may hold `.` and `/` and be up to 128 characters; model APIs accept
# `^[a-zA-Z0-9_-]{1,64}$`. Write:
#
# - `api_names(names)`: a dict from each MCP name to its API name, taking the names in order:
#   1. a name that matches `API_NAME` as a whole stays as it is (`API_NAME.fullmatch`: with
#      `match`, the `$` also matches before a final newline, so `"abc\n"` would pass);
#   2. otherwise every character outside `[a-zA-Z0-9_-]` becomes `_` (an empty result is
#      `"tool"`), and if that is longer than 64, it is cut to its first 55 characters, then
#      `_` and the first 8 hex digits of `hashlib.sha1(name.encode())` (of the MCP name)
#      follow;
#   3. if the result is already an earlier name's API name, try `cut + "_2"`, `cut + "_3"`,
#      ..., where `cut` is the result of step 1 or 2 cut so that the whole fits in 64.
# - `anthropic_tools(tools, names)`: `[{"name", "description", "input_schema"}]`, and
#   `openai_tools(tools, names)`: `[{"type": "function", "function": {"name", "description",
#   "parameters"}}]`, where `names` is what `api_names` returned. In both, leave out the
#   tools that must run as a task (`tool["execution"]["taskSupport"] == "required"`); the
#   description is the tool's `description`, or its `title`, or `""`; the schema is its
#   `inputSchema` if that is a dict whose `type` is `"object"`, else
#   `{"type": "object", "properties": {}}` (both APIs insist on an object schema).

# %% [markdown] lang="es"
# La celda de preparación te da:
#
# - `API_NAME`, el patrón que las API de modelos aceptan como nombre de herramienta, y
#   `hashlib` para la parte 1;
# - `block_text(block)`: un bloque de contenido MCP como texto (una imagen se convierte en
#   `[image (image/png) not shown]`, un recurso su URI y su texto, ...);
# - `looks_injected(text)`: si un texto suena a órdenes para el modelo ("ignore previous
#   instructions", "<IMPORTANT>", ...), y `compile_schema(schema)`, que devuelve una función
#   `problems(value) -> list[str]` (vacía cuando el valor es válido);
# - `ScriptedModel` y `call` (el modelo sin conexión de la lección 10), `Host` y los errores
#   que puede lanzar una llamada: `ServerError` (un error JSON-RPC: `.code`, `.message`),
#   `SessionError`, `HostError`.
#
# ## Parte 1 · Las herramientas en el formato del modelo
#
# Los nombres de herramienta de MCP pueden llevar `.` y `/` y tener hasta 128 caracteres; las
# API de modelos aceptan `^[a-zA-Z0-9_-]{1,64}$`. Escribe:
#
# - `api_names(names)`: un dict de cada nombre MCP a su nombre para la API, tomando los
#   nombres en orden:
#   1. un nombre que encaja entero con `API_NAME` se queda igual (`API_NAME.fullmatch`: con
#      `match`, el `$` también encaja antes de un salto de línea final, así que `"abc\n"`
#      pasaría);
#   2. si no, cada carácter fuera de `[a-zA-Z0-9_-]` se convierte en `_` (un resultado vacío
#      es `"tool"`) y, si supera los 64 caracteres, se corta a sus 55 primeros caracteres y le
#      siguen `_` y los 8 primeros dígitos hexadecimales de `hashlib.sha1(name.encode())` (del
#      nombre MCP);
#   3. si el resultado ya es el nombre para la API de un nombre anterior, prueba
#      `cut + "_2"`, `cut + "_3"`, ..., donde `cut` es el resultado del paso 1 o 2 cortado para
#      que todo quepa en 64.
# - `anthropic_tools(tools, names)`: `[{"name", "description", "input_schema"}]`, y
#   `openai_tools(tools, names)`: `[{"type": "function", "function": {"name", "description",
#   "parameters"}}]`, donde `names` es lo que devolvió `api_names`. En las dos, deja fuera las
#   herramientas que deben ejecutarse como tarea (`tool["execution"]["taskSupport"] ==
#   "required"`); la descripción es la `description` de la herramienta, o su `title`, o `""`;
#   el esquema es su `inputSchema` si es un dict cuyo `type` es `"object"` y, si no,
#   `{"type": "object", "properties": {}}` (las dos API exigen un esquema de objeto).

# %%
def api_names(names):
    ### BEGIN SOLUTION
    to_api, taken = {}, set()
    for name in names:
        if API_NAME.fullmatch(name):
            cleaned = name
        else:
            cleaned = re.sub(r"[^a-zA-Z0-9_-]", "_", name) or "tool"
            if len(cleaned) > 64:
                digest = hashlib.sha1(name.encode()).hexdigest()[:8]
                cleaned = f"{cleaned[:55]}_{digest}"
        candidate, n = cleaned, 2
        while candidate in taken:
            suffix = f"_{n}"
            candidate = cleaned[: 64 - len(suffix)] + suffix
            n += 1
        to_api[name] = candidate
        taken.add(candidate)
    return to_api
    ### END SOLUTION


# [en] Two helpers, to use or not: the tools a model may be offered (not those that must run
# [en] as a task), and a tool's schema the way both APIs want it.
# [es] Dos funciones auxiliares, para usarlas o no: las herramientas que se pueden ofrecer a un
# [es] modelo (no las que deben ejecutarse como tarea) y el esquema de una herramienta como lo
# [es] quieren las dos API.
def model_tools(tools):
    ### BEGIN SOLUTION
    return [t for t in tools if (t.get("execution") or {}).get("taskSupport") != "required"]
    ### END SOLUTION


def tool_schema(tool):
    ### BEGIN SOLUTION
    schema = tool.get("inputSchema")
    if not isinstance(schema, dict) or schema.get("type") != "object":
        return {"type": "object", "properties": {}}
    return schema
    ### END SOLUTION


def anthropic_tools(tools, names):
    ### BEGIN SOLUTION
    return [{"name": names[t["name"]], "description": t.get("description") or t.get("title")
             or "", "input_schema": tool_schema(t)} for t in model_tools(tools)]
    ### END SOLUTION


def openai_tools(tools, names):
    ### BEGIN SOLUTION
    return [{"type": "function", "function": {
        "name": names[t["name"]], "description": t.get("description") or t.get("title") or "",
        "parameters": tool_schema(t)}} for t in model_tools(tools)]
    ### END SOLUTION


# %%
tools = [{"name": "notes.search", "description": "Find notes.",
          "inputSchema": {"type": "object", "properties": {"query": {"type": "string"}}}},
         {"name": "notes_search", "title": "Search (v2)"}]
names = api_names([t["name"] for t in tools])
print(names)
print(json.dumps(anthropic_tools(tools, names), indent=1))

# %% tags=["graded"] points=3
grading.check_tool_formats(api_names, anthropic_tools, openai_tools)

# %% [markdown] lang="en"
# ## Part 2 · A model's call in, a tool result out
#
# `names` is again what `api_names` returned (MCP name -> API name). Write:
#
# - `call_params(block, names)`: an Anthropic `tool_use` block (`{"type": "tool_use", "id",
#   "name", "input"}`) to a pair `(params, error)`: `({"name": <MCP name>, "arguments":
#   input}, None)`, or `(None, "<why>")` when the name is not one of the API names (check
#   this first) or `input` is not a dict.
# - `openai_call_params(tool_call, names)`: the same for an OpenAI-style tool call
#   (`{"id", "type": "function", "function": {"name", "arguments"}}`), where `arguments` is a
#   JSON **string** the model wrote: missing, `None` or `""` means `{}`; a string is parsed
#   with `json.loads` (a `ValueError` is an error for the model, not an exception); a value
#   that is not a string is taken as it is; what comes out must be a dict.
# - `tool_result(call_id, result=None, error=None)`: the Anthropic `tool_result` block for
#   an MCP result, or for an `error` message (a JSON-RPC error, or a call the host refused).
#   With an error (any `error` that is not `None`, even `""`, whatever the result), or no
#   result at all: `{"type": "tool_result", "tool_use_id": call_id,
#   "content": [{"type": "text", "text": error or "no result"}], "is_error": True}`.
#   With a result: its content blocks (only the dicts; if there are none and it has
#   `structuredContent`, one text block with `json.dumps(structuredContent,
#   ensure_ascii=False)`), an `image` block becoming `{"type": "image", "source": {"type":
#   "base64", "media_type": <its mimeType, or "image/png" when the key is missing>, "data":
#   <its data, or "">}}` and
#   every other block `{"type": "text", "text": block_text(block)}`; the key `"is_error"`
#   is there (as `True`) only when `result["isError"] is True`, and absent otherwise.
# - `tool_message(call_id, result=None, error=None)`: the OpenAI `{"role": "tool",
#   "tool_call_id": call_id, "content": text}`. This format has no error flag, so an error is
#   said in words: `"Error: " + (error or "no result")`; a result is the
#   `block_text` of its blocks (chosen as above) joined with `"\n"`, with `"Error: "` before
#   it when `isError` is `True`.

# %% [markdown] lang="es"
# ## Parte 2 · Entra la llamada de un modelo, sale un resultado de herramienta
#
# `names` vuelve a ser lo que devolvió `api_names` (nombre MCP -> nombre para la API).
# Escribe:
#
# - `call_params(block, names)`: convierte un bloque `tool_use` de Anthropic (`{"type":
#   "tool_use", "id", "name", "input"}`) en un par `(params, error)`: `({"name": <nombre MCP>,
#   "arguments": input}, None)`, o `(None, "<motivo>")` cuando el nombre no es uno de los
#   nombres para la API (compruébalo primero) o `input` no es un dict.
# - `openai_call_params(tool_call, names)`: lo mismo para una llamada al estilo de OpenAI
#   (`{"id", "type": "function", "function": {"name", "arguments"}}`), donde `arguments` es
#   una **cadena** JSON que escribió el modelo: si falta, es `None` o es `""`, significa `{}`;
#   una cadena se analiza con `json.loads` (un `ValueError` es un error para el modelo, no una
#   excepción); un valor que no es una cadena se toma tal cual; lo que sale debe ser un dict.
# - `tool_result(call_id, result=None, error=None)`: el bloque `tool_result` de Anthropic
#   para un resultado MCP, o para un mensaje `error` (un error JSON-RPC, o una llamada que el
#   host rechazó). Con un error (cualquier `error` que no sea `None`, aunque sea `""`, haya o
#   no resultado), o sin resultado alguno: `{"type": "tool_result",
#   "tool_use_id": call_id, "content": [{"type": "text", "text": error or "no result"}],
#   "is_error": True}`. Con un resultado: sus bloques de contenido (solo los dicts;
#   si no hay ninguno y tiene `structuredContent`, un bloque de texto con
#   `json.dumps(structuredContent, ensure_ascii=False)`), donde un bloque `image` pasa a
#   `{"type": "image", "source": {"type": "base64", "media_type": <su mimeType, o
#   "image/png" si falta la clave>, "data": <su data, o "">}}` y cualquier otro bloque a `{"type": "text",
#   "text": block_text(block)}`; la clave `"is_error"` solo está (con `True`) cuando
#   `result["isError"] is True`, y falta en los demás casos.
# - `tool_message(call_id, result=None, error=None)`: el `{"role": "tool", "tool_call_id":
#   call_id, "content": text}` de OpenAI. Este formato no tiene marca de error, así que un
#   error se dice con palabras: `"Error: " + (error or "no result")`; un resultado es
#   el `block_text` de sus bloques (elegidos como arriba) unidos con `"\n"`, con `"Error: "`
#   delante cuando `isError` es `True`.

# %%
# [en] Helpers, to use or not: (params, error) for the API name and the arguments a model sent
# [en] (for both formats), and the content blocks of a result as the rules above choose them.
# [es] Funciones auxiliares, para usarlas o no: (params, error) para el nombre de la API y los
# [es] argumentos que envió un modelo (para los dos formatos), y los bloques de contenido de un
# [es] resultado tal como los eligen las reglas de arriba.
def to_mcp_params(name, arguments, names):
    ### BEGIN SOLUTION
    to_mcp = {api: mcp for mcp, api in names.items()}
    if name not in to_mcp:
        return None, f"unknown tool {name!r}"
    if not isinstance(arguments, dict):
        return None, "the arguments must be a JSON object"
    return {"name": to_mcp[name], "arguments": arguments}, None
    ### END SOLUTION


def call_params(block, names):
    ### BEGIN SOLUTION
    return to_mcp_params(str(block.get("name", "")), block.get("input"), names)
    ### END SOLUTION


def openai_call_params(tool_call, names):
    ### BEGIN SOLUTION
    function = tool_call.get("function") or {}
    name = str(function.get("name", ""))
    raw = function.get("arguments") or "{}"
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError as exc:
            if name not in names.values():
                return to_mcp_params(name, {}, names)
            return None, f"the arguments are not valid JSON ({exc}); send a JSON object"
    return to_mcp_params(name, raw, names)
    ### END SOLUTION


def result_blocks(result):
    ### BEGIN SOLUTION
    blocks = [b for b in result.get("content") or () if isinstance(b, dict)]
    if not blocks and "structuredContent" in result:
        text = json.dumps(result["structuredContent"], ensure_ascii=False)
        blocks = [{"type": "text", "text": text}]
    return blocks
    ### END SOLUTION


def tool_result(call_id, result=None, error=None):
    ### BEGIN SOLUTION
    if error is not None or result is None:
        return {"type": "tool_result", "tool_use_id": call_id,
                "content": [{"type": "text", "text": error or "no result"}], "is_error": True}
    content = []
    for block in result_blocks(result):
        if block.get("type") == "image":
            content.append({"type": "image", "source": {
                "type": "base64", "media_type": block.get("mimeType", "image/png"),
                "data": block.get("data", "")}})
        else:
            content.append({"type": "text", "text": block_text(block)})
    out = {"type": "tool_result", "tool_use_id": call_id, "content": content}
    if result.get("isError") is True:
        out["is_error"] = True
    return out
    ### END SOLUTION


def tool_message(call_id, result=None, error=None):
    ### BEGIN SOLUTION
    if error is not None or result is None:
        text = f"Error: {error or 'no result'}"
    else:
        text = "\n".join(block_text(b) for b in result_blocks(result))
        if result.get("isError") is True:
            text = f"Error: {text}"
    return {"role": "tool", "tool_call_id": call_id, "content": text}
    ### END SOLUTION


# %%
print(openai_call_params({"id": "c1", "type": "function", "function": {
    "name": "notes_search", "arguments": '{"query": "mcp"}'}}, names))
print(tool_result("toolu_1", {"content": [{"type": "text", "text": "no such note"}],
                              "isError": True}))
print(tool_message("c1", error="unknown tool 'rm_rf'"))

# %% tags=["graded"] points=3
grading.check_calls_and_results(call_params, openai_call_params, tool_result, tool_message)

# %% [markdown] lang="en"
# ## Part 3 · The agent loop, with the host's checks
#
# Write `needs_confirmation(tool)`: `True` unless the tool's `annotations` say
# `readOnlyHint: true` or `destructiveHint: false` (the spec's defaults are pessimistic: a
# tool that says nothing may be destructive). Only the booleans count: `"yes"`, `1`, `0` or
# `null` say nothing.
#
# Then `run_agent(host, model, task, allow, confirm, max_turns=6)`, which returns
# `(messages, audit)`. `host` has `tools()` (the merged MCP tools) and
# `call_tool(name, arguments)`; `model(messages, tools)` takes the conversation and the tools
# in the Anthropic format and returns an assistant message `{"role": "assistant",
# "content": [blocks]}`. Start with `messages = [{"role": "user", "content": task}]` and
# `audit = []`; then, for each turn from 1 to `max_turns`:
#
# 1. **Filter.** The tools the model may see are the host's tools, in its order, that a model
#    may be offered (not those that must run as a task, as in part 1), for which
#    `allow(tool)` is true and whose description does not `looks_injected` (tool poisoning).
#    Work this out again at every turn, name them with `api_names`, and call
#    `model(messages, anthropic_tools(offered, names))`.
# 2. Append `{"role": "assistant", "content": reply["content"]}`. If it has no `tool_use`
#    block, stop.
# 3. For each `tool_use` block, in order, decide an `outcome` and what the model is shown:
#    - `"unknown"`: its name is not one of the offered tools; `"invalid"`: `call_params`
#      gave an error, or `compile_schema(tool's inputSchema)` (`{"type": "object"}` if it
#      has none) finds problems in the arguments (check them before asking `confirm`); `"declined"`: the tool `needs_confirmation` and `confirm(name, arguments)`
#      (with the exposed MCP name) said no. These three never reach a server; the model gets
#      `tool_result(id, error=<your words>)`.
#    - otherwise `host.call_tool(name, arguments)`. A `ServerError`, `SessionError` or
#      `HostError`: `"protocol-error"`, `tool_result(id, error=...)`. A result with `isError`
#      `True`: `"tool-error"`, `tool_result(id, result)`, whatever its text says. Any other
#      result whose text (the
#      `block_text` of its blocks, as in part 2) `looks_injected`: `"quarantined"`,
#      `tool_result(id, error=...)` instead of the result (prompt injection: the model must
#      not read it). Else `"ok"`, `tool_result(id, result)`.
#    - Append `{"turn": turn, "tool": <the MCP name, or the name the model used when it is
#      unknown>, "arguments": <the block's input, or {} if it is not a dict>, "outcome":
#      outcome}` to `audit`.
# 4. Append one `{"role": "user", "content": [the tool results, in order]}` and go on.
#
# A helper for step 3 (one call through the checks) keeps `run_agent` short: write it in the
# same cell.

# %% [markdown] lang="es"
# ## Parte 3 · El bucle del agente, con las comprobaciones del host
#
# Escribe `needs_confirmation(tool)`: `True` salvo que las `annotations` de la herramienta
# digan `readOnlyHint: true` o `destructiveHint: false` (los valores por defecto de la
# especificación son pesimistas: una herramienta que no dice nada puede ser destructiva).
# Solo cuentan los booleanos: `"yes"`, `1`, `0` o `null` no dicen nada.
#
# Después, `run_agent(host, model, task, allow, confirm, max_turns=6)`, que devuelve
# `(messages, audit)`. `host` tiene `tools()` (las herramientas MCP fusionadas) y
# `call_tool(name, arguments)`; `model(messages, tools)` recibe la conversación y las
# herramientas en el formato de Anthropic y devuelve un mensaje del asistente
# `{"role": "assistant", "content": [bloques]}`. Empieza con `messages = [{"role": "user",
# "content": task}]` y `audit = []`; después, en cada turno de 1 a `max_turns`:
#
# 1. **Filtra.** Las herramientas que puede ver el modelo son las del host, en su orden, que
#    se pueden ofrecer a un modelo (no las que deben ejecutarse como tarea, como en la parte
#    1), para las que `allow(tool)` es verdadero y cuya descripción no `looks_injected`
#    (envenenamiento de herramientas). Calcúlalo de nuevo en cada turno, ponles nombre con `api_names` y llama
#    a `model(messages, anthropic_tools(offered, names))`.
# 2. Añade `{"role": "assistant", "content": reply["content"]}`. Si no tiene ningún bloque
#    `tool_use`, detente.
# 3. Para cada bloque `tool_use`, en orden, decide un `outcome` y lo que se muestra al modelo:
#    - `"unknown"`: su nombre no es el de ninguna herramienta ofrecida; `"invalid"`:
#      `call_params` dio un error, o `compile_schema(inputSchema de la herramienta)`
#      (`{"type": "object"}` si no tiene) encuentra problemas en los argumentos
#      (compruébalos antes de preguntar a `confirm`); `"declined"`: la herramienta `needs_confirmation` y
#      `confirm(name, arguments)` (con el nombre MCP expuesto) dijo que no. Estas tres nunca
#      llegan a un servidor; el modelo recibe `tool_result(id, error=<tus palabras>)`.
#    - si no, `host.call_tool(name, arguments)`. Un `ServerError`, `SessionError` o
#      `HostError`: `"protocol-error"`, `tool_result(id, error=...)`. Un resultado con
#      `isError` `True`: `"tool-error"`, `tool_result(id, result)`, diga lo que diga su
#      texto. Cualquier otro resultado cuyo texto (el
#      `block_text` de sus bloques, como en la parte 2) `looks_injected`: `"quarantined"`,
#      `tool_result(id, error=...)` en lugar del resultado (inyección de prompts: el modelo no
#      debe leerlo). Si no, `"ok"`, `tool_result(id, result)`.
#    - Añade `{"turn": turn, "tool": <el nombre MCP, o el que usó el modelo si es
#      desconocido>, "arguments": <el input del bloque, o {} si no es un dict>, "outcome":
#      outcome}` a `audit`.
# 4. Añade un `{"role": "user", "content": [los resultados de herramienta, en orden]}` y sigue.
#
# Una función auxiliar para el paso 3 (una llamada a través de las comprobaciones) mantiene
# corto `run_agent`: escríbela en la misma celda.

# %%
def needs_confirmation(tool):
    ### BEGIN SOLUTION
    hints = tool.get("annotations") or {}
    return hints.get("readOnlyHint") is not True and hints.get("destructiveHint") is not False
    ### END SOLUTION


def run_agent(host, model, task, allow, confirm, max_turns=6):
    ### BEGIN SOLUTION
    messages, audit = [{"role": "user", "content": task}], []
    for turn in range(1, max_turns + 1):
        offered = [t for t in model_tools(host.tools())
                   if allow(t) and not looks_injected(t.get("description") or "")]
        names = api_names([t["name"] for t in offered])
        by_mcp = {t["name"]: t for t in offered}
        reply = model(messages, anthropic_tools(offered, names))
        content = list(reply.get("content") or [])
        messages.append({"role": "assistant", "content": content})
        uses = [b for b in content if b.get("type") == "tool_use"]
        if not uses:
            break
        results = []
        for block in uses:
            outcome, shown, name = host_checks(host, block, names, by_mcp, confirm)
            arguments = block.get("input")
            audit.append({"turn": turn, "tool": name,
                          "arguments": arguments if isinstance(arguments, dict) else {},
                          "outcome": outcome})
            results.append(shown)
        messages.append({"role": "user", "content": results})
    return messages, audit


def host_checks(host, block, names, by_mcp, confirm):
    call_id = str(block.get("id", ""))
    params, error = call_params(block, names)
    used = str(block.get("name", ""))
    to_mcp = {api: mcp for mcp, api in names.items()}
    if params is None and used not in to_mcp:
        return "unknown", tool_result(call_id, error=error), used
    if params is None:
        return "invalid", tool_result(call_id, error=error), to_mcp[used]
    name, arguments = params["name"], params["arguments"]
    tool = by_mcp[name]
    problems = compile_schema(tool.get("inputSchema") or {"type": "object"})(arguments)
    if problems:
        return "invalid", tool_result(call_id, error="invalid arguments: "
                                      + "; ".join(problems)), name
    if needs_confirmation(tool) and not confirm(name, arguments):
        return "declined", tool_result(call_id, error="the user declined this call"), name
    try:
        result = host.call_tool(name, arguments)
    except ServerError as exc:
        return "protocol-error", tool_result(call_id, error=f"error {exc.code}: "
                                             f"{exc.message}"), name
    except (SessionError, HostError) as exc:
        return "protocol-error", tool_result(call_id, error=str(exc)), name
    if result.get("isError") is True:
        return "tool-error", tool_result(call_id, result), name
    if looks_injected("\n".join(block_text(b) for b in result_blocks(result))):
        return "quarantined", tool_result(call_id, error="withheld: it gives the model "
                                          "orders"), name
    return "ok", tool_result(call_id, result), name
    ### END SOLUTION


# %%
with Host(grading.lab10.servers()) as host:
    model = ScriptedModel([[call("files_read", path="inbox/offer.txt"),
                            call("files_delete", path="notes/plan.md")], "Done."],
                          gullible=True)
    messages, audit = run_agent(host, model, "Tidy my inbox", lambda tool: True,
                                lambda name, arguments: False)
for entry in audit:
    print(entry)

# %% tags=["graded"] points=4
grading.check_agent_loop(run_agent)

# %% [markdown] lang="en"
# ## Done?
#
# Compare your functions with `mcpkit/toolformats.py` and `mcpkit/agent.py`. mcpkit's loop
# does one thing more that lesson 10 showed: it can pin the tools the user approved
# (`pin_tools`) and stop offering any whose definition changed since. Two things to try:
#
# - Swap the scripted model for `mcpkit.agent.AnthropicModel("<a model name>")` (with
#   `ANTHROPIC_API_KEY` set) and run your loop for real. What does a real model do with a
#   declined call?
# - `looks_injected` knows a few phrasings. Write a tool result that gets past it and still
#   makes the gullible model misbehave. Which of your other checks still stands in the way?

# %% [markdown] lang="es"
# ## ¿Terminaste?
#
# Compara tus funciones con `mcpkit/toolformats.py` y `mcpkit/agent.py`. El bucle de mcpkit
# hace una cosa más que mostró la lección 10: puede fijar las herramientas que aprobó el
# usuario (`pin_tools`) y dejar de ofrecer las que hayan cambiado desde entonces. Dos cosas
# que probar:
#
# - Cambia el modelo guionizado por `mcpkit.agent.AnthropicModel("<un nombre de modelo>")` (con
#   `ANTHROPIC_API_KEY` definida) y ejecuta tu bucle de verdad. ¿Qué hace un modelo real con
#   una llamada que el usuario rechazó?
# - `looks_injected` conoce unas cuantas formulaciones. Escribe un resultado de herramienta
#   que se le escape y aun así haga que el modelo crédulo se porte mal. ¿Cuál de tus otras
#   comprobaciones sigue cerrándole el paso?
