# %% [markdown] lang="en"
# # Lesson 10 · Host and model
#
# > **Español:** [`notebooks/es/10_host_and_model.ipynb`](../es/10_host_and_model.ipynb)
#
# Lesson 00 said it first: **the model never speaks MCP**. The host does. It shows the model
# the tools of every server, in the model API's own format; it turns the model's tool calls
# into `tools/call` requests; it hands the results back; and, because it stands between the
# two, it decides what the model may see and do. In this last lesson you will:
#
# 1. turn a host's merged tool list into the **Anthropic Messages** and **OpenAI-style**
#    tool formats, with names the APIs accept and a way back;
# 2. map a model's **tool call** to `tools/call`, and bring the result back as a **tool
#    result**, including both error forms, and see how each one reads to the model;
# 3. write the **host's duties** as code: filter the tools, validate arguments, ask the user
#    before a destructive call, keep an **audit log**;
# 4. run an **agent loop** driven by an offline **scripted model** over three servers;
# 5. meet four attacks on a host, and what it can detect and refuse: **tool poisoning**,
#    **prompt injection** through tool results, **token passthrough** and a server that
#    **changes its tools after approval**;
# 6. see the **adapter for a real model API**, which nothing here needs;
# 7. name five **anti-patterns**, and where the course shows why each one hurts;
# 8. look back over the course, and ahead.
#
# The code is `mcpkit/toolformats.py` (the two formats) and `mcpkit/agent.py` (the loop and
# the checks), over the `Host` of `mcpkit/host.py`.

# %% [markdown] lang="es"
# # Lección 10 · Host y modelo
#
# > **English:** [`notebooks/en/10_host_and_model.ipynb`](../en/10_host_and_model.ipynb)
#
# La lección 00 ya lo dijo: **el modelo nunca habla MCP**. Lo habla el host. El host le
# muestra al modelo las herramientas de todos los servidores, en el formato de la propia API
# del modelo; convierte las llamadas a herramientas del modelo en solicitudes `tools/call`; le
# devuelve los resultados y, como está entre los dos, decide qué puede ver y hacer el modelo.
# En esta última lección vas a:
#
# 1. convertir la lista fusionada de herramientas de un host a los formatos de herramientas
#    de la **API Messages de Anthropic** y **al estilo de OpenAI**, con nombres que las API
#    aceptan y un camino de vuelta;
# 2. traducir una **llamada a herramienta** del modelo a `tools/call` y devolver el resultado
#    como **resultado de herramienta**, con las dos formas de error, y ver cómo le llega cada
#    una al modelo;
# 3. escribir como código los **deberes del host**: filtrar las herramientas, validar los
#    argumentos, preguntar al usuario antes de una llamada destructiva y llevar un **registro
#    de auditoría**;
# 4. ejecutar un **bucle del agente** dirigido por un **modelo guionizado** sin conexión sobre
#    tres servidores;
# 5. conocer cuatro ataques contra un host y lo que este puede detectar y rechazar:
#    **envenenamiento de herramientas**, **inyección de prompts** a través de los resultados,
#    **reenvío de tokens** (token passthrough) y un servidor que **cambia sus herramientas
#    después de la aprobación**;
# 6. ver el **adaptador para la API de un modelo real**, aunque nada de lo que hay aquí lo
#    necesita;
# 7. poner nombre a cinco **antipatrones** y ver dónde muestra el curso por qué hace daño cada
#    uno;
# 8. mirar atrás, al curso entero, y hacia delante.
#
# El código es `mcpkit/toolformats.py` (los dos formatos) y `mcpkit/agent.py` (el bucle y las
# comprobaciones), sobre el `Host` de `mcpkit/host.py`.

# %% tags=["setup"]
# [en] Setup: run this cell first. It starts three servers behind one host.
# [es] Preparación: ejecuta esta celda primero. Arranca tres servidores detrás de un host.
import json
import os
import sys
import threading

from mcpkit import agent, toolformats
from mcpkit.agent import ScriptedModel, call, run_agent
from mcpkit.client import ServerError
from mcpkit.host import Host, load_config
from mcpkit.validation import compile_schema


def stdio(module, *flags):
    return {"command": sys.executable, "args": ["-m", module, *flags]}


host = Host({"mcpServers": {"notes": stdio("mcpkit.examples.notes"),
                            "files": stdio("mcpkit.examples.tricks"),
                            "verbs": stdio("mcpkit.examples.verbs")}}).start()


def show(messages):
    for message in messages:
        content = message["content"]
        if isinstance(content, str):
            print(f"{message['role']:9}  {content}")
            continue
        for block in content:
            if block["type"] == "text":
                print(f"{message['role']:9}  text       {block['text']}")
            elif block["type"] == "tool_use":
                print(f"{message['role']:9}  tool_use   {block['id']} {block['name']} "
                      f"{json.dumps(block['input'])}")
            else:
                text = " ".join(p.get("text", "") for p in block["content"]).replace("\n", " ")
                flag = " is_error" if block.get("is_error") else ""
                print(f"{message['role']:9}  {block['type']} {block['tool_use_id']}{flag}: "
                      f"{text[:70]}")


print([t["name"] for t in host.tools()])

# %% [markdown] lang="en"
# ## 1. The tool list, in the model's format
#
# A host merges the tools of its servers (lesson 06) into one list of MCP tool definitions:
# `name`, `description`, `inputSchema`, `annotations`... A model API wants the same facts in
# its own shape. Two shapes cover most APIs:
#
# - **Anthropic Messages**: `tools=[{"name", "description", "input_schema"}]`;
# - **OpenAI-style function tools** (Chat Completions, and the many APIs that copy it):
#   `tools=[{"type": "function", "function": {"name", "description", "parameters"}}]`.
#
# The schema passes through untouched: JSON Schema is what both sides already speak.
# `Host.anthropic_tools()` and `Host.openai_tools()` convert the whole merged list.

