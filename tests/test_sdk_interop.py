"""The official Python SDK (PyPI `mcp`, pinned in pyproject) drives mcpkit's notes server.

Real subprocess and pipes, or real loopback HTTP (uvicorn), the SDK's own client in each
connection mode: the legacy handshake, the modern revision pinned, and "auto" (probe with
server/discover).
"""

from __future__ import annotations

import asyncio
import sys

import pytest
from conftest import ROOT
from mcp import Client, StdioServerParameters


def _notes() -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable,
                                 args=["-m", "mcpkit", "serve", "mcpkit.examples.notes:server"],
                                 cwd=str(ROOT))


async def _drive(mode: str, url: str | None = None) -> dict:
    async with Client(url or _notes(), mode=mode) as client:
        tools = await client.list_tools()
        search = await client.call_tool("notes_search", {"query": "mcp"})
        created = await client.call_tool("notes_create", {"title": "SDK", "body": "from mcp"})
        bad = await client.call_tool("notes_delete", {"id": "nope"})
        resource = await client.read_resource("notes://2")
        prompt = await client.get_prompt("review_note", {"id": "1"})
        return {
            "version": client.protocol_version,
            "tools": [t.name for t in tools.tools],
            "destructive": tools.tools[3].annotations.destructive_hint,
            "search": search.content[0].text,
            "created": created.content[0].text,
            "bad": (bad.is_error, bad.content[0].text),
            "resource": resource.contents[0].text,
            "prompt_roles": [m.role for m in prompt.messages],
        }


@pytest.fixture(scope="module")
def notes_url():
    from mcpkit.examples import notes
    from mcpkit.transports.http import HttpServerThread

    with HttpServerThread(notes.server) as served:
        yield served.url


@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize("mode, version", [("legacy", "2025-11-25"),
                                           ("2026-07-28", "2026-07-28"),
                                           ("auto", "2026-07-28")])
def test_official_sdk_client_drives_the_notes_server(mode, version, transport, request):
    url = request.getfixturevalue("notes_url") if transport == "http" else None
    seen = asyncio.run(asyncio.wait_for(_drive(mode, url), 60))
    assert seen["version"] == version
    assert seen["tools"] == ["notes_list", "notes_search", "notes_create", "notes_delete"]
    assert seen["destructive"] is True
    assert '"title": "MCP"' in seen["search"]
    if transport == "stdio":  # a fresh process: 3 seed notes, so this is the 4th
        assert seen["created"] == "created note 4"
    else:  # one in-process server for the module: ids go on from run to run
        assert seen["created"].startswith("created note ")
    assert seen["bad"][0] is True and "nope" in seen["bad"][1]
    assert seen["resource"].startswith("# MCP")
    assert seen["prompt_roles"] == ["user", "user"]
