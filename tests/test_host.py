"""Tests for mcpkit.host (many servers, merged namespace, supervision) and
mcpkit.toolformats (model tool-use formats), with real server processes."""

from __future__ import annotations

import json
import os
import random
import signal
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import wait_until as wait_for
from leakcheck import children, no_leaks, open_fds  # noqa: F401  (autouse fixture)

from mcpkit import toolformats
from mcpkit.client import ConnectionClosed, result_text
from mcpkit.host import (
    CONNECTORS,
    Backoff,
    ConfigError,
    Host,
    HostEvent,
    NameCollision,
    ServerUnavailable,
    UnknownName,
    load_config,
    merge_namespace,
)

PY = sys.executable
SERVERS = Path(__file__).resolve().parent / "servers"
FAST_BACKOFF = Backoff(base=0.05, factor=2.0, cap=0.2, jitter=0.0)


def server(script: str, *args: str, **extra) -> dict:
    return {"command": PY, "args": [str(SERVERS / script), *args], **extra}


def colliding_config() -> dict:
    return {"mcpServers": {name: server("colliding.py", name) for name in ("a", "b", "c")}}


class Events:
    def __init__(self) -> None:
        self.items: list[HostEvent] = []
        self.cond = threading.Condition()

    def __call__(self, event: HostEvent) -> None:
        with self.cond:
            self.items.append(event)
            self.cond.notify_all()

    def kinds(self, server: str | None = None) -> list[str]:
        return [e.kind for e in self.items if server is None or e.server == server]

    def wait_for(self, kind: str, server: str | None = None, count: int = 1,
                 timeout: float = 10.0) -> bool:
        with self.cond:
            return self.cond.wait_for(lambda: self.kinds(server).count(kind) >= count, timeout)


# -- configuration -------------------------------------------------------------------------


def test_config_from_dict_and_file(tmp_path):
    data = {"mcpServers": {
        "notes": {"command": "python", "args": ["-m", "x"], "env": {"A": "1", "N": 2},
                  "cwd": "/tmp", "autoApprove": ["x"]},
        "off": {"command": "x", "disabled": True},
    }}
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps(data))
    for source in (data, path, str(path)):
        configs = load_config(source)
        assert [c.name for c in configs] == ["notes", "off"]
        notes = configs[0]
        assert (notes.command, notes.args, notes.cwd) == ("python", ["-m", "x"], "/tmp")
        assert notes.env == {"A": "1", "N": "2"}
        assert configs[1].disabled
    assert load_config({"servers": {"x": {"type": "stdio", "command": "y"}}})[0].command == "y"


@pytest.mark.parametrize("entry,message", [
    ({}, '"command" must be a non-empty string'),
    ({"command": "x", "args": "not a list"}, '"args" must be a list'),
    ({"command": "x", "env": []}, '"env" must be an object'),
    ({"command": "x", "restart": "sometimes"}, '"restart" must be one of'),
    ({"type": "carrier-pigeon"}, 'unknown "type"'),
    ("python server.py", "must be an object"),
    ({"type": "http"}, 'needs a "url" string'),
    ({"url": "http://x/mcp", "headers": {"X-Key": 1}}, '"headers" must be an object of strings'),
    ({"url": "http://x/mcp", "token": 42}, '"token" must be a string'),
    ({"url": "http://x/mcp", "tokenEnv": ""}, '"tokenEnv" must name'),
])
def test_config_errors_name_the_server_and_the_key(entry, message):
    with pytest.raises(ConfigError, match="server 'bad'") as info:
        load_config({"mcpServers": {"bad": entry}})
    assert message in str(info.value)


def test_config_errors_for_the_file_itself(tmp_path):
    with pytest.raises(ConfigError, match="mcpServers"):
        load_config({"servers_typo": {}})
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ConfigError, match="not valid JSON"):
        load_config(bad)


