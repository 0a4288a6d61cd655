"""A tiny server for the two-worker HTTP test: every answer names the process that gave it."""

from __future__ import annotations

import os

from mcpkit import Context, Server

server = Server("workers", "1.0.0")


@server.tool
def whoami() -> str:
    """This worker's process id."""
    return str(os.getpid())


@server.tool
def greet(ctx: Context) -> str:
    """Asks for a name (input_required), then greets; says which processes asked and answered."""
    ctx.state.setdefault("asked_by", os.getpid())  # sealed into requestState in round 1
    answer = ctx.elicit("Your name?", {"type": "object", "properties": {
        "name": {"type": "string"}}, "required": ["name"]}, key="name")
    return f"asked_by={ctx.state['asked_by']} answered_by={os.getpid()} " \
           f"Hello, {answer['content']['name']}!"
