"""Issue 8, server side: each class of input that used to stop or hang a server.

Every test talks to a real server: a process on real pipes (``Peer``), or uvicorn on
loopback. Each ends by checking that the server still answers.
"""

from __future__ import annotations

import json
import select
import socket
import time
from collections.abc import Iterator

import httpx
import pytest
from conftest import SERVERS, modern_meta

from mcpkit import Server
from mcpkit.examples import everything
from mcpkit.transports import http_protocol
from mcpkit.transports.http import HttpServerThread

LEGACY = "2025-11-25"
EDGE = str(SERVERS / "edge_cases.py")
ACCEPT = "application/json, text/event-stream"


def alive(peer) -> None:
    if _legacy(peer):
        assert peer.request("ping", timeout=10)["result"] == {}
    else:
        assert "supportedVersions" in peer.modern("server/discover")["result"]
    assert peer.proc.poll() is None


def _legacy(peer) -> bool:
    return peer.revision != "2026-07-28"


def raw_line(peer, line: bytes) -> dict:
    peer.write(line + b"\n")
    return peer.next()


# -- 1. a value the server repeats back that UTF-8 or JSON cannot carry ------------------


def test_a_lone_surrogate_id_is_answered_escaped_and_the_server_carries_on(peer_factory):
    peer = peer_factory(EDGE)
    reply = raw_line(peer, b'{"jsonrpc":"2.0","id":"\\ud800","method":"server/discover",'
                     b'"params":' + json.dumps({"_meta": modern_meta()}).encode() + b"}")
    assert reply["id"] == "\ud800" and reply["result"]["resultType"] == "complete"
    assert b"\\ud800" in peer.raw_lines[-1]  # escaped: the line is valid UTF-8
    echoed = peer.modern("tools/call", {"name": "echo", "arguments": {"text": "a\udc80b"}})
    assert echoed["result"]["content"][0]["text"] == "a\udc80b"
    alive(peer)


def test_a_result_json_cannot_carry_becomes_an_internal_error_for_that_request(peer_factory):
    peer = peer_factory(EDGE)
    reply = peer.modern("tools/call", {"name": "not_a_number", "arguments": {}})
    assert reply["error"]["code"] == -32603
    assert "could not" in reply["error"]["message"] or "cannot" in reply["error"]["message"]
    # A notification that cannot be encoded is dropped; the result still comes.
    reply = peer.modern("tools/call", {"name": "progress_nan", "arguments": {}},
                        progressToken="p1")
    assert reply["result"]["content"][0]["text"] == "done"
    assert not any(m.get("method") == "notifications/progress" for m in peer.seen)
    alive(peer)


# -- 2. wrong JSON types anywhere in params ----------------------------------------------

WRONG_TYPES = [
    ("tools/call", {"name": ["a"]}, "params.name"),
    ("tools/call", {"name": {"a": 1}}, "params.name"),
    ("tools/call", {"name": "test_simple_text", "arguments": [1]}, "params.arguments"),
    ("prompts/get", {"name": 7}, "params.name"),
    ("prompts/get", {"name": "test_simple_prompt", "arguments": {"x": [1]}},
     "params.arguments.x"),
    ("resources/read", {"uri": {"u": 1}}, "params.uri"),
    ("resources/list", {"cursor": 12}, "params.cursor"),
    ("completion/complete", {"ref": "ref/prompt", "argument": {"name": "a", "value": ""}},
     "params.ref"),
    ("completion/complete", {"ref": {"type": "ref/prompt", "name": "p"}, "argument": []},
     "params.argument"),
]


@pytest.mark.parametrize(("method", "params", "field"), WRONG_TYPES)
def test_a_wrong_type_is_invalid_params_naming_the_field_modern(peer_factory, method, params,
                                                                 field):
    peer = peer_factory("mcpkit.examples.everything:server")
    reply = peer.modern(method, params)
    assert reply["error"]["code"] == -32602, reply
    assert field in reply["error"]["message"]
    alive(peer)


def test_wrong_types_in_a_legacy_session_and_before_any_handshake(peer_factory):
    peer = peer_factory("mcpkit.examples.everything:server", revision=LEGACY)
    # Before initialize: a ping whose _meta is a string used to crash the process.
    reply = peer.request("ping", {"_meta": "x"})
    assert reply["error"]["code"] == -32602 and "params._meta" in reply["error"]["message"]
    reply = peer.request("initialize", {"protocolVersion": LEGACY, "capabilities": [],
                                        "clientInfo": {"name": "t", "version": "0"}})
    assert reply["error"]["code"] == -32602 and "params.capabilities" in reply["error"]["message"]
    peer.initialize()
    for method, params, field in [*WRONG_TYPES, ("logging/setLevel", {"level": 3}, "params.level"),
                                  ("resources/subscribe", {"uri": None}, "params.uri")]:
        reply = peer.request(method, params)
        assert reply["error"]["code"] == -32602, (method, reply)
        assert field in reply["error"]["message"]
    alive(peer)


# -- 4. NaN and Infinity are not JSON ----------------------------------------------------


