"""Interop with third-party peers, each pinned in interop/package-lock.json and installed by
interop/install.sh from the npm registry: the reference servers (server-everything over
stdio and streamable HTTP, server-filesystem, server-memory) driven by mcpkit's Client and
Host, and the official TypeScript SDK's client and the MCP Inspector's CLI driving mcpkit's
servers. Real processes and real loopback HTTP; results are checked, not just the absence
of errors."""

from __future__ import annotations

import base64
import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import jsonschema
import pytest
from conftest import ROOT, wait_until

from mcpkit import Client, Host
from mcpkit.client import is_error
from mcpkit.transports.http import HttpServerThread

INTEROP = ROOT / "interop"
PEERS = INTEROP / "node_modules" / "@modelcontextprotocol"
NOTES = [sys.executable, "-m", "mcpkit", "serve", "mcpkit.examples.notes:server"]


def peer(node: str, name: str, *args: str) -> list[str]:
    return [node, str(PEERS / name / "dist" / "index.js"), *args]


def text(result: dict) -> str:
    return "\n".join(block.get("text", "") for block in result["content"])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Callbacks:
    """What server-everything asks of its client, answered and recorded."""

    def __init__(self) -> None:
        self.sampled: list[dict] = []
        self.elicited: list[dict] = []
        self.logs: list[dict] = []
        self.lock = threading.Lock()

    def sampling(self, params: dict) -> dict:
        self.sampled.append(params)
        return {"role": "assistant", "content": {"type": "text", "text": "scripted answer"},
                "model": "scripted", "stopReason": "endTurn"}

    def elicitation(self, params: dict) -> dict:
        self.elicited.append(params)
        return {"action": "accept", "content": {"name": "Ada", "color": "red"}}

    def on_log(self, params: dict) -> None:
        with self.lock:
            self.logs.append(params)


def everything_client(command: list[str] | None = None, url: str | None = None,
                      calls: Callbacks | None = None) -> Client:
    calls = calls or Callbacks()
    common = {"timeout": 30, "sampling": calls.sampling, "elicitation": calls.elicitation,
              "roots": [{"uri": "file:///srv/work", "name": "work"}], "on_log": calls.on_log}
    if url:
        return Client(url=url, **common)
    assert command is not None
    return Client(command[0], command[1:], **common)


def check_everything(client: Client, calls: Callbacks) -> None:
    """The features server-everything exercises, each checked by its result."""
    tools = {t["name"]: t for t in client.list_tools()}
    # Tools that need a callback are offered only to a client that declares it.
    assert {"trigger-sampling-request", "trigger-elicitation-request", "get-roots-list"} <= \
        set(tools)
    assert "The sum of 2 and 3 is 5" in text(client.call_tool("get-sum", {"a": 2, "b": 3}))

    structured = client.call_tool("get-structured-content", {"location": "Chicago"})
    jsonschema.validate(structured["structuredContent"],
                        tools["get-structured-content"]["outputSchema"])

    image = client.call_tool("get-tiny-image")["content"]
    png = next(block for block in image if block["type"] == "image")
    assert png["mimeType"] == "image/png"
    assert base64.b64decode(png["data"]).startswith(b"\x89PNG")

    progress: list[dict] = []
    done = client.call_tool("trigger-long-running-operation", {"duration": 1, "steps": 3},
                            on_progress=progress.append)
    assert "completed" in text(done)
    assert wait_until(lambda: len(progress) == 3)
    assert [p["progress"] for p in progress] == [1, 2, 3]

    sampled = client.call_tool("trigger-sampling-request", {"prompt": "Say hi", "maxTokens": 5})
    assert "scripted answer" in text(sampled) and calls.sampled
    assert calls.sampled[0]["messages"][0]["content"]["text"].endswith("Say hi")
    elicited = client.call_tool("trigger-elicitation-request")
    assert "Ada" in text(elicited) and calls.elicited
    assert "file:///srv/work" in text(client.call_tool("get-roots-list"))

    templates = [t["uriTemplate"] for t in client.list_resource_templates()]
    assert "demo://resource/dynamic/text/{resourceId}" in templates
    read = client.read_resource("demo://resource/dynamic/text/2")
    assert read["contents"][0]["uri"] == "demo://resource/dynamic/text/2"
    assert read["contents"][0]["text"]
    assert client.list_resources(), "server-everything lists static resources"

    completion = client.complete({"type": "ref/prompt", "name": "completable-prompt"},
                                 "department", "En")
    assert completion["values"] == ["Engineering"]
    prompt = client.get_prompt("args-prompt", {"city": "Paris"})
    assert "Paris" in json.dumps(prompt["messages"])

    client.set_log_level("debug")
    client.call_tool("toggle-simulated-logging")
    assert wait_until(lambda: len(calls.logs) >= 1, timeout=15), "no log messages arrived"
    client.call_tool("toggle-simulated-logging")


