"""The client against hostile servers: real processes on real pipes, no mocks.

Each server in ``tests/servers/hostile.py`` (and ``hostile_http.py``) breaks the rules in
one way: ids never sent, duplicate answers, garbage, answers that are not JSON-RPC 2.0,
answers over the size limit, a storm of notifications, a peer that stops reading its
stdin, one that ignores SIGTERM, one that dies mid-call. What must hold every time: a
clear error on the request concerned, no wait beyond its timeout, the session usable
afterwards (unless the stream itself is ruined, and then it says so), and after the test
no thread, descriptor or child process left (``leakcheck``).

Timings are never asserted. "Does not hang" is checked with a generous bound
(:data:`BOUND`) by :func:`bounded`, which kills the server if the bound passes, so that a
hanging client fails its test instead of hanging the suite.
"""

from __future__ import annotations

import fcntl
import logging
import os
import signal
import struct
import subprocess
import sys
import termios
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import wait_until
from leakcheck import no_leaks  # noqa: F401  (autouse fixture)

from mcpkit.client import (
    Client,
    ConnectionClosed,
    ProtocolError,
    RequestTimeout,
    ResponseTooLarge,
    WriteTimeout,
    result_text,
)
from mcpkit.host import Backoff, Host

PY = sys.executable
SERVERS = Path(__file__).resolve().parent / "servers"
HOSTILE = str(SERVERS / "hostile.py")
BOUND = 10.0  # seconds: far more than any timeout below; only ever an upper bound
QUICK_SHUTDOWN = (0.5, 0.5, 2.0)
BIG = 2_000_000  # bytes: far more than a pipe holds


def hostile(*flags: str, **options: Any) -> Client:
    options.setdefault("shutdown_timeouts", QUICK_SHUTDOWN)
    return Client(PY, [HOSTILE, *flags], **options)


def bounded(client: Client, work: Callable[[], Any], seconds: float = BOUND) -> Any:
    """``work()``, which must finish within ``seconds``; its result, or its exception.

    If it does not, the server is killed (which ends any wait on it) and the test fails.
    """
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = work()
        except BaseException as exc:  # handed to the test's thread
            outcome["error"] = exc

    thread = threading.Thread(target=run, name="test-bounded")
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        client._process.kill()
        thread.join(BOUND)
        pytest.fail(f"still waiting after {seconds:g} s: the client hung")
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("value")


def fill_stdin(client: Client) -> tuple[list[Any], WriteTimeout]:
    """Send small requests to a server that stopped reading until one cannot be sent:
    the pending ones, and the WriteTimeout that ended it."""
    sent = []
    for _ in range(1000):  # 1000 x 1 KiB: more than any pipe holds
        try:
            sent.append(client.start_request(
                "tools/call", {"name": "echo", "arguments": {"text": "x" * 1000}}))
        except WriteTimeout as exc:
            return sent, exc
    raise AssertionError("1 MB went into the pipe of a server that reads nothing")


# -- answers that are wrong ----------------------------------------------------------------


def test_answers_to_ids_never_sent_are_ignored_and_the_call_times_out(caplog):
    with hostile() as c:
        with pytest.raises(RequestTimeout, match="tools/call"):
            bounded(c, lambda: c.call_tool("wrong_id", timeout=1))
        assert result_text(c.call_tool("echo", {"text": "still here"})) == "still here"
    # The string id cannot be one of ours: say so, rather than hint at a late answer.
    assert any("never sent" in r.getMessage() and r.levelno == logging.WARNING
               for r in caplog.records)


def test_a_duplicate_answer_is_dropped_and_cannot_answer_the_next_call():
    with hostile() as c:
        assert result_text(c.call_tool("twice")) == "first"
        for text in ("a", "b", "c"):
            assert result_text(c.call_tool("echo", {"text": text})) == text


def test_garbage_on_stdout_is_skipped_and_counted():
    with hostile() as c:
        assert result_text(bounded(c, lambda: c.call_tool("garbage", timeout=5))) == \
            "after the garbage"
        assert c.junk_lines >= 9
        assert result_text(c.call_tool("echo", {"text": "clean"})) == "clean"


@pytest.mark.parametrize("how,why", [
    ("v1", '"jsonrpc" must be "2.0", got \'1.0\''),
    ("no_version", '"jsonrpc" must be "2.0", got \'<missing>\''),
    ("both", 'exactly one of "result" and "error"'),
    ("result_not_object", '"result" must be an object'),
])
def test_an_answer_that_is_not_json_rpc_2_fails_its_request(how, why):
    with hostile() as c:
        with pytest.raises(ProtocolError, match="not a JSON-RPC 2.0 response") as info:
            bounded(c, lambda: c.call_tool("bad_answer", {"how": how}, timeout=5))
        assert why in str(info.value)
        assert "tools/call" in str(info.value)
        assert result_text(c.call_tool("echo", {"text": "next"})) == "next"


