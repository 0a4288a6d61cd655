"""A server with the awkward tools the server tests need (slow, noisy, asking, changing)."""

from __future__ import annotations

import os
import time

from mcpkit import Context, Server

server = Server("workbench", "0.0.1", page_size=2, cache_ttl_ms=5000)


@server.tool
def echo(text: str) -> str:
    """Echo the text back."""
    return text


@server.tool
def noisy(text: str) -> str:
    """Print to stdout and to fd 1 directly, then answer: none of it may reach the wire."""
    print("this print must not corrupt the protocol stream")
    os.write(1, b"nor this raw write\n")
    return text.upper()


@server.tool
def crash() -> str:
    """Raise: the caller gets isError, the server keeps going."""
    raise RuntimeError("boom")


@server.tool
def wait_for_cancel(ctx: Context, seconds: float = 5.0) -> str:
    """Wait until cancelled (or the time runs out)."""
    if ctx.cancelled.wait(seconds):
        return "cancelled"
    return "finished"


@server.tool
def report(ctx: Context, steps: int = 3) -> str:
    """Send progress and log notifications before answering."""
    for step in range(steps + 1):
        ctx.progress(step, steps, f"step {step}")
        ctx.log("info", {"step": step})
        ctx.log("debug", "fine detail")
    return "done"


@server.tool
def ask_name(ctx: Context) -> str:
    """Ask the user's name (elicitation), in either era."""
    answer = ctx.elicit("What is your name?", {
        "type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
        key="user_name")
    if answer.get("action") != "accept":
        return "no name given"
    return f"Hello, {answer['content']['name']}!"


@server.tool
def two_rounds(ctx: Context) -> str:
    """Two questions in two rounds; the first answer must survive into the second round."""
    first = ctx.elicit("First?", {"type": "object", "properties": {"a": {"type": "string"}}},
                       key="step1")
    ctx.state["seen_first"] = True
    second = ctx.sample(f"Second, after {first['content']['a']}?", key="step2")
    return f"{first['content']['a']} then {second['content']['text']}"


@server.tool
def add_tool(name: str) -> str:
    """Register a new tool at run time (clients get list_changed)."""
    server.tool(lambda: "new", name=name, description="added at run time")
    return f"added {name}"


@server.tool
def touch(uri: str) -> str:
    """Tell subscribers that a resource changed."""
    server.notify_resource_updated(uri)
    return "touched"


@server.tool
def slow(seconds: float = 0.2) -> str:
    time.sleep(seconds)
    return "slow done"


@server.resource("mem://greeting", description="A fixed greeting")
def greeting() -> str:
    return "hello"


@server.prompt
def greet(name: str, style: str = "plain") -> str:
    """Greet someone."""
    return f"Say hello to {name} in a {style} way."

print("an import-time print must reach stderr, not the wire")