# %% [markdown] lang="es"
# ## 1. La lista de herramientas, en el formato del modelo
#
# Un host fusiona las herramientas de sus servidores (lección 06) en una lista de
# definiciones de herramientas MCP: `name`, `description`, `inputSchema`, `annotations`...
# La API de un modelo quiere los mismos datos con su propia forma. Dos formas cubren la
# mayoría de las API:
#
# - **Messages de Anthropic**: `tools=[{"name", "description", "input_schema"}]`;
# - **herramientas de función al estilo de OpenAI** (Chat Completions y las muchas API que la
#   copian): `tools=[{"type": "function", "function": {"name", "description",
#   "parameters"}}]`.
#
# El esquema pasa tal cual: JSON Schema es lo que ya hablan los dos lados.
# `Host.anthropic_tools()` y `Host.openai_tools()` convierten la lista fusionada entera.

# %%
search = next(t for t in host.tools() if t["name"] == "notes_search")
print(json.dumps(toolformats.anthropic_tools([search]), indent=1))
function_tool = toolformats.openai_tools([search])[0]
print(function_tool["type"], sorted(function_tool["function"]))
# [en] The whole merged list:
# [es] Toda la lista fusionada:
print(len(host.anthropic_tools()), len(host.openai_tools()))

# %% [markdown] lang="en"
# Names need care. An MCP tool name may be up to 128 characters and hold `.` and `/`
# (`notes.search`, `github/create_issue`); the model APIs accept `^[a-zA-Z0-9_-]{1,64}$`. The
# host must rename, and must be able to **go back**: when the model calls `notes_search`,
# which MCP tool did it mean? `ToolNames` keeps both directions. Names that clean to the same
# text get a suffix; a name that is too long keeps its start and a short digest of the whole.

# %% [markdown] lang="es"
# Los nombres piden cuidado. Un nombre de herramienta MCP puede tener hasta 128 caracteres y
# llevar `.` y `/` (`notes.search`, `github/create_issue`); las API de modelos aceptan
# `^[a-zA-Z0-9_-]{1,64}$`. El host tiene que renombrar y tiene que poder **recorrer el camino
# inverso**: cuando el modelo llama a `notes_search`, ¿a qué herramienta MCP se refería?
# `ToolNames` guarda las dos direcciones. Los nombres que quedan iguales al limpiarlos reciben un
# sufijo; un nombre demasiado largo conserva su comienzo y una huella corta (hash) del nombre
# completo.

# %%
names = toolformats.ToolNames(["notes.search", "notes_search", "fs/read",
                               "a_very_long_server_name/" + "x" * 80])
for mcp_name in ["notes.search", "notes_search", "fs/read", "a_very_long_server_name/" + "x" * 80]:
    print(f"{mcp_name[:40]:42} -> {names.api(mcp_name)}")
print(names.mcp("notes_search_2"))

# %% [markdown] lang="en"
# Two more rules from the APIs: both insist on an object schema (a tool with none gets
# `{"type": "object", "properties": {}}`), and a tool that can only run as a long task
# (`execution.taskSupport: "required"`) is not offered, because this host cannot run it.

# %% [markdown] lang="es"
# Dos reglas más de las API: las dos exigen un esquema de objeto (una herramienta sin él
# recibe `{"type": "object", "properties": {}}`), y una herramienta que solo puede ejecutarse
# como tarea larga (`execution.taskSupport: "required"`) no se ofrece, porque este host no
# sabe ejecutarla.

# %%
print(toolformats.anthropic_tools([
    {"name": "ping", "title": "Ping"},
    {"name": "render_video", "execution": {"taskSupport": "required"}}]))

# %% [markdown] lang="en"
# ## 2. A tool call in, a tool result out
#
# The model answers with **tool calls**. Anthropic's are content blocks of the assistant
# message, `{"type": "tool_use", "id", "name", "input"}`, the input already an object.
# OpenAI-style calls sit in `message.tool_calls`, and their `arguments` is a **string of JSON
# that the model wrote**: it may not parse, and the host must say so to the model rather than
# crash.

# %% [markdown] lang="es"
# ## 2. Entra una llamada a herramienta, sale un resultado de herramienta
#
# El modelo responde con **llamadas a herramientas**. Las de Anthropic son bloques de
# contenido del mensaje del asistente, `{"type": "tool_use", "id", "name", "input"}`, con la
# entrada (`input`) ya como objeto. Las llamadas al estilo de OpenAI están en
# `message.tool_calls`, y sus `arguments` son una **cadena de JSON que escribió el modelo**:
# puede que ni siquiera sea JSON válido, y el host debe decírselo al modelo en lugar de caerse.

# %%
print(toolformats.anthropic_tool_calls([
    {"type": "text", "text": "Let me look."},
    {"type": "tool_use", "id": "toolu_1", "name": "notes_search", "input": {"query": "mcp"}}]))
print(toolformats.openai_tool_calls({"role": "assistant", "tool_calls": [
    {"id": "call_1", "type": "function",
     "function": {"name": "notes_search", "arguments": '{"query": "mcp"}'}},
    {"id": "call_2", "type": "function",
     "function": {"name": "notes_search", "arguments": '{"query": mcp}'}}]}))

