"""Requests per second and server CPU per request over streamable HTTP: mcpkit and the
official SDK (``mcp`` 2.3.0) side by side, in one run, both eras.

    python bench/bench_http.py [--rounds 3] [--requests 2000] [--clients 1,16]
                               [--answers json,sse]

Each server is its own process under uvicorn on 127.0.0.1 serving one ``echo`` tool (16
bytes of text). The client is deliberately cheap, so it is not what is measured: one
keep-alive socket per client thread, each request written whole and the response read by
its Content-Length (or to the end of its chunked SSE body), no JSON parsing. Every request
waits for its answer (latency-bound, as an agent loop is); ``--clients 8`` runs eight such
loops at once. ``--answers sse`` calls ``echo_progress`` instead, with a ``progressToken``:
the tool reports progress once, so both servers answer with an SSE stream (a progress
event, then the result); the SDK then runs with its JSON answers off. Server CPU is the
server process's user+system time over the round divided
by the requests. Rounds are interleaved across configurations; the table gives medians and
min-max, and the ratio to the SDK in the same era, per round.

Configurations:

  mcpkit legacy   a 2025-11-25 session (initialize, Mcp-Session-Id), JSON answers
  mcpkit modern   2026-07-28 stateless requests (``_meta`` and headers on each)
  SDK legacy      the SDK's MCPServer, streamable HTTP, a 2025-11-25 session
  SDK modern      the same server, 2026-07-28 requests (the SDK serves both eras)
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterable
from pathlib import Path

PY = sys.executable
ECHO = "0123456789abcdef"

MCPKIT_SERVER = '''
from mcpkit import Context, Server
server = Server("bench")

@server.tool()
def echo(text: str) -> str:
    """Echo."""
    return text

@server.tool()
def echo_progress(text: str, ctx: Context) -> str:
    """Echo, after one progress report."""
    ctx.progress(1, 1)
    return text
'''

SDK_SERVER = '''
import sys
import uvicorn
from mcp.server.mcpserver import Context, MCPServer
mcp = MCPServer("bench")

@mcp.tool()
def echo(text: str) -> str:
    """Echo."""
    return text

@mcp.tool()
async def echo_progress(text: str, ctx: Context) -> str:
    """Echo, after one progress report."""
    await ctx.report_progress(1, 1)
    return text

uvicorn.run(mcp.streamable_http_app(json_response=sys.argv[2] == "json"), host="127.0.0.1",
            port=int(sys.argv[1]), log_level="warning")
'''

MODERN_META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
               "io.modelcontextprotocol/clientCapabilities": {},
               "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "0"}}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RawHttp:
    """One keep-alive HTTP/1.1 connection that does the least a client can."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""

    def post(self, body: bytes, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        self.sock.sendall(f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\n{head}"
                          f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
        while b"\r\n\r\n" not in self.buf:
            self._fill()
        raw_head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        lines = raw_head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        fields = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
        if "content-length" in fields:
            size = int(fields["content-length"])
            while len(self.buf) < size:
                self._fill()
            payload, self.buf = self.buf[:size], self.buf[size:]
        else:  # chunked
            payload = b""
            while True:
                while b"\r\n" not in self.buf:
                    self._fill()
                size_line, self.buf = self.buf.split(b"\r\n", 1)
                size = int(size_line, 16)
                while len(self.buf) < size + 2:
                    self._fill()
                payload += self.buf[:size]
                self.buf = self.buf[size + 2:]
                if size == 0:
                    break
        return status, fields, payload

    def _fill(self) -> None:
        chunk = self.sock.recv(65536)
        if not chunk:
            raise ConnectionError("the server closed the connection")
        self.buf += chunk

    def close(self) -> None:
        self.sock.close()


ACCEPT = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


def call_body(request_id: int, modern: bool, sse: bool) -> bytes:
    params: dict = {"name": "echo_progress" if sse else "echo", "arguments": {"text": ECHO}}
    meta = {**MODERN_META} if modern else {}
    if sse:
        meta["progressToken"] = "p"
    if meta:
        params["_meta"] = meta
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                       "params": params}, separators=(",", ":")).encode()


