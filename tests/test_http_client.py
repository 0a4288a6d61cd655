"""mcpkit's Client over streamable HTTP (mcpkit.transports.http_client).

Real uvicorn servers on 127.0.0.1 (``serve_in_thread``) running mcpkit's own example
servers, in both eras: the era probe, every feature, progress and logs over SSE, MRTR
round trips, legacy server requests on the POST and GET streams, listen streams and the
GET stream carrying list changes, custom headers, bearer tokens, cancellation, a server
going away, and the official SDK's HTTP server. Plus the pieces on their own: the SSE
parser and the ``x-mcp-header`` rules.

After every test no client thread may be left running (the servers' own threads belong
to the servers, which outlive a test).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import wait_until

from mcpkit import Context, Server
from mcpkit.client import (
    Client,
    ConnectionClosed,
    HttpError,
    ProtocolError,
    RequestCancelled,
    RequestTimeout,
    ResponseTooLarge,
    ServerError,
    SessionError,
    result_text,
)
from mcpkit.examples import everything, notes
from mcpkit.host import Host
from mcpkit.transports.http import HttpServerThread, McpHttpApp, serve_in_thread
from mcpkit.transports.http_client import (
    InvalidToolSchema,
    SseEvent,
    SseParser,
    header_annotations,
    param_headers,
)

ROOT = Path(__file__).resolve().parents[1]
SERVERS = Path(__file__).resolve().parent / "servers"
MODERN, LEGACY = "2026-07-28", "2025-11-25"
ERAS = [None, "legacy"]  # None: probe (the example servers are dual-era, so: modern)
CLIENT_THREADS = ("mcpkit-http-client-", "mcpkit-callbacks-", "mcpkit-answer-",
                  "mcpkit-closed-")


@pytest.fixture(autouse=True)
def no_client_threads() -> Iterator[None]:
    before = set(threading.enumerate())
    yield
    deadline = time.monotonic() + 1.0
    while True:
        extra = [t for t in set(threading.enumerate()) - before
                 if t.name.startswith(CLIENT_THREADS)]
        if not extra or time.monotonic() > deadline:
            break
        time.sleep(0.02)
    assert not extra, f"client threads left running: {extra}"



# -- servers -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def everything_url() -> Iterator[str]:
    http = serve_in_thread(everything.server)
    yield http.url
    http.stop()


@pytest.fixture
def notes_http() -> Iterator[HttpServerThread]:
    notes.reset()
    http = serve_in_thread(notes.server)
    yield http
    http.stop()
    notes.reset()


# A server for the cases the examples do not cover.
kit = Server("http-client-kit", "1.0.0")
cancelled = threading.Event()
started = threading.Event()


@kit.tool
def slow(ctx: Context, seconds: float = 10.0) -> str:
    """Wait until cancelled (or ``seconds``)."""
    started.set()
    if ctx.cancelled.wait(seconds):
        cancelled.set()
        return "cancelled"
    return "done"


@kit.tool
def ask_on_the_side(ctx: Context) -> str:
    """Legacy: ask the client a question on the session's GET stream, not the call's own."""
    answer = ctx.connection.request_client("elicitation/create", {
        "message": "Your name?",
        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}})
    return f"Hello, {answer['content']['name']}!"


@kit.tool(input_schema={"type": "object", "properties": {
    "region": {"type": "string", "x-mcp-header": "Region"},
    "count": {"type": "integer", "x-mcp-header": "Count"},
    "verbose": {"type": ["boolean", "null"], "x-mcp-header": "Verbose"},
    "where": {"type": "object", "properties": {
        "city": {"type": "string", "x-mcp-header": "City"}}},
}, "required": ["region"]})
def routed(region: str, count: int = 1, verbose: bool | None = None,
           where: dict | None = None) -> str:
    """Echo the arguments that also travel as Mcp-Param-* headers (the server checks them)."""
    return json.dumps({"region": region, "count": count, "verbose": verbose, "where": where},
                      ensure_ascii=False)


@kit.tool(input_schema={"type": "object", "properties": {
    "ratio": {"type": "number", "x-mcp-header": "Ratio"}}})
def bad_annotation(ratio: float = 1.0) -> str:
    """x-mcp-header on a number: clients must leave this tool out."""
    return "unreachable"


@pytest.fixture
def kit_http() -> Iterator[HttpServerThread]:
    cancelled.clear()
    started.clear()
    http = serve_in_thread(kit)
    yield http
    http.stop()


class LegacyOnly:
    """Makes mcpkit's dual-era endpoint look like a 2025-11-25-only server: a POST that
    has no session id and is not ``initialize`` is refused the way such servers do."""

    def __init__(self, app: McpHttpApp, style: str) -> None:
        self.app = app
        self.style = style
        self.refused: list[str] = []

    def close(self) -> None:
        self.app.close()

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        headers = dict(scope.get("headers") or [])
        if scope["type"] != "http" or scope["method"] != "POST" \
                or b"mcp-session-id" in headers:
            await self.app(scope, receive, send)
            return
        body = b""
        while True:
            event = await receive()
            body += event.get("body", b"")
            if not event.get("more_body"):
                break
        method = json.loads(body).get("method")
        if method != "initialize":
            self.refused.append(method)
            status, kind, text = {
                "text": (400, b"text/plain", b"Bad Request: No valid session ID provided"),
                "jsonrpc": (400, b"application/json", json.dumps(
                    {"jsonrpc": "2.0", "id": None, "error": {
                        "code": -32000, "message": "Bad Request: No valid session ID"}}
                ).encode()),
                "404": (404, b"text/plain", b"Not Found"),
                "405": (405, b"text/plain", b"Method Not Allowed"),
            }[self.style]
            await send({"type": "http.response.start", "status": status,
                        "headers": [(b"content-type", kind)]})
            await send({"type": "http.response.body", "body": text})
            return
        replayed = False

        async def replay() -> dict:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


class ServedApp:
    """An ASGI app (with a ``close()``) under uvicorn on a free 127.0.0.1 port, on a thread."""

    def __init__(self, app: Any) -> None:
        import uvicorn

        self.app = app
        self._socket = socket.socket()
        self._socket.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._socket.getsockname()[1]}/mcp"
        self._server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off",
                                                     timeout_graceful_shutdown=2))
        self._thread = threading.Thread(target=self._server.run,
                                        kwargs={"sockets": [self._socket]}, daemon=True)

    def __enter__(self) -> ServedApp:
        self._thread.start()
        assert wait_until(lambda: self._server.started)
        return self

    def __exit__(self, *exc: object) -> None:
        self.app.close()  # ends long-lived streams, which uvicorn would wait for
        self._server.should_exit = True
        self._thread.join(5)
        self._socket.close()


# -- eras --------------------------------------------------------------------------------


def test_probe_finds_a_modern_server_and_every_feature_works(notes_http):
    with Client(url=notes_http.url) as c:
        assert (c.era, c.protocol_version) == ("modern", MODERN)
        assert c.server_info["name"] == "notes"
        assert c.instructions.startswith("A small note store")
        assert c.pid is None and c.stderr_tail() == []
        assert [t["name"] for t in c.list_tools()] == \
            ["notes_list", "notes_search", "notes_create", "notes_delete"]
        assert '"title": "MCP"' in result_text(c.call_tool("notes_search", {"query": "mcp"}))
        assert c.list_resource_templates()[0]["uriTemplate"] == "notes://{id}"
        assert c.read_resource("notes://2")["contents"][0]["text"].startswith("# MCP")
        assert result_text(c.get_prompt("review_note", {"id": "1"})).startswith("Review")
        assert c.complete({"type": "ref/prompt", "name": "review_note"}, "id", "")["values"] \
            == ["1", "2", "3"]
        with pytest.raises(ServerError) as info:
            c.read_resource("notes://99")
        assert info.value.code == -32602
        c.ping()
    assert not c.alive


def test_legacy_session_header_and_delete(notes_http):
    app = notes_http.app
    with Client(url=notes_http.url, version="legacy") as c:
        assert (c.era, c.protocol_version) == ("legacy", LEGACY)
        assert len(app._sessions) == 1  # the session initialize opened
        assert result_text(c.call_tool("notes_create", {"title": "t", "body": "b"})) == \
            "created note 4"
        with pytest.raises(ServerError) as info:
            c.read_resource("notes://99")
        assert info.value.code == -32002  # legacy: resource not found
        c.ping()
    assert wait_until(lambda: not app._sessions)  # close() sent DELETE


@pytest.mark.parametrize("style", ["text", "jsonrpc", "404", "405"])
def test_probe_falls_back_to_initialize_on_a_legacy_only_server(style):
    with ServedApp(LegacyOnly(McpHttpApp(notes.server), style)) as served, \
            Client(url=served.url) as c:
        assert c.era == "legacy"
        assert served.app.refused == ["server/discover"]
        assert result_text(c.call_tool("notes_list"))


def test_a_url_as_command_and_a_wrong_path():
    with serve_in_thread(notes.server) as http:
        with Client(http.url) as c:  # an http(s):// command is a URL
            assert c.url == http.url and c.name == http.url.split("/")[2]
        wrong = http.url.replace("/mcp", "/nope")
        with pytest.raises(HttpError) as info:
            Client(url=wrong).connect()
        assert info.value.status == 404 and "it is at /mcp" in str(info.value)


# -- what comes back on an SSE stream ----------------------------------------------------


@pytest.mark.parametrize("version", ERAS)
def test_progress_and_log_messages_arrive_before_the_result(everything_url, version):
    logs: list[dict] = []
    progress: list[float] = []
    with Client(url=everything_url, version=version, log_level="info",
                on_log=logs.append) as c:
        result = c.call_tool("test_tool_with_progress",
                             on_progress=lambda p: progress.append(p["progress"]))
        assert result_text(result)
        assert result_text(c.call_tool("test_tool_with_logging"))
        assert wait_until(lambda: len(logs) >= 3 and len(progress) >= 3)
    assert progress == [0, 50, 100]
    assert [m["data"] for m in logs][:3] == ["Tool execution started", "Tool processing data",
                                            "Tool execution completed"]


def test_input_required_rounds_over_http(everything_url):
    asked: list[str] = []

    def elicit(params: dict) -> dict:
        asked.append("elicitation")
        properties = params["requestedSchema"]["properties"]
        return {"action": "accept", "content": {
            k: True if p.get("type") == "boolean" else "Ada" for k, p in properties.items()}}

    def sample(params: dict) -> dict:
        asked.append("sampling")
        return {"role": "assistant", "model": "test", "content": {"type": "text",
                                                                  "text": "Paris"}}

    with Client(url=everything_url, elicitation=elicit, sampling=sample,
                roots=[{"uri": "file:///tmp", "name": "tmp"}]) as c:
        assert c.era == "modern"
        assert result_text(c.call_tool("test_input_required_result_elicitation")) == \
            "Hello, Ada!"
        assert "Paris" in result_text(c.call_tool("test_input_required_result_sampling"))
        assert result_text(c.call_tool("test_input_required_result_multi_round"))
        assert "state-ok" in result_text(c.call_tool("test_input_required_result_request_state"))
        assert result_text(c.call_tool("test_input_required_result_multiple_inputs")) == \
            "Name: Ada; Greeting: Paris; Roots: 1"
        prompt = c.get_prompt("test_input_required_result_prompt")
        assert prompt["messages"]
    assert asked.count("sampling") == 2 and asked.count("elicitation") >= 5


def test_legacy_server_requests_on_the_post_stream(everything_url):
    seen: list[str] = []

    def elicit(params: dict) -> dict:
        seen.append(params["message"])
        return {"action": "accept", "content": {"response": "yes"}}

    def sample(params: dict) -> dict:
        seen.append(params["messages"][0]["content"]["text"])
        return {"role": "assistant", "model": "test", "content": {"type": "text",
                                                                  "text": "sampled!"}}

    with Client(url=everything_url, version="legacy", elicitation=elicit,
                sampling=sample) as c:
        assert "sampled!" in result_text(c.call_tool("test_sampling", {"prompt": "Hi?"}))
        assert "yes" in result_text(c.call_tool("test_elicitation", {"message": "Sure?"}))
    assert seen == ["Hi?", "Sure?"]


def test_legacy_server_requests_on_the_get_stream(kit_http):
    answered = threading.Event()

    def elicit(params: dict) -> dict:
        answered.set()
        return {"action": "accept", "content": {"name": "Grace"}}

    with Client(url=kit_http.url, version="legacy", elicitation=elicit) as c:
        assert result_text(c.call_tool("ask_on_the_side")) == "Hello, Grace!"
    assert answered.is_set()


@pytest.mark.parametrize("version", ERAS)
def test_list_changed_reaches_the_client(everything_url, version):
    changed: list[str] = []
    with Client(url=everything_url, version=version, on_list_changed=changed.append) as c:
        before = {t["name"] for t in c.list_tools()}
        c.call_tool("test_trigger_tool_change")  # adds or removes test_dynamic_tool
        assert wait_until(lambda: "tools" in changed)
        after = {t["name"] for t in c.list_tools()}
        assert before ^ after == {"test_dynamic_tool"}
        c.call_tool("test_trigger_tool_change")  # and back
        assert wait_until(lambda: changed.count("tools") >= 2)


@pytest.mark.parametrize("version", ERAS)
def test_resource_subscription(notes_http, version):
    updates: list[str] = []
    with Client(url=notes_http.url, version=version) as c:
        with c.subscribe("notes://4", lambda uri, params: updates.append(uri)):
            c.call_tool("notes_create", {"title": "new", "body": "note 4"})
            assert wait_until(lambda: updates == ["notes://4"])


# -- x-mcp-header ------------------------------------------------------------------------


def test_custom_headers_are_mirrored_and_invalid_tools_left_out(kit_http, caplog):
    with caplog.at_level(logging.WARNING, "mcpkit.http_client"), \
            Client(url=kit_http.url) as c:
        names = [t["name"] for t in c.list_tools()]
        assert "routed" in names and "bad_annotation" not in names
        assert "bad_annotation" in caplog.text and "number" in caplog.text
        # The server checks each Mcp-Param-* header against the body (-32020 otherwise).
        arguments = {"region": " Zürich ", "count": 7, "verbose": False,
                     "where": {"city": "=?base64?x?="}}
        assert json.loads(result_text(c.call_tool("routed", arguments))) == arguments
        assert json.loads(result_text(c.call_tool("routed", {"region": "eu", "verbose": None})))
        with pytest.raises(ProtocolError, match="bad_annotation.*number"):
            c.call_tool("bad_annotation", {"ratio": 0.5})


def test_call_tool_lists_the_tools_first_to_know_their_headers(kit_http):
    with Client(url=kit_http.url) as c:
        assert "eu" in result_text(c.call_tool("routed", {"region": "eu"}))


def test_header_mismatch_relists_the_tools_and_retries(kit_http, monkeypatch):
    with Client(url=kit_http.url) as c:
        c.list_tools()
        monkeypatch.setattr(c._http, "_param_headers", {})  # as if the schema had changed
        assert "eu" in result_text(c.call_tool("routed", {"region": "eu"}))
        assert "routed" in c._http._param_headers


def test_header_annotations_rules():
    def schema(**properties: Any) -> dict:
        return {"type": "object", "properties": properties}

    assert header_annotations(schema(a={"type": "string", "x-mcp-header": "A"},
                                     b={"type": "object", "properties": {
                                         "c": {"type": ["integer", "null"],
                                               "x-mcp-header": "C"}}})) == \
        [(("a",), "A"), (("b", "c"), "C")]
    # A property *named* x-mcp-header, and one inside a default value, are not annotations.
    assert header_annotations(schema(**{"x-mcp-header": {"type": "string",
                                                         "default": {"x-mcp-header": 1}}})) == []
    assert header_annotations({"$ref": "http://example.invalid/schema.json"}) == []
    bad = [
        schema(a={"type": "string", "x-mcp-header": ""}),
        schema(a={"type": "string", "x-mcp-header": "My Region"}),
        schema(a={"type": "string", "x-mcp-header": "Region:1"}),
        schema(a={"type": "string", "x-mcp-header": "Région"}),
        schema(a={"type": "string", "x-mcp-header": "A\tB"}),
        schema(a={"type": "string", "x-mcp-header": 7}),
        schema(a={"type": "number", "x-mcp-header": "A"}),
        schema(a={"type": "array", "x-mcp-header": "A"}),
        schema(a={"type": "null", "x-mcp-header": "A"}),
        schema(a={"x-mcp-header": "A"}),
        schema(a={"type": "string", "x-mcp-header": "Dup"},
               b={"type": "string", "x-mcp-header": "dup"}),
        schema(a={"type": "array", "items": {"type": "string", "x-mcp-header": "A"}}),
        schema(a={"anyOf": [{"type": "string", "x-mcp-header": "A"}]}),
        {"type": "object", "$defs": {"a": {"type": "string", "x-mcp-header": "A"}}},
        {"type": "string", "x-mcp-header": "Root"},
    ]
    for each in bad:
        with pytest.raises(InvalidToolSchema):
            header_annotations(each)


def test_param_header_values():
    annotations = [(("s",), "S"), (("i",), "I"), (("b",), "B"), (("f",), "F"),
                   (("n",), "N"), (("o", "x"), "X"), (("e",), "E")]
    arguments = {"s": "Hello, 世界", "i": 42, "b": True, "f": 3.0, "n": None,
                 "o": {"x": "line1\nline2"}, "e": ""}
    assert dict(param_headers(annotations, arguments)) == {
        "Mcp-Param-S": "=?base64?SGVsbG8sIOS4lueVjA==?=", "Mcp-Param-I": "42",
        "Mcp-Param-B": "true", "Mcp-Param-F": "3", "Mcp-Param-X": "=?base64?bGluZTEKbGluZTI=?=",
        "Mcp-Param-E": ""}


# -- the SSE parser ------------------------------------------------------------------------


def test_sse_parser_follows_the_event_stream_rules():
    stream = (b"\xef\xbb\xbf: a comment\r\n"
              b"id: 1\r\nretry: 500\r\ndata:\r\n\r\n"  # priming: no event, but id and retry
              b"event: message\ndata: {\"a\":\ndata:  1}\n\n"
              b"data: x\rid: 2\r\r"
              b"event: other\ndata: y\n\n"
              b"retry: soon\nid: bad\0id\ndata: z\n\n")
    for size in (1, 2, 7, len(stream)):  # however the bytes happen to arrive
        parser = SseParser()
        events: list[SseEvent] = []
        for i in range(0, len(stream), size):
            events += parser.feed(stream[i:i + size])
        assert events == [SseEvent("message", '{"a":\n 1}', "1"), SseEvent("message", "x", "2"),
                          SseEvent("other", "y", "2"), SseEvent("message", "z", "2")]
        assert parser.retry_ms == 500 and parser.last_event_id == "2"
        assert parser.events_seen == 5


def test_sse_parser_refuses_an_event_without_end():
    parser = SseParser(max_size=100)
    assert parser.feed(b"data: " + b"x" * 50 + b"\n\n")[0].data == "x" * 50
    with pytest.raises(ValueError, match="larger than 100 bytes"):
        parser.feed(b"data: " + b"x" * 200)  # no line end: it would be buffered for ever
    parser = SseParser(max_size=100)
    with pytest.raises(ValueError, match="larger than 100 bytes"):
        for _ in range(30):
            parser.feed(b"data: xxxxxx\n")  # lines, but the event never ends


class Floods:
    """A modern server that answers tools/call with more than a message may hold: an SSE
    line or a JSON body that never ends (each 8 MB, twice the client's limit)."""

    def __init__(self, kind: str) -> None:
        self.kind = kind

    def close(self) -> None:
        pass

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            event = await receive()
            body += event.get("body", b"")
            if not event.get("more_body"):
                break
        message = json.loads(body)
        if message.get("id") is None:
            await send({"type": "http.response.start", "status": 202, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        answer = {"jsonrpc": "2.0", "id": message["id"], "result": {
            "resultType": "complete", "supportedVersions": [MODERN],
            "capabilities": {"tools": {}}, "ttlMs": 0, "cacheScope": "private"}}
        flood = message["method"] == "tools/call"
        kind = self.kind if flood else "application/json"
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", kind.encode())]})
        if not flood:
            await send({"type": "http.response.body", "body": json.dumps(answer).encode()})
            return
        first = b"data: " if kind == "text/event-stream" else b'{"jsonrpc": "2.0", "x": "'
        await send({"type": "http.response.body", "body": first, "more_body": True})
        for _ in range(8):
            await send({"type": "http.response.body", "body": b"x" * 2**20, "more_body": True})
        await asyncio.sleep(10)  # then hang: only the limit ends the wait


@pytest.mark.parametrize("kind", ["text/event-stream", "application/json"])
def test_an_endless_answer_is_refused_not_buffered(kind):
    with ServedApp(Floods(kind)) as served, Client(url=served.url, version="modern") as c:
        started = time.monotonic()
        with pytest.raises(ResponseTooLarge, match="limit is 4194304.*max_message_size"):
            c.request("tools/call", {"name": "anything"}, timeout=8)
        assert time.monotonic() - started < 5


# -- auth ----------------------------------------------------------------------------------


def test_bearer_token_from_config_or_environment(monkeypatch):
    with serve_in_thread(notes.server, token="s3cret") as http:
        with pytest.raises(HttpError) as info:
            Client(url=http.url).connect()
        assert info.value.status == 401
        assert "bearer token" in str(info.value) and "token=" in str(info.value)
        with pytest.raises(HttpError, match="refused") as info:
            Client(url=http.url, token="wrong").connect()
        assert info.value.status == 401
        with Client(url=http.url, token="s3cret") as c:
            assert c.era == "modern"
            assert c.list_tools()
        monkeypatch.setenv("NOTES_TOKEN", "s3cret")
        with Client(url=http.url, token_env="NOTES_TOKEN", version="legacy") as c:
            assert result_text(c.call_tool("notes_list"))
        with Client(url=http.url, headers={"Authorization": "Bearer s3cret"}) as c:
            assert c.list_tools()
    monkeypatch.delenv("NOTES_TOKEN")
    with pytest.raises(ValueError, match="NOTES_TOKEN"):
        Client(url="http://127.0.0.1:9/mcp", token_env="NOTES_TOKEN")


# -- cancelling, timeouts, a server that goes away -----------------------------------------


@pytest.mark.parametrize("version", ERAS)
def test_cancel_reaches_the_tool(kit_http, version):
    with Client(url=kit_http.url, version=version) as c:
        pending = c.start_request("tools/call", {"name": "slow", "arguments": {}})
        assert started.wait(5)
        assert pending.cancel()
        with pytest.raises(RequestCancelled):
            pending.result()
        assert cancelled.wait(5)  # modern: the closed stream; legacy: notifications/cancelled
        assert result_text(c.call_tool("slow", {"seconds": 0})) == "done"


@pytest.mark.parametrize("version", ERAS)
def test_arguments_json_cannot_carry_fail_that_call_only(kit_http, version, caplog):
    """NaN or an object of no JSON type: that call is refused before anything is sent,
    saying why, as over stdio (a ValueError; not an error of the transport with a traceback
    in the log), and the next call works."""
    with Client(url=kit_http.url, version=version) as c:
        for bad, reason in ((float("nan"), "Out of range float"),
                            (object(), "not JSON serializable")):
            with pytest.raises(ValueError, match=f"cannot be encoded as JSON: .*{reason}"):
                c.call_tool("routed", {"region": bad}, timeout=10)
        # The body carries a lone surrogate escaped; 2026-07-28's Mcp-Param-Region header
        # cannot (a legacy session has no such header).
        if c.era == "modern":
            with pytest.raises(HttpError, match="lone surrogate, which a header"):
                c.call_tool("routed", {"region": "a\ud800b"}, timeout=10)
        else:
            text = result_text(c.call_tool("routed", {"region": "a\ud800b"}))
            assert json.loads(text)["region"] == "a\ud800b"
        assert "Traceback" not in caplog.text and "exchange failed" not in caplog.text
        assert json.loads(result_text(c.call_tool("routed", {"region": "ünï"})))["region"] \
            == "ünï"


def test_timeout_cancels_and_the_session_goes_on(kit_http):
    with Client(url=kit_http.url) as c:
        with pytest.raises(RequestTimeout):
            c.call_tool("slow", timeout=0.3)
        assert cancelled.wait(5)
        assert result_text(c.call_tool("slow", {"seconds": 0})) == "done"


@pytest.mark.parametrize("version", ERAS)
def test_server_going_away_fails_pending_requests_promptly(version):
    started.clear()
    http = serve_in_thread(kit)
    closed = threading.Event()
    c = Client(url=http.url, version=version, on_closed=lambda client, error: closed.set())
    try:
        c.connect()
        pending = c.start_request("tools/call", {"name": "slow", "arguments": {}})
        assert started.wait(5)
        t0 = time.monotonic()
        http.stop()
        with pytest.raises(SessionError):
            pending.result(timeout=10)
        assert time.monotonic() - t0 < 5
        # The next request finds nobody there: the session is over.
        with pytest.raises(ConnectionClosed) as info:
            c.call_tool("slow", {"seconds": 0})
        assert "cannot connect" in str(info.value)
        assert closed.wait(5) and not c.alive
    finally:
        c.close()
        http.stop()


def test_unreachable_server_fails_connect_clearly():
    port = socket.socket()
    port.bind(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{port.getsockname()[1]}/mcp"
    port.close()
    with pytest.raises(ConnectionClosed, match="cannot connect"):
        Client(url=url).connect()


def test_close_ends_streams_and_threads_even_with_a_call_in_flight(kit_http):
    c = Client(url=kit_http.url, version="legacy").connect()
    pending = c.start_request("tools/call", {"name": "slow", "arguments": {}})
    assert started.wait(5)
    t0 = time.monotonic()
    c.close()
    assert time.monotonic() - t0 < 3
    with pytest.raises(ConnectionClosed):
        pending.result()
    c.close()  # idempotent


@pytest.mark.parametrize("version", ERAS)
def test_concurrent_requests_from_many_threads(notes_http, version):
    errors: list[BaseException] = []
    with Client(url=notes_http.url, version=version) as c:
        def work(n: int) -> None:
            try:
                for i in range(15):
                    text = result_text(c.call_tool("notes_search", {"query": "MCP"}))
                    assert '"id": "2"' in text, text
                    assert c.read_resource(f"notes://{1 + (n + i) % 3}")["contents"]
            except Exception as exc:  # reported below
                errors.append(exc)

        threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
    assert not errors, errors[:3]


# -- SSE resumption (legacy) ----------------------------------------------------------------


class ClosesEarly:
    """A server whose tools/call stream ends after a priming event (an id and a ``retry``
    time), like the suite's sse-retry mock: a 2025-11-25 client resumes with GET and
    ``Last-Event-ID`` and gets the answer there; a 2026-07-28 request is simply lost."""

    RETRY_MS = 300

    def __init__(self) -> None:
        self.closed_at: float | None = None
        self.resumed: list[tuple[float, str | None]] = []
        self.pending: Any = None

    def close(self) -> None:
        pass  # no streams stay open

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        headers = {k.decode(): v.decode() for k, v in scope["headers"]}

        async def respond(status: int, body: bytes = b"", kind: str = "application/json",
                          more: bool = False, extra: tuple = ()) -> None:
            await send({"type": "http.response.start", "status": status, "headers": [
                (b"content-type", kind.encode()), (b"mcp-session-id", b"s-1"), *extra]})
            await send({"type": "http.response.body", "body": body, "more_body": more})

        if scope["method"] == "GET":
            if "last-event-id" not in headers:
                await respond(405)
                return
            self.resumed.append((time.monotonic(), headers["last-event-id"]))
            answer = {"jsonrpc": "2.0", "id": self.pending,
                      "result": {"content": [{"type": "text", "text": "resumed"}]}}
            await respond(200, b"id: e2\ndata: \n\nid: e3\ndata: " + json.dumps(answer).encode()
                          + b"\n\n", "text/event-stream")
            return
        if scope["method"] != "POST":
            await respond(200)
            return
        body = b""
        while True:
            event = await receive()
            body += event.get("body", b"")
            if not event.get("more_body"):
                break
        message = json.loads(body)
        method, request_id = message.get("method"), message.get("id")
        if request_id is None:
            await respond(202)
        elif method == "tools/call":
            self.pending = request_id
            await respond(200, f"id: e1\nretry: {self.RETRY_MS}\ndata: \n\n".encode(),
                          "text/event-stream")
            self.closed_at = time.monotonic()
        else:
            result: dict[str, Any] = {}
            if method == "initialize":
                result = {"protocolVersion": LEGACY, "capabilities": {"tools": {}},
                          "serverInfo": {"name": "closes-early", "version": "1"}}
            elif method == "server/discover":
                result = {"resultType": "complete", "supportedVersions": [MODERN],
                          "capabilities": {"tools": {}}, "ttlMs": 0, "cacheScope": "private"}
            await respond(200, json.dumps({"jsonrpc": "2.0", "id": request_id,
                                           "result": result}).encode())


def test_legacy_stream_closed_before_the_answer_is_resumed_after_retry():
    with ServedApp(ClosesEarly()) as served, Client(url=served.url, version="legacy") as c:
        assert result_text(c.call_tool("anything")) == "resumed"
        server = served.app
        assert server.closed_at is not None and len(server.resumed) == 1
        resumed_at, last_event_id = server.resumed[0]
        assert last_event_id == "e1"
        waited_ms = (resumed_at - server.closed_at) * 1000
        assert ClosesEarly.RETRY_MS - 50 <= waited_ms < ClosesEarly.RETRY_MS + 500


def test_modern_stream_closed_before_the_answer_loses_the_request():
    with ServedApp(ClosesEarly()) as served, Client(url=served.url, version="modern") as c:
        with pytest.raises(HttpError, match="before answering"):
            c.request("tools/call", {"name": "anything"})
        assert served.app.resumed == []


# -- the host ------------------------------------------------------------------------------


def test_host_mixes_http_and_stdio_servers(notes_http, monkeypatch):
    monkeypatch.setenv("KIT_TOKEN", "k1t")
    with serve_in_thread(kit, token="k1t") as kit_served:
        config = {"mcpServers": {
            "notes": {"url": notes_http.url},
            "kit": {"type": "http", "url": kit_served.url, "tokenEnv": "KIT_TOKEN",
                    "version": LEGACY},
            "local": {"command": sys.executable, "args": [str(SERVERS / "clientkit.py")]},
        }}
        with Host(config) as host:
            status = host.status()
            assert {n: (s.state, s.era) for n, s in status.items()} == {
                "notes": ("ready", "modern"), "kit": ("ready", "legacy"),
                "local": ("ready", "modern")}
            assert status["notes"].pid is None and status["local"].pid
            names = {t["name"] for t in host.tools()}
            assert {"notes_search", "slow", "echo"} <= names
            assert '"title": "MCP"' in result_text(host.call_tool("notes_search",
                                                                  {"query": "mcp"}))
            assert result_text(host.call_tool("slow", {"seconds": 0})) == "done"
            assert result_text(host.call_tool("echo", {"text": "hi"})) == "hi"
            assert host.read_resource("notes://1")["contents"][0]["text"].startswith("#")


@pytest.mark.parametrize("version", [None, LEGACY])
def test_host_reconnects_when_an_http_server_comes_back(version):
    from mcpkit.host import Backoff

    first = serve_in_thread(kit)
    port = first.port
    events: list[str] = []
    config = {"mcpServers": {"kit": {"url": first.url, "version": version}}}
    try:
        with Host(config, backoff=Backoff(base=0.1, factor=1.5, cap=0.3, jitter=0),
                  on_event=lambda e: events.append(e.kind)) as host:
            assert result_text(host.call_tool("slow", {"seconds": 0})) == "done"
            first.stop()
            if version is None:
                # Modern: nothing is open between requests, so a call finds out.
                with pytest.raises(SessionError):
                    host.call_tool("slow", {"seconds": 0}, timeout=5)
            # Legacy: the GET stream's reconnection finds out by itself.
            assert wait_until(lambda: "restarting" in events, 10)
            second = HttpServerThread(kit, port=port).start()
            try:
                assert host.wait_ready(timeout=10)
                assert result_text(host.call_tool("slow", {"seconds": 0})) == "done"
                assert host.status()["kit"].restarts >= 1
            finally:
                host.close()
                second.stop()
    finally:
        first.stop()


# -- the official SDK's HTTP server ----------------------------------------------------------


@pytest.fixture(scope="module")
def sdk_url() -> Iterator[str]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    code = ("import sys; sys.path.insert(0, sys.argv[1]); from sdk_server import mcp; "
            "mcp.run('streamable-http', port=int(sys.argv[2]))")
    proc = subprocess.Popen([sys.executable, "-c", code, str(SERVERS), str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=ROOT,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    url = f"http://127.0.0.1:{port}/mcp"

    def listening() -> bool:
        with socket.socket() as s:
            return s.connect_ex(("127.0.0.1", port)) == 0

    try:
        if not wait_until(listening, 30):
            proc.kill()
            pytest.fail(f"the SDK server did not start: {proc.communicate()[1][-2000:]!r}")
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
        if proc.stderr:
            proc.stderr.close()


@pytest.mark.parametrize("version", [None, "legacy"])
def test_official_sdk_http_server(sdk_url, version):
    progress: list[float] = []
    with Client(url=sdk_url, version=version) as c:
        assert c.era == ("modern" if version is None else "legacy")
        assert {"echo", "add", "progress"} <= {t["name"] for t in c.list_tools()}
        assert result_text(c.call_tool("echo", {"text": "över"})) == "över"
        assert result_text(c.call_tool("add", {"a": 2, "b": 3})) == "5"
        result = c.call_tool("progress", {"steps": 3},
                             on_progress=lambda p: progress.append(p["progress"]))
        assert result_text(result) == "done"
        assert c.read_resource("mem://greeting")["contents"][0]["text"] == "hello from the SDK"
        assert result_text(c.get_prompt("greet", {"name": "Ada"})) == "Say hello to Ada."
    assert wait_until(lambda: progress == [1, 2, 3])


def test_works_inside_a_running_event_loop(notes_http):
    async def inside() -> str:
        with Client(url=notes_http.url) as c:  # blocking calls, a loop of its own
            return result_text(c.call_tool("notes_list"))

    assert "Shopping" in asyncio.run(inside())
