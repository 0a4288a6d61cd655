"""Issue 14, the client's rough edges: each case from real peers, against real processes."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator

import pytest
from conftest import SERVERS

from mcpkit import Client
from mcpkit.transports.http import HttpServerThread

EDGE = [sys.executable, "-m", "mcpkit", "serve", str(SERVERS / "edge_cases.py")]


@pytest.fixture(scope="module")
def edge_url() -> Iterator[str]:
    sys.path.insert(0, str(SERVERS))
    import edge_cases

    with HttpServerThread(edge_cases.server) as served:
        yield served.url


@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize("version", [None, "legacy"])
def test_a_requests_notifications_are_delivered_before_its_result(transport, version, edge_url):
    """A slow progress callback must not let call_tool return first (wire order)."""
    seen: list[str] = []

    def slow_progress(params: dict) -> None:
        time.sleep(0.05)
        seen.append(f"progress {params['progress']}")

    def on_log(params: dict) -> None:
        time.sleep(0.05)
        seen.append("log")

    kwargs = {"version": version, "log_level": "debug", "on_log": on_log, "timeout": 20}
    client = Client(url=edge_url, **kwargs) if transport == "http" else \
        Client(EDGE[0], EDGE[1:], **kwargs)
    with client:
        for _ in range(3):
            seen.clear()
            result = client.call_tool("progress_three", on_progress=slow_progress)
            assert result["content"][0]["text"] == "counted"
            assert seen == ["progress 1", "progress 2", "progress 3", "log"]


def test_the_asyncio_front_keeps_wire_order_too(edge_url: str) -> None:
    import asyncio

    from mcpkit.aclient import AsyncClient

    async def main() -> list[str]:
        seen: list[str] = []

        async def slow_progress(params: dict) -> None:
            await asyncio.sleep(0.05)
            seen.append(f"progress {params['progress']}")

        async with AsyncClient(url=edge_url, timeout=20) as client:
            await client.call_tool("progress_three", on_progress=slow_progress)
            return seen

    assert asyncio.run(asyncio.wait_for(main(), 30)) == [
        "progress 1", "progress 2", "progress 3"]


def test_clients_and_hosts_show_themselves_in_a_notebook() -> None:
    from mcpkit import Host

    with Client(EDGE[0], EDGE[1:], timeout=20) as client:
        assert "(not listed yet)" in client._repr_html_()
        client.list_tools()
        html = client._repr_html_()
        assert "edge-cases" in html and "modern 2026-07-28" in html and "echo" in html
        assert "pid" not in html  # stable from run to run
    config = {"mcpServers": {"edge": {"command": EDGE[0], "args": EDGE[1:]}}}
    with Host(config) as host:
        host.wait_ready(timeout=20)
        html = host._repr_html_()
        assert "<td style='text-align:left'>edge</td>" in html and "ready" in html


NOTES = [sys.executable, "-m", "mcpkit", "serve", "mcpkit.examples.notes:server"]
TWO_NOTES = {"mcpServers": {"a": {"command": NOTES[0], "args": NOTES[1:]},
                            "b": {"command": NOTES[0], "args": NOTES[1:]}}}


def test_prefix_naming_keeps_resource_uris_valid_and_routes_them() -> None:
    from mcpkit import Host

    events: list = []
    with Host(TWO_NOTES, naming="prefix", on_event=events.append) as host:
        assert host.wait_ready(timeout=20)
        assert {t["name"] for t in host.tools()} >= {"a__notes_list", "b__notes_list"}
        assert [t["uriTemplate"] for t in host.resource_templates()] == ["notes://{id}"]
        assert host.read_resource("notes://1")["contents"][0]["text"].startswith("# Shopping")
        host.call_tool("b__notes_create", {"title": "only in b", "body": "x"})
        assert "only in b" in host.read_resource("notes://4", server="b")["contents"][0]["text"]
    assert any(e.kind == "collision" and "notes://{id}" in e.message for e in events)


def test_reject_naming_raises_without_first_claiming_the_first_one_wins() -> None:
    from mcpkit import Host
    from mcpkit.host import NameCollision

    events: list = []
    with pytest.raises(NameCollision, match="offered by both server 'a' and server 'b'"):
        with Host(TWO_NOTES, naming="reject", on_event=events.append):
            pass
    assert not [e for e in events if e.kind == "collision"], [e.message for e in events]


def test_the_client_declares_what_its_callbacks_support_and_no_more() -> None:
    def elicit(params: dict) -> dict:
        return {"action": "decline"}

    from mcpkit.session import ClientSession

    session = ClientSession(elicitation=elicit, capabilities={"elicitation": {"url": {}}},
                            sampling=lambda p: p, roots=[])
    caps = session._capabilities("modern")
    assert caps["elicitation"] == {"url": {}} and caps["sampling"] == {} and "roots" in caps
    with pytest.raises(ValueError, match="needs its callback"):
        ClientSession(capabilities={"sampling": {"tools": {}}})
    # And on a real connection: the capabilities reach the server in _meta.
    with Client(EDGE[0], EDGE[1:], elicitation=elicit,
                capabilities={"elicitation": {"form": {}, "url": {}}}, timeout=20) as client:
        assert client._session._base_meta["io.modelcontextprotocol/clientCapabilities"] == {
            "elicitation": {"form": {}, "url": {}}}


def test_tools_a_model_cannot_call_are_not_offered_to_it() -> None:
    from mcpkit import toolformats

    tools = [{"name": "plain", "inputSchema": {"type": "object"}},
             {"name": "task_only", "inputSchema": {"type": "object"},
              "execution": {"taskSupport": "required"}},
             {"name": "task_optional", "inputSchema": {"type": "object"},
              "execution": {"taskSupport": "optional"}}]
    assert [t["name"] for t in toolformats.anthropic_tools(tools)] == ["plain", "task_optional"]
    assert [t["function"]["name"] for t in toolformats.openai_tools(tools)] == [
        "plain", "task_optional"]


def test_a_feature_the_server_does_not_offer_fails_without_a_round_trip(tmp_path) -> None:
    from mcpkit.client import NotOffered

    tools_only = tmp_path / "tools_only.py"
    tools_only.write_text("from mcpkit import Server\nserver = Server('tools-only')\n\n"
                          "@server.tool()\ndef ping_me() -> str:\n    return 'pong'\n")
    with Client(sys.executable, ["-m", "mcpkit", "serve", str(tools_only)],
                timeout=20) as client:
        client.list_tools()
        before = client._session._ids  # the id counter: nothing may be drawn from it
        with pytest.raises(NotOffered, match="does not offer resources .*nothing was sent") \
                as caught:
            client.list_resources()
        assert caught.value.code == -32601  # what the server would have answered
        assert next(before) == next(client._session._ids) - 1  # no request was sent
        with pytest.raises(NotOffered, match="prompts"):
            client.get_prompt("any")


@pytest.mark.parametrize(("command", "args", "name"), [
    ("python", ["-m", "mcpkit", "serve", "mcpkit.examples.notes:server"], "notes"),
    ("node", ["/x/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
              "stdio"], "server-everything"),
    ("npx", ["-y", "@modelcontextprotocol/server-memory"], "server-memory"),
    ("python", ["-m", "mypkg.server"], "mypkg"),
    ("python", ["tools/weather.py"], "weather"),
])
def test_sessions_are_named_after_what_they_run(command, args, name) -> None:
    from mcpkit.client import _guess_name

    assert _guess_name(command, args) == name
