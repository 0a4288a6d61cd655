"""``mcpkit list|call|read|prompt|trace|config``: the real command, real servers, real
processes; output read back as a person (text) and as a script (--json) would."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import ROOT, SERVERS

from mcpkit.examples import notes
from mcpkit.transports.http import HttpServerThread

NOTES = "mcpkit.examples.notes:server"


def mcpkit(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mcpkit", *args], capture_output=True,
                          text=True, timeout=60, cwd=cwd)


@pytest.fixture(scope="module")
def notes_url() -> Iterator[str]:
    with HttpServerThread(notes.server) as served:
        yield served.url


@pytest.mark.parametrize("where", ["module", "file", "command", "url"])
def test_list_finds_every_kind_of_target(where: str, notes_url: str) -> None:
    target = {"module": NOTES, "file": str(ROOT / "mcpkit" / "examples" / "notes.py"),
              "command": f"{sys.executable} -m mcpkit serve {NOTES}", "url": notes_url}[where]
    run = mcpkit("list", target)
    assert run.returncode == 0, run.stderr
    assert "Tools (4)" in run.stdout and "notes_search(query, limit?)" in run.stdout
    assert "notes://{id}" in run.stdout and "review_note" in run.stdout
    listing = json.loads(mcpkit("list", target, "--json").stdout)
    assert [t["name"] for t in listing["tools"]] == ["notes_list", "notes_search",
                                                     "notes_create", "notes_delete"]


def test_call_types_arguments_by_the_schema_and_exit_codes_tell_failures_apart() -> None:
    found = mcpkit("call", NOTES, "notes_search", "query=e", "limit=1", "--json")
    assert found.returncode == 0, found.stderr
    assert len(json.loads(json.loads(found.stdout)["content"][0]["text"])) == 1  # an int
    assert mcpkit("call", NOTES, "notes_search", "--args", '{"query": "milk"}').stdout \
        .startswith('[{"id": "1"')
    tool_error = mcpkit("call", NOTES, "notes_delete", "id=nope")
    assert tool_error.returncode == 1 and "no note with id nope" in tool_error.stdout
    unknown = mcpkit("call", NOTES, "no_such_tool")
    assert unknown.returncode == 2 and "notes_search" in unknown.stderr  # says what exists
    protocol = mcpkit("read", NOTES, "notes://99")
    assert protocol.returncode == 3 and "-32602" in protocol.stderr
    missing = mcpkit("list", "no/such/server.py")
    assert missing.returncode == 2 and "no such file" in missing.stderr


def test_read_and_prompt() -> None:
    read = mcpkit("read", NOTES, "notes://1")
    assert read.returncode == 0 and read.stdout.startswith("# Shopping")
    prompt = mcpkit("prompt", NOTES, "review_note", "id=1")
    assert prompt.returncode == 0 and prompt.stdout.startswith("user: # Shopping")


def test_trace_shows_the_literal_bytes_each_way(tmp_path: Path) -> None:
    out = tmp_path / "trace.txt"
    run = mcpkit("trace", NOTES, "notes_search", "query=eggs", "--out", str(out))
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0].startswith('> {"jsonrpc":"2.0","id":1,"method":"server/discover"')
    assert any(line.startswith("< ") and '"id":1,"result"' in line for line in lines)
    call = next(line for line in lines if '"method":"tools/call"' in line)
    assert call.startswith("> ") and '"arguments":{"query":"eggs"}' in call
    for line in lines:  # each line is one message, as it travelled
        json.loads(line[2:])
    assert out.read_text().splitlines() == lines


def test_config_prints_each_hosts_entry_and_writes_nothing(tmp_path: Path,
                                                           notes_url: str) -> None:
    before = set(tmp_path.iterdir())
    desktop = json.loads(mcpkit("config", NOTES, "--for", "claude-desktop", cwd=tmp_path).stdout)
    assert desktop == {"mcpServers": {"notes": {
        "command": sys.executable, "args": ["-m", "mcpkit", "serve", NOTES]}}}
    vscode = json.loads(mcpkit("config", NOTES, "--for", "vscode").stdout)
    assert vscode["servers"]["notes"]["type"] == "stdio"
    code = json.loads(mcpkit("config", notes_url, "--for", "claude-code").stdout)
    assert list(code["mcpServers"].values()) == [{"type": "http", "url": notes_url}]
    cursor = json.loads(mcpkit("config", "npx -y @modelcontextprotocol/server-memory",
                               "--for", "cursor").stdout)
    assert cursor == {"mcpServers": {"server-memory": {
        "command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}}}
    assert set(tmp_path.iterdir()) == before


def test_a_server_named_in_an_mcpservers_file(tmp_path: Path) -> None:
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"edge": {
        "command": sys.executable, "args": ["-m", "mcpkit", "serve",
                                            str(SERVERS / "edge_cases.py")]}}}))
    run = mcpkit("call", "edge", "echo", "text=hello", "--config", str(config))
    assert run.returncode == 0 and run.stdout.strip() == "hello", run.stderr
    wrong = mcpkit("list", "nope", "--config", str(config))
    assert wrong.returncode == 2 and "edge" in wrong.stderr