def test_server_objects_are_reached_in_memory_in_either_era():
    """An entry may be a Server object (or {"server": ..., "version": ...}): no process, no
    port, the same session code; routing, both eras and the leak check as for the others."""
    from mcpkit.examples import notes

    config = {"mcpServers": {"notes": notes.server,
                             "old": {"server": notes.server, "version": "2025-11-25"}}}
    assert [c.transport for c in load_config(config)] == ["memory", "memory"]
    with Host(config) as host:
        status = host.status()
        assert {name: (s.state, s.era) for name, s in status.items()} == {
            "notes": ("ready", "modern"), "old": ("ready", "legacy")}
        found = result_text(host.call_tool("old__notes_search", {"query": "mcp"}))
        assert '"id": "2"' in found
    with pytest.raises(ConfigError, match="server 'bad'.*Server object"):
        load_config({"mcpServers": {"bad": {"server": "notes.server"}}})


def test_url_entries_are_http_servers():
    # Served and used for real in tests/test_http_client.py (with stdio servers alongside).
    config = {"mcpServers": {"remote": {
        "url": "https://example.com/mcp", "headers": {"X-Key": "k"}, "tokenEnv": "REMOTE_TOKEN"}}}
    remote = load_config(config)[0]
    assert (remote.transport, remote.url, remote.headers, remote.token_env) == \
        ("http", "https://example.com/mcp", {"X-Key": "k"}, "REMOTE_TOKEN")
    assert "http" in CONNECTORS
    # An unset tokenEnv is a failed start (named), not a crash of the host.
    events = Events()
    with Host(config, restart="surface", on_event=events) as host:
        assert events.wait_for("failed", "remote")
        assert "REMOTE_TOKEN" in (host.status()["remote"].last_error or "")


# -- merging -------------------------------------------------------------------------------


SOURCES = [("a", [{"name": "search"}, {"name": "a_only"}]),
           ("b", [{"name": "search"}, {"name": "b_only"}])]


def test_merge_prefix_always():
    items, routes, warnings = merge_namespace(SOURCES, policy="prefix", separator=".")
    assert [i["name"] for i in items] == ["a.search", "a.a_only", "b.search", "b.b_only"]
    assert routes["b.search"] == ("b", "search")
    assert not warnings


def test_merge_prefix_on_collision():
    items, routes, _ = merge_namespace(SOURCES, policy="prefix-on-collision")
    assert [i["name"] for i in items] == ["a__search", "a_only", "b__search", "b_only"]
    assert routes["a_only"] == ("a", "a_only")


def test_merge_first_wins_warns():
    items, routes, warnings = merge_namespace(SOURCES, policy="first-wins")
    assert [i["name"] for i in items] == ["search", "a_only", "b_only"]
    assert routes["search"] == ("a", "search")
    assert len(warnings) == 1 and "'b'" in warnings[0] and "'a'" in warnings[0]


def test_merge_reject_names_both_servers_and_the_tool():
    with pytest.raises(NameCollision) as info:
        merge_namespace(SOURCES, policy="reject")
    assert info.value.servers == ("a", "b") and info.value.name == "search"
    assert "'a'" in str(info.value) and "'b'" in str(info.value) and "'search'" in str(info.value)


def test_merge_leaves_the_inputs_alone():
    merge_namespace(SOURCES, policy="prefix")
    assert SOURCES[0][1][0] == {"name": "search"}


def test_backoff_grows_caps_and_jitters():
    plain = Backoff(base=0.5, factor=2.0, cap=30.0, jitter=0.0)
    assert [plain.delay(n) for n in range(1, 9)] == [0.5, 1, 2, 4, 8, 16, 30, 30]
    rng = random.Random(1)
    jittered = [Backoff(jitter=0.2).delay(3, rng) for _ in range(200)]
    assert min(jittered) >= 1.6 and max(jittered) <= 2.4 and len(set(jittered)) > 100
    assert Backoff(base=20, jitter=0.5).delay(5) <= 30.0