# %% [markdown] lang="en"
# A call becomes `tools/call` with the MCP name and the arguments; what comes back becomes a
# tool result the model reads on its next turn. A tool can fail in **two ways**, and they
# read differently to the model:
#
# - an **`isError` result**: the tool ran and says what went wrong, in its own words
#   (`no such file`). The model reads the tool's text, flagged as an error, and can fix its
#   call or tell the user. This is the form for anything the model can act on.
# - a **JSON-RPC error**: the request itself failed (an unknown tool, arguments outside the
#   rules, a server that crashed). The model never sees JSON-RPC: the host words the error as
#   a tool result, flagged as an error too.
#
# Anthropic's `tool_result` has an `is_error` flag; OpenAI's `{"role": "tool"}` message has
# only text, so the error has to be said in words.

# %% [markdown] lang="es"
# Una llamada se convierte en `tools/call` con el nombre MCP y los argumentos; lo que vuelve se
# convierte en un resultado de herramienta que el modelo lee en su siguiente turno. Una
# herramienta puede fallar de **dos maneras**, y el modelo las recibe de forma distinta:
#
# - un **resultado `isError`**: la herramienta se ejecutó y dice qué salió mal, con sus propias
#   palabras (`no such file`). El modelo lee el texto de la herramienta, marcado como error, y
#   puede corregir su llamada o decírselo al usuario. Es la forma para todo aquello sobre lo
#   que el modelo puede actuar.
# - un **error JSON-RPC**: falló la propia solicitud (una herramienta desconocida, argumentos
#   fuera de las reglas, un servidor que se cayó). El modelo nunca ve JSON-RPC: el host redacta
#   el error como un resultado de herramienta, también marcado como error.
#
# El `tool_result` de Anthropic tiene una marca `is_error`; el mensaje `{"role": "tool"}` de
# OpenAI solo tiene texto, así que el error hay que decirlo con palabras.

# %%
missing = host.call_tool("files_read", {"path": "nope.txt"})
print(json.dumps(toolformats.anthropic_tool_result("toolu_2", missing)))
try:
    host.call_tool("files_read", {"path": "../etc/passwd"})
except ServerError as exc:
    error = f"error {exc.code}: {exc.message}"
print(json.dumps(toolformats.anthropic_tool_result("toolu_3", error=error)))
print(json.dumps(toolformats.openai_tool_message("call_2", missing)))
print(json.dumps(toolformats.openai_tool_message("call_3", error=error)))

# %% [markdown] lang="en"
# Content that is not text needs a decision too. `structuredContent` with no content blocks
# becomes its JSON as text; an image goes to Anthropic as an image block, and to a text-only
# format as a placeholder, so the model knows something was there.

# %% [markdown] lang="es"
# El contenido que no es texto también pide una decisión. Un `structuredContent` sin bloques
# de contenido se convierte en su JSON como texto; una imagen va a Anthropic como bloque de
# imagen, y a un formato solo de texto como un marcador, para que el modelo sepa que ahí había
# algo.