@pytest.mark.parametrize("literal", [b"NaN", b"Infinity", b"-Infinity"])
def test_non_standard_number_literals_are_parse_errors(peer_factory, literal):
    peer = peer_factory("mcpkit.examples.everything:server")
    reply = raw_line(peer, b'{"jsonrpc":"2.0","id":1,"method":"server/discover","params":'
                     b'{"_meta":{"progressToken":' + literal + b"}}}")
    assert reply["error"]["code"] == -32700 and reply["id"] is None
    alive(peer)


# -- 8. a legacy prompt or resource handler that asks the client ---------------------------


def test_a_legacy_prompt_may_ask_the_client_and_the_connection_keeps_reading(peer_factory):
    peer = peer_factory(EDGE, revision=LEGACY)
    peer.initialize(capabilities={"elicitation": {}, "roots": {}})
    peer.send({"jsonrpc": "2.0", "id": "p", "method": "prompts/get",
               "params": {"name": "confirm_prompt"}})
    question = peer.next()
    assert question["method"] == "elicitation/create"
    # While the prompt waits for its answer, the reader serves other requests.
    assert peer.request("ping")["result"] == {}
    peer.send({"jsonrpc": "2.0", "id": question["id"],
               "result": {"action": "accept", "content": {"name": "Ana"}}})
    reply = peer.next()
    assert reply["id"] == "p"
    assert reply["result"]["messages"][0]["content"]["text"] == "Hello, Ana"

    peer.send({"jsonrpc": "2.0", "id": "r", "method": "resources/read",
               "params": {"uri": "roots://first"}})
    question = peer.next()
    assert question["method"] == "roots/list"
    peer.send({"jsonrpc": "2.0", "id": question["id"],
               "result": {"roots": [{"uri": "file:///work", "name": "work"}]}})
    reply = peer.next()
    assert reply["id"] == "r" and reply["result"]["contents"][0]["text"] == "file:///work"
    alive(peer)


# -- 9. template variables ---------------------------------------------------------------


@pytest.mark.parametrize("uri", ["notes://a\x00b", "notes://1\n", "notes://a\rb", "notes://a\tb",
                                 "notes://a\x7fb", "notes://a/b"])
def test_a_template_variable_refuses_control_characters_and_slashes(peer_factory, uri):
    peer = peer_factory(EDGE)
    reply = peer.modern("resources/read", {"uri": uri})
    assert reply["error"]["code"] == -32602 and "Resource not found" in reply["error"]["message"]
    assert peer.modern("resources/read", {"uri": "notes://a-1"})["result"]["contents"][0][
        "text"] == "note 'a-1'"


# -- 3, 4 and 11 over HTTP -----------------------------------------------------------------


@pytest.fixture(scope="module")
def http_server() -> Iterator[HttpServerThread]:
    with HttpServerThread(everything.server, body_timeout_s=1.0, max_sessions=3) as served:
        yield served


def _modern_body(method: str, params: dict) -> tuple[bytes, dict]:
    body = {"jsonrpc": "2.0", "id": 5, "method": method,
            "params": {**params, "_meta": modern_meta()}}
    headers = {"content-type": "application/json", "accept": ACCEPT,
               "mcp-protocol-version": "2026-07-28", "mcp-method": method}
    name = params.get("uri" if method == "resources/read" else "name")
    if isinstance(name, str):  # what a conforming client sends: only the body is wrong
        headers["mcp-name"] = name
    return json.dumps(body).encode(), headers


@pytest.mark.parametrize(("method", "params", "field"), WRONG_TYPES)
def test_http_wrong_types_are_400_with_invalid_params(http_server, method, params, field):
    body, headers = _modern_body(method, params)
    response = httpx.post(http_server.url, content=body, headers=headers, timeout=10)
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["code"] == -32602 and field in error["message"]


def test_http_non_standard_literals_and_unencodable_results(http_server):
    body, headers = _modern_body("ping", {})
    bad = body.replace(b'"_meta": {', b'"_meta": {"progressToken": NaN, ')
    response = httpx.post(http_server.url, content=bad, headers=headers, timeout=10)
    assert response.status_code == 400 and response.json()["error"]["code"] == -32700


def test_http_a_slow_request_head_is_cut_off(http_server, monkeypatch):
    monkeypatch.setattr(http_protocol, "HEAD_TIMEOUT_S", 0.5)
    with socket.create_connection((http_server.host, http_server.port), timeout=10) as sock:
        sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # and then nothing
        started = time.monotonic()
        assert sock.recv(1024) == b""  # closed by the server, not by our 10 s timeout
        assert time.monotonic() - started < 9


