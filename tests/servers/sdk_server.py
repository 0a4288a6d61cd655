"""A server written with the official Python SDK (PyPI ``mcp``, pinned to 2.3.0).

It serves both eras: the first request of a connection decides (server/discover or other
modern ``_meta`` -> 2026-07-28; ``initialize`` -> the handshake).
"""

from __future__ import annotations

import os
import time

from mcp.server.mcpserver import Context, MCPServer

mcp = MCPServer("sdk-server", version="2.3.0")


@mcp.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return text


@mcp.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@mcp.tool()
def sleep(seconds: float = 1.0) -> str:
    """Sleep, then answer."""
    time.sleep(seconds)
    return "slept"


@mcp.tool()
def pid() -> int:
    """The server's process id."""
    return os.getpid()


@mcp.tool()
async def progress(steps: int, ctx: Context) -> str:
    """Report progress before answering."""
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps)
    return "done"


@mcp.resource("mem://greeting")
def greeting() -> str:
    """A fixed greeting."""
    return "hello from the SDK"


@mcp.prompt()
def greet(name: str) -> str:
    """Greet someone."""
    return f"Say hello to {name}."


if __name__ == "__main__":
    mcp.run()
