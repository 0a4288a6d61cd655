"""One of several servers with colliding names: run as ``colliding.py NAME``.

Every instance has the tool ``search``, the prompt ``summary`` and the resource
``mem://shared``; each also has ``NAME_info`` and ``mem://NAME``, which are unique.
"""

from __future__ import annotations

import sys

from mcpkit import Server

NAME = sys.argv[1] if len(sys.argv) > 1 else "colliding"
server = Server(NAME, "1.0.0")


@server.tool(name="search", description=f"Search {NAME}.")
def search(query: str) -> str:
    return f"{NAME} found {query}"


@server.tool(name=f"{NAME}_info", description=f"About {NAME}.")
def info() -> str:
    return f"I am {NAME}"


@server.resource("mem://shared")
def shared() -> str:
    return f"shared from {NAME}"


@server.resource(f"mem://{NAME}")
def own() -> str:
    return f"own of {NAME}"


@server.resource("mem://" + NAME + "/{part}", name="part")
def part(part: str) -> str:
    return f"{NAME} part {part}"


@server.prompt(name="summary", description=f"Summarise {NAME}.")
def summary() -> str:
    return f"Summarise {NAME}."


if __name__ == "__main__":
    server.run()
