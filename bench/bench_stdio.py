"""Round trips per second over stdio: mcpkit, the official SDK, and a raw pipe.

    python bench/bench_stdio.py [--rounds 3] [--quick]

Configurations (each round re-spawns its server, so every round also times start-up):

  raw pipe            a child echoes lines back; the parent writes and a reader thread
                      hands each line to the waiting caller: the floor for any stdio client
                      that has a reader thread, with no JSON-RPC at all
  mcpkit -> stub      mcpkit.client against a stub that answers every request with canned
                      bytes (no JSON parsing): the client's own cost, to set against the
                      raw pipe's
  mcpkit -> mcpkit    mcpkit.client calling a trivial ``echo`` tool on an mcpkit server
  SDK -> SDK          the official ``mcp`` (2.3.0) client and server, same tool
  mcpkit -> SDK       mcpkit.client against the SDK server
  SDK -> mcpkit       the SDK client against the mcpkit server

  raw -> mcpkit       a blocking client with no reader thread (write a line, read a line)
                      against the mcpkit server: the floor for any client of that server

``--eras-cpu`` measures only this: mcpkit's client and server, 100 calls in flight, in each
era, with each process's CPU time per call (the server's from ``/proc``, the client's from
``os.times``): which side bounds the rate.

A second table ("workloads") covers the eras and the shapes of traffic, each next to the
SDK and a raw client in the same round: sequential calls with 16 bytes and with 64 KiB of
text, in the 2026-07-28 era and in a 2025-11-25 session; and 100 calls in flight at once
(mcpkit: ``start_request`` 100 times, then the results; the SDK: ``asyncio.gather``; raw:
100 lines written at once, then 100 read).

Every round is a sequence of calls, each waiting for its result (latency-bound, as an
agent loop is). A noisy machine slows some rounds: the table shows the best and the
median round. Start-up is spawn to first result (the handshake included); import time is
measured in a fresh interpreter.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

PY = sys.executable

RAW_CHILD = """
import sys
for line in sys.stdin.buffer:
    sys.stdout.buffer.write(line)
    sys.stdout.buffer.flush()
"""

STUB_SERVER = r"""
import re
import sys

ID = re.compile(rb'"id":(\d+)')
HEAD = b'{"jsonrpc":"2.0","id":'
DISCOVER = (b',"result":{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},'
            b'"ttlMs":0,"cacheScope":"public","resultType":"complete"}}\n')
RESULT = b',"result":{"content":[{"type":"text","text":"hi"}],"resultType":"complete"}}\n'
out = sys.stdout.buffer
for line in sys.stdin.buffer:
    match = ID.search(line)
    if match:  # a request (notifications have no id)
        out.write(HEAD + match.group(1) + (DISCOVER if b'"server/discover"' in line else RESULT))
        out.flush()
