"""Resumable SSE streams (2025-11-25): the event store on its own, then a real uvicorn on
127.0.0.1 whose call closes its stream mid-call, resumed with GET and ``Last-Event-ID`` by
raw HTTP and by mcpkit's own client."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import Any, NamedTuple

import httpx
import pytest

from mcpkit import Context, Server
from mcpkit.client import Client
from mcpkit.transports.http import HttpServerThread
from mcpkit.transports.sse_store import EventStore, UnknownEvent

# -- the store -------------------------------------------------------------------------


def test_ids_name_the_stream_and_the_event() -> None:
    store = EventStore()
    one, two = store.open("alice", "call"), store.open("alice", "get")
    assert store.append(one, b"a") == f"{one}.0"
    assert store.append(one, b"b") == f"{one}.1"
    assert store.append(two, b"x") == f"{two}.0"
    assert store.after(f"{one}.0", "alice") == (one, [(f"{one}.1", b"b")])
    assert store.after(f"{one}.1", "alice") == (one, [])
    assert store.label(one) == "call" and not store.finished(one)
    store.finish(one)
    assert store.finished(one)


@pytest.mark.parametrize("event_id", ["s1.5", "s99.0", "s1.x", "nonsense", ""])
def test_unknown_ids_are_refused(event_id: str) -> None:
    store = EventStore()
    store.append(store.open("alice"), b"a")
    with pytest.raises(UnknownEvent):
        store.after(event_id, "alice")


def test_only_the_owner_resumes_a_stream() -> None:
    store = EventStore()
    stream = store.open("alice")
    store.append(stream, b"a")
    with pytest.raises(UnknownEvent):
        store.after(f"{stream}.0", "mallory")


def test_a_stream_keeps_its_last_events_only() -> None:
    store = EventStore(per_stream=3)
    stream = store.open("alice")
    ids = [store.append(stream, bytes([65 + i])) for i in range(5)]  # A..E; A and B dropped
    assert store.after(ids[1], "alice")[1] == [(ids[2], b"C"), (ids[3], b"D"), (ids[4], b"E")]
    with pytest.raises(UnknownEvent, match="no longer kept"):
        store.after(ids[0], "alice")  # what came after A (B) is gone: a gap, refused
    assert store.size == 3


def test_the_store_drops_the_streams_written_least_recently() -> None:
    store = EventStore(max_bytes=10)
    old, new = store.open("a"), store.open("b")
    store.append(old, b"12345")
    store.append(new, b"12345")
    store.append(old, b"1")  # old is now the one written last
    assert store.alive(old) and not store.alive(new) and store.size == 6
    capped = EventStore(max_streams=2)
    first = capped.open("a")
    capped.open("a")
    capped.open("a")
    assert len(capped) == 2 and not capped.alive(first)


def test_forgetting_an_owner_frees_its_streams() -> None:
    store = EventStore()
    mine, theirs = store.open("a"), store.open("b")
    store.append(mine, b"123")
    store.append(theirs, b"4")
    store.forget("a")
    assert not store.alive(mine) and store.alive(theirs) and store.size == 1
    with pytest.raises(KeyError):
        store.append(mine, b"late")


# -- over HTTP -------------------------------------------------------------------------

LEGACY = "2025-11-25"
ACCEPT = "application/json, text/event-stream"

app = Server("sse-lab", "1.0.0")
go_on = threading.Event()


@app.tool
def hang_up(ctx: Context) -> str:
    """Closes its stream, waits for the test, then reports once more and answers."""
    ctx.progress(1, 2)
    ctx.end_stream()
    go_on.wait(5)
    ctx.progress(2, 2)
    return "after the break"


@app.tool
def announce() -> str:
    """Changes the tool list, so the session's GET stream has something to say."""
    app.tool(lambda: "hi", name="extra") if "extra" not in app.tools else app.remove_tool("extra")
    return "changed"


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with HttpServerThread(app, sse_retry_ms=10) as http:
        yield http.url


def session(url: str) -> dict[str, str]:
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    r = httpx.post(url, json=init, headers={"accept": ACCEPT}, timeout=5)
    headers = {"accept": ACCEPT, "mcp-session-id": r.headers["mcp-session-id"],
               "mcp-protocol-version": LEGACY}
    httpx.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"},
               headers=headers, timeout=5)
    return headers


class Event(NamedTuple):
    id: str | None
    data: str
    retry: str | None


