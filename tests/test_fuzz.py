"""Fuzzing real servers: typed mutations of every method's params, in every revision, over
stdio and HTTP, plus random bytes, truncations, deep nesting and duplicate keys.

The properties (issue 8): the server never exits or stops answering; every request-shaped
message gets exactly one response, with its id; everything else gets at most one error
(with a null id), notifications none; stdout carries only JSON-RPC; HTTP never answers 500.

The budget is fixed and the examples derandomized, so CI is repeatable and bounded:
``--fuzz-examples N`` (or ``MCPKIT_FUZZ_EXAMPLES``) runs a longer search.
"""

from __future__ import annotations

import itertools
import json
import os
import queue
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from conftest import Peer, modern_meta
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpkit import jsonrpc, params
from mcpkit.examples import everything
from mcpkit.transports.http import HttpServerThread

REVISIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")
ACCEPT = "application/json, text/event-stream"
SERVER = everything.server


def _budget(config: pytest.Config) -> int:
    return int(config.getoption("--fuzz-examples", None)
               or os.environ.get("MCPKIT_FUZZ_EXAMPLES") or 60)


def fuzz_settings(request: pytest.FixtureRequest):
    return settings(max_examples=_budget(request.config), deadline=None, derandomize=True,
                    database=None, suppress_health_check=list(HealthCheck))


# -- what to send ------------------------------------------------------------------------

_SURROGATES = st.sampled_from(["\ud800", "a\udfffb", "\udc80\ud800", "\x00", "\u2028\n\r"])
_TEXT = st.one_of(st.text(max_size=20), _SURROGATES,
                  st.sampled_from(list(SERVER.tools) + list(SERVER.prompts)
                                  + list(SERVER.resources) + ["test://template/1/data"]))
_NUMBERS = st.one_of(st.integers(), st.sampled_from([2**63, -2**63 - 1, 10**300, -0]),
                     st.floats(allow_nan=False, allow_infinity=False))
JSON = st.recursive(
    st.one_of(st.none(), st.booleans(), _NUMBERS, _TEXT),
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(_TEXT, inner, max_size=4)),
    max_leaves=12,
)

_sentinels = itertools.count(1)


def _valid_params(method: str) -> dict[str, Any]:
    """A well-formed example of a method's params (the starting point of mutations)."""
    return {
        "initialize": {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "fuzz", "version": "0"}},
        "tools/call": {"name": "test_simple_text", "arguments": {}},
        "resources/read": {"uri": "test://static-text"},
        "resources/subscribe": {"uri": "test://watched-resource"},
        "resources/unsubscribe": {"uri": "test://watched-resource"},
        "prompts/get": {"name": "test_prompt_with_arguments",
                        "arguments": {"arg1": "a", "arg2": "b"}},
        "completion/complete": {"ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"},
                                "argument": {"name": "arg1", "value": "a"}},
        "logging/setLevel": {"level": "info"},
        "subscriptions/listen": {"notifications": {"toolsListChanged": True}},
    }.get(method, {})


def _paths(fields: dict[str, params.Field], prefix: tuple[str, ...] = ()
           ) -> Iterator[tuple[str, ...]]:
    for name, field in fields.items():
        yield (*prefix, name)
        if field.kind.fields:
            yield from _paths(field.kind.fields, (*prefix, name))


def _set(target: dict[str, Any], path: tuple[str, ...], value: Any, delete: bool) -> None:
    for key in path[:-1]:
        if not isinstance(target.get(key), dict):
            target[key] = {}
        target = target[key]
    if delete:
        target.pop(path[-1], None)
    else:
        target[path[-1]] = value


@st.composite
def requests(draw, modern: bool) -> dict[str, Any]:
    """A request of a known method whose params carry one or more typed mutations."""
    method = draw(st.sampled_from(sorted(params.METHOD_PARAMS) + ["no/such", "ping"]))
    body = _valid_params(method)
    if modern:
        body["_meta"] = modern_meta()
    paths = list(_paths({**params.METHOD_PARAMS.get(method, {}), "_meta": params._META}))
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(paths))
        _set(body, path, draw(JSON), delete=draw(st.booleans()))
    if draw(st.booleans()):
        body[draw(_TEXT)] = draw(JSON)  # an unknown field
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": body}
    kind = draw(st.sampled_from(["id", "id", "id", "odd-id", "notification"]))
    if kind == "id":
        message["id"] = draw(st.one_of(st.integers(), st.text(max_size=8), _SURROGATES))
    elif kind == "odd-id":
        message["id"] = draw(st.one_of(st.none(), st.booleans(), st.floats(allow_nan=False),
                                       st.lists(st.integers(), max_size=2)))
    if draw(st.integers(0, 9)) == 0:
        message["params"] = draw(JSON)  # params not an object at all
    return message


