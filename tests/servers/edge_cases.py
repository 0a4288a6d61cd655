"""A server for the reliability tests: handlers that produce what JSON cannot carry, and
prompt and resource handlers that ask the client something (legacy era) before answering."""

from mcpkit import Context, Server

server = Server("edge-cases")


@server.tool(structured=True)
def not_a_number() -> dict:
    """Returns a float JSON has no literal for."""
    return {"value": float("nan")}


@server.tool()
def progress_nan(ctx: Context) -> str:
    """Reports progress with an infinite value, then answers."""
    ctx.progress(float("inf"))
    return "done"


@server.tool()
def echo(text: str) -> str:
    """Echoes its text (lone surrogates included)."""
    return text


@server.prompt()
def confirm_prompt(ctx: Context) -> str:
    """A prompt that asks the user first (elicitation nested in prompts/get)."""
    schema = {"type": "object", "properties": {"name": {"type": "string"}}}
    answer = ctx.elicit("Your name?", schema)
    return f"Hello, {answer.get('content', {}).get('name')}"


@server.resource("roots://first")
def first_root(ctx: Context) -> str:
    """A resource that asks the client for its roots (roots nested in resources/read)."""
    roots = ctx.list_roots()
    return roots[0]["uri"] if roots else "none"


@server.resource("notes://{id}")
def note(id: str) -> str:
    return f"note {id!r}"


@server.tool()
def progress_three(ctx: Context) -> str:
    """Reports progress three times, then answers at once."""
    for step in (1, 2, 3):
        ctx.progress(step, 3)
    ctx.log("info", "done counting")
    return "counted"