def events(response: httpx.Response, until: Any = None) -> list[Event]:
    """The stream's events (priming ones included: kept raw, unlike a client's parser),
    up to the first one ``until`` accepts."""
    seen: list[Event] = []
    fields: dict[str, str] = {}
    for line in response.iter_lines():
        if line:
            name, _, value = line.partition(":")
            if name:  # (a comment line has none)
                fields[name] = value.lstrip(" ")
            continue
        if fields:
            seen.append(Event(fields.get("id"), fields.get("data", ""), fields.get("retry")))
            fields = {}
            if until is not None and until(seen[-1]):
                break
    return seen


def answered(event: Event) -> bool:
    return bool(event.data) and "result" in json.loads(event.data)


def call_hang_up(url: str, headers: dict[str, str]) -> list[Event]:
    body = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "name": "hang_up", "arguments": {}, "_meta": {"progressToken": "p"}}}
    with httpx.stream("POST", url, json=body, headers=headers, timeout=5) as r:
        assert r.headers["content-type"] == "text/event-stream"
        return events(r)


def test_a_call_resumed_while_it_runs(url: str) -> None:
    go_on.clear()
    headers = session(url)
    before = call_hang_up(url, headers)  # the stream ended: the tool is still waiting
    assert before[0].id and not before[0].data  # the priming event: an id, no data...
    assert before[0].retry == "10"  # ...and the retry hint
    progress = [e for e in before if e.data]
    assert [json.loads(e.data)["params"]["progress"] for e in progress] == [1]
    last = before[-1].id
    with httpx.stream("GET", url, headers={**headers, "last-event-id": last},
                      timeout=5) as r:
        assert r.status_code == 200
        go_on.set()
        after = events(r)
    messages = [json.loads(e.data) for e in after if e.data]
    assert messages[0]["params"]["progress"] == 2
    assert messages[-1]["result"]["content"][0]["text"] == "after the break"
    assert all(e.id for e in after)


def test_a_call_resumed_after_it_ended(url: str) -> None:
    go_on.set()
    headers = session(url)
    first = call_hang_up(url, headers)
    priming = first[0].id
    replay: list[Event] = []
    for _ in range(50):  # the answer is recorded once the tool returns
        with httpx.stream("GET", url, headers={**headers, "last-event-id": priming},
                          timeout=5) as r:
            replay = events(r)
        if replay and answered(replay[-1]):
            break
    messages = [json.loads(e.data) for e in replay if e.data]
    assert [m.get("params", {}).get("progress") for m in messages[:2]] == [1, 2]
    assert messages[-1]["id"] == 7  # the stream ends with its answer


def test_an_id_no_longer_kept_is_a_clear_error(url: str) -> None:
    headers = session(url)
    for bad in ("s999999.0", "garbage"):
        r = httpx.get(url, headers={**headers, "last-event-id": bad}, timeout=5)
        assert r.status_code == 400
        assert "Last-Event-ID" in r.json()["error"]["message"]
    go_on.set()
    mine = call_hang_up(url, headers)[0].id
    r = httpx.get(url, headers={**session(url), "last-event-id": mine}, timeout=5)
    assert r.status_code == 400  # another session's stream


def test_the_get_stream_resumes_too(url: str) -> None:
    headers = session(url)

    def announce_change(request_id: int) -> None:
        httpx.post(url, json={"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                              "params": {"name": "announce", "arguments": {}}},
                   headers=headers, timeout=5)

    with httpx.stream("GET", url, headers=headers, timeout=5) as r:
        announce_change(1)
        first = events(r, until=lambda e: bool(e.data))[-1]
    assert first.id and json.loads(first.data)["method"] == "notifications/tools/list_changed"
    # While no GET stream is open the session keeps what comes; the same stream goes on.
    announce_change(2)
    for _ in range(100):
        with httpx.stream("GET", url, headers={**headers, "last-event-id": first.id},
                          timeout=5) as r:
            if r.status_code == 409:  # the server has not noticed the first GET end yet
                continue
            missed = events(r, until=lambda e: bool(e.data))[-1]
            break
    else:
        pytest.fail("the session's first GET stream never ended")
    stream, _, number = first.id.rpartition(".")
    assert missed.id == f"{stream}.{int(number) + 1}"
    assert json.loads(missed.data)["method"] == "notifications/tools/list_changed"


def test_mcpkit_client_resumes_by_itself(url: str) -> None:
    go_on.set()
    with Client(url, version=LEGACY) as client:
        assert client.call_tool("hang_up", {})["content"][0]["text"] == "after the break"
