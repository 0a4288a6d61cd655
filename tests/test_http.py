"""Streamable HTTP (mcpkit.transports.http) with a real uvicorn on 127.0.0.1 and httpx.

Both eras on one endpoint, JSON and SSE answers, the standard and custom headers,
cancellation by disconnect, legacy sessions and their GET stream, the security checks,
and two uvicorn workers sharing a requestState secret.
"""

from __future__ import annotations

import http.client
import json
import os
import queue
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import validate_emitted
from conftest import wait_until as wait_for

from mcpkit import Context, Server
from mcpkit.examples import everything
from mcpkit.transports import http as http_module
from mcpkit.transports.http import SESSION_BACKLOG, HttpServerThread, _Session
from mcpkit.transports.http_headers import decode_header_value, encode_header_value

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
ACCEPT = "application/json, text/event-stream"
ROOT = Path(__file__).resolve().parents[1]


# -- helpers ---------------------------------------------------------------------------


def meta(caps: dict | None = None, **extra: Any) -> dict[str, Any]:
    return {"io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": caps or {}, **extra}


def modern(method: str, params: dict | None = None, *, id: int | str = 1,
           caps: dict | None = None, headers: dict | None = None,
           **meta_extra: Any) -> tuple[dict, dict]:
    """A modern request body and the headers a conforming client sends with it."""
    params = {**(params or {}), "_meta": meta(caps, **meta_extra)}
    h = {"content-type": "application/json", "accept": ACCEPT,
         "mcp-protocol-version": MODERN, "mcp-method": method}
    name_key = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}.get(method)
    if name_key and name_key in params:
        h["mcp-name"] = encode_header_value(params[name_key])
    for key, value in (headers or {}).items():
        h.pop(key.lower(), None)
        if value is not None:
            h[key.lower()] = value
    return {"jsonrpc": "2.0", "id": id, "method": method, "params": params}, h


def post(url: str, body: Any, headers: dict, **kw: Any) -> httpx.Response:
    """POST one message; every message of the answer is checked against the spec's schema."""
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    response = httpx.post(url, content=data, headers=headers, timeout=10, **kw)
    if response.content and isinstance(body, dict):
        legacy = "mcp-session-id" in headers or body.get("method") == "initialize"
        for message in messages(response):
            validate_emitted(LEGACY if legacy else MODERN, message, body.get("method"))
    return response


def sse_messages(lines: Iterable[str]) -> Iterator[dict]:
    for line in lines:
        if line.startswith("data:") and line[5:].strip():  # (not a priming event's)
            yield json.loads(line[5:])


def messages(response: httpx.Response) -> list[dict]:
    """Every JSON-RPC message of a JSON or SSE answer."""
    if response.headers["content-type"].startswith("text/event-stream"):
        return list(sse_messages(response.text.splitlines()))
    return [response.json()]


def call(url: str, name: str, arguments: dict | None = None, **kw: Any) -> httpx.Response:
    return post(url, *modern("tools/call", {"name": name, "arguments": arguments or {}}, **kw))


def text_of(message: dict) -> str:
    return message["result"]["content"][0]["text"]


class Legacy:
    """A 2025-11-25 client session over raw HTTP."""

    def __init__(self, url: str, caps: dict | None = None, version: str = LEGACY) -> None:
        self.url = url
        self.version = version
        self._ids = iter(range(1, 10_000))
        r = post(url, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": version, "capabilities": caps or {},
            "clientInfo": {"name": "test", "version": "1"}}},
            {"content-type": "application/json", "accept": ACCEPT})
        assert r.status_code == 200, r.text
        self.init = r.json()
        self.id = r.headers["mcp-session-id"]
        r = self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        assert r.status_code == 202

    @property
    def headers(self) -> dict[str, str]:
        return {"content-type": "application/json", "accept": ACCEPT,
                "mcp-session-id": self.id, "mcp-protocol-version": self.version}

    def post(self, body: Any, **headers: Any) -> httpx.Response:
        return post(self.url, body, {**self.headers, **headers})

    def request(self, method: str, params: dict | None = None) -> httpx.Response:
        return self.post({"jsonrpc": "2.0", "id": next(self._ids), "method": method,
                          "params": params or {}})


def stream_in_thread(method: str, url: str, headers: dict, body: Any = None
                     ) -> tuple[queue.Queue, threading.Thread, dict]:
    """Read an answer (SSE or JSON) on a thread; messages arrive on the queue, then None.

    ``control["close"]`` set: the reader drops the connection after its next message.
    """
    out: queue.Queue = queue.Queue()
    control: dict[str, Any] = {"close": False, "status": None}

    def run() -> None:
        try:
            with httpx.Client(timeout=httpx.Timeout(10, read=20)) as client:
                kwargs = {"content": json.dumps(body).encode()} if body is not None else {}
                with client.stream(method, url, headers=headers, **kwargs) as r:
                    control["status"] = r.status_code
                    if r.headers.get("content-type") == "application/json":
                        out.put(json.loads(r.read()))
                        return
                    for message in sse_messages(r.iter_lines()):
                        out.put(message)
                        if control["close"]:
                            return
        except httpx.HTTPError as exc:
            control["error"] = exc
        finally:
            out.put(None)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return out, thread, control



# -- servers ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with HttpServerThread(everything.server) as http:
        yield http.url


lab = Server("lab", "1.0.0")
cancelled = threading.Event()
barrier = threading.Barrier(3)


@lab.tool
def slow(ctx: Context) -> str:
    """Reports progress, then waits until cancelled (or 10 s)."""
    ctx.progress(0, 1)
    if ctx.cancelled.wait(10):
        cancelled.set()
        return "cancelled"
    return "finished"


@lab.tool
def meet() -> str:
    """Returns only when three calls are running at the same time."""
    barrier.wait(timeout=5)
    return "met"


@lab.tool
def echo(text: str) -> str:
    """Echoes its argument."""
    return text


@pytest.fixture(scope="module")
def lab_url() -> Iterator[str]:
    with HttpServerThread(lab) as http:
        yield http.url