def session_headers(port: int, modern: bool, sse: bool) -> dict[str, str]:
    if modern:
        return {**ACCEPT, "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call",
                "mcp-name": "echo_progress" if sse else "echo"}
    conn = RawHttp(port)
    init = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "bench", "version": "0"}}}).encode()
    status, fields, _ = conn.post(init, ACCEPT)
    assert status == 200, status
    headers = {**ACCEPT, "mcp-session-id": fields["mcp-session-id"],
               "mcp-protocol-version": "2025-11-25"}
    conn.post(b'{"jsonrpc":"2.0","method":"notifications/initialized"}', headers)
    conn.close()
    return headers


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_round(port: int, pid: int, modern: bool, requests: int,
              clients: int, sse: bool) -> tuple[float, float]:
    per_client = requests // clients
    body = call_body(1, modern, sse)
    conns = [RawHttp(port) for _ in range(clients)]
    # One legacy session per client loop, as separate agents would have.
    sessions = [session_headers(port, modern, sse) for _ in conns]
    for conn, headers in zip(conns, sessions, strict=True):  # warm up each connection
        status, fields, payload = conn.post(body, headers)
        assert status == 200 and ECHO.encode() in payload, (status, payload[:200])
        streamed = fields.get("content-type", "").startswith("text/event-stream")
        assert streamed == sse and (not sse or b"notifications/progress" in payload), \
            (fields, payload[:300])
    errors: list[BaseException] = []

    def loop(conn: RawHttp, headers: dict[str, str]) -> None:
        try:
            for _ in range(per_client):
                status, _, payload = conn.post(body, headers)
                if status != 200:
                    raise RuntimeError(f"HTTP {status}: {payload[:200]!r}")
        except BaseException as exc:  # reported below, with the round
            errors.append(exc)

    threads = [threading.Thread(target=loop, args=pair) for pair in zip(conns, sessions,
                                                                        strict=True)]
    cpu0, t0 = cpu_seconds(pid), time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed, cpu = time.perf_counter() - t0, cpu_seconds(pid) - cpu0
    for conn in conns:
        conn.close()
    if errors:
        raise errors[0]
    done = per_client * clients
    return done / elapsed, cpu / done * 1e6


def launch(cmd: list[str], port: int, what: str) -> subprocess.Popen:
    """Start a server process and wait (30 s at most) until ``port`` accepts connections."""
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return proc
        time.sleep(0.05)
    proc.kill()
    proc.wait(10)
    raise RuntimeError(f"{what} HTTP server did not start")


def stop(procs: Iterable[subprocess.Popen]) -> None:
    """Terminate the servers, killing any that does not end within 10 s; reap them all."""
    for proc in procs:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


def start(kind: str, folder: Path, answers: str) -> tuple[subprocess.Popen, int]:
    port = free_port()
    if kind == "mcpkit":
        (folder / "bench_server.py").write_text(MCPKIT_SERVER)
        cmd = [PY, "-m", "mcpkit", "serve", str(folder / "bench_server.py"), "--http",
               "--port", str(port), "--log-level", "warning"]
    else:
        (folder / "sdk_bench_server.py").write_text(SDK_SERVER)
        cmd = [PY, str(folder / "sdk_bench_server.py"), str(port), answers]
    return launch(cmd, port, kind), port


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--clients", default="1,16")
    parser.add_argument("--answers", default="json,sse")
    args = parser.parse_args()
    client_counts = [int(c) for c in args.clients.split(",")]
    answer_kinds = args.answers.split(",")
    configs = [(kind, modern) for kind in ("mcpkit", "sdk") for modern in (False, True)]
    results: dict[tuple[str, bool, int, str], list[tuple[float, float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        # The SDK answers JSON or SSE for a whole app; mcpkit chooses per request.
        servers = {(kind, answers): start(kind, Path(tmp), answers)
                   for kind in ("mcpkit", "sdk") for answers in answer_kinds}
        try:
            for _ in range(args.rounds):
                for answers in answer_kinds:
                    for clients in client_counts:
                        for kind, modern in configs:
                            proc, port = servers[(kind, answers)]
                            results.setdefault((kind, modern, clients, answers), []).append(
                                run_round(port, proc.pid, modern, args.requests, clients,
                                          answers == "sse"))
        finally:
            stop(proc for proc, _ in servers.values())
    print(f"streamable HTTP, echo tool, {args.requests} requests per round, {args.rounds} "
          f"rounds, medians (min-max); ratio = mcpkit / SDK, same era, same round\n")
    print("| answer | clients | era | mcpkit req/s | SDK req/s | ratio | mcpkit CPU µs/req | "
          "SDK CPU µs/req | CPU ratio |")
    print("| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for answers, clients, modern in ((a, c, m) for a in answer_kinds for c in client_counts
                                     for m in (False, True)):
        if True:
            ours = results[("mcpkit", modern, clients, answers)]
            sdk = results[("sdk", modern, clients, answers)]
            ratios = [a[0] / b[0] for a, b in zip(ours, sdk, strict=True)]
            cpu_ratios = [a[1] / b[1] for a, b in zip(ours, sdk, strict=True)]

            def fmt(values: list[float], digits: int = 0) -> str:
                med = statistics.median(values)
                return (f"{med:,.{digits}f} ({min(values):,.{digits}f}-"
                        f"{max(values):,.{digits}f})")

            print(f"| {answers.upper()} | {clients} | {'2026-07-28' if modern else '2025-11-25'} | "
                  f"{fmt([r[0] for r in ours])} | {fmt([r[0] for r in sdk])} | "
                  f"{statistics.median(ratios):.2f}x | {fmt([r[1] for r in ours])} | "
                  f"{fmt([r[1] for r in sdk])} | {statistics.median(cpu_ratios):.2f} |")


if __name__ == "__main__":
    main()
