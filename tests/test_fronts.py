"""The client's behaviour, once per front: ``Client`` (threads) and ``AsyncClient`` (asyncio),
each over stdio (a real child process), HTTP (a real loopback server) and in memory (the
server object in this process, behind the stdio code), in both eras.

One test body serves all eight: ``kit`` makes the client, ``tests/fronts.py`` puts the
AsyncClient behind the blocking interface. The leak check runs after each test, so the
async front is held to the same rule: no thread, child or descriptor left behind.
"""

from __future__ import annotations

import asyncio
import importlib.util
import re
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import wait_until
from fronts import finish, make_client
from leakcheck import no_leaks  # noqa: F401  (autouse fixture)

from mcpkit.aclient import AsyncClient
from mcpkit.client import (
    ConnectionClosed,
    ProtocolError,
    RequestTimeout,
    ResponseTooLarge,
    ServerError,
    is_error,
    result_text,
)
from mcpkit.transports.http import serve_in_thread

PY = sys.executable
ROOT = Path(__file__).resolve().parent.parent
KIT = Path(__file__).resolve().parent / "servers" / "clientkit.py"
_spec = importlib.util.spec_from_file_location("clientkit_for_http", KIT)
assert _spec is not None and _spec.loader is not None
clientkit = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(clientkit)  # the same server, in this process, for HTTP


