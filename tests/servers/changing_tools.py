"""A server whose tool list changes at run time (through its own tools)."""

from __future__ import annotations

from mcpkit import Server

server = Server("changing", "1.0.0")


@server.tool
def add_tool(name: str) -> str:
    """Register a new tool."""
    server.tool(lambda: f"I am {name}", name=name, description=f"{name}, added at run time")
    return f"added {name}"


@server.tool
def remove_tool(name: str) -> str:
    """Unregister a tool."""
    server.remove_tool(name)
    return f"removed {name}"


if __name__ == "__main__":
    server.run()