def test_backoff_stays_at_the_cap_after_very_many_failures():
    # 2.0 ** 1100 overflows a float: a server failing for hours must still be retried
    assert Backoff(jitter=0.0).delay(1100) == 30.0
    assert 24.0 <= Backoff().delay(5000, random.Random(3)) <= 30.0


# -- hosts with real servers -----------------------------------------------------------------


@pytest.mark.parametrize("naming", ["prefix", "prefix-on-collision", "first-wins"])
def test_three_colliding_servers(naming):
    events = Events()
    with Host(colliding_config(), naming=naming, on_event=events) as host:
        names = sorted(t["name"] for t in host.tools())
        if naming == "prefix":
            assert names == sorted(f"{s}__{t}" for s in "abc" for t in ("search", f"{s}_info"))
        elif naming == "prefix-on-collision":
            assert names == sorted(["a__search", "b__search", "c__search",
                                    "a_info", "b_info", "c_info"])
        else:
            assert names == sorted(["search", "a_info", "b_info", "c_info"])
            assert host.route("search") == ("a", "search")  # config order, not start order
            collisions = [e.message for e in events.items if e.kind == "collision"]
            assert any("'search'" in m and "'b'" in m for m in collisions)
        search = "search" if naming == "first-wins" else "b__search"
        expected = "a found x" if naming == "first-wins" else "b found x"
        assert result_text(host.call_tool(search, {"query": "x"})) == expected
        info = "c__c_info" if naming == "prefix" else "c_info"
        assert result_text(host.call_tool(info)) == "I am c"
        # URIs are never rewritten (a prefix would make them invalid URIs): the first
        # server that lists one answers it, unless the caller names another.
        assert host.read_resource("mem://shared")["contents"][0]["text"] == "shared from a"
        assert host.read_resource("mem://shared", server="b")["contents"][0]["text"] == \
            "shared from b"
        assert host.read_resource("mem://b/7")["contents"][0]["text"] == "b part 7"
        summary = "summary" if naming == "first-wins" else "c__summary"
        assert result_text(host.get_prompt(summary)) == \
            ("Summarise a." if naming == "first-wins" else "Summarise c.")
        with pytest.raises(UnknownName):
            host.call_tool("nothing")


def test_three_colliding_servers_rejected():
    with pytest.raises(NameCollision) as info:
        Host(colliding_config(), naming="reject").start()
    assert set(info.value.servers) == {"a", "b"}
    assert info.value.name == "search"
    assert "tool name 'search'" in str(info.value)


def test_server_killed_mid_call_is_restarted_and_the_next_call_succeeds():
    events = Events()
    config = {"mcpServers": {"kit": server("clientkit.py")}}
    with Host(config, backoff=FAST_BACKOFF, on_event=events) as host:
        status = host.status()["kit"]
        assert (status.state, status.era, status.restarts) == ("ready", "modern", 0)
        old_pid = status.pid
        failure: list[BaseException] = []

        def long_call():
            try:
                host.call_tool("sleep", {"seconds": 30})
            except BaseException as exc:
                failure.append(exc)

        caller = threading.Thread(target=long_call)
        caller.start()
        time.sleep(0.2)
        killed_at = time.monotonic()
        os.kill(old_pid, signal.SIGKILL)
        caller.join(5)
        assert time.monotonic() - killed_at < 1.0
        assert isinstance(failure[0], ConnectionClosed)
        assert result_text(host.call_tool("echo", {"text": "back"})) == "back"
        status = host.status()["kit"]
        assert status.state == "ready" and status.restarts == 1
        assert status.pid != old_pid
        assert events.kinds("kit")[:3] == ["ready", "exited", "restarting"]
        assert events.wait_for("ready", "kit", count=2)


