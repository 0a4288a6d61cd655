"""The everything server: every feature the official conformance suite exercises.

``mcpkit serve mcpkit.examples.everything:server --http`` is what ``conformance/`` runs the
suite's server scenarios against, for both revisions (2025-11-25 and 2026-07-28) on one
endpoint. The names and texts below (``test_simple_text``, ``test://static-text``, ...) are
the suite's fixtures. Everything is written with the public API: decorators, content
helpers and :class:`~mcpkit.Context`, so one tool body serves both eras. In the legacy
era ``ctx.elicit`` sends a real request to the client and waits; in the modern era it
makes the call return ``input_required`` and picks the answer up on the retry.
"""

from __future__ import annotations

import io
import json
import os
import struct
import time
import wave
import zlib
from typing import Annotated

from mcpkit import Context, JsonRpcError, Server, ToolResult
from mcpkit import content as c
from mcpkit.jsonrpc import INTERNAL_ERROR

server = Server(
    "mcpkit-everything",
    "1.0.0",
    title="mcpkit everything server",
    instructions="Fixtures for the MCP conformance suite: tools, resources and prompts "
                 "named test_* and test://*.",
)


def _png(width: int = 2, height: int = 2, rgb: tuple[int, int, int] = (220, 40, 40)) -> bytes:
    """A tiny valid PNG (8-bit RGB), made here so the example ships no binary files."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data)))

    rows = b"".join(b"\x00" + bytes(rgb) * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows))
            + chunk(b"IEND", b""))


def _wav(seconds: float = 0.05, rate: int = 8000) -> bytes:
    """A short silent WAV (16-bit mono)."""
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(b"\x00\x00" * int(seconds * rate))
    return buffer.getvalue()


PNG = _png()
WAV = _wav()
NAME_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


def _text_of(answer: dict, field: str, default: str = "") -> str:
    """A field of an accepted elicitation, or ``default`` if the user declined."""
    value = (answer.get("content") or {}).get(field, default)
    return str(value)


def _outcome(answer: dict) -> str:
    """An elicitation's result, as the suite's reference server words it."""
    return f"action={answer.get('action')}, content={json.dumps(answer.get('content') or {})}"


def _sampled_text(result: dict) -> str:
    content = result.get("content")
    if isinstance(content, list):  # sampling with tools may answer with a list of blocks
        content = content[0] if content else {}
    return (content or {}).get("text", "")


# -- content of every kind ------------------------------------------------------------


@server.tool
def test_simple_text() -> str:
    """Tests simple text content response."""
    return "This is a simple text response for testing."


@server.tool
def test_image_content() -> dict:
    """Tests image content response."""
    return c.image(PNG, "image/png")


@server.tool
def test_audio_content() -> dict:
    """Tests audio content response."""
    return c.audio(WAV, "audio/wav")


@server.tool
def test_embedded_resource() -> dict:
    """Tests embedded resource content response."""
    return c.embedded_resource("test://embedded-resource", text="This is an embedded resource "
                               "content.", mime_type="text/plain")


@server.tool
def test_multiple_content_types() -> list[dict]:
    """Tests response with multiple content types (text, image, resource)."""
    return [
        c.text("Multiple content types test:"),
        c.image(PNG, "image/png"),
        c.embedded_resource("test://mixed-content-resource", mime_type="application/json",
                            text=json.dumps({"test": "data", "value": 123})),
    ]


@server.tool
def test_error_handling() -> ToolResult:
    """Tests error response handling: a tool error (isError), not a protocol error."""
    return c.error_result("This tool intentionally returns an error for testing")


# -- request-scoped notifications -----------------------------------------------------


@server.tool
def test_tool_with_logging(ctx: Context) -> str:
    """Tests tool that emits log messages during execution."""
    for step, text in enumerate(("Tool execution started", "Tool processing data",
                                 "Tool execution completed")):
        if step:
            time.sleep(0.05)
        ctx.log("info", text)
    return "Tool with logging executed successfully"


@server.tool
def test_tool_with_progress(ctx: Context) -> str:
    """Tests tool that reports progress notifications."""
    for step in (0, 50, 100):
        ctx.progress(step, 100, f"Completed step {step} of 100")
        if step < 100:
            time.sleep(0.05)
    return str(ctx.progress_token)


@server.tool
def test_logging_tool(ctx: Context) -> str:
    """Diagnostic: logs only when the request's _meta asked for a log level (2026-07-28)."""
    ctx.log("info", "Diagnostic trace logging activated")
    return "Logging evaluated"