"""

MCPKIT_SERVER = '''
from mcpkit import Server

server = Server("bench", "1.0")


@server.tool
def echo(text: str) -> str:
    """Echo the text."""
    return text


server.run()
'''

SDK_SERVER = '''
from mcp.server.mcpserver import MCPServer

mcp = MCPServer("bench", version="1.0")


@mcp.tool()
def echo(text: str) -> str:
    """Echo the text."""
    return text


mcp.run()
'''

# A request the size of a real tools/call with modern _meta (about 300 bytes).
RAW_LINE = (b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo",'
            b'"arguments":{"text":"hi"},"_meta":{"io.modelcontextprotocol/protocolVersion":'
            b'"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},'
            b'"io.modelcontextprotocol/clientInfo":{"name":"mcpkit","version":"0.1.0"}}}}\n')


def bench_raw(n: int) -> tuple[float, float]:
    start = time.perf_counter()
    child = subprocess.Popen([PY, "-c", RAW_CHILD], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, bufsize=0)
    assert child.stdin and child.stdout
    arrived = threading.Lock()
    arrived.acquire()
    out_fd, in_fd = child.stdout.fileno(), child.stdin.fileno()

    def reader() -> None:
        while True:
            data = os.read(out_fd, 65536)
            if not data:
                return
            for _ in range(data.count(b"\n")):
                arrived.release()

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    os.write(in_fd, RAW_LINE)
    arrived.acquire()
    startup = time.perf_counter() - start
    began = time.perf_counter()
    for _ in range(n):
        os.write(in_fd, RAW_LINE)
        arrived.acquire()
    rate = n / (time.perf_counter() - began)
    child.stdin.close()
    child.wait()
    thread.join()
    child.stdout.close()
    return startup, rate


def bench_mcpkit_client(server: list[str], n: int, text: str = "hi", era: str | None = None,
                        in_flight: int = 1) -> tuple[float, float]:
    from mcpkit.client import Client

    start = time.perf_counter()
    with Client(PY, server, version=era) as client:
        client.call_tool("echo", {"text": text})
        startup = time.perf_counter() - start
        began = time.perf_counter()
        if in_flight == 1:
            for _ in range(n):
                client.call_tool("echo", {"text": text})
        else:
            params = {"name": "echo", "arguments": {"text": text}}
            for _ in range(n // in_flight):
                batch = [client.start_request("tools/call", params) for _ in range(in_flight)]
                for pending in batch:
                    pending.result()
            n = n // in_flight * in_flight
        rate = n / (time.perf_counter() - began)
    return startup, rate


def bench_sdk_client(server: list[str], n: int, text: str = "hi",
                     in_flight: int = 1) -> tuple[float, float]:
    from mcp import Client, StdioServerParameters

    async def run() -> tuple[float, float]:
        nonlocal n
        start = time.perf_counter()
        async with Client(StdioServerParameters(command=PY, args=server)) as client:
            await client.call_tool("echo", {"text": text})
            startup = time.perf_counter() - start
            began = time.perf_counter()
            if in_flight == 1:
                for _ in range(n):
                    await client.call_tool("echo", {"text": text})
            else:
                for _ in range(n // in_flight):
                    await asyncio.gather(*(client.call_tool("echo", {"text": text})
                                           for _ in range(in_flight)))
                n = n // in_flight * in_flight
            return startup, n / (time.perf_counter() - began)

    return asyncio.run(run())


LEGACY_INIT = (b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":'
               b'"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}\n'
               b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')


def call_line(request_id: int, text: str, modern: bool) -> bytes:
    params: dict = {"name": "echo", "arguments": {"text": text}}
    if modern:
        params["_meta"] = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                           "io.modelcontextprotocol/clientCapabilities": {},
                           "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"}}
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                       "params": params}, separators=(",", ":")).encode() + b"\n"


def bench_raw_client(server: list[str], n: int, text: str = "hi", modern: bool = True,
                     in_flight: int = 1) -> tuple[float, float]:
    """A client with no reader thread and no JSON-RPC layer: it writes prepared lines and
    reads lines back (parsing each, as any client must)."""
    start = time.perf_counter()
    child = subprocess.Popen([PY, *server], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, bufsize=0)
    assert child.stdin and child.stdout
    out = os.fdopen(os.dup(child.stdout.fileno()), "rb")
    write = child.stdin.write
    if not modern:
        write(LEGACY_INIT)
        out.readline()
    line = call_line(1, text, modern)
    write(line)
    json.loads(out.readline())
    startup = time.perf_counter() - start
    rounds = n // in_flight
    # One id per request in flight (the same id twice at once is refused).
    batch = b"".join(call_line(i + 2, text, modern) for i in range(in_flight))
    began = time.perf_counter()
    if in_flight == 1:
        for _ in range(rounds):
            write(line)
            json.loads(out.readline())
    else:
        writer_error: list[BaseException] = []
        for _ in range(rounds):
            # The answers fill the other pipe while the batch goes in: write on a thread.
            def put() -> None:
                try:
                    write(batch)
                except BaseException as exc:  # reported below
                    writer_error.append(exc)
            thread = threading.Thread(target=put)
            thread.start()
            for _ in range(in_flight):
                json.loads(out.readline())
            thread.join()
        if writer_error:
            raise writer_error[0]
    rate = rounds * in_flight / (time.perf_counter() - began)
    child.stdin.close()
    child.wait(30)
    out.close()
    child.stdout.close()
    return startup, rate


def _peak_rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def server_memory(server: list[str], n: int) -> int:
    """Peak RSS (KiB) of a server process after the handshake and ``n`` calls."""
    child = subprocess.Popen([PY, *server], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL)
    assert child.stdin and child.stdout
    init = (b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":'
            b'"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}\n')
    child.stdin.write(init)
    child.stdin.flush()
    child.stdout.readline()
    child.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    call = (b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo",'
            b'"arguments":{"text":"hi"}}}\n')
    for i in range(1, n + 1):
        child.stdin.write(call % i)
        child.stdin.flush()
        child.stdout.readline()
    peak = _peak_rss_kib(child.pid)
    child.stdin.close()
    child.wait(30)
    child.stdout.close()
    return peak


CLIENT_MEMORY = """
import sys
mode, server = sys.argv[1], sys.argv[2:]
if mode == "mcpkit":
    from mcpkit.client import Client
    with Client(sys.executable, server) as client:
        for _ in range(200):
            client.call_tool("echo", {"text": "hi"})