# -- modern era (2026-07-28) ------------------------------------------------------------


def test_discover_is_answered_as_json(url: str) -> None:
    r = post(url, *modern("server/discover"))
    assert r.status_code == 200
    assert r.headers["content-type"] == "application/json"
    result = r.json()["result"]
    assert MODERN in result["supportedVersions"] and result["resultType"] == "complete"
    assert "mcp-session-id" not in r.headers  # the modern era never mints a session


def test_progress_comes_on_an_sse_stream_before_the_result(url: str) -> None:
    r = call(url, "test_tool_with_progress", progressToken="p1")
    assert r.headers["content-type"] == "text/event-stream"
    assert r.headers["x-accel-buffering"] == "no"
    *notes, final = messages(r)
    assert [n["params"]["progress"] for n in notes] == [0, 50, 100]
    assert all(n["params"]["progressToken"] == "p1" for n in notes)
    assert text_of(final) == "p1"


def test_log_messages_only_when_the_request_asks_for_a_level(url: str) -> None:
    quiet = call(url, "test_tool_with_logging")
    assert quiet.headers["content-type"] == "application/json"
    loud = messages(call(url, "test_tool_with_logging",
                         **{"io.modelcontextprotocol/logLevel": "info"}))
    assert [m["params"]["data"] for m in loud[:-1]] == [
        "Tool execution started", "Tool processing data", "Tool execution completed"]