def test_three_consecutive_failures_raise_an_event():
    events = Events()
    config = {"mcpServers": {"broken": server("exits_in_handshake.py"),
                             "fine": server("fast.py", "fine")}}
    with Host(config, backoff=Backoff(base=0.02, factor=1.0, jitter=0.0),
              on_event=events) as host:
        assert events.wait_for("failing", "broken", timeout=15)
        status = host.status()
        assert status["broken"].state in ("starting", "restarting")
        assert status["broken"].failures >= 3
        assert "settings.toml" in status["broken"].last_error
        assert status["fine"].state == "ready"
        failing = next(e for e in events.items if e.kind == "failing")
        assert "3 consecutive failures" in failing.message
        with pytest.raises(ServerUnavailable):
            host.client("broken", timeout=0.05)


def test_surface_policy_marks_failed_and_waits_for_a_manual_restart():
    events = Events()
    config = {"mcpServers": {"kit": server("clientkit.py", restart="surface"),
                             "other": server("fast.py", "other")}}
    with Host(config, backoff=FAST_BACKOFF, on_event=events) as host:
        assert "kit__echo" in [t["name"] for t in host.tools()]
        os.kill(host.status()["kit"].pid, signal.SIGKILL)
        assert events.wait_for("failed", "kit")
        assert host.status()["kit"].state == "failed"
        assert "kit__echo" not in [t["name"] for t in host.tools()]
        assert "echo" in [t["name"] for t in host.tools()]  # no collision any more
        with pytest.raises(UnknownName):
            host.call_tool("kit__echo")
        with pytest.raises(ServerUnavailable):
            host.client("kit")
        assert host.restart("kit").state == "ready"
        assert result_text(host.call_tool("kit__echo", {"text": "again"})) == "again"


def test_a_server_seen_failed_is_already_out_of_the_view():
    """The state and the merged view change together: polling the state (as lesson 06
    does) never sees "failed" while the server's tools are still offered."""
    config = {"mcpServers": {"kit": server("clientkit.py", restart="surface")}}
    with Host(config, backoff=FAST_BACKOFF) as host:
        os.kill(host.status()["kit"].pid, signal.SIGKILL)
        assert wait_for(lambda: host.status()["kit"].state == "failed", 30)
        assert host.tools() == []


def test_list_changed_updates_the_merged_view_in_both_eras():
    events = Events()
    config = {"mcpServers": {"new": server("changing_tools.py"),
                             "old": server("changing_tools.py", version="legacy")}}
    with Host(config, on_event=events) as host:
        status = host.status()
        assert (status["new"].era, status["old"].era) == ("modern", "legacy")
        assert status["new"].tools == 2
        host.call_tool("new__add_tool", {"name": "fresh"})
        assert events.wait_for("list_changed", "new")
        host.call_tool("old__add_tool", {"name": "vintage"})
        assert events.wait_for("list_changed", "old")
        names = {t["name"] for t in host.tools()}
        assert {"fresh", "vintage"} <= names
        assert result_text(host.call_tool("vintage")) == "I am vintage"
        assert host.status()["old"].tools == 3
        host.call_tool("new__remove_tool", {"name": "fresh"})
        assert events.wait_for("list_changed", "new", count=2)
        assert "fresh" not in {t["name"] for t in host.tools()}


def test_sdk_and_mcpkit_servers_side_by_side():
    config = {"mcpServers": {"sdk": server("sdk_server.py"),
                             "sdk_legacy": server("sdk_server.py", version="legacy"),
                             "kit": server("clientkit.py")}}
    with Host(config, naming="prefix") as host:
        status = host.status()
        assert [status[n].era for n in ("sdk", "sdk_legacy", "kit")] == \
            ["modern", "legacy", "modern"]
        assert result_text(host.call_tool("sdk__add", {"a": 2, "b": 2})) == "4"
        assert result_text(host.call_tool("sdk_legacy__echo", {"text": "x"})) == "x"
        assert result_text(host.call_tool("kit__add", {"a": 2, "b": 2})) == "4"
        table = host.status_table()
        assert "sdk_legacy" in table and "2025-11-25" in table