# -- asking the client: real requests (legacy) or input_required (modern) -------------


@server.tool
def test_sampling(prompt: Annotated[str, "The prompt to send to the LLM"], ctx: Context) -> str:
    """Tests server-initiated sampling (LLM completion request)."""
    return f"LLM response: {_sampled_text(ctx.sample(prompt, max_tokens=100))}"


@server.tool
def test_elicitation(message: Annotated[str, "The message to show the user"],
                     ctx: Context) -> str:
    """Tests server-initiated elicitation (user input request)."""
    answer = ctx.elicit(message, {
        "type": "object",
        "properties": {"response": {"type": "string", "description": "User's response"}},
        "required": ["response"],
    })
    return f"User response: {_outcome(answer)}"


@server.tool
def test_elicitation_sep1034_defaults(ctx: Context) -> str:
    """Tests elicitation with default values for every primitive type (SEP-1034)."""
    answer = ctx.elicit("Please review and update the form fields with defaults", {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "User name", "default": "John Doe"},
            "age": {"type": "integer", "description": "User age", "default": 30},
            "score": {"type": "number", "description": "User score", "default": 95.5},
            "status": {"type": "string", "description": "User status",
                       "enum": ["active", "inactive", "pending"], "default": "active"},
            "verified": {"type": "boolean", "description": "Verification status",
                         "default": True},
        },
        "required": [],
    })
    return f"Elicitation completed: {_outcome(answer)}"


@server.tool
def test_elicitation_sep1330_enums(ctx: Context) -> str:
    """Tests elicitation with the five enum schema variants (SEP-1330)."""
    options = [{"const": f"value{i}", "title": t}
               for i, t in enumerate(("First", "Second", "Third"), 1)]
    answer = ctx.elicit("Please select options from the enum fields", {
        "type": "object",
        "properties": {
            "untitledSingle": {"type": "string", "description": "Select one option",
                               "enum": ["option1", "option2", "option3"]},
            "titledSingle": {"type": "string", "description": "Select one option with titles",
                             "oneOf": [{**o, "title": o["title"] + " Option"} for o in options]},
            "legacyEnum": {"type": "string", "description": "Select one option (legacy)",
                           "enum": ["opt1", "opt2", "opt3"],
                           "enumNames": ["Option One", "Option Two", "Option Three"]},
            "untitledMulti": {"type": "array", "description": "Select multiple options",
                              "minItems": 1, "maxItems": 3,
                              "items": {"type": "string",
                                        "enum": ["option1", "option2", "option3"]}},
            "titledMulti": {"type": "array", "description": "Select multiple options with titles",
                            "minItems": 1, "maxItems": 3,
                            "items": {"anyOf": [{**o, "title": o["title"] + " Choice"}
                                                for o in options]}},
        },
        "required": [],
    })
    return f"Elicitation completed: {_outcome(answer)}"


@server.tool
def test_missing_capability(ctx: Context) -> str:
    """Needs the client's sampling capability: without it, -32021 (2026-07-28)."""
    return f"Success: {_sampled_text(ctx.sample('Say hello', max_tokens=20))}"


@server.tool
def test_streaming_elicitation(ctx: Context) -> str:
    """Diagnostic: asks for input without ever putting a request on the response stream."""
    ctx.progress(50, 100, "halfway")
    answer = ctx.elicit("Anything to add?", {"type": "object",
                                             "properties": {"note": {"type": "string"}}})
    return f"Streaming complete: {_text_of(answer, 'note')}"


