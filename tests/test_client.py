"""Tests for mcpkit.client and mcpkit.transports.process, with real processes on real pipes.

Every test is checked for leftovers: after it, no extra threads, no child processes (a
zombie counts) and no extra open file descriptors.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import wait_until
from leakcheck import children, no_leaks  # noqa: F401  (autouse fixture)

from mcpkit import versions
from mcpkit.client import (
    Client,
    ConnectionClosed,
    ProtocolError,
    RequestCancelled,
    RequestTimeout,
    ServerError,
    connect,
    is_error,
    result_text,
)
from mcpkit.jsonrpc import JsonRpcError
from mcpkit.transports.process import ServerProcess, SpawnError, describe_exit

PY = sys.executable
SERVERS = Path(__file__).resolve().parent / "servers"
KIT = str(SERVERS / "clientkit.py")
ERAS = [None, "legacy"]  # None: probe (modern for these servers)


def kit(**options) -> Client:
    return Client(PY, [KIT], **options)



# -- eras and the probe ------------------------------------------------------------------


def test_probe_finds_a_modern_server_and_every_feature_works():
    with kit() as c:
        assert (c.era, c.protocol_version) == ("modern", "2026-07-28")
        assert c.server_info["name"] == "clientkit"
        assert c.instructions == "For the client tests."
        names = [t["name"] for t in c.list_tools()]  # page_size=2: several pages
        assert {"echo", "add", "fail", "crash", "interview"} <= set(names)
        assert len(names) == len(set(names))
        assert result_text(c.call_tool("echo", {"text": "hi"})) == "hi"
        assert result_text(c.call_tool("add", {"a": 2, "b": 3})) == "5"
        assert [r["uri"] for r in c.list_resources()] == ["mem://greeting"]
        assert c.list_resource_templates()[0]["uriTemplate"] == "mem://items/{item}"
        assert c.read_resource("mem://items/7")["contents"][0]["text"] == "item 7"
        assert c.list_prompts()[0]["name"] == "greet"
        assert result_text(c.get_prompt("greet", {"name": "Ada"})) == "Say hello to Ada."
        assert c.complete({"type": "ref/prompt", "name": "greet"}, "name", "a")["values"] == \
            ["ada", "alan"]
        c.ping()


@pytest.mark.parametrize("version", ERAS)
def test_arguments_json_cannot_carry_are_refused_before_sending_and_the_session_goes_on(
        version):
    """What JSON cannot carry (NaN, an object of no JSON type) is refused by the client with
    the reason, nothing is sent, and the next call works; text JSON can carry escaped (a lone
    surrogate, a newline) reaches the tool whole, in both eras."""
    with kit(version=version) as c:
        for bad, reason in ((float("nan"), "Out of range float"),
                            (object(), "not JSON serializable")):
            with pytest.raises(ValueError, match=reason):
                c.call_tool("echo", {"text": bad})
        for text in ("a\ud800b", "two\nlines", "ünï ✓"):
            assert result_text(c.call_tool("echo", {"text": text})) == text


@pytest.mark.parametrize("version", ["legacy", "2025-06-18", "2024-11-05"])
def test_forced_legacy_revision_uses_initialize(version):
    with kit(version=version) as c:
        assert c.era == "legacy"
        assert c.protocol_version == (versions.LATEST_LEGACY_VERSION if version == "legacy"
                                      else version)
        assert result_text(c.call_tool("echo", {"text": "old"})) == "old"
        assert c.read_resource("mem://greeting")["contents"][0]["text"] == "hello"
        c.ping()


def test_forced_modern_revision_skips_the_fallback():
    with kit(version="modern") as c:
        assert c.era == "modern"


def test_tool_failure_is_a_result_and_protocol_errors_raise():
    with kit() as c:
        result = c.call_tool("fail", {"message": "disk full"})
        assert is_error(result)
        assert "disk full" in result_text(result)
        with pytest.raises(ServerError) as info:
            c.call_tool("no_such_tool")
        assert isinstance(info.value, JsonRpcError)
        assert info.value.code == -32602
        assert info.value.method == "tools/call"
        assert "no_such_tool" in str(info.value)


@pytest.mark.parametrize("version,code", [(None, -32602), ("legacy", -32002)])
def test_resource_not_found_code_per_era(version, code):
    with kit(version=version) as c, pytest.raises(ServerError) as info:
        c.read_resource("mem://nothing")
    assert info.value.code == code
    assert info.value.data == {"uri": "mem://nothing"}


def test_legacy_server_answering_the_probe_with_an_error():
    with Client(PY, [str(SERVERS / "legacy_only.py")]) as c:
        assert c.era == "legacy"
        assert result_text(c.call_tool("echo", {"text": "x"})) == "x"


def test_legacy_server_ignoring_the_probe_gets_initialize_after_the_timeout():
    start = time.monotonic()
    with Client(PY, [str(SERVERS / "legacy_only.py"), "--silent-probe"],
                probe_timeout=0.3) as c:
        assert time.monotonic() - start >= 0.3
        assert c.era == "legacy"
        assert result_text(c.call_tool("echo", {"text": "x"})) == "x"


def test_a_probe_that_timed_out_on_a_slow_modern_server_is_corrected():
    # The SDK server takes most of a second to start; the probe gives up first and the
    # client sends initialize. The server, though, has read the probe and is modern now:
    # it refuses initialize with -32022, which is modern evidence: probe again.
    with Client(PY, [str(SERVERS / "sdk_server.py")], probe_timeout=0.02) as c:
        assert c.era == "modern"
        assert result_text(c.call_tool("echo", {"text": "x"})) == "x"


def test_unsupported_version_is_retried_with_a_supported_one(monkeypatch):
    # Pretend this client prefers a future revision the server does not know: the server
    # answers -32022, and the client must retry with a version from data.supported rather
    # than fall back to initialize.
    monkeypatch.setattr(versions, "MODERN_VERSIONS", ("2026-07-28", "2099-01-01"))
    monkeypatch.setattr(versions, "LATEST_VERSION", "2099-01-01")
    sent: list[dict] = []
    client = kit()
    real_write = client._process.write
    client._process.write = lambda data, *timeout: (sent.append(json.loads(data)),
                                                    real_write(data, *timeout))[1]
    with client as c:
        assert (c.era, c.protocol_version) == ("modern", "2026-07-28")
    methods = [(m.get("method"), (m.get("params") or {}).get("_meta", {}).get(
        versions.META_PROTOCOL_VERSION)) for m in sent[:2]]
    assert methods == [("server/discover", "2099-01-01"), ("server/discover", "2026-07-28")]
    assert not any(m.get("method") == "initialize" for m in sent)


def test_modern_requests_carry_meta_and_legacy_ones_do_not():
    for version, modern in ((None, True), ("legacy", False)):
        sent: list[dict] = []
        client = kit(version=version, sampling=lambda p: {}, log_level="info",
                     client_info={"name": "tests", "version": "9"})
        real_write = client._process.write
        client._process.write = lambda data, timeout=None, s=sent, w=real_write: (
            s.append(json.loads(data)), w(data, timeout))[1]
        with client as c:
            c.call_tool("echo", {"text": "x"})
        call = next(m for m in sent if m.get("method") == "tools/call")
        meta = call["params"].get("_meta")
        if modern:
            assert meta[versions.META_PROTOCOL_VERSION] == "2026-07-28"
            assert meta[versions.META_CLIENT_CAPABILITIES] == {"sampling": {}}
            assert meta[versions.META_CLIENT_INFO] == {"name": "tests", "version": "9"}
            assert meta[versions.META_LOG_LEVEL] == "info"
        else:
            assert meta is None
            init = next(m for m in sent if m.get("method") == "initialize")
            assert init["params"]["capabilities"] == {"sampling": {}}
            assert any(m.get("method") == "notifications/initialized" for m in sent)
            assert any(m.get("method") == "logging/setLevel" for m in sent)


# -- faults ------------------------------------------------------------------------------


def test_server_exiting_during_the_handshake():
    client = Client(PY, [str(SERVERS / "exits_in_handshake.py")])
    with pytest.raises(ConnectionClosed) as info:
        client.connect()
    error = info.value
    assert error.returncode == 3
    assert any("settings.toml" in line for line in error.stderr_tail)
    assert "exit code 3" in str(error) and "settings.toml" in str(error)
    assert not client.alive


def test_silent_server_fails_the_handshake_by_timeout():
    client = Client(PY, [str(SERVERS / "never_answers.py"), "--silent"],
                    probe_timeout=0.2, timeout=0.3)
    with pytest.raises(RequestTimeout) as info:
        client.connect()
    assert info.value.method == "initialize"


def test_timeout_sends_cancellation_and_the_session_goes_on():
    with Client(PY, [str(SERVERS / "never_answers.py")], timeout=5) as c:
        with pytest.raises(RequestTimeout) as info:
            c.call_tool("hang", timeout=0.2)
        request_id = info.value.request_id

        def cancelled() -> bool:
            for line in c.stderr_tail():
                if line.startswith("RECEIVED ") and "notifications/cancelled" in line:
                    params = json.loads(line[len("RECEIVED "):])["params"]
                    return params["requestId"] == request_id
            return False

        assert wait_until(cancelled, 3.0), c.stderr_tail()
        assert [t["name"] for t in c.list_tools()] == ["echo", "hang"]


@pytest.mark.parametrize("version", ERAS)
def test_cancel_from_another_thread_reaches_the_tool(version):
    with kit(version=version) as c:
        pending = c.start_request("tools/call", {"name": "wait_for_cancel",
                                                 "arguments": {"seconds": 10}})
        time.sleep(0.1)
        threading.Timer(0.05, pending.cancel).start()
        with pytest.raises(RequestCancelled):
            pending.result(timeout=5)
        assert wait_until(lambda: any(line.startswith("CANCELLED") for line in c.stderr_tail()))
        assert result_text(c.call_tool("echo", {"text": "still here"})) == "still here"


def test_server_killed_mid_call_fails_the_call_within_a_second():
    with kit() as c:
        server_pid = int(result_text(c.call_tool("pid")))
        assert server_pid == c.pid
        pending = c.start_request("tools/call", {"name": "sleep", "arguments": {"seconds": 30}})
        other = c.start_request("tools/call", {"name": "sleep", "arguments": {"seconds": 30}})
        time.sleep(0.1)
        killed_at = time.monotonic()
        os.kill(server_pid, signal.SIGKILL)
        with pytest.raises(ConnectionClosed) as info:
            pending.result(timeout=5)
        assert time.monotonic() - killed_at < 1.0
        assert info.value.returncode == -signal.SIGKILL
        assert "killed by SIGKILL" in str(info.value)
        assert info.value.method == "tools/call"
        with pytest.raises(ConnectionClosed):
            other.result(timeout=1)
        assert not c.alive
        assert c.closed_error is not None
        start = time.monotonic()
        with pytest.raises(ConnectionClosed):
            c.call_tool("echo", {"text": "x"})
        assert time.monotonic() - start < 0.1


def test_crash_reports_exit_code_and_stderr_tail():
    closed: list[ConnectionClosed] = []
    with kit(on_closed=lambda client, error: closed.append(error)) as c:
        with pytest.raises(ConnectionClosed) as info:
            c.call_tool("crash", {"code": 7})
    assert info.value.returncode == 7
    assert "about to crash with 7" in info.value.stderr_tail
    assert "about to crash with 7" in str(info.value)
    assert len(closed) == 1 and closed[0].returncode == 7


def test_stderr_flood_of_10_mb_does_not_deadlock_and_the_tail_is_bounded():
    with Client(PY, [str(SERVERS / "stderr_flood.py")], stderr_lines=50, timeout=30) as c:
        assert result_text(c.call_tool("flood")) == "flooded"  # 10 MB more, mid-call
        # stdout and stderr are separate pipes: the answer may overtake the last lines.
        assert wait_until(lambda: c.stderr_tail()[-1:] == ["END OF FLOOD"])
        assert len(c.stderr_tail()) <= 50
        assert c._process.stderr_bytes >= 20_000_000


def test_junk_on_stdout_is_skipped():
    with Client(PY, [str(SERVERS / "junk_stdout.py")]) as c:
        for i in range(8):
            assert result_text(c.call_tool("echo", {"text": str(i)})) == str(i)
        assert c.junk_lines >= 4  # text, a number, a non-JSON-RPC object, bad UTF-8


def test_messages_larger_than_a_pipe_buffer_both_ways():
    text = "é" * 1_500_000  # 3 MB of UTF-8, under the server's 4 MB message limit
    with kit() as c:
        assert result_text(c.call_tool("echo", {"text": text})) == text


def test_content_length_framing():
    with Client(PY, ["-m", "mcpkit", "serve", "--framing", "content-length", KIT],
                framing="content-length") as c:
        assert c.era == "modern"
        assert result_text(c.call_tool("echo", {"text": "framed"})) == "framed"


def test_spawn_errors_are_clear():
    with pytest.raises(SpawnError, match="not found"):
        Client("no-such-mcp-server-binary").connect()
    with pytest.raises(SpawnError, match="working directory"):
        Client(PY, [KIT], cwd="/no/such/dir").connect()


# -- shutdown ----------------------------------------------------------------------------


def test_close_is_idempotent_and_requests_after_it_fail():
    c = connect(PY, [KIT])
    pid = c.pid
    c.close()
    c.close()
    assert c.returncode == 0  # it exited on stdin EOF
    assert pid not in children()
    with pytest.raises(ConnectionClosed):
        c.call_tool("echo", {"text": "x"})


def test_close_fails_pending_requests():
    c = kit().connect()
    pending = c.start_request("tools/call", {"name": "sleep", "arguments": {"seconds": 30}})
    c.shutdown_timeouts = (0.2, 1.0, 1.0)
    c.close()
    with pytest.raises(ConnectionClosed):
        pending.result(timeout=1)


@pytest.mark.parametrize("ignore_term,expected", [(False, -signal.SIGTERM),
                                                  (True, -signal.SIGKILL)])
def test_shutdown_escalates_to_sigterm_then_sigkill(ignore_term, expected):
    args = [str(SERVERS / "stubborn.py")] + (["--ignore-term"] if ignore_term else [])
    c = Client(PY, args, shutdown_timeouts=(0.2, 0.3, 2.0)).connect()
    start = time.monotonic()
    c.close()
    assert time.monotonic() - start < 2.0
    assert c.returncode == expected


def test_server_process_alone():
    process = ServerProcess(PY, ["-c", "import sys; print('bye', file=sys.stderr); "
                                 "sys.exit(sys.stdin.read() == 'x' and 5)"]).start()
    process.write(b"x")
    assert process.shutdown(grace=5) == 5
    assert process.stderr_tail() == ["bye"]
    process.close()
    assert describe_exit(5) == "exit code 5"
    assert describe_exit(-9) == "killed by SIGKILL"


# -- concurrency and callbacks -------------------------------------------------------------


def test_concurrent_requests_from_many_threads():
    with kit() as c:
        errors: list[BaseException] = []

        def worker(n: int) -> None:
            try:
                for i in range(40):
                    assert result_text(c.call_tool("add", {"a": n, "b": i})) == str(n + i)
            except BaseException as exc:  # pragma: no cover - reported below
                errors.append(exc)

        threads = [threading.Thread(target=worker, args=(n,)) for n in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        assert not errors


def test_a_slow_callback_does_not_stall_responses():
    release = threading.Event()
    seen: list[str] = []

    def slow(method, params):
        seen.append(method)
        release.wait(5)

    with kit(on_notification=slow, log_level="info") as c:
        try:
            # No on_progress: a call's own callbacks run before it returns (wire order),
            # but these notifications are only the global hook's, so the call need not wait.
            c.call_tool("progress", {"steps": 3})
            assert wait_until(lambda: len(seen) == 1)  # the dispatcher is stuck in it now
            start = time.monotonic()
            for _ in range(20):
                c.call_tool("echo", {"text": "fast"})
            assert time.monotonic() - start < 2.0
            assert len(seen) == 1  # ... and still is: responses did not wait for it
        finally:
            release.set()
        assert wait_until(lambda: len(seen) >= 3)  # the three log messages


@pytest.mark.parametrize("version", ERAS)
def test_progress_reaches_the_callback_of_its_request(version):
    with kit(version=version) as c:
        updates: list[dict] = []
        result = c.call_tool("progress", {"steps": 3}, on_progress=updates.append)
        assert result_text(result) == "done"
        assert wait_until(lambda: len(updates) == 3)
        assert [u["progress"] for u in updates] == [1, 2, 3]
        assert {u["total"] for u in updates} == {3}


def test_log_messages_need_a_level_in_the_modern_era():
    logs: list[dict] = []
    with kit(on_log=logs.append) as c:
        c.call_tool("progress", {"steps": 2})
        c.set_log_level("info")
        c.call_tool("progress", {"steps": 2})
        assert wait_until(lambda: len(logs) == 2)
    assert [entry["data"] for entry in logs] == ["step 1", "step 2"]


def test_legacy_set_log_level():
    logs: list[dict] = []
    with kit(version="legacy", on_log=logs.append) as c:
        c.set_log_level("warning")
        c.call_tool("progress", {"steps": 2})  # info messages: filtered by the server
        c.set_log_level("info")
        c.call_tool("progress", {"steps": 2})
        assert wait_until(lambda: len(logs) == 2)


def test_works_inside_a_running_event_loop():
    async def notebook_cell():  # a Jupyter kernel runs cells inside an event loop
        with kit() as c:
            return result_text(c.call_tool("echo", {"text": "from a loop"}))

    assert asyncio.run(notebook_cell()) == "from a loop"


# -- asking the client: legacy requests and modern input_required ----------------------------


def accept_name(params):
    assert params["message"] == "What is your name?"
    return {"action": "accept", "content": {"name": "Ada"}}


@pytest.mark.parametrize("version", ERAS)
def test_elicitation_in_both_eras(version):
    with kit(version=version, elicitation=accept_name) as c:
        assert result_text(c.call_tool("ask_name")) == "Hello, Ada!"


def test_modern_input_required_rounds_follow_the_rules():
    sent: list[dict] = []
    asked: list[str] = []

    def elicitation(params):
        asked.append("elicitation")
        return {"action": "accept", "content": {"topic": "owls"}}

    def sampling(params):
        asked.append("sampling")
        return {"role": "assistant", "content": {"type": "text", "text": "they hoot"},
                "model": "test"}

    client = kit(elicitation=elicitation, sampling=sampling,
                 roots=[{"uri": "file:///tmp", "name": "tmp"}])
    real_write = client._process.write
    client._process.write = lambda data, *timeout: (sent.append(json.loads(data)),
                                                    real_write(data, *timeout))[1]
    with client as c:
        assert result_text(c.call_tool("interview")) == "owls|they hoot|1 roots"
    assert asked == ["elicitation", "sampling"]
    calls = [m for m in sent if m.get("method") == "tools/call"]
    assert len(calls) == 4  # the call, then one retry per question
    assert len({m["id"] for m in calls}) == 4  # every retry has a new id
    assert "requestState" not in calls[0]["params"]
    assert "inputResponses" not in calls[0]["params"]
    assert list(calls[1]["params"]["inputResponses"]) == ["topic"]
    assert list(calls[2]["params"]["inputResponses"]) == ["model"]
    assert calls[3]["params"]["inputResponses"]["roots"]["roots"][0]["uri"] == "file:///tmp"
    assert all(isinstance(m["params"]["requestState"], str) for m in calls[1:])
    assert all(m["params"]["arguments"] == {} and m["params"]["name"] == "interview"
               for m in calls)


def test_input_required_rounds_are_bounded():
    client = kit(elicitation=lambda p: {"action": "accept", "content": {"topic": "x"}},
                 sampling=lambda p: {"role": "assistant", "model": "m",
                                     "content": {"type": "text", "text": "y"}},
                 roots=[], max_rounds=2)
    with client as c, pytest.raises(ProtocolError, match="2 rounds"):
        c.call_tool("interview")


def test_modern_server_needing_an_undeclared_capability():
    with kit() as c, pytest.raises(ServerError) as info:
        c.call_tool("ask_name")
    assert info.value.code == -32021


def test_legacy_server_requests_are_answered_from_callbacks():
    server = str(SERVERS / "asks_client.py")

    def ask(c, method, params=None):
        text = result_text(c.call_tool("ask", {"text": method, "params": params or {}}))
        return json.loads(text)

    with Client(PY, [server], roots=lambda: [{"uri": "file:///w"}],
                sampling=lambda p: {"role": "assistant", "model": "m",
                                    "content": {"type": "text",
                                                "text": p["messages"][0]["content"]["text"]}}
                ) as c:
        assert c.era == "legacy"
        assert ask(c, "ping")["result"] == {}
        assert ask(c, "roots/list")["result"] == {"roots": [{"uri": "file:///w"}]}
        sampled = ask(c, "sampling/createMessage", {
            "messages": [{"role": "user", "content": {"type": "text", "text": "echo me"}}],
            "maxTokens": 5})
        assert sampled["result"]["content"]["text"] == "echo me"
        # No elicitation callback: the spec's answer is -32601.
        assert ask(c, "elicitation/create", {"message": "?"})["error"]["code"] == -32601
        assert ask(c, "something/else")["error"]["code"] == -32601


# -- lists and subscriptions ---------------------------------------------------------------


@pytest.mark.parametrize("version", ERAS)
def test_list_changed_refreshes_the_cached_list(version):
    changed = threading.Event()
    sent: list[str] = []
    client = Client(PY, [str(SERVERS / "changing_tools.py")], version=version,
                    on_list_changed=lambda kind: changed.set())
    real_write = client._process.write
    client._process.write = lambda data, *timeout: (
        sent.append(json.loads(data).get("method")), real_write(data, *timeout))[1]
    with client as c:
        assert [t["name"] for t in c.list_tools()] == ["add_tool", "remove_tool"]
        c.list_tools()
        assert sent.count("tools/list") == 1  # served from the cache
        c.call_tool("add_tool", {"name": "extra"})
        assert changed.wait(5)
        assert "extra" in [t["name"] for t in c.cached_tools()]
        assert sent.count("tools/list") == 2  # re-fetched once, by the notification
        assert "extra" in [t["name"] for t in c.list_tools()]
        assert sent.count("tools/list") == 2
        changed.clear()
        c.call_tool("remove_tool", {"name": "extra"})
        assert changed.wait(5)
        assert [t["name"] for t in c.list_tools()] == ["add_tool", "remove_tool"]


@pytest.mark.parametrize("version", ERAS)
def test_resource_subscription(version):
    updates: list[str] = []
    with kit(version=version) as c:
        sub = c.subscribe("mem://greeting", lambda uri, params: updates.append(uri))
        assert sub.granted.get("resourceSubscriptions") == ["mem://greeting"]
        c.call_tool("touch", {"uri": "mem://greeting"})
        c.call_tool("touch", {"uri": "mem://other"})
        assert wait_until(lambda: updates == ["mem://greeting"])
        sub.close()
        c.call_tool("touch", {"uri": "mem://greeting"})
        c.call_tool("echo", {"text": "sync"})
        time.sleep(0.1)
        assert updates == ["mem://greeting"]


# -- interoperability with the official SDK ---------------------------------------------------


@pytest.mark.parametrize("version", ERAS)
def test_official_sdk_server_in_both_eras(version):
    with Client(PY, [str(SERVERS / "sdk_server.py")], version=version) as c:
        assert c.era == ("legacy" if version else "modern")
        assert c.server_info["name"] == "sdk-server"
        assert {"echo", "add", "progress"} <= {t["name"] for t in c.list_tools()}
        assert result_text(c.call_tool("echo", {"text": "interop"})) == "interop"
        assert c.call_tool("add", {"a": 1, "b": 2})["structuredContent"] == {"result": 3}
        updates: list[dict] = []
        c.call_tool("progress", {"steps": 2}, on_progress=updates.append)
        assert wait_until(lambda: len(updates) == 2)
        assert c.read_resource("mem://greeting")["contents"][0]["text"] == "hello from the SDK"
        assert result_text(c.get_prompt("greet", {"name": "Ada"})) == "Say hello to Ada."
        # The SDK reports an unknown tool as a tool error (the spec allows either).
        assert is_error(c.call_tool("no_such_tool"))
        with pytest.raises(ServerError):
            c.read_resource("mem://nothing")


def test_a_grandchild_holding_the_pipes_is_stopped_too():
    with Client(PY, [str(SERVERS / "grandchild.py")]) as c:
        grandchild = int(result_text(c.call_tool("grandchild")))
        assert running(grandchild)
        start = time.monotonic()
    assert time.monotonic() - start < 3.0
    assert wait_until(lambda: not running(grandchild), 2.0)


def running(pid: int) -> bool:
    """Whether ``pid`` is alive (a zombie waiting for its new parent to reap it is not)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