def test_twenty_servers_start_together_and_close_without_leftovers():
    fds = open_fds()
    config = {"mcpServers": {f"s{i:02}": server("fast.py", f"s{i:02}") for i in range(20)}}
    host = Host(config).start()
    try:
        status = host.status()
        assert all(s.state == "ready" for s in status.values())
        assert len(host.tools()) == 20  # 20 echo tools, prefixed on collision
        pids = [s.pid for s in status.values()]
        assert len(set(pids)) == 20
        assert set(pids) <= children()
        assert result_text(host.call_tool("s13__echo", {"text": "13"})) == "13"
    finally:
        host.close()
    assert not set(pids) & children()
    assert all(s.state == "stopped" for s in host.status().values())
    assert open_fds() <= fds


# -- model tool formats --------------------------------------------------------------------


TOOLS = [{"name": "notes.search/v2", "description": "Search.",
          "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}}},
         {"name": "notes_search_v2", "title": "Also search", "inputSchema": {}},
         {"name": "x" * 100, "inputSchema": {"type": "object"}}]


def test_tool_names_are_made_api_safe_and_map_back():
    names = toolformats.ToolNames(t["name"] for t in TOOLS)
    api = [names.api(t["name"]) for t in TOOLS]
    assert api[0] == "notes_search_v2" and api[1] == "notes_search_v2_2"
    assert len(api[2]) == 64
    for tool, api_name in zip(TOOLS, api, strict=True):
        assert toolformats._NAME_OK.fullmatch(api_name)
        assert names.mcp(api_name) == tool["name"]


def test_a_name_is_kept_only_when_all_of_it_is_api_safe():
    # "$" also matches before a final newline: "abc\n" must not pass as an API name.
    assert toolformats.api_name("abc\n") == "abc_"
    assert toolformats.api_name("abc") == "abc"
    names = toolformats.ToolNames(["abc\n", "abc"])
    assert names.api("abc\n") == "abc_" and names.api("abc") == "abc"


def test_anthropic_and_openai_tool_definitions():
    anthropic = toolformats.anthropic_tools(TOOLS)
    assert anthropic[0] == {"name": "notes_search_v2", "description": "Search.",
                            "input_schema": TOOLS[0]["inputSchema"]}
    assert anthropic[1]["description"] == "Also search"
    assert anthropic[1]["input_schema"] == {"type": "object", "properties": {}}
    openai = toolformats.openai_tools(TOOLS)
    assert openai[0] == {"type": "function", "function": {
        "name": "notes_search_v2", "description": "Search.",
        "parameters": TOOLS[0]["inputSchema"]}}


def test_model_calls_and_results_round_trip():
    calls = toolformats.anthropic_tool_calls([
        {"type": "text", "text": "Let me look."},
        {"type": "tool_use", "id": "toolu_1", "name": "search", "input": {"q": "owls"}}])
    assert calls == [toolformats.ToolCall("toolu_1", "search", {"q": "owls"})]
    calls = toolformats.openai_tool_calls({"role": "assistant", "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "search",
                                                          "arguments": '{"q": "owls"}'}},
        {"id": "call_2", "type": "function", "function": {"name": "search",
                                                          "arguments": '{"q": '}}]})
    assert calls[0] == toolformats.ToolCall("call_1", "search", {"q": "owls"})
    assert calls[1].error and "not valid JSON" in calls[1].error

    result = {"content": [{"type": "text", "text": "found"},
                          {"type": "image", "data": "aGk=", "mimeType": "image/png"},
                          {"type": "resource_link", "uri": "notes://1", "name": "n1"}],
              "isError": True}
    block = toolformats.anthropic_tool_result("toolu_1", result)
    assert block["is_error"] is True and block["tool_use_id"] == "toolu_1"
    assert block["content"][0] == {"type": "text", "text": "found"}
    assert block["content"][1]["source"] == {"type": "base64", "media_type": "image/png",
                                             "data": "aGk="}
    message = toolformats.openai_tool_message("call_1", result)
    assert message["role"] == "tool" and message["tool_call_id"] == "call_1"
    assert message["content"].startswith("Error: found\n[image (image/png) not shown]")
    structured = toolformats.openai_tool_message("c", {"content": [],
                                                       "structuredContent": {"n": 1}})
    assert structured["content"] == '{"n": 1}'
    error = toolformats.anthropic_tool_result("t", error="unknown tool")
    assert error["is_error"] is True and error["content"][0]["text"] == "unknown tool"