@server.tool
def test_input_required_result_elicitation(ctx: Context) -> str:
    """MRTR: asks the user's name (input request "user_name"), then greets them."""
    answer = ctx.elicit("What is your name?", NAME_SCHEMA, key="user_name")
    return f"Hello, {_text_of(answer, 'name', 'stranger')}!"


@server.tool
def test_input_required_result_sampling(ctx: Context) -> str:
    """MRTR: asks the client's model a question (input request "capital_question")."""
    result = ctx.sample("What is the capital of France?", max_tokens=100, key="capital_question")
    return f"Sampling result: {_sampled_text(result)}"


@server.tool
def test_input_required_result_list_roots(ctx: Context) -> str:
    """MRTR: asks for the client's roots (input request "client_roots")."""
    roots = ctx.list_roots(key="client_roots")
    return f"Found {len(roots)} root(s): " + ", ".join(r.get("uri", "?") for r in roots)


@server.tool
def test_input_required_result_request_state(ctx: Context) -> str | ToolResult:
    """MRTR: keeps its own state in requestState across the round trip."""
    ctx.state.setdefault("nonce", os.urandom(4).hex())  # set in round 1, sealed, read back
    answer = ctx.elicit("Please confirm", {"type": "object", "properties": {
        "ok": {"type": "boolean"}}, "required": ["ok"]}, key="confirm")
    if (answer.get("content") or {}).get("ok") is not True:
        return c.error_result("not confirmed")
    return f"state-ok: requestState validated (nonce {ctx.state['nonce']})"


@server.tool
def test_input_required_result_multiple_inputs(ctx: Context) -> str:
    """MRTR: three input requests at once (elicitation, sampling, roots)."""
    answers = ctx.ask({
        "user_name": ("elicitation/create", {"mode": "form", "message": "What is your name?",
                                             "requestedSchema": NAME_SCHEMA}),
        "greeting": ("sampling/createMessage", {"messages": [{"role": "user", "content": {
            "type": "text", "text": "Generate a greeting"}}], "maxTokens": 50}),
        "client_roots": ("roots/list", {}),
    })
    name = _text_of(answers["user_name"], "name", "stranger")
    roots = answers["client_roots"].get("roots", [])
    return f"Name: {name}; Greeting: {_sampled_text(answers['greeting'])}; Roots: {len(roots)}"


@server.tool
def test_input_required_result_multi_round(ctx: Context) -> str:
    """MRTR: two rounds, the second question asked only once the first is answered."""
    name = _text_of(ctx.elicit("Step 1: What is your name?", NAME_SCHEMA, key="step1"), "name")
    color = _text_of(ctx.elicit("Step 2: What is your favorite color?", {
        "type": "object", "properties": {"color": {"type": "string"}}, "required": ["color"]},
        key="step2"), "color")
    return f"Multi-round complete for {name} who likes {color}"


@server.tool
def test_input_required_result_tampered_state(ctx: Context) -> str:
    """MRTR: its requestState is HMAC-sealed, so a modified one is refused (-32602)."""
    answer = ctx.elicit("Please confirm", {"type": "object", "properties": {
        "ok": {"type": "boolean"}}, "required": ["ok"]}, key="confirm")
    return f"integrity-ok: state verified (action={answer.get('action')})"


@server.tool
def test_input_required_result_capabilities(ctx: Context) -> str:
    """MRTR: asks only for what the client declared it can provide."""
    wanted = {}
    if ctx.client_supports("elicitation"):
        wanted["elicit_input"] = ("elicitation/create", {
            "mode": "form", "message": "Elicitation input",
            "requestedSchema": {"type": "object", "properties": {"value": {"type": "string"}},
                                "required": ["value"]}})
    if ctx.client_supports("sampling"):
        wanted["sample_input"] = ("sampling/createMessage", {"messages": [{
            "role": "user", "content": {"type": "text", "text": "Sample request"}}],
            "maxTokens": 50})
    if not wanted:
        return "No supported capabilities declared"
    answers = ctx.ask(wanted)
    return f"capabilities-ok: received {','.join(answers)}"


# -- HTTP custom headers (2026-07-28): the argument is mirrored into Mcp-Param-Region --


