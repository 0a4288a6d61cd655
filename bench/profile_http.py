"""Where a streamable HTTP request's time goes: mcpkit's ASGI app and the bare floor's app,
called in a loop with the request already read (no sockets, no uvicorn), and the pieces a
request goes through.

    python bench/profile_http.py [--requests 20000] [--instructions]

Rows:

  floor app          bench/floor.py: the body json-decoded, a JSON-RPC result written
  mcpkit modern      a 2026-07-28 ``tools/call`` of ``echo`` (``_meta`` and mirrored headers)
  mcpkit legacy      the same call in a 2025-11-25 session (initialized first)
  headers            the HTTP checks: headers read, Host/Origin, Content-Type and Accept
  parse              the body parsed (``framing.loads``)
  envelope and meta  JSON-RPC envelope, era, ``_meta`` and the headers that mirror the body
  call               a modern request served by the app's shared Connection (a handler
                     without a Context: no Connection made for it)
  encode             the answer encoded

Each row is timed in microseconds per request (the best of 5 batches; a shared machine
moves these by 10-30%). With ``--instructions`` each is also counted in instructions per
request under valgrind (callgrind; installed with apt-get when missing and run as root):
the difference between two runs of different lengths, so start-up cancels out. Counts do
not move with the machine's load, which makes them the figure to compare changes with.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from floor import app as floor_app  # noqa: E402  (bench_wrk.py's floor, the same app)

from mcpkit import Server, jsonrpc  # noqa: E402
from mcpkit import params as params_mod  # noqa: E402
from mcpkit.framing import loads  # noqa: E402
from mcpkit.transports import http  # noqa: E402
from mcpkit.transports.http_security import RequestHeaders  # noqa: E402

ECHO = "0123456789abcdef"
MODERN_BODY = json.dumps({
    "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "echo", "arguments": {"text": ECHO}, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "0"}}}},
    separators=(",", ":")).encode()
LEGACY_BODY = json.dumps({
    "jsonrpc": "2.0", "id": 1, "method": "tools/call",
    "params": {"name": "echo", "arguments": {"text": ECHO}}}, separators=(",", ":")).encode()
BASE_HEADERS = [(b"host", b"127.0.0.1:8000"), (b"content-type", b"application/json"),
                (b"accept", b"application/json, text/event-stream")]
MODERN_HEADERS = [*BASE_HEADERS, (b"mcp-protocol-version", b"2026-07-28"),
                  (b"mcp-method", b"tools/call"), (b"mcp-name", b"echo"),
                  (b"content-length", str(len(MODERN_BODY)).encode())]
ROWS = ("floor app", "mcpkit modern", "mcpkit legacy", "headers", "parse",
        "envelope and meta", "call", "encode")


def scope_of(headers: list[tuple[bytes, bytes]]) -> dict[str, Any]:
    return {"type": "http", "method": "POST", "path": "/mcp", "headers": headers,
            "http_version": "1.1", "scheme": "http", "query_string": b"", "root_path": "",
            "client": ("127.0.0.1", 5), "server": ("127.0.0.1", 8000)}


def receiver(body: bytes) -> Callable:
    """An ASGI receive that gives the whole body at once (then waits, as a connection
    that stays open does)."""
    given = False

    async def receive() -> dict[str, Any]:
        nonlocal given
        if not given:
            given = True
            return {"type": "http.request", "body": body, "more_body": False}
        await asyncio.sleep(3600)
        return {"type": "http.disconnect"}

    return receive


class Bench:
    """The server, the app and one callable per row (async rows return coroutines)."""

    def __init__(self) -> None:
        http.INLINE_BUDGET_S = 100.0  # valgrind is slow: keep echo inline all the same
        self.server = Server("bench")
        self.server.tool(self.echo)
        self.app = http.create_app(self.server)
        self.sent: list[dict[str, Any]] = []
        self.legacy_headers: list[tuple[bytes, bytes]] = []
        self.headers = RequestHeaders(MODERN_HEADERS)
        self.message = loads(MODERN_BODY)
        self.answer: dict[str, Any] = {}

    @staticmethod
    def echo(text: str) -> str:
        """Echo."""
        return text

    async def send(self, message: dict[str, Any]) -> None:
        self.sent.append(message)
        if len(self.sent) > 64:
            del self.sent[:32]

    async def setup(self) -> None:
        """A legacy session for the legacy row, and the modern answer for the encode row."""
        init = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "bench", "version": "0"}}}).encode()
        await self.app(scope_of([*BASE_HEADERS, (b"content-length", b"%d" % len(init))]),
                       receiver(init), self.send)
        session = dict(self.sent[-2]["headers"])[b"mcp-session-id"]
        self.legacy_headers = [*BASE_HEADERS, (b"mcp-session-id", session),
                               (b"mcp-protocol-version", b"2025-11-25"),
                               (b"content-length", b"%d" % len(LEGACY_BODY))]
        note = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
        await self.app(scope_of(self.legacy_headers[:-1]), receiver(note), self.send)
        await self.modern()
        self.answer = json.loads(self.sent[-1]["body"])
        assert self.answer["result"]["content"][0]["text"] == ECHO, self.answer
        await self.legacy()
        assert json.loads(self.sent[-1]["body"])["result"]["content"][0]["text"] == ECHO

    def floor(self) -> Any:
        return floor_app(scope_of(MODERN_HEADERS), receiver(MODERN_BODY), self.send)

    def modern(self) -> Any:
        return self.app(scope_of(MODERN_HEADERS), receiver(MODERN_BODY), self.send)

    def legacy(self) -> Any:
        return self.app(scope_of(self.legacy_headers), receiver(LEGACY_BODY), self.send)

    def check_headers(self) -> None:
        headers = RequestHeaders(MODERN_HEADERS)
        headers.refuse_repeated()
        self.app.guard.check(headers)
        self.app.guard.check_post(headers)

    def envelope_and_meta(self) -> None:
        message, headers = self.message, self.headers
        jsonrpc.classify(message)
        http._era_of(message, headers)
        params_mod.check_meta(message["method"], message["params"])
        http._meta_complete(message)
        assert self.app._mirror.problem(headers, message) is None

    def call(self) -> None:
        replies: list[Any] = []
        self.app._stateless.receive_request(self.message, replies.append, may_block=True)

    def row(self, name: str) -> tuple[Callable[[], Any], bool]:
        """The callable for a row, and whether it is a coroutine function."""
        return {
            "floor app": (self.floor, True), "mcpkit modern": (self.modern, True),
            "mcpkit legacy": (self.legacy, True), "headers": (self.check_headers, False),
            "parse": (lambda: loads(MODERN_BODY), False),
            "envelope and meta": (self.envelope_and_meta, False),
            "call": (self.call, False),
            "encode": (lambda: http._encode(self.answer), False),
        }[name]


async def run(bench: Bench, name: str, requests: int) -> float:
    """Seconds for ``requests`` calls of a row."""
    call, is_async = bench.row(name)
    started = time.perf_counter()
    if is_async:
        for _ in range(requests):
            await call()
    else:
        for _ in range(requests):
            call()
    return time.perf_counter() - started


async def timings(requests: int) -> dict[str, float]:
    bench = Bench()
    await bench.setup()
    best = {}
    for name in ROWS:
        await run(bench, name, requests // 10)  # warm up
        best[name] = min([await run(bench, name, requests) for _ in range(5)]) / requests
    return best


async def child(name: str, requests: int) -> None:
    bench = Bench()
    await bench.setup()
    await run(bench, name, requests)


def instructions(name: str) -> int:
    """Instructions per request of a row, under callgrind."""
    def count(requests: int) -> int:
        out = subprocess.run(
            ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable,
             __file__, "--child", name, "--requests", str(requests)],
            capture_output=True, text=True, timeout=600, check=True)
        return int(re.search(r"Collected : (\d+)", out.stderr).group(1))

    short, long = 500, 3000
    return (count(long) - count(short)) // (long - short)


def ensure_valgrind() -> None:
    if shutil.which("valgrind"):
        return
    print("valgrind is missing: installing it with apt-get", file=sys.stderr)
    subprocess.run(["apt-get", "update", "-qq"], check=True, timeout=600)
    subprocess.run(["apt-get", "install", "-y", "-qq", "valgrind"], check=True, timeout=900)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=20000)
    parser.add_argument("--instructions", action="store_true")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    run_loop = asyncio.run
    try:
        import uvloop  # the server's loop (mcpkit's http extra installs it)

        run_loop = uvloop.run
    except ImportError:
        pass
    if args.child:
        run_loop(child(args.child, args.requests))
        return
    best = run_loop(timings(args.requests))
    counts = {}
    if args.instructions:
        ensure_valgrind()
        counts = {name: instructions(name) for name in ROWS}
    floor = best["floor app"]
    print(f"\n| row | µs per request | vs floor app |{' instructions |' if counts else ''}")
    print(f"| --- | ---: | ---: |{' ---: |' if counts else ''}")
    for name in ROWS:
        line = f"| {name} | {best[name] * 1e6:.1f} | {best[name] / floor:.2f} |"
        if counts:
            line += f" {counts[name]:,} |"
        print(line)


if __name__ == "__main__":
    main()