else:
    import asyncio
    from mcp import Client, StdioServerParameters
    async def run():
        async with Client(StdioServerParameters(command=sys.executable, args=server)) as c:
            for _ in range(200):
                await c.call_tool("echo", {"text": "hi"})
    asyncio.run(run())
# VmHWM, not ru_maxrss: ru_maxrss survives exec, so it would report the bench's own size.
print(next(line.split()[1] for line in open("/proc/self/status") if line.startswith("VmHWM:")))
"""


def client_memory(mode: str, server: list[str]) -> int:
    """Peak RSS (KiB) of a fresh client process after 200 calls."""
    out = subprocess.run([PY, "-c", CLIENT_MEMORY, mode, *server], capture_output=True,
                         text=True, check=True).stdout
    return int(out.split()[-1])


def import_time(module: str, runs: int) -> float:
    """Median seconds to import ``module`` in a fresh interpreter (after Python's own start).

    With bytecode caching on, as users have it (a first, discarded run fills the cache even
    where PYTHONDONTWRITEBYTECODE is set for development).
    """
    code = (f"import time; t = time.perf_counter(); import {module}; "
            "print(time.perf_counter() - t)")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    samples = [float(subprocess.run([PY, "-c", code], capture_output=True, text=True,
                                    check=True, env=env).stdout) for _ in range(runs + 1)]
    return statistics.median(samples[1:])


BIG = "x" * 65536

# (workload, client) -> how to run it, and how many calls a round makes.
WORKLOADS = [
    ("sequential 16 B, 2026-07-28", 5000, {
        "raw": lambda m, s, n: bench_raw_client([m], n),
        "mcpkit": lambda m, s, n: bench_mcpkit_client([m], n, era="modern"),
        "SDK": lambda m, s, n: bench_sdk_client([s], n // 5)}),
    ("sequential 16 B, 2025-11-25", 5000, {
        "raw": lambda m, s, n: bench_raw_client([m], n, modern=False),
        "mcpkit": lambda m, s, n: bench_mcpkit_client([m], n, era="legacy"),
        "SDK": lambda m, s, n: bench_sdk_client([s], n // 5)}),
    ("sequential 64 KiB, 2026-07-28", 1000, {
        "raw": lambda m, s, n: bench_raw_client([m], n, BIG),
        "mcpkit": lambda m, s, n: bench_mcpkit_client([m], n, BIG, era="modern"),
        "SDK": lambda m, s, n: bench_sdk_client([s], n // 5, BIG)}),
    ("100 in flight, 2026-07-28", 20000, {
        "raw": lambda m, s, n: bench_raw_client([m], n, in_flight=100),
        "mcpkit": lambda m, s, n: bench_mcpkit_client([m], n, era="modern", in_flight=100),
        "SDK": lambda m, s, n: bench_sdk_client([s], n // 10, in_flight=100)}),
    ("100 in flight, 2025-11-25", 20000, {
        "raw": lambda m, s, n: bench_raw_client([m], n, modern=False, in_flight=100),
        "mcpkit": lambda m, s, n: bench_mcpkit_client([m], n, era="legacy", in_flight=100),
        "SDK": lambda m, s, n: bench_sdk_client([s], n // 10, in_flight=100)}),
]


def run_workloads(mcpkit_server: str, sdk_server: str, rounds: int,
                  scale: float) -> dict[tuple[str, str], list[float]]:
    """Every workload, every client, interleaved round by round: calls per second. The SDK
    (``mcp`` 2.3.0) is the official SDK's client against its own server; raw and mcpkit
    talk to the mcpkit server."""
    rates: dict[tuple[str, str], list[float]] = {}
    for round_ in range(rounds):
        for workload, calls, clients in WORKLOADS:
            for client, run in clients.items():
                _, rate = run(mcpkit_server, sdk_server, max(100, int(calls * scale)))
                rates.setdefault((workload, client), []).append(rate)
                print(f"round {round_ + 1}: {workload:<30} {client:<7} {rate:9.0f} calls/s",
                      file=sys.stderr)
    return rates


def print_workloads(rates: dict[tuple[str, str], list[float]]) -> None:
    print(f"{'workload':<30} {'raw':>9} {'mcpkit':>9} {'SDK':>8} {'mcpkit/raw':>11} "
          f"{'mcpkit/SDK':>11}   (calls/s, medians)")
    for workload, _, _ in WORKLOADS:
        raw, ours, sdk = (statistics.median(rates[(workload, c)]) for c in ("raw", "mcpkit", "SDK"))
        print(f"{workload:<30} {raw:9.0f} {ours:9.0f} {sdk:8.0f} {ours / raw:11.2f} "
              f"{ours / sdk:10.1f}x")


def eras_cpu(server: list[str], rounds: int, calls: int = 30000) -> None:
    """100 calls in flight, mcpkit to mcpkit, per era: calls/s and each side's CPU per call."""
    from bench_http import cpu_seconds  # (this script's folder: the HTTP bench's helper)

    from mcpkit.client import Client

    rows: dict[str, list[tuple[float, float, float]]] = {"2026-07-28": [], "2025-11-25": []}
    params = {"name": "echo", "arguments": {"text": "hi"}}
    for _round in range(rounds):
        for era, found in rows.items():  # interleaved
            with Client(PY, server, version=era) as client:
                def batches(n: int) -> None:
                    for _ in range(n // 100):
                        pending = [client.start_request("tools/call", params)
                                   for _ in range(100)]
                        for request in pending:
                            request.result()
                batches(2000)  # warm up
                pid = client._process.pid
                server0, client0 = cpu_seconds(pid), sum(os.times()[:2])
                began = time.perf_counter()
                batches(calls)
                elapsed = time.perf_counter() - began
                found.append((calls / elapsed, (cpu_seconds(pid) - server0) / calls * 1e6,
                              (sum(os.times()[:2]) - client0) / calls * 1e6))
    print(f"{'era (100 in flight)':<22} {'calls/s':>9} {'server CPU us/call':>19} "
          f"{'client CPU us/call':>19}   (medians of {rounds} rounds)")
    for era, found in rows.items():
        rate, server_cpu, client_cpu = (statistics.median(x[i] for x in found)
                                        for i in range(3))
        print(f"{era:<22} {rate:9.0f} {server_cpu:19.1f} {client_cpu:19.1f}")
    modern, legacy = rows["2026-07-28"], rows["2025-11-25"]
    print("modern / legacy calls/s, median of per-round ratios: "
          f"{statistics.median(m[0] / g[0] for m, g in zip(modern, legacy, strict=True)):.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="fewer calls per round")
    parser.add_argument("--eras-cpu", action="store_true",
                        help="only the two eras with 100 in flight, and each side's CPU")
    options = parser.parse_args()
    scale = 0.2 if options.quick else 1.0
    if options.eras_cpu:
        with tempfile.TemporaryDirectory() as tmp:
            server = Path(tmp, "mcpkit_echo.py")
            server.write_text(MCPKIT_SERVER)
            eras_cpu([str(server)], options.rounds, int(30000 * scale))
        return

    with tempfile.TemporaryDirectory() as tmp:
        mcpkit_server = Path(tmp, "mcpkit_echo.py")
        mcpkit_server.write_text(MCPKIT_SERVER)
        sdk_server = Path(tmp, "sdk_echo.py")
        sdk_server.write_text(SDK_SERVER)
        stub_server = Path(tmp, "stub.py")
        stub_server.write_text(STUB_SERVER)
        configs = {
            "raw pipe (baseline)": lambda n: bench_raw(n),
            "mcpkit -> stub": lambda n: bench_mcpkit_client([str(stub_server)], n),
            "raw -> mcpkit": lambda n: bench_raw_client([str(mcpkit_server)], n),
            "mcpkit -> mcpkit": lambda n: bench_mcpkit_client([str(mcpkit_server)], n),
            "SDK -> SDK": lambda n: bench_sdk_client([str(sdk_server)], n),
            "mcpkit -> SDK": lambda n: bench_mcpkit_client([str(sdk_server)], n),
            "SDK -> mcpkit": lambda n: bench_sdk_client([str(mcpkit_server)], n),
        }
        calls = {"raw pipe (baseline)": 20000, "mcpkit -> stub": 20000, "raw -> mcpkit": 5000,
                 "mcpkit -> mcpkit": 5000,
                 "SDK -> SDK": 500, "mcpkit -> SDK": 1000, "SDK -> mcpkit": 1000}
        rates: dict[str, list[float]] = {name: [] for name in configs}
        startups: dict[str, list[float]] = {name: [] for name in configs}
        baseline = int(subprocess.run(
            [PY, "-c", "print(next(line.split()[1] for line in open('/proc/self/status') "
                       "if line.startswith('VmHWM:')))"],
            capture_output=True, text=True, check=True).stdout)
        memory = {
            "server: mcpkit": server_memory([str(mcpkit_server)], 2000),
            "server: SDK": server_memory([str(sdk_server)], 2000),
            "client: mcpkit": client_memory("mcpkit", [str(mcpkit_server)]),
            "client: SDK": client_memory("sdk", [str(sdk_server)]),
        }
        for round_ in range(options.rounds):
            for name, run in configs.items():  # interleaved: load spikes hit every config
                startup, rate = run(max(50, int(calls[name] * scale)))
                startups[name].append(startup)
                rates[name].append(rate)
                print(f"round {round_ + 1}: {name:<20} {rate:9.0f} rt/s  "
                      f"start-up {startup * 1000:6.0f} ms", file=sys.stderr)

        workloads = run_workloads(str(mcpkit_server), str(sdk_server), options.rounds, scale)

    raw = max(rates["raw pipe (baseline)"])
    sdk = max(rates["SDK -> SDK"])
    print()
    print(f"{'configuration':<20} {'best rt/s':>10} {'median':>10} {'vs raw':>7} "
          f"{'vs SDK':>7} {'start-up':>9}")
    for name in configs:
        best, median = max(rates[name]), statistics.median(rates[name])
        start_ms = statistics.median(startups[name]) * 1000
        print(f"{name:<20} {best:10.0f} {median:10.0f} {best / raw:7.2f} {best / sdk:6.1f}x "
              f"{start_ms:7.0f} ms")
    print()
    print(f"{'peak RSS (MiB)':<36} {'MiB':>6} {'vs SDK':>7}")
    print(f"  {'bare python (baseline)':<34} {baseline / 1024:6.1f}")
    for name, kib in memory.items():
        peer = memory[name.split(":")[0] + ": SDK"]
        print(f"  {name:<34} {kib / 1024:6.1f} {kib / peer:7.2f}")
    print()
    print_workloads(workloads)
    print()
    runs = 3 if options.quick else 7
    print(f"{'import (fresh interpreter, median)':<36} {'ms':>6}")
    for module in ("mcpkit", "mcpkit.client", "mcpkit.host", "mcp"):
        print(f"  import {module:<28} {import_time(module, runs) * 1000:6.0f}")


if __name__ == "__main__":
    main()