@server.tool(input_schema={
    "type": "object",
    "properties": {"region": {"type": "string", "description": "Region to query",
                              "x-mcp-header": "Region"}},
    "required": ["region"],
})
def test_x_mcp_header(region: str) -> str:
    """Echoes its region argument, which clients also send as the Mcp-Param-Region header."""
    return f"Region: {region}"


@server.tool(input_schema={
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {"address": {"$anchor": "addressDef", "type": "object", "properties": {
        "street": {"type": "string"}, "city": {"type": "string"}}}},
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
})
def json_schema_2020_12_tool(**arguments: object) -> str:
    """Tool with JSON Schema 2020-12 features, listed verbatim (SEP-1613, SEP-2106)."""
    return f"JSON Schema 2020-12 tool called with: {json.dumps(arguments)}"


# -- SSE resumability (2025-11-25): a call that closes its own stream -----------------


@server.tool
def test_reconnection(ctx: Context) -> str:
    """Closes its response stream before it answers: the client must reconnect (GET with
    Last-Event-ID) to get the result."""
    ctx.end_stream()
    time.sleep(0.05)  # answer after the client has seen the stream end
    return "Reconnection test completed: the result came on the resumed stream"


# -- tasks (the io.modelcontextprotocol/tasks extension, 2026-07-28) -----------------


@server.tool
def greet(name: str) -> str:
    """Says hello; never a task."""
    return f"Hello, {name}!"


@server.tool(task_support="optional")
def slow_compute(seconds: float, ctx: Context, label: str = "") -> str:
    """Waits `seconds` (a task when the client takes tasks), then reports; cancellable."""
    if ctx.cancelled.wait(max(0.0, seconds)):
        return "cancelled"  # a cancelled task keeps its status: this is not recorded
    return f"Computed {label or 'result'} after {seconds:g} s"


@server.tool(task_support="required")
def failing_job(ctx: Context) -> str:
    """Runs for a moment, then fails as a tool (a completed task with isError)."""
    ctx.cancelled.wait(0.2)
    raise RuntimeError("the job failed, as it always does")


@server.tool(task_support="optional")
def protocol_error_job() -> str:
    """Breaks with a JSON-RPC error (a failed task)."""
    raise JsonRpcError(INTERNAL_ERROR, "the job broke below the tool level")


@server.tool(task_support="optional")
def confirm_delete(filename: str, ctx: Context) -> str:
    """Asks the user to confirm (the task waits in input_required), then "deletes"."""
    answer = ctx.elicit(f"Delete {filename}?", {"type": "object", "properties": {
        "confirm": {"type": "boolean"}}, "required": ["confirm"]})
    confirmed = (answer.get("content") or {}).get("confirm") is True
    return f"{'Deleted' if confirmed else 'Kept'} {filename}"


@server.tool(task_support="optional")
def multi_input(ctx: Context) -> str:
    """Asks two questions at once; the task waits until both are answered."""
    answers = ctx.ask({
        "name": ("elicitation/create", {"mode": "form", "message": "Your name?",
                                        "requestedSchema": NAME_SCHEMA}),
        "confirm": ("elicitation/create", {"mode": "form", "message": "Go ahead?",
                                           "requestedSchema": {"type": "object", "properties": {
                                               "confirm": {"type": "boolean"}}}}),
    })
    return f"Both answered: {_outcome(answers['name'])}, {_outcome(answers['confirm'])}"


@server.tool(task_support="required", defer_task=True)
def test_tool_with_task(ctx: Context) -> str:
    """Asks the user's name synchronously (input_required), then becomes a task."""
    name = _text_of(ctx.elicit("What is your name?", NAME_SCHEMA, key="user_name"), "name")
    ctx.start_task()
    ctx.cancelled.wait(0.1)
    return f"Hello, {name}, from a task!"


# -- list changes: the triggers flip a dynamic entry, which notifies listeners ---------


def _dynamic_tool() -> str:
    """A tool that comes and goes (test_trigger_tool_change)."""
    return "I am here for now."