# -- answers that are too large ------------------------------------------------------------


@pytest.mark.parametrize("id_last", [False, True], ids=["id first", "id after the result"])
def test_an_oversized_answer_fails_its_request_at_once(id_last):
    with hostile(max_message_size=50_000) as c:
        with pytest.raises(ResponseTooLarge) as info:
            # Not a timeout: the 30 s would outlast BOUND, so only a prompt error passes.
            bounded(c, lambda: c.call_tool("huge", {"size": 200_000, "id_last": id_last},
                                           timeout=30))
        error = info.value
        assert error.method == "tools/call" and error.limit == 50_000
        assert error.size > 50_000
        assert "limit is 50000" in str(error) and "max_message_size=" in str(error)
        assert ("only request waiting" in str(error)) == id_last
        assert result_text(c.call_tool("echo", {"text": "after"})) == "after"


def test_an_oversized_notification_fails_no_request(caplog):
    with hostile(max_message_size=50_000) as c:
        # One request waits while the big log arrives: it must not be blamed for it.
        assert result_text(c.call_tool("huge_log", {"size": 200_000})) == "after the big log"
    assert any("over the limit of 50000" in r.getMessage() for r in caplog.records)


def test_an_oversized_answer_without_a_readable_id_is_reported_not_guessed(caplog):
    with hostile(max_message_size=50_000) as c:
        other = c.start_request("tools/call", {"name": "wrong_id"})  # never answered
        with pytest.raises(RequestTimeout):
            bounded(c, lambda: c.call_tool("huge", {"size": 200_000, "id_last": True},
                                           timeout=1))
        with pytest.raises(RequestTimeout):
            other.result(timeout=0.1)
    assert any("over the limit of 50000" in r.getMessage() and "max_message_size" in
               r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("prefix,expected", [
    (b'{"jsonrpc": "2.0", "id": 7, "result": {"content": [{"text": "xxxx', ("response", 7)),
    (b'{"result":{"id":99,"text":"xxxx', ("response", None)),  # an inner id is not it
    (b'{"jsonrpc":"2.0","method":"notifications/message","params":{"id":4',
     ("not a response", None)),
    (b'{"id":12', ("unknown", None)),  # 12 may be the start of 123
    (b'{"\\u0069d":"abc","error":{', ("response", "abc")),  # an escaped key
    (b'{"id":true,"result":{', ("response", None)),  # not an id
    (b"Content-Length: 5000000", ("unknown", None)),  # that framing keeps only headers
])
def test_the_id_of_a_too_large_message_is_read_from_its_top_level_only(prefix, expected):
    from mcpkit.client import _peek_envelope

    assert _peek_envelope(prefix) == expected


# -- a storm of notifications --------------------------------------------------------------


def test_a_list_changed_storm_is_coalesced_into_a_few_refetches():
    flooded = threading.Event()
    changes: list[str] = []
    with hostile(on_log=lambda p: p.get("data") == "flood done" and flooded.set(),
                 on_list_changed=changes.append) as c:
        assert len(c.list_tools()) > 5
        assert c.call_tool("stats")["content"][0]["text"] == "1"
        c.call_tool("flood", {"count": 1000})
        # The log comes after the 1000 notifications, so the dispatcher reaches it only
        # after every re-fetch they caused.
        assert flooded.wait(BOUND)
        listed = int(result_text(c.call_tool("stats")))
        assert 2 <= listed <= 11, f"{listed - 1} re-fetches for 1000 notifications"
        assert 1 <= len(changes) <= 10
        assert {t["name"] for t in c.list_tools()} >= {"echo", "flood"}
        assert int(result_text(c.call_tool("stats"))) == listed  # the cache is valid


def test_a_list_changed_storm_is_coalesced_in_the_host():
    flooded = threading.Event()
    events = []
    config = {"mcpServers": {"storm": {"command": PY, "args": [HOSTILE]}}}
    options = {"on_log": lambda p: p.get("data") == "flood done" and flooded.set(),
               "shutdown_timeouts": QUICK_SHUTDOWN}
    with Host(config, client_options=options, on_event=events.append) as host:
        assert "flood" in [t["name"] for t in host.tools()]
        host.call_tool("flood", {"count": 1000})
        assert flooded.wait(BOUND)
        listed = int(result_text(host.call_tool("stats")))
        assert 2 <= listed <= 11, f"{listed - 1} re-fetches for 1000 notifications"
        assert 1 <= sum(e.kind == "list_changed" for e in events) <= 10
        assert "echo" in [t["name"] for t in host.tools()]


# -- a peer that stops reading its stdin ---------------------------------------------------


def test_a_large_request_to_a_server_that_stopped_reading_times_out_and_ends_the_session():
    closed: list[ConnectionClosed] = []
    with hostile(on_closed=lambda client, error: closed.append(error)) as c:
        c.call_tool("stop_reading", {"seconds": 60})
        with pytest.raises(WriteTimeout, match="stopped reading its stdin") as info:
            bounded(c, lambda: c.call_tool("echo", {"text": "x" * BIG}, timeout=1))
        error = info.value
        assert isinstance(error, TimeoutError)
        assert error.torn and error.request_id is not None and "tools/call" in str(error)
        assert 0 < error.written < error.size
        # Half a message is in the pipe: nothing may follow it, or the server would read
        # the next message as the rest of this one.
        with pytest.raises(ConnectionClosed, match="cut short"):
            bounded(c, lambda: c.call_tool("echo", {"text": "y"}, timeout=1))
        assert not c.alive
        assert wait_until(lambda: len(closed) == 1)
        assert "stopped reading its stdin" in str(closed[0])
    assert len(closed) == 1  # told once, not again at end of stream


def in_the_pipe(fd: int) -> int:
    """Bytes waiting in a pipe, asked through either end (Linux's FIONREAD)."""
    return struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"))[0]


def sleeping_in_poll(thread_id: int) -> bool:
    """Whether a thread of this process sleeps in poll() (its wchan, on Linux)."""
    try:
        return "poll" in Path(f"/proc/self/task/{thread_id}/wchan").read_text()
    except OSError:
        return False


def test_a_write_interrupted_halfway_by_ctrl_c_ends_the_session():
    # An order of events, not a delay: Ctrl-C is pressed once part of the message is in the
    # pipe and the writer sleeps in poll() waiting for room, and the write's own budget
    # (write_timeout) is far longer than that wait, so only the interruption can end it.
    main = threading.get_native_id()
    with hostile(write_timeout=6 * BOUND) as c:
        c.call_tool("stop_reading", {"seconds": 12 * BOUND})
        stdin = c._process._stdin_fd
        assert in_the_pipe(stdin) == 0  # the server read everything before it stopped

        def halfway() -> bool:
            return (c._process._stdin_lock.locked() and in_the_pipe(stdin) > 0
                    and sleeping_in_poll(main))

        def press_ctrl_c() -> None:
            if wait_until(halfway, timeout=3 * BOUND):
                os.kill(os.getpid(), signal.SIGINT)

        presser = threading.Thread(target=press_ctrl_c, name="test-ctrl-c")
        presser.start()
        try:
            with pytest.raises(KeyboardInterrupt):
                c.call_tool("echo", {"text": "x" * BIG}, timeout=6 * BOUND)
        finally:
            presser.join(4 * BOUND)
        assert not c.alive  # half a message went out: nothing may follow it
        with pytest.raises(ConnectionClosed, match="interrupted"):
            bounded(c, lambda: c.call_tool("echo", {"text": "y"}, timeout=1))


def test_small_requests_fill_the_pipe_then_time_out_and_the_session_survives():
    with hostile(write_timeout=1) as c:
        c.call_tool("stop_reading", {"seconds": 60})
        sent, error = bounded(c, lambda: fill_stdin(c))
        assert len(sent) > 10  # the pipe took some before it filled up
        assert not error.torn and error.written == 0  # small writes are all or nothing
        assert "nothing was sent" in str(error) and "write_timeout=" in str(error)
        assert c.alive  # nothing was cut short: the stream is intact
        # A request in the pipe times out on its own timeout; cancelling it, over a full
        # pipe, is bounded too.
        with pytest.raises(RequestTimeout):
            bounded(c, lambda: sent[0].result(timeout=1))
        with pytest.raises(WriteTimeout):  # as big as the one that did not fit
            bounded(c, lambda: c.call_tool("echo", {"text": "x" * 1000}, timeout=1))


def test_writers_queued_behind_a_stuck_write_time_out_too():
    with hostile() as c:
        c.call_tool("stop_reading", {"seconds": 60})
        failures: list[BaseException] = []

        # The big write gives up after 6 s; the small one, queued behind it, after 1 s:
        # room enough for a loaded machine to start the small one late.
        def big() -> None:
            try:
                c.call_tool("echo", {"text": "x" * BIG}, timeout=6)
            except BaseException as exc:
                failures.append(exc)

        writer = threading.Thread(target=big, name="test-big-writer")
        writer.start()
        try:
            assert wait_until(lambda: c._process._stdin_lock.locked())
            with pytest.raises(WriteTimeout, match="behind another message") as info:
                bounded(c, lambda: c.call_tool("echo", {"text": "small"}, timeout=1))
            assert not info.value.torn
        finally:
            writer.join(BOUND)
            if writer.is_alive():
                c._process.kill()
                writer.join(BOUND)
        assert len(failures) == 1 and isinstance(failures[0], WriteTimeout)
        assert failures[0].torn


def test_the_host_restarts_a_server_that_stopped_reading():
    config = {"mcpServers": {"deaf": {"command": PY, "args": [HOSTILE]}}}
    with Host(config, backoff=Backoff(base=0.05, jitter=0),
              client_options={"shutdown_timeouts": QUICK_SHUTDOWN}) as host:
        first = host.client("deaf")
        host.call_tool("stop_reading", {"seconds": 60})
        with pytest.raises(WriteTimeout):
            bounded(first, lambda: host.call_tool("echo", {"text": "x" * BIG}, timeout=1))
        # The stream is ruined: the host restarts the server, and calls work again.
        assert result_text(host.call_tool("echo", {"text": "back"}, timeout=BOUND)) == "back"
        assert host.client("deaf") is not first
        assert host.status()["deaf"].restarts == 1


def test_a_notification_to_a_server_that_stopped_reading_is_bounded():
    with hostile(write_timeout=1) as c:
        c.call_tool("stop_reading", {"seconds": 60})
        with pytest.raises(WriteTimeout, match="notifications/hostile"):
            bounded(c, lambda: c.notify("notifications/hostile", {"pad": "x" * BIG}))
        assert not c.alive  # cut short: the session is over


def test_an_answer_to_a_server_that_stopped_reading_is_bounded(caplog):
    caplog.set_level(logging.INFO, logger="mcpkit.client")
    with hostile(write_timeout=1) as c:
        c.call_tool("ask_and_stop")
        # The server's ping needs a 200 KB answer, which it does not read: the thread
        # answering it must give up, and the half-written answer ends the session.
        assert wait_until(lambda: any(
            "could not answer ping" in r.getMessage() and "stopped reading" in r.getMessage()
            for r in caplog.records), BOUND)
        assert wait_until(lambda: not c.alive)
        with pytest.raises(ConnectionClosed, match="cut short"):
            c.call_tool("echo", {"text": "y"}, timeout=1)


def test_close_is_bounded_when_the_server_stops_reading_and_ignores_sigterm():
    c = hostile("--ignore-term").connect()
    try:
        c.call_tool("stop_reading", {"seconds": 60})
        with pytest.raises(WriteTimeout):
            bounded(c, lambda: c.call_tool("echo", {"text": "x" * BIG}, timeout=1))
    finally:
        bounded(c, c.close)
    assert c.returncode == -signal.SIGKILL


# -- a peer that dies ----------------------------------------------------------------------


def test_a_server_dying_mid_call_fails_the_call_at_once():
    with hostile() as c:
        with pytest.raises(ConnectionClosed, match="exit code 3") as info:
            bounded(c, lambda: c.call_tool("die", timeout=30))
        assert "dying in the middle of a call" in str(info.value)
        with pytest.raises(ConnectionClosed):
            c.call_tool("echo", {"text": "anyone?"})


# -- the same over HTTP --------------------------------------------------------------------


@pytest.fixture
def hostile_url() -> Iterator[str]:
    server = subprocess.Popen([PY, str(SERVERS / "hostile_http.py")], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE)
    try:
        assert server.stdout is not None
        line = server.stdout.readline().decode()
        assert line.startswith("PORT "), line
        yield f"http://127.0.0.1:{int(line.split()[1])}/mcp"
    finally:
        assert server.stdin is not None and server.stdout is not None
        server.stdin.close()
        try:
            server.wait(5)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(5)
        server.stdout.close()


@pytest.mark.parametrize("how", ["v1", "no_version"])
def test_http_an_answer_that_is_not_json_rpc_2_fails_its_request(hostile_url, how):
    with Client(url=hostile_url) as c:
        assert c.era == "modern"
        with pytest.raises(ProtocolError, match="not a JSON-RPC 2.0 response"):
            c.call_tool("bad_answer", {"how": how}, timeout=5)
        assert result_text(c.call_tool("echo", {"text": "next"})) == "next"


def test_http_an_oversized_answer_fails_with_the_limit_named(hostile_url):
    with Client(url=hostile_url, max_message_size=50_000) as c:
        with pytest.raises(ResponseTooLarge, match="limit is 50000.*max_message_size="):
            c.call_tool("huge", {"size": 200_000}, timeout=5)
        assert result_text(c.call_tool("huge", {"size": 10})) == "x" * 10
