"""Shared test helpers: a raw stdio peer for real server processes, and schema checks.

`Peer` is deliberately not mcpkit's client: server tests speak bytes on real pipes, so a
bug in the client cannot hide a bug in the server.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest

ROOT = Path(__file__).resolve().parent.parent
SPEC = Path(__file__).resolve().parent / "spec"
SERVERS = Path(__file__).resolve().parent / "servers"
MODERN = "2026-07-28"

# The result type each method's response must match, by schema definition name.
RESULT_TYPES = {
    "initialize": "InitializeResult",
    "server/discover": "DiscoverResult",
    "tools/list": "ListToolsResult",
    "tools/call": "CallToolResult",
    "resources/list": "ListResourcesResult",
    "resources/templates/list": "ListResourceTemplatesResult",
    "resources/read": "ReadResourceResult",
    "prompts/list": "ListPromptsResult",
    "prompts/get": "GetPromptResult",
    "completion/complete": "CompleteResult",
    "subscriptions/listen": "SubscriptionsListenResult",
}


@cache
def _schema(revision: str) -> dict[str, Any]:
    return json.loads((SPEC / revision / "schema.json").read_text())


@cache
def _validator(revision: str, definition: str) -> jsonschema.protocols.Validator:
    schema = _schema(revision)
    key = "$defs" if "$defs" in schema else "definitions"
    if definition not in schema[key]:
        raise KeyError(f"{definition} is not defined in the {revision} schema")
    wrapper = {"$ref": f"#/{key}/{definition}", key: schema[key]}
    if "$schema" in schema:
        wrapper["$schema"] = schema["$schema"]
    cls = jsonschema.validators.validator_for(wrapper)
    return cls(wrapper)


def validate(revision: str, definition: str, instance: Any) -> None:
    errors = sorted(_validator(revision, definition).iter_errors(instance), key=str)
    if errors:
        detail = "; ".join(f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
                           for e in errors[:3])
        raise AssertionError(f"not a valid {revision} {definition}: {detail}\n{instance}")


def validate_emitted(revision: str, message: dict[str, Any], method: str | None) -> None:
    """Check one message a server sent, against the schema of the revision in use."""
    schema = _schema(revision)
    defs = schema.get("$defs") or schema["definitions"]
    if "error" in message:
        name = "JSONRPCErrorResponse" if "JSONRPCErrorResponse" in defs else "JSONRPCError"
        if message.get("id", 0) is None:
            # JSON-RPC 2.0 says an error about an unreadable request carries "id": null; the
            # MCP schemas leave id out instead (and before 2025-11-25 cannot express it at
            # all). We follow JSON-RPC; everything else about the message must still fit.
            message = {k: v for k, v in message.items() if k != "id"}
            if name == "JSONRPCError":
                message["id"] = 0
        validate(revision, name, message)
        return
    if "result" in message:
        result = message["result"]
        if result.get("resultType") == "input_required":
            validate(revision, "InputRequiredResult", result)
        elif method in RESULT_TYPES and RESULT_TYPES[method] in defs:
            validate(revision, RESULT_TYPES[method], result)
        else:
            validate(revision, "Result" if "Result" in defs else "EmptyResult", result)
        return
    if "id" in message:
        validate(revision, "ServerRequest", message)
        return
    validate(revision, "ServerNotification", message)


def wait_until(predicate, timeout: float = 5.0) -> bool:
    """Poll ``predicate`` until it holds or ``timeout`` passes; its last value."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return predicate()


def modern_meta(**extra: Any) -> dict[str, Any]:
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "tests", "version": "0"},
    }
    meta.update(extra)
    return meta