def _encode(message: Any) -> bytes:
    return json.dumps(message, ensure_ascii=True).encode()


@st.composite
def lines(draw, modern: bool) -> bytes:
    """One line for the server: mostly mutated requests, some raw damage."""
    choice = draw(st.integers(0, 9))
    if choice <= 5:
        return _encode(draw(requests(modern)))
    if choice == 6:  # a request cut short
        data = _encode(draw(requests(modern)))
        return data[:draw(st.integers(0, len(data) - 1))]
    if choice == 7:  # random bytes (no newline: one line)
        return draw(st.binary(max_size=64)).replace(b"\n", b" ")
    if choice == 8:  # nesting from shallow to far past any parser's recursion limit
        depth = draw(st.sampled_from([50, 500, 990, 5000, 100_000]))
        inner = b"[" * depth + b"]" * depth
        return b'{"jsonrpc":"2.0","id":"deep","method":"tools/call","params":{"name":"x",' \
               b'"arguments":{"a":%s}}}' % inner
    # duplicate keys: the last one wins (as Python's parser and most others read it)
    return (b'{"jsonrpc":"2.0","id":"dup","id":7,"method":"ping","method":"tools/list",'
            b'"params":{"cursor":5,"cursor":null}}')


def request_id(line: bytes) -> tuple[bool, Any]:
    """Whether a line is a request the server must answer by id, and that id."""
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return False, None
    try:
        kind = jsonrpc.classify(message)
    except jsonrpc.JsonRpcError:
        return False, None
    return kind == "request", message.get("id")


def usable_id(line: bytes) -> Any:
    """The id an error about a message that is not a valid request may carry (else None)."""
    try:
        return jsonrpc.request_id_of(json.loads(line))
    except (ValueError, RecursionError):
        return None


def _acknowledges(message: dict[str, Any], listen_id: Any) -> bool:
    meta = (message.get("params") or {}).get("_meta") or {}
    return (message["method"] == "notifications/subscriptions/acknowledged"
            and meta.get("io.modelcontextprotocol/subscriptionId") == listen_id)


# -- over stdio ----------------------------------------------------------------------------


class StdioTarget:
    """One everything-server process in one revision, and the bookkeeping of its answers."""

    def __init__(self, revision: str) -> None:
        self.revision = revision
        self.peer = Peer("mcpkit.examples.everything:server", revision=revision)
        self.modern = revision == "2026-07-28"
        if not self.modern:
            self.peer.initialize()

    def sentinel(self) -> dict[str, Any]:
        sentinel_id = f"sentinel-{next(_sentinels)}"
        if self.modern:
            return {"jsonrpc": "2.0", "id": sentinel_id, "method": "server/discover",
                    "params": {"_meta": modern_meta()}}
        return {"jsonrpc": "2.0", "id": sentinel_id, "method": "ping"}

    def exchange(self, line: bytes) -> None:
        is_request, expected_id = request_id(line)
        other_id = usable_id(line)
        sentinel = self.sentinel()
        self.peer.write(line + b"\n")
        self.peer.write(_encode(sentinel) + b"\n")
        answers: list[dict[str, Any]] = []
        null_errors = 0
        seen_sentinel = False
        while not seen_sentinel or (is_request and not answers):
            try:
                message = self.peer.inbox.get(timeout=15)
            except queue.Empty:
                raise AssertionError(f"no answer in 15 s to {line[:300]!r}; stderr:\n"
                                     f"{self.peer.stderr[-2000:]}") from None
            assert message is not None, f"the server exited on {line[:300]!r}:\n" \
                                        f"{self.peer.stderr[-3000:]}"
            assert not isinstance(message, tuple), f"stdout carried a non-JSON line: {message}"
            assert jsonrpc.classify(message)  # stdout carries only JSON-RPC
            if "method" in message:
                if "id" in message:  # a request to us: refuse it, and carry on
                    self.peer.send(jsonrpc.error_response(message["id"], -32601, "no"))
                elif is_request and _acknowledges(message, expected_id):
                    # A listen stream stays open until cancelled; then it gets its result.
                    self.peer.send(jsonrpc.notification("notifications/cancelled",
                                                        {"requestId": expected_id}))
                continue
            if message["id"] == sentinel["id"]:
                seen_sentinel = True
            elif str(message["id"]).startswith("sentinel-"):
                continue  # an earlier example's, left over when that example failed
            elif is_request and message["id"] == expected_id:
                answers.append(message)
            elif message["id"] in (None, other_id) and "error" in message:
                null_errors += 1
                if is_request and message["error"]["code"] == -32700:
                    # Our parser may refuse what the test's parses (nesting near the
                    # recursion limit): then the parse error is the one answer.
                    answers.append(message)
            else:
                raise AssertionError(f"a response nobody asked for: {message} "
                                     f"(after {line[:300]!r})")
        if is_request:
            assert len(answers) == 1, (line[:300], answers)
        else:
            assert null_errors <= 1, line[:300]