def test_http_the_head_deadline_is_per_request_on_a_kept_alive_connection(http_server,
                                                                          monkeypatch):
    """Requests that each send their head at once keep a connection open for longer than
    the deadline; then a head that stops half-way is cut off all the same."""
    monkeypatch.setattr(http_protocol, "HEAD_TIMEOUT_S", 0.5)
    request = b"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"  # 405: no session
    with socket.create_connection((http_server.host, http_server.port), timeout=10) as sock:
        started = time.monotonic()
        for _ in range(4):  # 1.2 s in all, more than twice the deadline
            sock.sendall(request)
            reply = b""
            while b"\r\n\r\n" not in reply or not reply.endswith(b"}\n"):
                chunk = sock.recv(4096)
                assert chunk, "the connection was closed between complete requests"
                reply += chunk
            assert reply.startswith(b"HTTP/1.1 405"), reply[:100]
            time.sleep(0.3)
        assert time.monotonic() - started > 1.0
        sock.sendall(b"GET /mcp HTTP/1.1\r\nHost: 1")  # and then nothing
        cut = time.monotonic()
        assert sock.recv(1024) == b""  # closed by the server, not by our 10 s timeout
        assert time.monotonic() - cut < 9


def test_http_a_slow_body_gets_408(http_server):
    with socket.create_connection((http_server.host, http_server.port), timeout=10) as sock:
        sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json"
                     b"\r\nAccept: " + ACCEPT.encode() + b"\r\nContent-Length: 100\r\n\r\n{")
        reply = b""
        while b"\r\n\r\n" not in reply:
            chunk = sock.recv(4096)
            assert chunk, "closed without an answer"
            reply += chunk
    assert reply.startswith(b"HTTP/1.1 408")


def test_http_each_slow_body_gets_408_at_its_own_deadline(http_server):
    """Bodies that stop half-way, started at different times, are each cut off a body
    timeout (1 s here) after their own start, not sooner; requests in between are served."""
    head = (b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json"
            b"\r\nAccept: " + ACCEPT.encode() + b"\r\nContent-Length: 100\r\n\r\n{")
    socks, started = [], []
    try:
        for _ in range(3):
            sock = socket.create_connection((http_server.host, http_server.port), timeout=10)
            socks.append(sock)
            sock.sendall(head)
            started.append(time.monotonic())
            body, headers = _modern_body("tools/list", {})
            quick = httpx.post(http_server.url, content=body, headers=headers, timeout=10)
            assert quick.status_code == 200, quick.text
            time.sleep(0.3)
        # Each reply timed as it arrives (all three watched at once).
        replies = {sock: b"" for sock in socks}
        took: dict[socket.socket, float] = {}
        deadline = time.monotonic() + 10
        while len(took) < len(socks) and time.monotonic() < deadline:
            readable, _, _ = select.select([s for s in socks if s not in took], [], [], 0.5)
            for sock in readable:
                chunk = sock.recv(4096)
                assert chunk, "closed without an answer"
                replies[sock] += chunk
                if b"\r\n\r\n" in replies[sock]:
                    took[sock] = time.monotonic() - started[socks.index(sock)]
        assert len(took) == len(socks), "a slow body got no answer"
        for sock in socks:
            assert replies[sock].startswith(b"HTTP/1.1 408"), replies[sock][:100]
            assert 0.9 < took[sock] < 3.0, took[sock]  # its own deadline: 1 s after its start
    finally:
        for sock in socks:
            sock.close()


def _initialize(url: str) -> str:
    params = {"protocolVersion": LEGACY, "capabilities": {},
              "clientInfo": {"name": "t", "version": "0"}}
    response = httpx.post(url, json={"jsonrpc": "2.0", "id": 0, "method": "initialize",
                                     "params": params}, headers={"accept": ACCEPT}, timeout=10)
    assert response.status_code == 200, response.text
    return response.headers["mcp-session-id"]


def _ping(url: str, session: str) -> httpx.Response:
    return httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, timeout=10,
                      headers={"accept": ACCEPT, "mcp-session-id": session})


def test_http_sessions_are_capped_and_the_longest_idle_one_goes(http_server):
    sessions = [_initialize(http_server.url) for _ in range(3)]
    for session in sessions[1:]:
        assert _ping(http_server.url, session).status_code == 200  # the first is idlest
    newest = _initialize(http_server.url)
    assert _ping(http_server.url, sessions[0]).status_code == 404
    for session in [*sessions[1:], newest]:
        assert _ping(http_server.url, session).status_code == 200
    assert len(http_server.app._sessions) == 3


big = Server("big")


@big.tool()
def blob() -> str:
    """Twenty megabytes of text: more than any socket buffer holds."""
    return "x" * (20 * 1024 * 1024)


def test_http_a_client_that_stops_reading_is_cut_off(monkeypatch):
    monkeypatch.setattr(http_protocol, "WRITE_TIMEOUT_S", 0.5)
    body, headers = _modern_body("tools/call", {"name": "blob", "arguments": {}})
    head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    with HttpServerThread(big) as served:
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.settimeout(10)
        with sock:
            sock.connect((served.host, served.port))
            sock.sendall(f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n{head}"
                         f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
            time.sleep(3)  # read nothing: the server's send buffer fills and stays full
            received = 0
            try:
                while chunk := sock.recv(1 << 20):
                    received += len(chunk)
            except ConnectionResetError:
                pass  # aborted: what the kernel had buffered may be dropped
        assert received < 20 * 1024 * 1024  # cut off, not delivered in full