def test_server_everything_over_stdio(node: str) -> None:
    calls = Callbacks()
    with everything_client(peer(node, "server-everything", "stdio"), calls=calls) as client:
        assert client.era == "legacy"
        check_everything(client, calls)
        updates: list[str] = []
        uri = client.list_resources()[0]["uri"]
        with client.subscribe(uri, lambda u, params: updates.append(u)):
            client.call_tool("toggle-subscriber-updates")
            assert wait_until(lambda: uri in updates, timeout=15), "no resource update came"
            client.call_tool("toggle-subscriber-updates")


def test_a_2024_11_05_server_everything(node: str) -> None:
    """server-everything@2025.1.14 speaks only 2024-11-05, whose servers declare no
    ``completions`` capability (the revision has none) yet answer ``completion/complete``:
    each revision's own capability rules, and every feature of that peer, by its results."""
    old = [node, str(INTEROP / "node_modules" / "server-everything-2025.1.14" / "dist"
                     / "index.js")]
    calls = Callbacks()
    with everything_client(old, calls=calls) as client:
        assert (client.era, client.protocol_version) == ("legacy", "2024-11-05")
        assert "completions" not in client.server_capabilities
        completion = client.complete({"type": "ref/prompt", "name": "complex_prompt"},
                                     "temperature", "1")
        assert completion["values"] == ["1.0"]
        by_template = client.complete({"type": "ref/resource",
                                       "uri": "test://static/resource/{id}"}, "id", "1")
        assert "1" in by_template["values"]
        assert "The sum of 2 and 3 is 5" in text(client.call_tool("add", {"a": 2, "b": 3}))
        assert text(client.call_tool("echo", {"message": "hi"})) == "Echo: hi"
        progress: list[dict] = []
        client.call_tool("longRunningOperation", {"duration": 1, "steps": 2},
                         on_progress=progress.append)
        assert wait_until(lambda: len(progress) == 2)
        sampled = client.call_tool("sampleLLM", {"prompt": "Say hi", "maxTokens": 5})
        assert "scripted answer" in text(sampled) and calls.sampled
        prompt = client.get_prompt("complex_prompt", {"temperature": "0.5", "style": "terse"})
        assert "0.5" in json.dumps(prompt["messages"])
        read = client.read_resource("test://static/resource/2")
        assert read["contents"][0]["uri"] == "test://static/resource/2"
        client.set_log_level("debug")