# %%
chart = {"content": [{"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}]}
print(toolformats.anthropic_tool_result("toolu_4", chart)["content"])
print(toolformats.openai_tool_message("call_4", chart)["content"])
print(toolformats.result_to_text({"structuredContent": {"path": "notes/plan.md", "size": 44}}))

# %% [markdown] lang="en"
# ## 3. The host's duties, in code
#
# Standing between the model and the servers, the host owes the user four things. Each is a
# few lines in `mcpkit/agent.py`:
#
# 1. **Filter** what the model sees. Not every tool of every server belongs in every
#    conversation: `offered_tools(tools, allow)` keeps the ones the user's `allow(tool)`
#    accepts (and, as section 5 shows, drops the suspicious ones). A tool the model was not
#    shown cannot be called: a call to it is `unknown`.

# %% [markdown] lang="es"
# ## 3. Los deberes del host, en código
#
# Como está entre el modelo y los servidores, el host le debe cuatro cosas al usuario. Cada
# una son unas pocas líneas de `mcpkit/agent.py`:
#
# 1. **Filtrar** lo que ve el modelo. No todas las herramientas de todos los servidores
#    vienen al caso en cada conversación: `offered_tools(tools, allow)` se queda con las que
#    acepta el `allow(tool)` del usuario (y, como muestra la sección 5, quita las
#    sospechosas). Una herramienta que no se le mostró al modelo no se puede llamar: una
#    llamada a ella es `unknown`.

# %%
def read_only(tool):
    return (tool.get("annotations") or {}).get("readOnlyHint") is True


print([t["name"] for t in agent.offered_tools(host.tools(), read_only)])

# %% [markdown] lang="en"
# 2. **Validate** the arguments before calling. The model writes them, and models make
#    mistakes: a number for a string, a missing field, a value outside an `enum`. The tool's
#    `inputSchema` says what is valid; checking it in the host means a bad call costs no
#    round trip and never reaches a server that might not check.

# %% [markdown] lang="es"
# 2. **Validar** los argumentos antes de llamar. Los escribe el modelo, y los modelos se
#    equivocan: un número en lugar de una cadena, un campo que falta, un valor fuera de un
#    `enum`. El `inputSchema` de la herramienta dice qué es válido; comprobarlo en el host
#    significa que una llamada incorrecta no cuesta una ida y vuelta y nunca llega a un servidor
#    que quizá no compruebe.

# %%
conjugate = next(t for t in host.tools() if t["name"] == "conjugate")
problems = compile_schema(conjugate["inputSchema"])
print(problems({"verb": "go", "tense": "past"}))
print(problems({"verb": 7, "tense": "someday"}))

# %% [markdown] lang="en"
# 3. **Confirm** before a call that may do harm. Annotations are hints from the server:
#    `readOnlyHint`, `destructiveHint`, `idempotentHint`, `openWorldHint`. The spec's defaults
#    are pessimistic: a tool that says nothing may be destructive. So the host asks the user
#    unless the tool says it only reads (`readOnlyHint: true`) or that it is not destructive
#    (`destructiveHint: false`). Hints come from the server, so a host trusts them only as far
#    as it trusts the server: they can make a host more careful, never less.

# %% [markdown] lang="es"
# 3. **Confirmar** antes de una llamada que pueda hacer daño. Las anotaciones son
#    indicaciones del servidor: `readOnlyHint`, `destructiveHint`, `idempotentHint`,
#    `openWorldHint`. Los valores por defecto de la especificación son pesimistas: una
#    herramienta que no dice nada puede ser destructiva. Así que el host pregunta al usuario
#    salvo que la herramienta diga que solo lee (`readOnlyHint: true`) o que no es destructiva
#    (`destructiveHint: false`). Las indicaciones vienen del servidor, así que un host se fía de
#    ellas tanto como se fía del servidor: pueden hacerlo más prudente, nunca menos.

# %%
for tool in host.tools():
    if agent.needs_confirmation(tool):
        print(f"{tool['name']:14} {tool.get('annotations')}")

# %% [markdown] lang="en"
# 4. **Audit** every call. Whatever happens to a call, it gets one entry in the host's log,
#    in order: which turn, which tool, which arguments, and the outcome (`ok`, `tool-error`,
#    `protocol-error`, or one of the refusals: `unknown`, `invalid`, `declined`,
#    `quarantined`). The refused calls matter most: they are where something went wrong.
#
# And every call gets an answer. A model that asked for something and heard nothing would
# ask again, so a refusal goes back to the model as an error result that says why.

# %% [markdown] lang="es"
# 4. **Auditar** cada llamada. Pase lo que pase con una llamada, recibe una entrada en el
#    registro del host, en orden: qué turno, qué herramienta, qué argumentos y el outcome (lo
#    que se anota): `ok`, `tool-error`, `protocol-error` o uno de los rechazos (`unknown`,
#    `invalid`, `declined`, `quarantined`). Los rechazos son los que más importan: ahí es donde
#    algo salió mal.
#
# Y cada llamada recibe una respuesta. Un modelo que pidió algo y no recibió respuesta lo
# volvería a pedir, así que un rechazo vuelve al modelo como un resultado de error que dice por
# qué.

# %% [markdown] lang="en"
# ## 4. The agent loop, with a scripted model
#
# The loop is short: show the model the conversation and the tools; if it answers with tool
# calls, run each through the host's checks, append the results, and go round again; stop
# when it answers with text only, or after `max_turns` turns (a model can loop too).
#
# A real model needs a key, a network and money, and never answers the same way twice. A
# lesson, a test and a grader need none of that, so `ScriptedModel` plays a **script**: each
# step is one assistant turn, a list of `call(...)`s or a final text. A step may be a
# function of the conversation so far, to use what a tool answered, as a model would. It is
# deterministic, offline and needs no key.
#
# The task spans the three servers: read Ana's message (files), keep it as a note (notes),
# and put a verb in the past (verbs). The user is asked about every call that needs
# confirmation; here `ask_user` stands in for the dialog a host would show, and says yes.

# %% [markdown] lang="es"
# ## 4. El bucle del agente, con un modelo guionizado
#
# El bucle es corto: muéstrale al modelo la conversación y las herramientas; si responde con
# llamadas a herramientas, pasa cada una por las comprobaciones del host, añade los resultados
# y da otra vuelta; detente cuando responda solo con texto, o tras `max_turns` turnos (un modelo
# también puede entrar en bucle).
#
# Un modelo real necesita una clave, una red y dinero, y nunca responde dos veces igual. Una
# lección, una prueba y un calificador no necesitan nada de eso, así que `ScriptedModel`
# interpreta un **guion**: cada paso es un turno del asistente, una lista de `call(...)` o un
# texto final. Un paso puede ser una función de la conversación hasta ese momento, para usar
# lo que respondió una herramienta, como haría un modelo. Es determinista, funciona sin
# conexión y no necesita ninguna clave.
#
# La tarea abarca los tres servidores: leer el mensaje de Ana (files), guardarlo como nota
# (notes) y poner un verbo en pasado (verbs). Al usuario se le pregunta por cada llamada que
# necesita confirmación; aquí `ask_user` hace las veces del diálogo que mostraría un host, y
# dice que sí.

# %%
def last_text(messages):
    return messages[-1]["content"][0]["content"][0]["text"]


script = [
    [call("files_read", path="inbox/hello.txt")],
    lambda messages: [call("notes_create", title="From Ana", body=last_text(messages)),
                      call("conjugate", verb="go", subject="we", tense="past")],
    "I saved Ana's message as a note. And: 'we went'.",
]
asked = []


def ask_user(name, arguments):
    asked.append(name)
    return True


run = run_agent(host, ScriptedModel(script), "Keep Ana's message as a note; 'go', past, we?",
                confirm=ask_user)
show(run.messages)

# %% [markdown] lang="en"
# The audit log, one entry per call, and who was asked. `notes_create` says
# `destructiveHint: false`, so nobody was asked about it.

# %% [markdown] lang="es"
# El registro de auditoría, una entrada por llamada, y a quién se preguntó. `notes_create`
# dice `destructiveHint: false`, así que no se preguntó a nadie por ella.

# %%
for entry in run.audit:
    print(entry)
print(asked, run.turns, run.finished)

# %% [markdown] lang="en"
# Now a clumsier model: it invents a tool, gets an argument wrong, and tries to delete a note
# that the user does not want deleted. None of the three reaches a server, and the model is
# told why each time.

# %% [markdown] lang="es"
# Ahora un modelo más torpe: se inventa una herramienta, se equivoca en un argumento e intenta
# borrar una nota que el usuario no quiere borrar. Ninguna de las tres llega a un servidor, y
# cada vez se le dice al modelo por qué.

# %%
clumsy = ScriptedModel([
    [call("notes_purge"), call("notes_search", query=42)],
    [call("notes_delete", id="1")],
    "Sorry, I could not tidy up."])
run = run_agent(host, clumsy, "Tidy my notes", confirm=lambda name, arguments: False)
show(run.messages)
print([(e["tool"], e["outcome"]) for e in run.audit])

# %% [markdown] lang="en"
# ## 5. Security at the host
#
# A host runs code written by strangers (servers) on behalf of a program that believes what
# it reads (the model). Four attacks are worth knowing by name.
#
# ### Tool poisoning: orders hidden in a description
#
# The model reads every tool description as part of its instructions. A server can write a
# description that speaks to the model instead of describing the tool. `files --poison` adds
# such a tool:

# %% [markdown] lang="es"
# ## 5. Seguridad en el host
#
# Un host ejecuta código escrito por desconocidos (los servidores) en nombre de un programa
# que se cree lo que lee (el modelo). Vale la pena conocer cuatro ataques por su nombre.
#
# ### Envenenamiento de herramientas: órdenes escondidas en una descripción
#
# El modelo lee cada descripción de herramienta como parte de sus instrucciones. Un servidor
# puede escribir una descripción que le habla al modelo en lugar de describir la herramienta.
# `files --poison` añade una herramienta así:

# %%
poisoned = Host({"mcpServers": {"files": stdio("mcpkit.examples.tricks", "--poison")}}).start()
hello = next(t for t in poisoned.tools() if t["name"] == "files_hello")
print(hello["description"])
print(agent.looks_injected(hello["description"]))
print("files_hello" in [t["name"] for t in agent.offered_tools(poisoned.tools())])

# %% [markdown] lang="en"
# `looks_injected` is a heuristic: it knows the usual phrasings (`ignore previous
# instructions`, `<IMPORTANT>`, `do not tell the user`), not every way to say them. What a
# host can do for sure is **show the user** what it offers the model (the descriptions
# too), and offer a new server's tools only once the user approved them.
#
# ### Prompt injection through a tool result
#
# The same trick works through data. A tool reads a web page, an email, a file: whatever
# text the attacker put there reaches the model as the tool's result. `inbox/offer.txt`
# holds an order for the model. A **gullible** scripted model does what the tool results it
# reads tell it, as a fooled model would. First, a naive host that passes everything through
# (with mcpkit's `Host.handle_anthropic_tool_use`, which translates and nothing more):

# %% [markdown] lang="es"
# `looks_injected` es una heurística: conoce las formulaciones habituales (`ignore previous
# instructions`, `<IMPORTANT>`, `do not tell the user`), no todas las maneras de decirlas. Lo
# que un host sí puede hacer sin duda es **mostrarle al usuario** lo que ofrece al modelo
# (también las descripciones) y ofrecer las herramientas de un servidor nuevo solo cuando el
# usuario las haya aprobado.
#
# ### Inyección de prompts a través del resultado de una herramienta
#
# El mismo truco funciona a través de los datos. Una herramienta lee una página web, un
# correo, un archivo: el texto que haya puesto allí el atacante llega al modelo como resultado
# de la herramienta. `inbox/offer.txt` guarda una orden para el modelo. Un modelo guionizado
# **crédulo** hace lo que le dicen los resultados que lee, como haría un modelo engañado.
# Primero, un host ingenuo que lo deja pasar todo (con el `Host.handle_anthropic_tool_use` de
# mcpkit, que traduce y nada más):

# %%
def naive_loop(model, task, turns=3):
    messages = [{"role": "user", "content": task}]
    for _turn in range(turns):
        reply = model(messages, host.anthropic_tools())
        messages.append(reply)
        uses = [b for b in reply["content"] if b["type"] == "tool_use"]
        if not uses:
            break
        messages.append({"role": "user",
                         "content": [host.handle_anthropic_tool_use(b) for b in uses]})
    return messages


show(naive_loop(ScriptedModel([[call("files_read", path="inbox/offer.txt")], "Summary."],
                              gullible=True), "Summarise my offer"))

# %% [markdown] lang="en"
# The model read the file and deleted `notes/plan.md` (the files server only pretends). The
# same model, with the host's checks: the result is **quarantined** (the model gets a notice
# instead of the text) and the order never reaches it. Had it got through, the second line of
# defence would still hold: `files_delete` is destructive, and the user is asked.

# %% [markdown] lang="es"
# El modelo leyó el archivo y borró `notes/plan.md` (el servidor de archivos solo lo finge).
# El mismo modelo, con las comprobaciones del host: el resultado queda **en cuarentena** (el modelo
# recibe un aviso en lugar del texto) y la orden nunca le llega. Si se hubiera colado, la
# segunda línea de defensa seguiría en pie: `files_delete` es destructiva, y se pregunta al
# usuario.

# %%
run = run_agent(host, ScriptedModel([[call("files_read", path="inbox/offer.txt")], "Summary."],
                                    gullible=True), "Summarise my offer",
                confirm=lambda name, arguments: False)
show(run.messages)
print([(e["tool"], e["outcome"]) for e in run.audit])

# %% [markdown] lang="en"
# No filter catches every injection: a host cannot tell data from orders in general. What it
# can do is keep a fooled model from doing harm: offer only the tools a task needs, validate,
# ask before anything destructive, and log everything. Treat every tool result as data from a
# stranger.
#
# ### Token passthrough: the host's secrets are not the servers'
#
# A host holds secrets: its model API key, and a token per HTTP server. They must stay where
# they belong. Two rules:
#
# - **A token goes only to the server it was issued for.** Each entry of `mcpServers` has its
#   own `token` (or `tokenEnv`); the host never forwards one server's token to another, never
#   puts one in a tool's arguments or in what the model sees. On its side, an MCP server must
#   accept only tokens issued for itself, and must not pass the client's token on to the APIs
#   it calls (the spec forbids this *token passthrough*: it would let anyone holding a token
#   for one service act on another).
# - **A stdio server inherits the host's environment** unless told otherwise, model key
#   included. `files --env` shows what a server can read:

# %% [markdown] lang="es"
# Ningún filtro atrapa todas las inyecciones: un host no puede distinguir en general los
# datos de las órdenes. Lo que sí puede hacer es impedir que un modelo engañado haga daño:
# ofrecer solo las herramientas que necesita la tarea, validar, preguntar antes de todo lo
# destructivo y registrarlo todo. Trata cada resultado de herramienta como datos de un
# desconocido.
#
# ### Reenvío de tokens: los secretos del host no son de los servidores
#
# Un host guarda secretos: la clave de la API de su modelo y un token por cada servidor HTTP.
# Tienen que quedarse donde corresponde. Dos reglas:
#
# - **Un token va solo al servidor para el que se emitió.** Cada entrada de `mcpServers` tiene
#   su propio `token` (o `tokenEnv`); el host nunca reenvía el token de un servidor a otro,
#   nunca lo pone en los argumentos de una herramienta ni en lo que ve el modelo. Por su
#   parte, un servidor MCP debe aceptar solo tokens emitidos para él, y no debe pasar el token
#   del cliente a las API a las que llama (la especificación prohíbe este *reenvío de
#   tokens*, porque permitiría a cualquiera con un token de un servicio actuar sobre otro).
# - **Un servidor stdio hereda el entorno del host** salvo que se le diga otra cosa, clave del
#   modelo incluida. `files --env` muestra lo que puede leer un servidor:

# %%
os.environ["DEMO_MODEL_API_KEY"] = "sk-not-a-real-key"
for options in ({}, {"inherit_env": False}):
    config = {"mcpServers": {"files": stdio("mcpkit.examples.tricks", "--env")}}
    with Host(config, client_options=options) as sandboxed:
        seen = toolformats.result_to_text(sandboxed.call_tool("env_names", {"prefix": "DEMO_"}))
        print(options, seen)
del os.environ["DEMO_MODEL_API_KEY"]
configs = load_config({"mcpServers": {
    "issues": {"url": "http://127.0.0.1:8001/mcp", "tokenEnv": "ISSUES_TOKEN"},
    "wiki": {"url": "http://127.0.0.1:8002/mcp", "tokenEnv": "WIKI_TOKEN"}}})
print([(c.name, c.token_env) for c in configs])

# %% [markdown] lang="en"
# With `inherit_env=False` a server gets only the `env` its config gives it. And each HTTP
# server reads its own variable: nothing in the config lets one server's token reach another.
#
# ### A server that changes its tools after approval
#
# Approving a server's tools once is not enough: a server may change a tool whenever it
# likes and send `notifications/tools/list_changed` (lesson 06's host refetches the list). A
# tool the user approved as harmless can come back with new orders in its description or a
# new argument in its schema (a "rug pull"). The host can **pin** what was approved: a hash of
# each tool's name, description, schema and annotations (`pin_tools`), and offer only tools
# whose definition still matches. `files --rug-pull` changes `files_read` after its first
# call:

# %% [markdown] lang="es"
# Con `inherit_env=False`, un servidor recibe solo el `env` que le da su configuración. Y cada
# servidor HTTP lee su propia variable: nada en la configuración permite que el token de un
# servidor llegue a otro.
#
# ### Un servidor que cambia sus herramientas después de la aprobación
#
# Aprobar una vez las herramientas de un servidor no basta: un servidor puede cambiar una
# herramienta cuando quiera y enviar `notifications/tools/list_changed` (el host de la lección
# 06 vuelve a pedir la lista). Una herramienta que el usuario aprobó como inofensiva puede
# volver con órdenes nuevas en su descripción o un argumento nuevo en su esquema (un *rug
# pull*, un cambio tras la aprobación). El host puede **fijar** lo que se aprobó: una huella
# (hash) del nombre, la descripción, el esquema y las anotaciones de cada herramienta
# (`pin_tools`), y ofrecer solo las herramientas cuya definición sigue coincidiendo.
# `files --rug-pull` cambia `files_read` tras su primera llamada:

# %%
changed = threading.Event()
rug = Host({"mcpServers": {"files": stdio("mcpkit.examples.tricks", "--rug-pull")}},
           on_event=lambda event: event.kind == "list_changed" and changed.set()).start()
pins = agent.pin_tools(agent.offered_tools(rug.tools()))
print(pins["files_read"] == agent.fingerprint(next(t for t in rug.tools()
                                                   if t["name"] == "files_read")))
run = run_agent(rug, ScriptedModel([[call("files_read", path="notes/plan.md")]]), "Read my plan",
                pins=pins)
print(run.audit[0]["outcome"], changed.wait(60))
now = next(t for t in rug.tools() if t["name"] == "files_read")
print(now["description"])
print(now["inputSchema"]["required"], agent.looks_injected(now["description"]))
print("files_read" in [t["name"] for t in agent.offered_tools(rug.tools(), pins=pins)])

# %% [markdown] lang="en"
# The new description would pass any filter of phrasings, and asks the model to copy a
# private file somewhere public. The pin catches it because it does not judge the text: the
# tool is simply not what the user approved. A real host would show the difference and ask
# again.

# %% [markdown] lang="es"
# La nueva descripción pasaría cualquier filtro de formulaciones, y le pide al modelo que
# copie un archivo privado a un lugar público. La huella fijada lo detecta porque no juzga el
# texto: la herramienta simplemente ya no es la que aprobó el usuario. Un host real mostraría
# la diferencia y volvería a preguntar.

# %%
poisoned.close()
rug.close()

# %% [markdown] lang="en"
# ## 6. A real model
#
# `AnthropicModel` has the same signature as the scripted model, `model(messages, tools)`,
# and sends the turn to the Anthropic Messages API with plain `httpx`. Nothing in the course
# or its tests needs it; it reads `ANTHROPIC_API_KEY` only when a turn is sent, and
# `request()` shows the body it would send without sending anything. The loop speaks the
# Anthropic format inside; an OpenAI-style API needs the other half of `toolformats`
# (`openai_tools`, `openai_tool_calls`, `openai_tool_message`), and nothing else changes.

# %% [markdown] lang="es"
# ## 6. Un modelo real
#
# `AnthropicModel` tiene la misma firma que el modelo guionizado, `model(messages, tools)`, y
# envía el turno a la API Messages de Anthropic con `httpx` sin más. Nada del curso ni de sus
# pruebas lo necesita; lee `ANTHROPIC_API_KEY` solo cuando se envía un turno, y `request()`
# muestra el cuerpo que enviaría sin enviar nada. El bucle habla por dentro el formato de
# Anthropic; una API al estilo de OpenAI necesita la otra mitad de `toolformats`
# (`openai_tools`, `openai_tool_calls`, `openai_tool_message`), y no cambia nada más.

# %%
real = agent.AnthropicModel("a-model-name", system="You help with notes and files.")
body = real.request([{"role": "user", "content": "What is in my inbox?"}],
                    toolformats.anthropic_tools(agent.offered_tools(host.tools(), read_only)))
print(sorted(body), [t["name"] for t in body["tools"]][:4])

# [en] To try it for real: set ANTHROPIC_API_KEY, put a model name above, and flip this.
# [es] Para probarlo de verdad: define ANTHROPIC_API_KEY, pon arriba un nombre de modelo y
# [es] cambia esto a `True`.
USE_A_REAL_MODEL = False
if USE_A_REAL_MODEL:
    show(run_agent(host, real, "What is in my inbox?", allow=read_only).messages)

# %% [markdown] lang="en"
# ## 7. Five anti-patterns
#
# Each of these looks harmless, and each breaks something the course has shown.
#
# 1. **Telling the model about MCP in the system prompt.** The model cannot act on it: it
#    never sees a pipe, an id or a method (lesson 00, section 2). What it can use is already in
#    the tool list, the names, descriptions and schemas of section 1, so protocol talk in the
#    prompt only costs tokens, and it invites the model to write "MCP requests" as text that
#    no host will run. The request body of section 6 shows it, checked below.
# 2. **Letting the model talk to a server directly**, say by giving it a server's URL, or a
#    tool that forwards raw JSON-RPC. Every duty of section 3 (filter, validate, confirm,
#    audit) lives in the host, so a call that goes around the host skips them all; the clumsy
#    model of section 4 shows the host catching what a model gets wrong.
# 3. **Logging to standard output** in a stdio server. Standard output is the protocol
#    channel: a stray line reaches the client's decoder as a broken message (lesson 01,
#    section 5; lesson 04b, section 1, where an import-time `print` goes out on the wire).
#    Log to standard error.
# 4. **A stateful HTTP server on a cold-starting function.** A legacy session lives in one
#    process; a platform that starts a fresh instance per request loses it, and the next
#    request gets *session not found* (lesson 07, section 8; lesson 08, section 7). Serve
#    the modern revision, which keeps nothing between requests, or run a long-lived process
#    with affinity.
# 5. **Assuming protocol versions change transparently.** Every revision changed the shape
#    of something: tool definitions gained fields (lesson 04, section 4), and the 2026-07-28
#    revision replaced the handshake itself (lesson 07). A peer does not simply follow your
#    version: a modern server refuses one it does not speak with -32022 and the list it
#    supports (lesson 07, section 2), and a legacy server answers `initialize` with a
#    revision of its own choice, which the client must read and may reject. The second cell
#    below asks for a revision from the future.

# %% [markdown] lang="es"
# ## 7. Cinco antipatrones
#
# Cada uno parece inofensivo, y cada uno rompe algo que el curso ha mostrado.
#
# 1. **Hablarle al modelo de MCP en el prompt del sistema.** El modelo no puede hacer nada con
#    eso: nunca ve una tubería, un id ni un método (lección 00, sección 2). Lo que sí puede
#    usar ya está en la lista de herramientas, los nombres, descripciones y esquemas de la
#    sección 1, así que hablar del protocolo en el prompt solo gasta tokens, e invita al modelo
#    a escribir "solicitudes MCP" como texto que ningún host va a ejecutar. Lo muestra el
#    cuerpo de la solicitud de la sección 6, comprobado abajo.
# 2. **Dejar que el modelo hable directamente con un servidor**, por ejemplo dándole la URL de
#    un servidor o una herramienta que reenvía JSON-RPC en bruto. Todos los deberes de la
#    sección 3 (filtrar, validar, confirmar, auditar) viven en el host, así que una llamada que
#    no pasa por el host se salta todos esos deberes; el modelo torpe de la sección 4 muestra
#    cómo el host detecta los errores del modelo.
# 3. **Escribir el registro en la salida estándar** en un servidor stdio. La salida estándar es el
#    canal del protocolo: una línea suelta llega al decodificador del cliente como un mensaje roto
#    (lección 01, sección 5; lección 04b, sección 1, donde un `print` al importar sale por la
#    conexión). Escribe el registro en el error estándar.
# 4. **Un servidor HTTP con estado en una función con arranque en frío.** Una sesión heredada
#    vive en un proceso; una plataforma que arranca una instancia nueva por solicitud la
#    pierde, y la siguiente solicitud recibe *sesión no encontrada* (lección 07, sección 8;
#    lección 08, sección 7). Sirve la revisión moderna, que no guarda nada entre solicitudes,
#    o ejecuta un proceso de larga duración con afinidad.
# 5. **Suponer que las versiones del protocolo cambian sin que se note.** Cada revisión cambió
#    la forma de algo: las definiciones de herramienta ganaron campos (lección 04, sección 4),
#    y la revisión 2026-07-28 sustituyó el propio handshake (lección 07). El interlocutor no sigue
#    tu versión sin más: un servidor moderno rechaza con -32022 una versión que no habla y
#    devuelve la lista de las que admite (lección 07, sección 2); un servidor heredado
#    responde a `initialize` con una revisión que elige él, que el cliente debe leer y puede
#    rechazar. La segunda celda de abajo pide una revisión del futuro.

# %%
sent_to_model = json.dumps(body)
print(body["system"])
print([word for word in ("MCP", "JSON-RPC", "jsonrpc", "tools/call", "initialize")
       if word in sent_to_model])

# %%
from mcpkit import jsonrpc  # noqa: E402
from mcpkit.examples import verbs  # noqa: E402

replies = []
connection = verbs.server.connect(replies.append)
connection.receive(jsonrpc.request(1, "initialize", {
    "protocolVersion": "2099-01-01", "capabilities": {},
    "clientInfo": {"name": "lesson-10", "version": "1.0"}}))
connection.close()
print("2099-01-01 ->", replies[0]["result"]["protocolVersion"])

# %% [markdown] lang="en"
# ## 8. Where next
#
# You have built MCP from the bytes up: framing on a pipe (01), JSON-RPC and its two kinds of
# error (02), dispatch (03), a server (04, 04b), a client with its reader thread (05), many
# servers behind one host (06), the modern stateless revision (07), streamable HTTP (08),
# real servers and the official SDKs (09), and now the host that faces the model. Every
# layer is a module of `mcpkit` short enough to read in one sitting: read them.
#
# From here:
#
# - **The specification** at modelcontextprotocol.io: the revisions, the authorization
#   rules, and the security best practices, which go further than section 5.
# - **The official SDKs** (Python, TypeScript and others) and the **reference servers**:
#   point `mcpkit`'s client at them, or port the notes server to one, and compare the bytes.
# - **Your own server** for something you use every day, behind your editor or desktop
#   app's `mcpServers` settings, and then behind the loop of this lesson with a real model.
# - **A better host**: show the user a diff when a pinned tool changes; keep the audit log in
#   a file; give each server its own sandbox (a container, or no network); limit how many
#   calls a turn may make.
#
# Thank you for working through the course.

# %% [markdown] lang="es"
# ## 8. Hacia dónde seguir
#
# Has construido MCP desde los bytes: el enmarcado en una tubería (01), JSON-RPC y sus dos
# tipos de error (02), el despacho (03), un servidor (04, 04b), un cliente con su hilo lector
# (05), muchos servidores detrás de un host (06), la revisión moderna sin estado (07), HTTP con
# flujos (08), servidores reales y los SDK oficiales (09), y ahora el host que está frente al
# modelo. Cada capa es un módulo de `mcpkit` lo bastante corto para leerlo de una sentada:
# léelos.
#
# A partir de aquí:
#
# - **La especificación** en modelcontextprotocol.io: las revisiones, las reglas de
#   autorización y las buenas prácticas de seguridad, que van más allá de la sección 5.
# - **Los SDK oficiales** (Python, TypeScript y otros) y los **servidores de referencia**:
#   prueba con ellos el cliente de `mcpkit`, o porta a uno de ellos el servidor de notas, y
#   compara los bytes.
# - **Tu propio servidor** para algo que uses a diario, detrás de la configuración
#   `mcpServers` de tu editor o de tu aplicación de escritorio, y luego detrás del bucle de
#   esta lección con un modelo real.
# - **Un host mejor**: muéstrale al usuario las diferencias cuando cambie una herramienta
#   fijada; guarda el registro de auditoría en un archivo; dale a cada servidor su propio
#   entorno aislado (un contenedor, o sin red); limita cuántas llamadas puede hacer un turno.
#
# Gracias por recorrer el curso.

# %%
host.close()
print(host)
