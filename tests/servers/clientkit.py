"""The mcpkit server the client tests talk to: plain, slow, crashing, asking and noisy tools."""

from __future__ import annotations

import os
import sys
import time

from mcpkit import Context, Server

server = Server("clientkit", "1.0.0", page_size=2, instructions="For the client tests.")


@server.tool
def echo(text: str) -> str:
    """Echo the text back."""
    return text


@server.tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool
def fail(message: str = "it broke") -> str:
    """Raise: the caller gets an isError result, not an exception."""
    raise RuntimeError(message)


@server.tool
def sleep(seconds: float = 1.0) -> str:
    """Sleep, then answer."""
    time.sleep(seconds)
    return "slept"


@server.tool
def wait_for_cancel(ctx: Context, seconds: float = 10.0) -> str:
    """Wait until cancelled; say on stderr whether the cancellation arrived."""
    if ctx.cancelled.wait(seconds):
        print("CANCELLED", ctx.request_id, file=sys.stderr, flush=True)
        return "cancelled"
    return "finished"


@server.tool
def crash(code: int = 3) -> str:
    """Exit the whole server process at once (as a crash would), after a line on stderr."""
    print(f"about to crash with {code}", file=sys.stderr, flush=True)
    os._exit(code)


@server.tool
def pid() -> int:
    """The server's process id."""
    return os.getpid()


@server.tool
def progress(ctx: Context, steps: int = 3, delay: float = 0.0) -> str:
    """Report progress (and log) before answering."""
    for step in range(1, steps + 1):
        time.sleep(delay)
        ctx.progress(step, steps, f"step {step}")
        ctx.log("info", f"step {step}")
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
def interview(ctx: Context) -> str:
    """Elicitation, then sampling, then roots: three rounds in the modern era."""
    first = ctx.elicit("Topic?", {"type": "object", "properties": {"topic": {"type": "string"}}},
                       key="topic")
    sample = ctx.sample(f"Say something about {first['content']['topic']}", key="model")
    roots = ctx.list_roots(key="roots")
    return f"{first['content']['topic']}|{sample['content']['text']}|{len(roots)} roots"


@server.tool
def touch(uri: str) -> str:
    """Tell subscribers a resource changed."""
    server.notify_resource_updated(uri)
    return "touched"


@server.tool
def add_tool(name: str) -> str:
    """Register a new tool at run time (clients get list_changed)."""
    server.tool(lambda: "new", name=name, description="added at run time")
    return f"added {name}"


@server.resource("mem://greeting", description="A fixed greeting")
def greeting() -> str:
    return "hello"


@server.resource("mem://items/{item}", description="One item")
def item(item: str) -> str:
    return f"item {item}"


@server.prompt
def greet(name: str) -> str:
    """Greet someone."""
    return f"Say hello to {name}."


@server.completion("prompt", "greet")
def complete_name(argument: str, value: str, context: dict) -> list[str]:
    return [n for n in ("ada", "alan", "grace") if n.startswith(value)]


if __name__ == "__main__":
    server.run()