@pytest.fixture
def everything_http(node: str) -> Iterator[str]:
    port = _free_port()
    proc = subprocess.Popen(peer(node, "server-everything", "streamableHttp"),
                            env={**os.environ, "PORT": str(port)}, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    try:
        url = f"http://127.0.0.1:{port}/mcp"

        def listening() -> bool:
            with socket.socket() as s:
                return s.connect_ex(("127.0.0.1", port)) == 0

        assert wait_until(listening, timeout=20), "server-everything did not start"
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
        assert proc.stderr is not None
        proc.stderr.close()


def test_server_everything_over_streamable_http(everything_http: str) -> None:
    calls = Callbacks()
    with everything_client(url=everything_http, calls=calls) as client:
        assert client.era == "legacy"  # it speaks the handshake revisions
        check_everything(client, calls)


def test_server_filesystem_over_a_temporary_folder(node: str, tmp_path: Path) -> None:
    (tmp_path / "hello.txt").write_text("hello from the test\n")
    with Client(*_split(peer(node, "server-filesystem", str(tmp_path))), timeout=30) as client:
        listing = text(client.call_tool("list_directory", {"path": str(tmp_path)}))
        assert "[FILE] hello.txt" in listing
        read = client.call_tool("read_text_file", {"path": str(tmp_path / "hello.txt")})
        assert text(read).strip() == "hello from the test"
        wrote = client.call_tool("write_file", {"path": str(tmp_path / "new.txt"),
                                                "content": "written by mcpkit"})
        assert not is_error(wrote)
        assert (tmp_path / "new.txt").read_text() == "written by mcpkit"
        outside = client.call_tool("read_text_file", {"path": "/etc/hostname"})
        assert is_error(outside) and "denied" in text(outside).lower()


def _split(command: list[str]) -> tuple[str, list[str]]:
    return command[0], command[1:]


def test_server_memory(node: str, tmp_path: Path) -> None:
    env = {"MEMORY_FILE_PATH": str(tmp_path / "memory.jsonl")}
    with Client(*_split(peer(node, "server-memory")), env=env, timeout=30) as client:
        client.call_tool("create_entities", {"entities": [
            {"name": "mcpkit", "entityType": "library", "observations": ["speaks MCP"]}]})
        graph = client.call_tool("read_graph")
        assert "mcpkit" in text(graph) and "speaks MCP" in text(graph)
        found = client.call_tool("search_nodes", {"query": "library"})
        assert "mcpkit" in text(found)
    assert "mcpkit" in (tmp_path / "memory.jsonl").read_text()


def test_one_host_over_the_reference_servers_and_mcpkit(node: str, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("A")
    config = {"mcpServers": {
        "everything": {"command": node, "args": peer(node, "server-everything", "stdio")[1:]},
        "files": {"command": node, "args": peer(node, "server-filesystem", str(tmp_path))[1:]},
        "memory": {"command": node, "args": peer(node, "server-memory")[1:],
                   "env": {"MEMORY_FILE_PATH": str(tmp_path / "m.jsonl")}},
        "notes": {"command": NOTES[0], "args": NOTES[1:]},
    }}
    with Host(config, naming="prefix") as host:
        assert "5" in text(host.call_tool("everything__get-sum", {"a": 2, "b": 3}))
        assert text(host.call_tool("files__read_text_file",
                                   {"path": str(tmp_path / "a.txt")})).strip() == "A"
        host.call_tool("memory__create_entities", {"entities": [
            {"name": "host", "entityType": "test", "observations": []}]})
        assert "host" in text(host.call_tool("memory__read_graph"))
        assert "Milk" in text(host.call_tool("notes__notes_search", {"query": "milk"}))
        names = {t["name"] for t in host.tools()}
        assert {"everything__echo", "files__list_directory", "memory__read_graph",
                "notes__notes_list"} <= names


# -- peers driving mcpkit ------------------------------------------------------------------


@pytest.fixture(scope="module")
def notes_http() -> Iterator[str]:
    from mcpkit.examples import notes

    with HttpServerThread(notes.server) as served:
        yield served.url


def ts_client(node: str, *target: str) -> dict:
    env = {**os.environ, "TS_CALLS": json.dumps({"notes_search": {"query": "milk"}}),
           "TS_READ": "notes://1", "TS_PROMPT": json.dumps({"name": "review_note",
                                                            "arguments": {"id": "1"}})}
    run = subprocess.run([node, str(INTEROP / "ts_client.mjs"), *target], capture_output=True,
                         text=True, timeout=60, cwd=INTEROP, env=env)
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout)


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_the_typescript_sdk_client_drives_mcpkit(node: str, notes_http: str,
                                                 transport: str) -> None:
    seen = ts_client(node, "stdio", *NOTES) if transport == "stdio" \
        else ts_client(node, "http", notes_http)
    assert seen["protocolVersion"] == "2025-11-25"  # the SDK 1.x speaks the handshake era
    assert seen["serverVersion"]["name"] == "notes"
    assert {"notes_list", "notes_search", "notes_create"} <= {t["name"] for t in seen["tools"]}
    assert "Milk" in seen["calls"]["notes_search"]["content"][0]["text"]
    assert seen["read"]["contents"][0]["uri"] == "notes://1"
    assert any(t["uriTemplate"] == "notes://{id}" for t in seen["templates"])
    assert seen["prompt"]["messages"], seen["prompt"]


def inspector(node: str, *args: str, tmp_path: Path) -> dict:
    cli = PEERS / "inspector" / "clients" / "launcher" / "build" / "index.js"
    env = {**os.environ, "MCP_CATALOG_PATH": str(tmp_path / "catalog.json")}
    run = subprocess.run([node, str(cli), "--cli", *args], capture_output=True, text=True,
                         timeout=60, env=env, cwd=ROOT)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    return json.loads(run.stdout)


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_the_inspector_cli_lists_and_calls_mcpkit(node: str, notes_http: str, tmp_path: Path,
                                                  transport: str) -> None:
    target = NOTES if transport == "stdio" else [notes_http]
    listed = inspector(node, *target, "--method", "tools/list", tmp_path=tmp_path)
    assert "notes_search" in {t["name"] for t in listed["tools"]}
    called = inspector(node, *target, "--method", "tools/call", "--tool-name", "notes_search",
                       "--tool-arg", "query=eggs", tmp_path=tmp_path)
    assert "Milk, eggs, coffee." in called["content"][0]["text"]
    read = inspector(node, *target, "--method", "resources/read", "--uri", "notes://1",
                     tmp_path=tmp_path)
    assert read["contents"][0]["text"]


# -- FastMCP, both ways ----------------------------------------------------------------------

FASTMCP_SERVER = [sys.executable, str(ROOT / "tests" / "servers" / "fastmcp_server.py")]


@pytest.mark.parametrize(("version", "era"), [("legacy", "legacy"), (None, "modern")])
def test_mcpkit_drives_a_fastmcp_server(version: str | None, era: str) -> None:
    progress: list[dict] = []
    with Client(*_split(FASTMCP_SERVER), version=version, timeout=30) as client:
        assert client.era == era
        added = client.call_tool("add", {"a": 2, "b": 40})
        assert added["structuredContent"] == {"result": 42} and text(added) == "42"
        counted = client.call_tool("count", {"to": 3}, on_progress=progress.append)
        assert text(counted) == "counted to 3"
        assert wait_until(lambda: [p["progress"] for p in progress] == [1, 2, 3])
        assert client.read_resource("greeting://Ada")["contents"][0]["text"] == "Hello, Ada!"
        prompt = client.get_prompt("review", {"topic": "mcpkit"})
        assert prompt["messages"][0]["content"]["text"] == "Please review mcpkit."


async def _fastmcp_drives(target: object, mode: str) -> tuple[list[str], str, str]:
    import fastmcp

    async with fastmcp.Client(target, mode=mode, timeout=30) as client:
        tools = [t.name for t in await client.list_tools()]
        found = await client.call_tool("notes_search", {"query": "milk"})
        read = await client.read_resource("notes://1")
        return tools, found.content[0].text, read[0].text


@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize("mode", ["legacy", "2026-07-28", "auto"])
def test_a_fastmcp_client_drives_mcpkit(mode: str, transport: str, notes_http: str) -> None:
    import asyncio

    target = notes_http if transport == "http" else {
        "mcpServers": {"notes": {"command": NOTES[0], "args": NOTES[1:]}}}
    tools, found, read = asyncio.run(asyncio.wait_for(_fastmcp_drives(target, mode), 60))
    assert tools == ["notes_list", "notes_search", "notes_create", "notes_delete"]
    assert "Milk, eggs, coffee." in found
    assert read.startswith("# Shopping")


def test_the_mcpkit_command_against_a_reference_server(node: str) -> None:
    target = " ".join(peer(node, "server-everything", "stdio"))

    def mcpkit(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "mcpkit", *args], capture_output=True,
                              text=True, timeout=60, cwd=ROOT)

    listed = mcpkit("list", target)
    assert listed.returncode == 0, listed.stderr
    assert "get-sum(a?, b?)" in listed.stdout or "get-sum(a, b)" in listed.stdout
    summed = mcpkit("call", target, "get-sum", "a=2", "b=3")
    assert summed.returncode == 0 and "The sum of 2 and 3 is 5" in summed.stdout
    trace = mcpkit("trace", target, "echo", "message=hi")
    assert trace.returncode == 0 and '"method":"initialize"' in trace.stdout  # the fallback