@pytest.fixture(scope="module", params=REVISIONS)
def stdio_target(request) -> Iterator[StdioTarget]:
    target = StdioTarget(request.param)
    yield target
    assert target.peer.proc.poll() is None, "the server died"
    assert target.peer.close() == 0  # a clean exit on EOF


def test_fuzz_stdio(stdio_target: StdioTarget, request) -> None:
    @fuzz_settings(request)
    @given(lines(stdio_target.modern))
    def run(line: bytes) -> None:
        stdio_target.exchange(line)

    run()
    # Late answers (a tool on its own thread) would show up here as unasked responses.
    last = {**stdio_target.sentinel(), "id": "last"}
    stdio_target.exchange(_encode(last))


# -- over HTTP -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    with HttpServerThread(SERVER) as served:
        yield served.url


def _modern_headers(message: Any) -> dict[str, str]:
    headers = {"content-type": "application/json", "accept": ACCEPT,
               "mcp-protocol-version": "2026-07-28"}
    if isinstance(message, dict) and isinstance(message.get("method"), str):
        headers["mcp-method"] = message["method"]
        body = message.get("params")
        name = body.get("uri" if message["method"] == "resources/read" else "name") \
            if isinstance(body, dict) else None
        if isinstance(name, str) and name.isascii() and name.isprintable():
            headers["mcp-name"] = name
    return headers


def _post_and_check(client: httpx.Client, url: str, line: bytes,
                    headers: dict[str, str]) -> None:
    is_request, expected_id = request_id(line)
    with client.stream("POST", url, content=line, headers=headers) as response:
        status = response.status_code
        content_type = response.headers.get("content-type", "")
        found: list[Any] = []
        if content_type.startswith("text/event-stream"):
            for row in response.iter_lines():
                if not row.startswith("data:"):
                    continue
                found.append(json.loads(row[5:]))
                if isinstance(found[-1], dict) and "method" in found[-1] and is_request \
                        and _acknowledges(found[-1], expected_id):
                    return  # a listen stream: open until we leave, which ends it
        else:
            body = response.read()
            if body:
                assert content_type.startswith("application/json"), (content_type, body[:300])
                found.append(json.loads(body))
    assert status < 500, (status, found, line[:300])
    if not found:
        assert status in (202, 204), (status, line[:300])
        return
    for message in found:
        for item in message if isinstance(message, list) else [message]:
            if "id" not in item and "error" in item:
                continue  # an HTTP-level error answers no request: no id (MCP's schema)
            assert jsonrpc.classify(item)
    if is_request:
        final = [m for m in found if isinstance(m, dict) and "method" not in m]
        assert len(final) == 1 and final[0].get("id") in (expected_id, None), (found, line[:300])


def test_fuzz_http_modern(http_url: str, request) -> None:
    with httpx.Client(timeout=15) as client:
        @fuzz_settings(request)
        @given(lines(modern=True))
        def run(line: bytes) -> None:
            try:
                message = json.loads(line)
            except (ValueError, RecursionError):
                message = None
            _post_and_check(client, http_url, line, _modern_headers(message))
            alive = client.post(http_url, content=_encode(
                {"jsonrpc": "2.0", "id": 1, "method": "server/discover",
                 "params": {"_meta": modern_meta()}}),
                headers={**_modern_headers({"method": "server/discover"})})
            assert alive.status_code == 200

        run()


def test_fuzz_http_legacy_session(http_url: str, request) -> None:
    with httpx.Client(timeout=15) as client:
        init = client.post(http_url, headers={"accept": ACCEPT}, json={
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": _valid_params("initialize")})
        assert init.status_code == 200
        headers = {"content-type": "application/json", "accept": ACCEPT,
                   "mcp-session-id": init.headers["mcp-session-id"],
                   "mcp-protocol-version": "2025-11-25"}
        client.post(http_url, headers=headers,
                    json={"jsonrpc": "2.0", "method": "notifications/initialized"})

        @fuzz_settings(request)
        @given(lines(modern=False))
        def run(line: bytes) -> None:
            _post_and_check(client, http_url, line, headers)
            alive = client.post(http_url, headers=headers,
                                json={"jsonrpc": "2.0", "id": "alive", "method": "ping"})
            assert alive.status_code == 200 and alive.json()["result"] == {}

        run()