@pytest.fixture(params=["blocking", "async"])
def front(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture(params=["stdio", "http", "memory"])
def transport(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture(params=[None, "legacy"], ids=["probed", "legacy"])
def version(request: pytest.FixtureRequest) -> str | None:
    return request.param


@pytest.fixture
def kit_http(transport: str) -> Iterator[Any]:
    if transport != "http":
        yield None
        return
    http = serve_in_thread(clientkit.server)
    yield http
    http.stop()


@pytest.fixture
def kit(front: str, transport: str, version: str | None, kit_http: Any) -> Callable[..., Any]:
    """``kit(**options)``: an unconnected client of the clientkit server."""

    def make(**options: Any) -> Any:
        options.setdefault("timeout", 20)
        if transport == "stdio":
            return make_client(front, PY, [str(KIT)], version=version, **options)
        if transport == "memory":  # the same server object, no process: the same session code
            return make_client(front, server=clientkit.server, version=version, **options)
        return make_client(front, url=kit_http.url, version=version, **options)

    return make


def test_tools_answer_and_a_failing_tool_is_a_result(kit, version):
    with kit() as c:
        assert c.era == ("legacy" if version else "modern")
        names = [t["name"] for t in c.list_tools()]  # page_size=2: several pages
        assert {"echo", "add", "fail", "interview"} <= set(names)
        assert len(names) == len(set(names))
        assert result_text(c.call_tool("echo", {"text": "hi"})) == "hi"
        assert result_text(c.call_tool("add", {"a": 2, "b": 3})) == "5"
        failed = c.call_tool("fail", {"message": "disk full"})
        assert is_error(failed) and "disk full" in result_text(failed)
        with pytest.raises(ServerError) as info:
            c.call_tool("no_such_tool")
        assert info.value.code == -32602 and info.value.method == "tools/call"


def test_resources_prompts_and_completions(kit):
    with kit() as c:
        assert "mem://greeting" in [r["uri"] for r in c.list_resources()]
        assert [t["uriTemplate"] for t in c.list_resource_templates()] == ["mem://items/{item}"]
        assert c.read_resource("mem://greeting")["contents"][0]["text"] == "hello"
        assert c.read_resource("mem://items/7")["contents"][0]["text"] == "item 7"
        with pytest.raises(ServerError):
            c.read_resource("mem://nothing/here")
        assert [p["name"] for p in c.list_prompts()] == ["greet"]
        assert result_text(c.get_prompt("greet", {"name": "Ada"})) == "Say hello to Ada."
        completion = c.complete({"type": "ref/prompt", "name": "greet"}, "name", "a")
        assert completion["values"] == ["ada", "alan"]


def test_progress_reaches_the_callback_of_its_request(kit):
    updates: list[dict[str, Any]] = []
    with kit() as c:
        result = c.call_tool("progress", {"steps": 3}, on_progress=updates.append)
        assert result_text(result) == "done"
        assert wait_until(lambda: len(updates) == 3)
        assert [u["progress"] for u in updates] == [1, 2, 3]


def test_the_callbacks_answer_the_servers_questions(kit, version):
    """Modern: three input_required rounds. Legacy: three server requests."""
    asked: list[str] = []

    def elicitation(params: dict[str, Any]) -> dict[str, Any]:
        asked.append("elicitation")
        if "name" in params["message"]:
            return {"action": "accept", "content": {"name": "Ada"}}
        return {"action": "accept", "content": {"topic": "owls"}}

    def sampling(params: dict[str, Any]) -> dict[str, Any]:
        asked.append("sampling")
        return {"role": "assistant", "content": {"type": "text", "text": "they hoot"},
                "model": "test"}

    with kit(elicitation=elicitation, sampling=sampling,
             roots=[{"uri": "file:///tmp", "name": "tmp"}]) as c:
        assert result_text(c.call_tool("interview")) == "owls|they hoot|1 roots"
        assert result_text(c.call_tool("ask_name")) == "Hello, Ada!"
    assert asked == ["elicitation", "sampling", "elicitation"]


def test_a_timeout_cancels_the_request_and_the_session_goes_on(kit, transport):
    with kit() as c:
        c.list_tools()
        started = time.monotonic()
        with pytest.raises(RequestTimeout):
            c.call_tool("wait_for_cancel", {"seconds": 10}, timeout=0.5)
        assert time.monotonic() - started < 3
        if transport == "stdio":  # the tool says on stderr that the cancellation came
            assert wait_until(lambda: any("CANCELLED" in line for line in c.stderr_tail()))
        assert result_text(c.call_tool("echo", {"text": "still here"})) == "still here"


def test_server_death_fails_the_call_and_ends_the_session(kit, transport, kit_http):
    closed = threading.Event()
    with kit(on_closed=lambda client, error: closed.set()) as c:
        c.list_tools()
        if transport == "stdio":
            with pytest.raises(ConnectionClosed) as info:
                c.call_tool("crash", {"code": 3})
            assert info.value.returncode == 3 and "about to crash" in str(info.value)
        elif transport == "memory":  # a thread cannot crash a process: its input ends
            wire = getattr(c, "_process", None) or c.client._proc
            wire.close_stdin() if hasattr(wire, "close_stdin") else wire.stdin.close()
            assert closed.wait(5)
            with pytest.raises(ConnectionClosed):
                c.call_tool("echo", {"text": "anyone?"}, timeout=5)
        else:
            kit_http.stop()
            with pytest.raises(ConnectionClosed):
                c.call_tool("echo", {"text": "anyone?"}, timeout=5)
        assert closed.wait(5) and not c.alive
        with pytest.raises(ConnectionClosed):
            c.call_tool("echo", {"text": "after"})


def test_close_fails_the_call_in_flight_and_is_idempotent(kit):
    c = kit().connect()
    outcome: dict[str, BaseException] = {}

    def call() -> None:
        try:
            c.call_tool("wait_for_cancel", {"seconds": 10})
        except BaseException as exc:  # handed to the test's thread
            outcome["error"] = exc

    caller = threading.Thread(target=call, name="test-caller")
    caller.start()
    assert wait_until(lambda: len(c._session.pending) == 1)
    started = time.monotonic()
    c.close()
    caller.join(5)
    assert isinstance(outcome.get("error"), ConnectionClosed)
    assert time.monotonic() - started < 5
    c.close()
    with pytest.raises(ConnectionClosed):
        c.call_tool("echo", {"text": "closed"})


def test_list_changed_refetches_the_cached_list_and_tells(kit):
    changed = threading.Event()
    name = f"extra_{uuid.uuid4().hex[:8]}"
    with kit(on_list_changed=lambda kind: changed.set()) as c:
        assert name not in [t["name"] for t in c.list_tools()]
        c.call_tool("add_tool", {"name": name})
        assert changed.wait(5)
        assert name in [t["name"] for t in c.cached_list("tools")]
        assert name in [t["name"] for t in c.list_tools()]


def test_resource_subscription_until_closed(kit):
    updates: list[str] = []
    with kit() as c:
        sub = c.subscribe("mem://greeting", lambda uri, params: updates.append(uri))
        assert sub.granted.get("resourceSubscriptions") == ["mem://greeting"]
        c.call_tool("touch", {"uri": "mem://greeting"})
        c.call_tool("touch", {"uri": "mem://other"})
        assert wait_until(lambda: updates == ["mem://greeting"])
        finish(c, sub.close())
        assert not sub.active
        c.call_tool("touch", {"uri": "mem://greeting"})
        c.call_tool("echo", {"text": "sync"})
        time.sleep(0.1)
        assert updates == ["mem://greeting"]


def test_log_messages_reach_on_log_once_a_level_is_set(kit):
    logs: list[dict[str, Any]] = []
    with kit(on_log=logs.append) as c:
        c.set_log_level("info")
        c.call_tool("progress", {"steps": 2})
        assert wait_until(lambda: len(logs) == 2)
    assert [entry["data"] for entry in logs] == ["step 1", "step 2"]


# -- only asyncio can say this -----------------------------------------------------------


@pytest.mark.parametrize("version", [None, "legacy"], ids=["probed", "legacy"])
def test_async_client_inside_a_running_loop_with_coroutine_callbacks(version):
    async def main() -> tuple[list[str], str, list[str]]:
        progress: list[str] = []

        async def elicitation(params: dict[str, Any]) -> dict[str, Any]:
            await asyncio.sleep(0.01)  # a coroutine callback may await
            return {"action": "accept", "content": {"name": "Ada"}}

        async def on_progress(params: dict[str, Any]) -> None:
            progress.append(params["message"])

        async with AsyncClient(PY, [str(KIT)], version=version,
                               elicitation=elicitation) as c:
            answers = await asyncio.gather(*(c.call_tool("add", {"a": i, "b": 1})
                                             for i in range(30)))
            hello = result_text(await c.call_tool("ask_name"))
            await c.call_tool("progress", {"steps": 2}, on_progress=on_progress)
            await asyncio.sleep(0.1)
            return [result_text(a) for a in answers], hello, progress

    answers, hello, progress = asyncio.run(main())
    assert answers == [str(i + 1) for i in range(30)]
    assert hello == "Hello, Ada!"
    assert progress == ["step 1", "step 2"]


def test_a_cancelled_task_cancels_its_request_at_the_server():
    async def main() -> list[str]:
        async with AsyncClient(PY, [str(KIT)]) as c:
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(c.call_tool("wait_for_cancel", {"seconds": 10}), 0.5)
            for _ in range(100):
                if any("CANCELLED" in line for line in c.stderr_tail()):
                    break
                await asyncio.sleep(0.05)
            assert not c._session.pending
            assert result_text(await c.call_tool("echo", {"text": "on"})) == "on"
            return c.stderr_tail()

    assert any("CANCELLED" in line for line in asyncio.run(main()))


def test_the_readme_asyncio_example_runs():
    readme = (ROOT / "README.md").read_text()
    section = readme.split("### From asyncio", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert code is not None, "the README's asyncio example is missing"
    done = subprocess.run([PY, "-c", code.group(1)], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "notes_search" in done.stdout


def test_a_server_that_cannot_start_or_exits_in_the_handshake_fails_connect(front):
    from mcpkit.transports.process import SpawnError

    with pytest.raises(SpawnError, match="not found"):
        make_client(front, "no-such-mcp-server-binary").connect()
    with pytest.raises(SpawnError, match="working directory"):
        make_client(front, PY, [str(KIT)], cwd="/no/such/dir").connect()
    client = make_client(front, PY, [str(KIT.parent / "exits_in_handshake.py")])
    with pytest.raises(ConnectionClosed) as info:
        client.connect()
    assert info.value.returncode == 3 and "settings.toml" in str(info.value)
    assert not client.alive


def test_a_silent_server_fails_the_handshake_by_its_timeouts(front):
    client = make_client(front, PY, [str(KIT.parent / "never_answers.py"), "--silent"],
                         probe_timeout=0.2, timeout=0.3)
    with pytest.raises(RequestTimeout) as info:
        within(5, client.connect)
    assert info.value.method == "initialize"


# -- hostile servers, both fronts (stdio) -----------------------------------------------

HOSTILE = str(Path(__file__).resolve().parent / "servers" / "hostile.py")
BIG = 2_000_000  # bytes: far more than a pipe holds


def hostile(front: str, **options: Any) -> Any:
    options.setdefault("shutdown_timeouts", (0.5, 0.5, 2.0))
    return make_client(front, PY, [HOSTILE], **options)


def within(seconds: float, work: Callable[[], Any]) -> Any:
    """``work()``, which must end (return or raise) within ``seconds``."""
    started = time.monotonic()
    try:
        return work()
    finally:
        assert time.monotonic() - started < seconds, "the client waited too long"


def test_garbage_and_wrong_answers_fail_only_what_they_name(front):
    with hostile(front) as c:
        assert result_text(within(5, lambda: c.call_tool("garbage", timeout=5))) == \
            "after the garbage"
        assert c.junk_lines >= 9
        with pytest.raises(ProtocolError, match="not a JSON-RPC 2.0 response"):
            within(5, lambda: c.call_tool("bad_answer", {"how": "v1"}, timeout=5))
        assert result_text(c.call_tool("echo", {"text": "next"})) == "next"


@pytest.mark.parametrize("id_last", [False, True], ids=["id first", "id after the result"])
def test_an_oversized_answer_fails_its_request_at_once(front, id_last):
    with hostile(front, max_message_size=50_000) as c:
        with pytest.raises(ResponseTooLarge) as info:
            within(10, lambda: c.call_tool("huge", {"size": 200_000, "id_last": id_last},
                                           timeout=30))
        assert info.value.limit == 50_000
        assert ("only request waiting" in str(info.value)) == id_last
        assert result_text(c.call_tool("echo", {"text": "after"})) == "after"


def test_a_server_that_stopped_reading_cannot_stretch_a_wait(front):
    with hostile(front, write_timeout=1) as c:
        c.call_tool("stop_reading", {"seconds": 60})
        # Blocking: the write is cut short (WriteTimeout, torn). Async: the message sits
        # in asyncio's buffer, so the session ends (ConnectionClosed). Both are bounded.
        with pytest.raises((TimeoutError, ConnectionClosed)):
            within(5, lambda: c.call_tool("echo", {"text": "x" * BIG}, timeout=2))
        assert wait_until(lambda: not c.alive)


def test_a_server_dying_mid_call_fails_the_call_at_once(front):
    with hostile(front) as c:
        with pytest.raises(ConnectionClosed, match="exit code 3") as info:
            within(5, lambda: c.call_tool("die", timeout=30))
        assert "dying in the middle of a call" in str(info.value)


def test_the_readmes_in_memory_pytest_example_passes(tmp_path):
    """The README's example of testing a server in memory, run as a learner would: pytest."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("### Testing a server without a process", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    (tmp_path / "test_example.py").write_text(code)
    done = subprocess.run([PY, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_example.py"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "1 passed" in done.stdout, done.stdout + done.stderr