def test_missing_meta_is_400_invalid_params(url: str) -> None:
    body, headers = modern("server/discover", id=7)
    del body["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]
    r = post(url, body, headers)
    assert r.status_code == 400
    assert r.json()["error"]["code"] == -32602 and r.json()["id"] == 7


@pytest.mark.parametrize("headers", [
    {"mcp-protocol-version": None},
    {"mcp-protocol-version": "2099-01-01"},
    {"mcp-method": None},
    {"mcp-method": "TOOLS/LIST"},
    {"mcp-method": "tools/list, prompts/list"},
], ids=["no-version", "other-version", "no-method", "method-case", "method-twice"])
def test_standard_headers_must_match_the_body(url: str, headers: dict) -> None:
    r = post(url, *modern("tools/list", id="h", headers=headers))
    assert r.status_code == 400
    assert r.json()["error"]["code"] == -32020 and r.json()["id"] == "h"


def test_mcp_name_is_checked_and_may_be_base64(url: str) -> None:
    params = {"name": "test_simple_text", "arguments": {}}
    wrong = post(url, *modern("tools/call", params, headers={"mcp-name": "other"}))
    assert wrong.status_code == 400 and wrong.json()["error"]["code"] == -32020
    missing = post(url, *modern("tools/call", params, headers={"mcp-name": None}))
    assert missing.json()["error"]["code"] == -32020
    encoded = "=?base64?dGVzdF9zaW1wbGVfdGV4dA==?="  # "test_simple_text"
    ok = post(url, *modern("tools/call", params, headers={"mcp-name": encoded}))
    assert text_of(ok.json()) == "This is a simple text response for testing."
    # Optional whitespace around a value is not part of it (httpx will not send it).
    body, headers = modern("tools/call", params, headers={"mcp-name": "  test_simple_text "})
    parts = httpx.URL(url)
    conn = http.client.HTTPConnection(parts.host, parts.port, timeout=10)
    conn.request("POST", parts.path, json.dumps(body), headers)
    assert conn.getresponse().status == 200
    conn.close()


@pytest.mark.parametrize(("header", "ok"), [
    ("Zürich", None),  # replaced by its encoded form below
    ("=?base64?WsO8cmljaA==?=", True),
    ("=?base64?WsO8cmljaA?=", False),  # bad padding
    ("=?base64?W$O8cmljaA==?=", False),  # not Base64
    ("Zurich", False),
    (None, False),
], ids=["encoded", "base64", "bad-padding", "bad-chars", "mismatch", "missing"])
def test_custom_param_headers(url: str, header: str | None, ok: bool | None) -> None:
    if ok is None:
        header, ok = encode_header_value("Zürich"), True
    r = call(url, "test_x_mcp_header", {"region": "Zürich"},
             headers={"mcp-param-region": header})
    if ok:
        assert text_of(r.json()) == "Region: Zürich"
    else:
        assert r.status_code == 400 and r.json()["error"]["code"] == -32020


def test_header_values_round_trip() -> None:
    for value in ("plain", "Zürich", " padded ", "=?base64?abc?=", "tab\there", "日本"):
        encoded = encode_header_value(value)
        assert encoded.isascii() and encoded.isprintable()
        assert decode_header_value(encoded) == value
    assert encode_header_value(True) == "true" and encode_header_value(42) == "42"
    assert decode_header_value("=?base64?abc") == "=?base64?abc"  # no suffix: literal


def test_unsupported_version_is_400_with_the_supported_list(url: str) -> None:
    body, headers = modern("server/discover", headers={"mcp-protocol-version": "v9"})
    body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = "v9"
    r = post(url, body, headers)
    assert r.status_code == 400
    error = r.json()["error"]
    assert error["code"] == -32022 and error["data"]["requested"] == "v9"
    assert MODERN in error["data"]["supported"]


@pytest.mark.parametrize("method", ["initialize", "ping", "logging/setLevel", "no/such"])
def test_unknown_and_legacy_only_methods_are_404(url: str, method: str) -> None:
    r = post(url, *modern(method, id=41))
    assert r.status_code == 404
    assert r.json()["error"]["code"] == -32601 and r.json()["id"] == 41


def test_missing_client_capability_is_400(url: str) -> None:
    r = call(url, "test_missing_capability")
    assert r.status_code == 400
    assert r.json()["error"]["data"] == {"requiredCapabilities": {"sampling": {}}}


def test_input_required_round_trip_and_tampered_state(url: str) -> None:
    caps = {"elicitation": {}}
    first = call(url, "test_input_required_result_elicitation", caps=caps).json()["result"]
    assert first["resultType"] == "input_required"
    assert first["inputRequests"]["user_name"]["method"] == "elicitation/create"
    answer = {"user_name": {"action": "accept", "content": {"name": "Alice"}}}
    retry = {"name": "test_input_required_result_elicitation", "arguments": {},
             "inputResponses": answer, "requestState": first["requestState"]}
    done = post(url, *modern("tools/call", retry, id=2, caps=caps)).json()
    assert text_of(done) == "Hello, Alice!"
    retry["requestState"] += "x"
    tampered = post(url, *modern("tools/call", retry, id=3, caps=caps))
    assert tampered.status_code == 400 and tampered.json()["error"]["code"] == -32602


moody = Server("moody")
moody_barrier = threading.Barrier(3)
moody_mode: dict[str, Any] = {"slow": False, "wait": 0.5}


@moody.tool
def sometimes_slow() -> str:
    """Fast, until it is told to wait for two other calls."""
    if moody_mode["slow"]:
        moody_barrier.wait(timeout=moody_mode["wait"])
    return "done"


def test_a_quick_tool_runs_on_the_loop_until_it_is_slow_then_on_threads(monkeypatch) -> None:
    """A handler that always answered fast runs inline; once it takes long it goes back to
    the executor for good, so slow calls then run side by side (the barrier needs three)."""
    # "Fast" is 2 ms, which a loaded machine's scheduler alone can exceed: 0.1 s here, still
    # well under the slow call's 0.5 s.
    monkeypatch.setattr(http_module, "INLINE_BUDGET_S", 0.1)
    with HttpServerThread(moody) as served:
        for _ in range(3):
            assert text_of(call(served.url, "sometimes_slow").json()) == "done"
        assert served.app._quick.inline(("tools/call", "sometimes_slow"))
        moody_mode["slow"] = True
        # Inline, alone: the barrier times out after 0.5 s (blocking the loop that long),
        # the tool raises, and the call is a tool error. The point is what comes next.
        first = call(served.url, "sometimes_slow").json()
        assert first["result"]["isError"] is True
        assert not served.app._quick.inline(("tools/call", "sometimes_slow"))
        moody_barrier.reset()
        moody_mode["wait"] = 5
        results: list[str] = []
        threads = [threading.Thread(target=lambda: results.append(text_of(
            call(served.url, "sometimes_slow").json()))) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(10)
        assert results == ["done"] * 3  # three ran at once: on the executor now


def test_modern_notifications_are_202_and_get_delete_405(url: str) -> None:
    body, headers = modern("notifications/cancelled", {"requestId": 1})
    del body["id"]
    assert post(url, body, headers).status_code == 202
    assert httpx.get(url, headers={"accept": "text/event-stream"}).status_code == 405
    assert httpx.delete(url).status_code == 405


def test_several_streams_at_once(lab_url: str) -> None:
    results: list[str] = []
    threads = [threading.Thread(target=lambda: results.append(text_of(
        call(lab_url, "meet").json()))) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert results == ["met"] * 3  # the barrier opens only if all three run together


def test_closing_the_stream_cancels_the_call(lab_url: str) -> None:
    cancelled.clear()
    body, headers = modern("tools/call", {"name": "slow", "arguments": {}},
                           progressToken="s")
    out, thread, control = stream_in_thread("POST", lab_url, headers, body)
    control["close"] = True
    assert out.get(timeout=5)["method"] == "notifications/progress"
    thread.join(5)
    assert cancelled.wait(5), "the tool was not cancelled when the client left"


def test_listen_stream_gets_tagged_list_changes_and_ends_with_the_client(url: str) -> None:
    baseline = len(everything.server._listeners)
    body, headers = modern("subscriptions/listen",
                           {"notifications": {"toolsListChanged": True}}, id="L1")
    out, thread, control = stream_in_thread("POST", url, headers, body)
    ack = out.get(timeout=5)
    assert ack["method"] == "notifications/subscriptions/acknowledged"
    assert ack["params"]["notifications"] == {"toolsListChanged": True}
    call(url, "test_trigger_prompt_change")  # not asked for: must not arrive
    control["close"] = True
    call(url, "test_trigger_tool_change")
    change = out.get(timeout=5)
    assert change["method"] == "notifications/tools/list_changed"
    assert change["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "L1"
    thread.join(5)
    # Closing the stream ended the subscription: its Connection is gone.
    assert wait_for(lambda: len(everything.server._listeners) <= baseline)


def test_stopping_the_thread_ends_open_streams() -> None:
    http = HttpServerThread(everything.server).start()
    body, headers = modern("subscriptions/listen",
                           {"notifications": {"promptsListChanged": True}}, id=9)
    out, thread, _ = stream_in_thread("POST", http.url, headers, body)
    assert out.get(timeout=5)["method"] == "notifications/subscriptions/acknowledged"
    baseline = len(everything.server._listeners)
    http.stop()
    final = out.get(timeout=5)  # a graceful end: the listen's result, then the stream closes
    assert final["id"] == 9 and final["result"]["resultType"] == "complete"
    assert out.get(timeout=5) is None
    thread.join(5)
    assert not http._thread.is_alive()
    # The listen's Connection is closed too, although close() shut the executor down.
    assert wait_for(lambda: len(everything.server._listeners) < baseline)


def test_idle_streams_get_keepalive_comments() -> None:
    with HttpServerThread(lab, keepalive_s=0.05) as http:
        body, headers = modern("subscriptions/listen",
                               {"notifications": {"toolsListChanged": True}})
        with httpx.stream("POST", http.url, content=json.dumps(body), headers=headers,
                          timeout=5) as r:
            lines = r.iter_lines()
            assert next(lines) == "event: message"
            assert json.loads(next(lines)[5:])["params"]["notifications"] == {
                "toolsListChanged": True}
            assert ": keepalive" in [next(lines) for _ in range(3)]


# -- legacy era (2025-11-25) ----------------------------------------------------------


def test_legacy_session_lifecycle(url: str) -> None:
    session = Legacy(url)
    assert session.init["result"]["protocolVersion"] == LEGACY
    assert len(session.id) >= 32 and session.id.isascii() and session.id.isprintable()
    assert " " not in session.id
    listed = session.request("tools/list")
    assert listed.status_code == 200 and listed.json()["result"]["tools"]
    other = Legacy(url)
    assert other.id != session.id

    unknown = session.post({"jsonrpc": "2.0", "id": 6, "method": "tools/list"},
                           **{"mcp-session-id": "nope"})
    wrong_version = session.post({"jsonrpc": "2.0", "id": 7, "method": "tools/list"},
                                 **{"mcp-protocol-version": "2025-03-26"})
    assert unknown.status_code == 404
    assert wrong_version.status_code == 400

    headers = {k: v for k, v in session.headers.items() if k != "mcp-session-id"}
    no_session = post(url, {"jsonrpc": "2.0", "id": 5, "method": "tools/list"}, headers)
    assert no_session.status_code == 400 and no_session.json()["error"]["code"] == -32600

    only_json = {**session.headers, "accept": "application/json"}
    assert httpx.get(url, headers=only_json).status_code == 406
    assert httpx.get(url, headers={**session.headers, "mcp-session-id": "nope"}
                     ).status_code == 404

    deleted = httpx.delete(url, headers={"mcp-session-id": session.id})
    assert deleted.status_code == 204
    assert session.request("tools/list").status_code == 404
    assert httpx.delete(url, headers={"mcp-session-id": session.id}).status_code == 404


def test_batches_only_in_a_2025_03_26_session(url: str) -> None:
    old = Legacy(url, version="2025-03-26")
    batch = [{"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
             {"jsonrpc": "2.0", "method": "notifications/initialized"},
             {"jsonrpc": "2.0", "id": 2, "method": "ping"}]
    r = httpx.post(url, json=batch, headers=old.headers)
    assert r.status_code == 200
    assert sorted(m["id"] for m in r.json()) == [1, 2]
    only_notes = httpx.post(url, json=batch[1:2], headers=old.headers)
    assert only_notes.status_code == 202
    newer = Legacy(url)
    assert httpx.post(url, json=batch, headers=newer.headers).status_code == 400
    assert httpx.post(url, json=[], headers=old.headers).status_code == 400


def test_legacy_progress_on_the_post_stream(url: str) -> None:
    session = Legacy(url)
    r = session.request("tools/call", {"name": "test_tool_with_progress", "arguments": {},
                                       "_meta": {"progressToken": 3}})
    *notes, final = messages(r)
    assert [n["params"]["progress"] for n in notes] == [0, 50, 100]
    assert text_of(final) == "3"


def test_legacy_get_stream_carries_list_changes(url: str) -> None:
    session = Legacy(url)
    out, thread, control = stream_in_thread("GET", url, session.headers)
    assert wait_for(lambda: control["status"] is not None)
    second = httpx.get(url, headers=session.headers)
    assert second.status_code == 409  # one GET stream per session
    control["close"] = True
    session.request("tools/call", {"name": "test_trigger_tool_change", "arguments": {}})
    message = out.get(timeout=5)
    assert message == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
    thread.join(5)


def test_legacy_sampling_request_and_answer(url: str) -> None:
    """The server asks the client mid-call; the client answers with a POST of its own."""
    session = Legacy(url, caps={"sampling": {}})
    get_out, get_thread, get_control = stream_in_thread("GET", url, session.headers)
    assert wait_for(lambda: get_control["status"] is not None)
    body = {"jsonrpc": "2.0", "id": 77, "method": "tools/call",
            "params": {"name": "test_sampling", "arguments": {"prompt": "Hi?"}}}
    post_out, post_thread, _ = stream_in_thread("POST", url, session.headers, body)
    ask = None
    deadline = time.monotonic() + 5
    while ask is None and time.monotonic() < deadline:  # on either stream
        for out in (get_out, post_out):
            try:
                message = out.get(timeout=0.05)
            except queue.Empty:
                continue
            if message and message.get("method") == "sampling/createMessage":
                ask = message
    assert ask is not None, "no sampling request reached the client"
    assert ask["params"]["messages"][0]["content"]["text"] == "Hi?"
    reply = session.post({"jsonrpc": "2.0", "id": ask["id"], "result": {
        "role": "assistant", "content": {"type": "text", "text": "Hello!"}, "model": "m"}})
    assert reply.status_code == 202
    final = None
    while final is None:
        message = post_out.get(timeout=5)
        assert message is not None, "the call's stream ended without its result"
        if message.get("id") == 77:
            final = message
    assert text_of(final) == "LLM response: Hello!"
    httpx.delete(url, headers={"mcp-session-id": session.id})
    get_thread.join(5)
    post_thread.join(5)


def test_legacy_cancel_ends_the_call_stream(lab_url: str) -> None:
    cancelled.clear()
    session = Legacy(lab_url)
    body = {"jsonrpc": "2.0", "id": 5, "method": "tools/call",
            "params": {"name": "slow", "arguments": {}, "_meta": {"progressToken": 1}}}
    out, thread, _ = stream_in_thread("POST", lab_url, session.headers, body)
    assert out.get(timeout=5)["method"] == "notifications/progress"
    r = session.post({"jsonrpc": "2.0", "method": "notifications/cancelled",
                      "params": {"requestId": 5}})
    assert r.status_code == 202
    assert cancelled.wait(5)
    assert out.get(timeout=5) is None  # the stream ended, with no response
    thread.join(5)


# -- HTTP-level checks and security -------------------------------------------------


@pytest.mark.parametrize(("headers", "status"), [
    ({"host": "evil.example.com"}, 403),
    ({"origin": "http://evil.example.com"}, 403),
    ({"origin": "http://localhost:1234"}, 200),
    ({"content-type": "text/plain"}, 415),
    ({"accept": "application/json"}, 406),
    ({"accept": "text/event-stream"}, 406),
    ({"accept": "*/*"}, 200),
], ids=["host", "origin", "local-origin", "content-type", "accept-json", "accept-sse",
        "accept-any"])
def test_http_checks(url: str, headers: dict, status: int) -> None:
    r = post(url, *modern("tools/list", headers=headers))
    assert r.status_code == status
    if status != 200:
        assert r.json()["error"]["code"] == -32600 and "message" in r.json()["error"]


def test_bad_bodies_and_paths(url: str) -> None:
    headers = modern("tools/list")[1]
    parse = post(url, b"{not json", headers)
    assert parse.status_code == 400 and parse.json()["error"]["code"] == -32700
    batch = post(url, [modern("tools/list")[0]], headers)
    assert batch.status_code == 400 and batch.json()["error"]["code"] == -32600
    elsewhere = post(url.replace("/mcp", "/other"), *modern("tools/list"))
    assert elsewhere.status_code == 404
    assert httpx.put(url, content=b"{}").status_code == 405


def test_malformed_but_parsable_input_gets_a_clear_error(url: str) -> None:
    deep = post(url, b"[" * 100_000, modern("tools/list")[1])  # too deep for json.loads
    assert deep.status_code == 400 and deep.json()["error"]["code"] == -32700
    session = Legacy(url)  # a cancellation naming an id that cannot be one
    r = session.post({"jsonrpc": "2.0", "method": "notifications/cancelled",
                      "params": {"requestId": [1]}})
    assert r.status_code == 202  # a notification: accepted, ignored, never answered
    assert session.request("tools/list").status_code == 200


def test_a_full_session_backlog_warns_that_it_drops(caplog: pytest.LogCaptureFixture) -> None:
    session = _Session("0123456789")
    for n in range(SESSION_BACKLOG + 2):
        session.push({"jsonrpc": "2.0", "method": "notifications/message", "params": {"n": n}})
    assert [r.message for r in caplog.records if "dropping" in r.message] == [
        f"session 01234567...: {SESSION_BACKLOG} messages wait for a GET stream that is not "
        "open; dropping the oldest from now on"]


def test_token_and_body_limit() -> None:
    with HttpServerThread(lab, token="s3cret", max_body_size=2000) as http:
        body, headers = modern("tools/list")
        missing = post(http.url, body, headers)
        assert missing.status_code == 401
        assert missing.headers["www-authenticate"].startswith("Bearer")
        wrong = post(http.url, body, {**headers, "authorization": "Bearer nope"})
        assert wrong.status_code == 401 and "invalid_token" in wrong.headers["www-authenticate"]
        auth = {**headers, "authorization": "Bearer s3cret"}
        assert post(http.url, body, auth).status_code == 200
        big = modern("tools/call", {"name": "echo", "arguments": {"text": "x" * 3000}})
        too_large = post(http.url, big[0], {**big[1], "authorization": "Bearer s3cret"})
        assert too_large.status_code == 413


def test_other_hosts_and_origins_can_be_allowed() -> None:
    with HttpServerThread(lab, allowed_hosts=["mcp.internal"],
                          allowed_origins=["https://app.example"]) as http:
        body, headers = modern("tools/list")
        assert post(http.url, body, {**headers, "host": "mcp.internal:9"}).status_code == 200
        assert post(http.url, body, {**headers, "origin": "https://app.example"}
                    ).status_code == 200
        assert post(http.url, body, {**headers, "origin": "http://app.example"}
                    ).status_code == 403



def _raw_post(port: int, path: str, header_lines: list[tuple[str, str]],
              payload: bytes) -> tuple[int, dict]:
    """One POST with exactly these header lines (repeats kept, as httpx would merge them)."""
    head = "".join(f"{name}: {value}\r\n" for name, value in header_lines)
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(f"POST {path} HTTP/1.1\r\n{head}Content-Length: {len(payload)}\r\n"
                     f"Connection: close\r\n\r\n".encode() + payload)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    status = int(answer.split(b" ", 2)[1])
    return status, json.loads(answer.split(b"\r\n\r\n", 1)[1] or b"null")


@pytest.mark.parametrize("allowed_hosts", [None, ["*"]])
def test_a_header_that_may_appear_once_is_refused_when_repeated(allowed_hosts) -> None:
    """RFC 9112 §3.2: two Host lines get 400, even when both name an allowed host and when
    any host is allowed; so does every other single header (MCP's own included), and the
    server goes on serving."""
    with HttpServerThread(lab, allowed_hosts=allowed_hosts) as http:
        body, headers = modern("tools/list")
        payload = json.dumps(body).encode()
        host = ("host", f"127.0.0.1:{http.port}")
        lines = [host, *headers.items()]
        assert _raw_post(http.port, http.app.path, lines, payload)[0] == 200
        for name, value in [host, *headers.items(), ("origin", "http://localhost"),
                            ("authorization", "Bearer x")]:
            if name.lower() == "accept":
                continue  # a list header: repeating it is allowed
            times = 1 if any(name == present for present, _ in lines) else 2
            status, answer = _raw_post(http.port, http.app.path,
                                       [*lines, *[(name, value)] * times], payload)
            assert status == 400, (name, status, answer)
            assert answer["error"]["code"] == -32600
            assert name.title() in answer["error"]["message"], answer
            assert "only once" in answer["error"]["message"]
        twice = [*lines, ("accept", "application/json")]
        assert _raw_post(http.port, http.app.path, twice, payload)[0] == 200


# -- several worker processes ---------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_two_workers_share_the_request_state_secret() -> None:
    """Round 1 answered by one process, round 2 by another: the sealed state still opens."""
    port = _free_port()
    env = {**os.environ, "MCPKIT_STATE_SECRET": "shared-by-both-workers"}
    target = str(ROOT / "tests" / "http_workers_server.py") + ":server"
    proc = subprocess.Popen([sys.executable, "-m", "mcpkit", "serve", target, "--http",
                             "--port", str(port), "--workers", "2"], env=env, cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        assert wait_for(lambda: _answers(url), timeout=20), "the workers did not start"
        caps = {"elicitation": {}}
        crossed = pids = None
        seen: set[str] = set()
        for attempt in range(60):  # each POST is a new connection: either worker may take it
            seen.add(text_of(call(url, "whoami").json()))
            first = call(url, "greet", caps=caps).json()["result"]
            retry = {"name": "greet", "arguments": {}, "requestState": first["requestState"],
                     "inputResponses": {"name": {"action": "accept",
                                                 "content": {"name": "Ada"}}}}
            done = text_of(post(url, *modern("tools/call", retry, id=attempt, caps=caps)).json())
            asked, answered = (part.split("=")[1] for part in done.split()[:2])
            assert done.endswith("Hello, Ada!")
            if asked != answered:
                crossed, pids = done, (asked, answered)
                break
        assert len(seen) == 2 or crossed, f"only one worker answered: {seen}"
        assert crossed, "no round trip crossed workers in 60 tries"
        assert pids[0] != pids[1]
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


def _answers(url: str) -> bool:
    try:
        return post(url, *modern("server/discover")).status_code == 200
    except httpx.HTTPError:
        return False


def _where(ctx: Context) -> str:
    """Report progress once, then name the thread this runs on."""
    ctx.progress(1, 1)
    return threading.current_thread().name


def test_a_modern_context_tool_runs_on_the_executor_until_quick_and_can_be_cancelled(
        monkeypatch) -> None:
    """2026-07-28: a tool that takes a Context runs on the executor's thread (no thread is
    started for it) until it has answered quickly, then on the event loop like any quick
    tool, its progress still streamed before its result; one that waits is never quick,
    and closing its stream still cancels it."""
    monkeypatch.setattr(http_module, "INLINE_BUDGET_S", 0.1)  # a loaded machine's 2 ms
    threads = Server("where", "1")
    seen: dict[str, Any] = {}

    threads.tool(name="where")(_where)

    @threads.tool
    def wait(ctx: Context) -> str:
        """Wait until cancelled."""
        seen["cancelled"] = ctx.cancelled.wait(10)
        return "done"

    with HttpServerThread(threads) as served:
        names = []
        for n in range(3):
            *notes, final = messages(call(served.url, "where", progressToken=n))
            assert [note["params"]["progressToken"] for note in notes] == [n]
            names.append(text_of(final))
        assert names[0].startswith("mcpkit-http_")  # an executor thread, before it was known
        assert served.app._quick.inline(("tools/call", "where"))
        assert not names[-1].startswith("mcpkit-http_")  # the event loop's own thread
        body, headers = modern("tools/call", {"name": "wait", "arguments": {}})
        payload = json.dumps(body).encode()
        head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        with socket.create_connection(("127.0.0.1", served.port), timeout=5) as sock:
            sock.sendall(f"POST {served.app.path} HTTP/1.1\r\nHost: 127.0.0.1:{served.port}"
                         f"\r\n{head}Content-Length: {len(payload)}\r\n\r\n".encode()
                         + payload)
            time.sleep(0.3)  # the tool is waiting now; closing the connection cancels it
        assert wait_for(lambda: "cancelled" in seen, 5)
        assert seen["cancelled"] is True
        assert not served.app._quick.inline(("tools/call", "wait"))


def _thread_name(ctx: Context) -> str:
    return threading.current_thread().name


def test_a_legacy_tool_that_only_reports_needs_no_call_thread_one_that_may_ask_keeps_it(
        monkeypatch) -> None:
    """2025-11-25: a tool whose Context, by its code, only reports progress cannot wait for
    another message of the session, so it is served like a 2026-07-28 one: on the executor's
    thread, then on the event loop once quick (no thread hop), its progress streamed before
    its result. A tool that passes its Context on may ask the client (the answer comes in
    another POST), so it keeps a call thread of its own."""
    monkeypatch.setattr(http_module, "INLINE_BUDGET_S", 0.1)  # a loaded machine's 2 ms
    threads = Server("where", "1")

    threads.tool(name="where")(_where)

    @threads.tool
    def passes_it_on(ctx: Context) -> str:
        """Name the thread, through a helper given the Context."""
        return _thread_name(ctx)

    with HttpServerThread(threads) as served:
        session = Legacy(served.url)
        names = []
        for n in range(3):
            *notes, final = messages(session.request(
                "tools/call", {"name": "where", "arguments": {}, "_meta": {"progressToken": n}}))
            assert [note["params"]["progressToken"] for note in notes] == [n]
            names.append(text_of(final))
        assert names[0].startswith("mcpkit-http_")  # an executor thread, before it was known
        assert served.app._quick.inline(("tools/call", "where"))
        assert not names[-1].startswith(("mcpkit-http_", "mcpkit-call"))  # the event loop's
        for _ in range(3):
            final = messages(session.request("tools/call", {"name": "passes_it_on",
                                                            "arguments": {}}))[-1]
            assert text_of(final) == "mcpkit-call"


def test_a_quick_tool_slow_once_runs_inline_again_after_quick_answers(monkeypatch) -> None:
    """One pause (a garbage collection, a busy machine) sends a quick tool to the executor;
    answering quickly there PROMOTE_AFTER times in a row brings it back, and a tool that
    stays slow stays on the executor."""
    monkeypatch.setattr(http_module, "PROMOTE_AFTER", 5)
    # A loaded machine can make an instant call take 2 ms; 20 ms still tells 50 ms apart.
    monkeypatch.setattr(http_module, "INLINE_BUDGET_S", 0.02)
    hiccups = Server("hiccups", "1")
    pause = {"hiccup": 0.0, "slow": 0.05}

    @hiccups.tool
    def hiccup() -> str:
        """Usually instant."""
        time.sleep(pause["hiccup"])
        return "ok"

    @hiccups.tool
    def slow() -> str:
        """Always blocks."""
        time.sleep(pause["slow"])
        return "ok"

    with HttpServerThread(hiccups) as served:
        quick = served.app._quick
        for _ in range(3):
            call(served.url, "hiccup")
        assert quick.inline(("tools/call", "hiccup"))
        pause["hiccup"] = 0.05
        call(served.url, "hiccup")
        pause["hiccup"] = 0.0
        assert not quick.inline(("tools/call", "hiccup"))
        for _ in range(4):
            call(served.url, "hiccup")
        assert not quick.inline(("tools/call", "hiccup"))  # four quick answers: not yet
        call(served.url, "hiccup")
        assert quick.inline(("tools/call", "hiccup"))
        for _ in range(12):
            assert text_of(call(served.url, "slow").json()) == "ok"
        assert not quick.inline(("tools/call", "slow"))


def _echo_server(name: str) -> Server:
    """A server with ``plain`` (an echo) and ``reporting`` (an echo that takes a Context and
    reports progress once)."""
    server = Server(name, "1")

    @server.tool
    def plain(text: str) -> str:
        """Echo."""
        return text

    @server.tool
    def reporting(text: str, ctx: Context) -> str:
        """Echo after a progress report."""
        ctx.progress(1, 1)
        return text

    return server


def test_requests_leave_no_reference_cycles_behind(monkeypatch) -> None:
    """What a request makes is freed when it is answered, without the cycle collector: a
    cycle per request (a Connection and its outbox holding each other) left garbage that
    made the collector's work grow with the load. Modern JSON and SSE answers (inline and
    on the executor) and a legacy session's calls, through a real server."""
    import gc

    monkeypatch.setattr(http_module, "INLINE_BUDGET_S", 0.1)  # a loaded machine's 2 ms
    counter = _echo_server("cycles")

    with HttpServerThread(counter) as served:
        session = Legacy(served.url)

        def traffic() -> None:
            for n in range(5):
                assert text_of(call(served.url, "plain", {"text": "a"}).json()) == "a"
                assert text_of(messages(call(served.url, "reporting", {"text": "b"},
                                             progressToken=n))[-1]) == "b"
                assert text_of(session.request(
                    "tools/call", {"name": "plain", "arguments": {"text": "c"}}).json()) == "c"

        traffic()  # the first calls run on the executor; later ones inline
        gc.collect()
        gc.disable()
        gc.set_debug(gc.DEBUG_SAVEALL)
        try:
            traffic()
            gc.collect()
            ours = [type(o).__qualname__ for o in gc.garbage
                    if getattr(type(o), "__module__", "").startswith("mcpkit")]
        finally:
            gc.set_debug(0)
            gc.garbage.clear()
            gc.enable()
    assert ours == []


# -- writes batched under load (http_protocol._BatchedWrites) ---------------------------


def _loops() -> list[Any]:
    import asyncio

    loops = [asyncio.new_event_loop]
    try:
        import uvloop  # the loop `mcpkit serve --http` runs on

        loops.append(uvloop.new_event_loop)
    except ImportError:  # pragma: no cover - the http extra installs it
        pass
    return loops


def _readable(sock: socket.socket, timeout: float) -> bytes:
    """What the peer has received within ``timeout`` (b"" if nothing), without letting
    the event loop run: a held write cannot be flushed meanwhile."""
    import select

    ready, _, _ = select.select([sock], [], [], timeout)
    return sock.recv(1 << 20) if ready else b""


@pytest.mark.parametrize("new_loop", _loops(), ids=lambda f: f.__module__.split(".")[0])
def test_writes_wait_for_the_end_of_the_loop_round_only_while_others_are_in_progress(
        new_loop) -> None:
    """A real socket pair and a real transport: alone, a request's writes go out at once;
    with other requests in progress they are held for the end of the loop's round and go
    out as one; past BATCH_LIMIT, or before the end of the stream, at once; abort drops
    them."""
    import asyncio

    from mcpkit.transports import http_protocol

    async def main() -> None:
        loop = asyncio.get_running_loop()
        ours, peer = socket.socketpair()
        peer.settimeout(5)
        with peer:
            transport, _ = await loop.connect_accepted_socket(asyncio.Protocol, ours)
            tasks: set[Any] = {"this request"}
            writes = http_protocol._BatchedWrites(
                transport, tasks, http_protocol._RoundFlush(loop))
            writes.write(b"head;")
            assert _readable(peer, 2) == b"head;"  # alone: written at once
            tasks.add("another request")
            writes.write(b"head;")
            writes.write(b"body")
            assert _readable(peer, 0.3) == b""  # held while the round goes on
            await asyncio.sleep(0)  # the round ends
            assert _readable(peer, 2) == b"head;body"
            writes.write(b"small;")
            writes.write(b"x" * http_protocol.BATCH_LIMIT)  # too much to hold
            received = b""
            while len(received) < 6 + http_protocol.BATCH_LIMIT:
                chunk = _readable(peer, 2)
                assert chunk, "a large write waited for the end of the round"
                received += chunk
            assert received == b"small;" + b"x" * http_protocol.BATCH_LIMIT
            writes.write(b"last words")
            assert writes.get_write_buffer_size() >= len(b"last words")  # held ones count
            writes.close()  # what is held goes before the end of the stream
            await asyncio.sleep(0)
            assert _readable(peer, 2) == b"last words"
            assert peer.recv(100) == b""  # the end of the stream (the 5 s timeout: a hang)
        for ending in ("write_eof", "abort"):
            ours, peer = socket.socketpair()
            peer.settimeout(5)
            with peer:
                transport, _ = await loop.connect_accepted_socket(asyncio.Protocol, ours)
                writes = http_protocol._BatchedWrites(
                    transport, tasks, http_protocol._RoundFlush(loop))
                writes.writelines([b"held, ", b"then "])
                getattr(writes, ending)()
                await asyncio.sleep(0)
                received = b""
                while chunk := peer.recv(100):
                    received += chunk
                # write_eof sends what is held first; abort drops it
                assert received == (b"held, then " if ending == "write_eof" else b"")

    loop = new_loop()
    try:
        loop.run_until_complete(main())
    finally:
        loop.close()


def _read_response(stream: Any) -> tuple[bytes, bytes]:
    """One HTTP/1.1 response with a Content-Length from a socket's file: (head, body)."""
    lines = []
    while (line := stream.readline()) not in (b"\r\n", b""):
        lines.append(line)
    assert lines, "the connection closed before a response head"
    length = int(next(line.split(b":")[1] for line in lines
                      if line.lower().startswith(b"content-length:")))
    body = stream.read(length)
    assert len(body) == length, "the connection closed in the middle of a body"
    return b"".join(lines), body


@pytest.mark.parametrize("protocol", ["FastHeadDeadlineProtocol", "HeadDeadlineProtocol"],
                         ids=["httptools", "h11"])
def test_answers_written_while_other_requests_are_in_progress_all_arrive_whole_in_order(
        protocol: str, monkeypatch) -> None:
    """With a call in progress the whole time (so every write is held for the end of its
    round): pipelined requests on one connection are answered in order, a 1 MiB answer
    arrives whole, and eight clients' keep-alive calls all get their own answers. Both of
    uvicorn's protocols, with mcpkit's deadlines and batching."""
    from mcpkit.transports import http_protocol

    monkeypatch.setattr(http_module, "PROTOCOL", f"mcpkit.transports.http_protocol:{protocol}")
    busy = Server("busy", "1")
    started, release = threading.Event(), threading.Event()

    @busy.tool
    def hold() -> str:
        """Wait until the test lets go."""
        started.set()
        release.wait(20)
        return "let go"

    @busy.tool
    def echo(text: str) -> str:
        """Echo."""
        return text

    @busy.tool
    def big(size: int) -> str:
        """Text of the given size."""
        return "y" * size

    with HttpServerThread(busy) as served:
        held: dict[str, Any] = {}
        holder = threading.Thread(
            target=lambda: held.update(answer=call(served.url, "hold")), daemon=True)
        holder.start()
        assert started.wait(10)
        pipelined = b""
        for n, (name, arguments) in enumerate(
                [("echo", {"text": "first"}), ("big", {"size": 1 << 20}),
                 ("echo", {"text": "last"})]):
            body, headers = modern("tools/call", {"name": name, "arguments": arguments},
                                   id=n)
            data = json.dumps(body).encode()
            pipelined += (f"POST /mcp HTTP/1.1\r\nHost: {served.host}\r\n"
                          + "".join(f"{k}: {v}\r\n" for k, v in headers.items())
                          + f"Content-Length: {len(data)}\r\n\r\n").encode() + data
        with socket.create_connection((served.host, served.port), timeout=10) as sock:
            sock.sendall(pipelined)
            protocols = served._uvicorn.server_state.connections
            assert protocols and all(isinstance(p.transport, http_protocol._BatchedWrites)
                                     for p in protocols)  # the writes do go through it
            stream = sock.makefile("rb")
            answers = []
            for _ in range(3):
                head, body_bytes = _read_response(stream)
                assert head.startswith(b"HTTP/1.1 200"), head
                answers.append(json.loads(body_bytes))
        assert [a["id"] for a in answers] == [0, 1, 2]
        assert [text_of(a) for a in answers] == ["first", "y" * (1 << 20), "last"]

        wrong: list[str] = []

        def client(k: int) -> None:
            with httpx.Client(timeout=10) as http_client:
                for i in range(20):
                    body, headers = modern("tools/call", {"name": "echo", "arguments": {
                        "text": f"{k}-{i}"}}, id=i)
                    reply = http_client.post(served.url, json=body, headers=headers)
                    if reply.status_code != 200 or text_of(reply.json()) != f"{k}-{i}":
                        wrong.append(f"{k}-{i}: {reply.status_code} {reply.text[:100]}")

        clients = [threading.Thread(target=client, args=(k,), daemon=True) for k in range(8)]
        for thread in clients:
            thread.start()
        for thread in clients:
            thread.join(30)
        assert not any(thread.is_alive() for thread in clients)
        assert wrong == []
        release.set()
        holder.join(20)
        assert text_of(held["answer"].json()) == "let go"


def test_plain_modern_calls_share_one_connection_and_calls_that_may_wait_get_their_own(
        monkeypatch) -> None:
    """A 2026-07-28 call of a handler without a Context is served by the app's one shared
    Connection (nothing of it stays there: same ids at once are fine); a handler that takes
    a Context, a listen stream and tasks/result still get a Connection each, closed when they
    end, and a listen open under the same id as the plain calls disturbs none of them."""
    shared = _echo_server("shared")

    made = []
    connect = shared.connect
    monkeypatch.setattr(shared, "connect", lambda send: made.append(1) or connect(send))
    with HttpServerThread(shared) as served:
        assert made == [1]  # the app's shared one
        made.clear()
        open_before = len(shared._listeners)
        replies: list[str] = []

        def same_id(k: int) -> None:
            for _ in range(10):
                replies.append(text_of(call(served.url, "plain", {"text": f"{k}"}, id=7).json()))

        threads = [threading.Thread(target=same_id, args=(k,), daemon=True) for k in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        assert sorted(replies) == sorted(f"{k}" for k in range(4) for _ in range(10))
        assert made == []  # forty calls, no Connection made for any
        for n in range(3):
            answer = messages(call(served.url, "reporting", {"text": "r"}, progressToken=n))
            assert text_of(answer[-1]) == "r"
        assert len(made) == 3
        assert wait_for(lambda: len(shared._listeners) == open_before)  # each one closed
        gone = post(served.url, *modern("tasks/result", {"taskId": "t"}, id=7))
        assert gone.json()["error"]["code"] == -32601 and len(made) == 4
        body, headers = modern("subscriptions/listen",
                               {"notifications": {"toolsListChanged": True}}, id=7)
        out, thread, control = stream_in_thread("POST", served.url, headers, body)
        assert out.get(timeout=5)["method"] == "notifications/subscriptions/acknowledged"
        assert len(made) == 5
        replies.clear()
        same_id(9)  # plain calls with the listen's id, while it is open
        assert replies == ["9"] * 10 and len(made) == 5
        control["close"] = True
        shared.tool(lambda: "new", name="added")  # a change the listen asked for: it ends
        assert out.get(timeout=5)["method"] == "notifications/tools/list_changed"
        thread.join(5)
        assert wait_for(lambda: len(shared._listeners) == open_before)