def _dynamic_prompt() -> str:
    """A prompt that comes and goes (test_trigger_prompt_change)."""
    return "This prompt comes and goes."


@server.tool
def test_trigger_tool_change() -> str:
    """Adds or removes the tool test_dynamic_tool, so tools/list changes."""
    if "test_dynamic_tool" in server.tools:
        server.remove_tool("test_dynamic_tool")
        return "Removed test_dynamic_tool"
    server.tool(_dynamic_tool, name="test_dynamic_tool")
    return "Added test_dynamic_tool"


@server.tool
def test_trigger_prompt_change() -> str:
    """Adds or removes the prompt test_dynamic_prompt, so prompts/list changes."""
    if "test_dynamic_prompt" in server.prompts:
        server.remove_prompt("test_dynamic_prompt")
        return "Removed test_dynamic_prompt"
    server.prompt(_dynamic_prompt, name="test_dynamic_prompt")
    return "Added test_dynamic_prompt"


# -- resources ------------------------------------------------------------------------


@server.resource("test://static-text", name="static-text", title="Static Text Resource")
def static_text() -> str:
    """A static text resource for testing."""
    return "This is the content of the static text resource."


@server.resource("test://static-binary", name="static-binary", title="Static Binary Resource",
                 mime_type="image/png")
def static_binary() -> bytes:
    """A static binary resource (image) for testing."""
    return PNG


@server.resource("test://template/{id}/data", name="template", title="Resource Template",
                 mime_type="application/json")
def template_data(id: str) -> str:
    """A resource template with parameter substitution."""
    return json.dumps({"id": id, "templateTest": True, "data": f"Data for ID: {id}"})


@server.resource("test://watched-resource", name="watched-resource", title="Watched Resource")
def watched_resource() -> str:
    """A resource clients can subscribe to."""
    return "Watched resource content"


# -- prompts --------------------------------------------------------------------------


@server.prompt(title="Simple Test Prompt")
def test_simple_prompt() -> str:
    """A simple prompt without arguments."""
    return "This is a simple prompt for testing."


@server.prompt(title="Prompt With Arguments")
def test_prompt_with_arguments(arg1: str, arg2: str) -> str:
    """A prompt with required arguments.

    Args:
        arg1: First test argument.
        arg2: Second test argument.
    """
    return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"


@server.prompt(title="Prompt With Embedded Resource")
def test_prompt_with_embedded_resource(resourceUri: str) -> list[dict]:
    """A prompt that includes an embedded resource.

    Args:
        resourceUri: URI of the resource to embed.
    """
    return [
        {"role": "user", "content": c.embedded_resource(
            resourceUri, text="Embedded resource content for testing.", mime_type="text/plain")},
        {"role": "user", "content": c.text("Please process the embedded resource above.")},
    ]


@server.prompt(title="Prompt With Image")
def test_prompt_with_image() -> list[dict]:
    """A prompt that includes image content."""
    return [
        {"role": "user", "content": c.image(PNG, "image/png")},
        {"role": "user", "content": c.text("Please analyze the image above.")},
    ]


@server.prompt(title="Prompt that asks first")
def test_input_required_result_prompt(ctx: Context) -> str:
    """MRTR: asks for context (input request "user_context") before building the prompt."""
    answer = ctx.elicit("What context should the prompt use?", {
        "type": "object", "properties": {"context": {"type": "string"}}, "required": ["context"]},
        key="user_context")
    return f"Prompt with context: {_text_of(answer, 'context')}"


@server.completion("prompt", "test_prompt_with_arguments")
def complete_arguments(argument: str, value: str, context: dict) -> list[str]:
    candidates = {"arg1": ["hello", "help", "world"], "arg2": ["world", "wide"]}
    return [v for v in candidates.get(argument, []) if v.startswith(value)]


@server.completion("resource", "test://template/{id}/data")
def complete_template_id(argument: str, value: str, context: dict) -> list[str]:
    return [v for v in ("1", "2", "42") if v.startswith(value)]


if __name__ == "__main__":
    server.run()