class Peer:
    """A server process on real pipes, and a test's hands on its bytes.

    Every message the server sends is checked against the schema of ``revision`` (the
    revision the test speaks), matched to the method of the request it answers.
    """

    def __init__(self, target: str, *args: str, revision: str = MODERN,
                 env: dict[str, str] | None = None) -> None:
        self.revision = revision
        self.sent_methods: dict[Any, str] = {}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "mcpkit", "serve", target, *args],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            cwd=ROOT, env={**os.environ, **(env or {})},
        )
        self.inbox: queue.Queue[Any] = queue.Queue()
        self.raw_lines: list[bytes] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self._stderr: list[bytes] = []
        self._err_reader = threading.Thread(target=self._drain_stderr, daemon=True)
        self._err_reader.start()
        self._next_id = 0

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.raw_lines.append(line)
            try:
                self.inbox.put(json.loads(line))
            except ValueError:
                self.inbox.put(("NOT JSON", line))
        self.inbox.put(None)

    def _drain_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self._stderr.append(line)

    @property
    def stderr(self) -> str:
        return b"".join(self._stderr).decode(errors="replace")

    def write(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, message: dict[str, Any]) -> None:
        if "id" in message and "method" in message:
            self.sent_methods[message["id"]] = message["method"]
        self.write((json.dumps(message) + "\n").encode())

    def next(self, timeout: float = 10.0) -> Any:
        try:
            message = self.inbox.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no message from the server in {timeout} s; "
                                 f"stderr:\n{self.stderr}") from None
        for item in message if isinstance(message, list) else [message]:
            if isinstance(item, dict):
                validate_emitted(self.revision, item, self.sent_methods.get(item.get("id")))
        return message

    def request(self, method: str, params: dict[str, Any] | None = None,
                timeout: float = 10.0, id: Any = None) -> dict[str, Any]:
        """Send a request; return its response (notifications before it are kept in .seen)."""
        if id is None:
            self._next_id += 1
            id = self._next_id
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        self.seen: list[dict[str, Any]] = []
        while True:
            reply = self.next(timeout)
            if reply is None:
                raise AssertionError(f"server closed stdout; stderr:\n{self.stderr}")
            if isinstance(reply, dict) and reply.get("id") == id and "method" not in reply:
                return reply
            self.seen.append(reply)

    def modern(self, method: str, params: dict[str, Any] | None = None, **meta: Any):
        params = dict(params or {})
        params["_meta"] = {**modern_meta(), **meta}
        return self.request(method, params)

    def initialize(self, version: str | None = None, capabilities: dict | None = None):
        version = version or self.revision
        response = self.request("initialize", {
            "protocolVersion": version, "capabilities": capabilities or {},
            "clientInfo": {"name": "tests", "version": "0"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return response

    def close(self, timeout: float = 10.0) -> int:
        if self.proc.stdin and not self.proc.stdin.closed:
            try:
                self.proc.stdin.close()
            except BrokenPipeError:
                pass
        try:
            return self.proc.wait(timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait(5)
            self._reader.join(5)
            self._err_reader.join(5)
            for stream in (self.proc.stdout, self.proc.stderr):
                if stream:
                    stream.close()


@pytest.fixture
def peer_factory():
    peers: list[Peer] = []

    def start(target: str, *args: str, **kwargs: Any) -> Peer:
        peer = Peer(target, *args, **kwargs)
        peers.append(peer)
        return peer

    yield start
    for peer in peers:
        peer.close()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--fuzz-examples", type=int, default=None,
                     help="examples per fuzz test (default 60, or MCPKIT_FUZZ_EXAMPLES)")


@pytest.fixture(scope="session")
def node() -> str:
    """A Node for the npm peers (>= 22.19), the peers installed: interop/install.sh (quick
    when they are there already). Lesson and lab 09 need them too, so the course tests use
    this fixture: on a fresh clone they run before the interop tests would install them."""
    run = subprocess.run(["bash", str(ROOT / "interop" / "install.sh")], capture_output=True,
                         text=True, timeout=900, env={**os.environ})
    assert run.returncode == 0, f"interop/install.sh failed:\n{run.stderr[-3000:]}"
    return run.stdout.strip().splitlines()[-1]