def test_host_runs_model_tool_calls():
    config = {"mcpServers": {"kit": server("clientkit.py")}}
    with Host(config) as host:
        tools = {t["name"] for t in host.anthropic_tools()}
        assert {"echo", "add"} <= tools
        assert {t["function"]["name"] for t in host.openai_tools()} == tools
        block = host.handle_anthropic_tool_use(
            {"type": "tool_use", "id": "toolu_9", "name": "add", "input": {"a": 1, "b": 2}})
        assert block == {"type": "tool_result", "tool_use_id": "toolu_9",
                         "content": [{"type": "text", "text": "3"}]}
        failed = host.handle_anthropic_tool_use(
            {"type": "tool_use", "id": "toolu_10", "name": "fail", "input": {}})
        assert failed["is_error"] is True
        messages = host.handle_openai_tool_calls({"role": "assistant", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "echo",
                                                         "arguments": '{"text": "hi"}'}},
            {"id": "c2", "type": "function", "function": {"name": "nope", "arguments": "{}"}},
            {"id": "c3", "type": "function", "function": {"name": "echo", "arguments": "{"}},
        ]})
        assert messages[0] == {"role": "tool", "tool_call_id": "c1", "content": "hi"}
        assert messages[1]["content"] == "Error: unknown tool 'nope'"
        assert "not valid JSON" in messages[2]["content"]


def test_close_while_a_server_is_still_starting():
    config = {"mcpServers": {"slow": server("never_answers.py", "--silent"),
                             "fine": server("fast.py", "fine")}}
    host = Host(config, client_options={"probe_timeout": 30}).start(timeout=0.5)
    assert host.status()["slow"].state == "starting"
    assert host.status()["fine"].state == "ready"
    assert not host.wait_ready(["slow"], timeout=0.1)
    start = time.monotonic()
    host.close()
    assert time.monotonic() - start < 5
    assert all(s.state == "stopped" for s in host.status().values())


def test_subscriptions_are_made_again_after_a_restart():
    events = Events()
    updates: list[str] = []
    config = {"mcpServers": {"kit": server("clientkit.py"), "other": server("clientkit.py")}}
    with Host(config, backoff=FAST_BACKOFF, on_event=events) as host:
        watch = host.subscribe("mem://greeting", lambda uri, params: updates.append(uri),
                               server="kit")
        host.call_tool("kit__touch", {"uri": "mem://greeting"})
        host.call_tool("other__touch", {"uri": "mem://greeting"})  # not subscribed there
        assert wait_for(lambda: updates == ["mem://greeting"])
        os.kill(host.status()["kit"].pid, signal.SIGKILL)
        assert events.wait_for("ready", "kit", count=2)
        host.call_tool("kit__touch", {"uri": "mem://greeting"})
        assert wait_for(lambda: len(updates) == 2)
        watch.close()
        host.call_tool("kit__touch", {"uri": "mem://greeting"})
        host.call_tool("kit__echo", {"text": "sync"})
        time.sleep(0.1)
        assert len(updates) == 2



def test_a_template_route_matches_the_whole_uri_not_up_to_a_final_newline() -> None:
    from mcpkit.host import _template_regex

    regex = _template_regex("notes://{id}")
    assert regex.match("notes://7")
    assert regex.match("notes://7\n") is None
    assert _template_regex("files://{+path}").match("files://a/b\n") is None
