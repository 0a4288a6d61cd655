"""Streamable HTTP under a C load generator: mcpkit, the official SDK and a bare ASGI floor,
side by side in one run, both eras, every reply checked.

    python bench/bench_wrk.py [--rounds 3] [--seconds 5] [--connections 1,16]
                              [--answers json,sse]

The load comes from ``wrk`` (Debian's; installed with apt-get by this script when it is
missing and it runs as root): one thread, N keep-alive connections, each sending the same
``tools/call`` of an ``echo`` tool and waiting for its answer. A Lua ``response`` hook checks
every reply (status 200, the echoed text in the body, and for SSE answers the progress
event); a round with one bad reply fails the run. wrk's own thread is C: on two cores it
leaves the server more of the machine than a Python client would.

Rows:

  floor           a bare ASGI app on the same stack (uvicorn with httptools and uvloop): the
                  body read and json-decoded, a JSON-RPC result with the text written. No MCP.
  floor, mcpkit's protocol
                  the same app on the uvicorn protocol mcpkit serves with (its deadlines, its
                  writes batched while other requests are in progress): what that protocol
                  alone is worth. Ratios "vs floor" are against the first floor row.
  mcpkit legacy   a 2025-11-25 session (initialize first, then Mcp-Session-Id on each call)
  mcpkit modern   2026-07-28 stateless requests (``_meta`` and the mirrored headers)
  SDK legacy      the SDK's MCPServer (``mcp`` 2.3.0), streamable HTTP, a 2025-11-25 session
  SDK modern      the same server, 2026-07-28 requests

``--answers sse`` calls ``echo_progress`` with a ``progressToken``: the tool reports progress
once, so the answer is an SSE stream (a progress event, then the result); the floor has no
SSE row. Server CPU is the server process's user+system time over the round, per request.
Rounds are interleaved across rows; the tables give medians (min-max) and ratios computed
per round. The load average before and after the run is printed with the tables.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_http import (  # noqa: E402  (the servers and headers the Python client uses)
    ECHO,
    call_body,
    cpu_seconds,
    free_port,
    launch,
    session_headers,
    start,
    stop,
)

PY = sys.executable

FLOOR = Path(__file__).resolve().parent / "floor.py"  # the bare ASGI app

# Every reply checked: status, the echoed text, and for SSE the progress event before it.
LUA = r'''
wrk.method = "POST"
wrk.headers = {headers}
local threads = {{}}
local before, after = {before}, {after}
local counter = 0
function setup(thread) table.insert(threads, thread) end
function init(args) bad = 0; first = nil end
-- A new JSON-RPC id for every request: a session refuses an id already in flight.
function request()
  counter = counter + 1
  return wrk.format(nil, nil, nil, before .. counter .. after)
end
function response(status, headers, body)
  local ok = status == 200 and string.find(body, {echo}, 1, true) ~= nil
  if ok and {sse} then ok = string.find(body, "notifications/progress", 1, true) ~= nil end
  if not ok then
    bad = bad + 1
    if first == nil then first = status .. " " .. string.sub(body, 1, 200) end
  end
end
function done(summary, latency, requests)
  local total_bad, example = 0, ""
  for _, t in ipairs(threads) do
    total_bad = total_bad + t:get("bad")
    if t:get("first") ~= nil then example = t:get("first") end
  end
  io.write(string.format("RESULT %d %d %d %d %q\n", summary.requests, summary.duration,
    total_bad, summary.errors.connect + summary.errors.read + summary.errors.write
    + summary.errors.status + summary.errors.timeout, example))
end
'''


def lua_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def wrk_binary() -> str:
    found = shutil.which("wrk")
    if found:
        return found
    if os.geteuid() == 0:
        subprocess.run("apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install "
                       "-y -qq wrk", shell=True, check=True, stdout=subprocess.DEVNULL)
        found = shutil.which("wrk")
    if not found:
        raise SystemExit("wrk is not installed: apt-get install wrk")
    return found


def servers(folder: Path, answers: list[str]) -> dict[str, tuple[subprocess.Popen, int]]:
    """The floor, mcpkit (which answers JSON or SSE per request) and the SDK per answer kind."""
    port = free_port()
    batched = free_port()
    started = {"floor": (launch([PY, str(FLOOR), str(port)], port, "floor"), port),
               "floor-batched": (launch([PY, str(FLOOR), str(batched), "--mcpkit-protocol"],
                                        batched, "floor, mcpkit's protocol"), batched),
               "mcpkit": start("mcpkit", folder, "json")}
    for kind in answers:
        started[f"sdk-{kind}"] = start("sdk", folder, kind)
    return started


def run_wrk(wrk: str, folder: Path, port: int, pid: int, body: bytes, headers: dict[str, str],
            sse: bool, connections: int, seconds: int) -> tuple[float, float, int]:
    """Requests per second, server CPU µs per request, and the replies that failed a check
    (mcpkit's and the floor's must be none: the caller fails the run; the SDK's are shown)."""
    script = folder / "check.lua"
    before, marker, after = body.decode().partition('"id":1,')
    assert marker, body
    script.write_text(LUA.format(
        before=lua_string(before + '"id":'), after=lua_string("," + after),
        echo=lua_string(ECHO), sse="true" if sse else "false",
        headers="{" + ", ".join(f"[{lua_string(k)}] = {lua_string(v)}"
                                for k, v in headers.items()) + "}"))
    cpu0 = cpu_seconds(pid)
    done = subprocess.run([wrk, "-t1", f"-c{connections}", f"-d{seconds}s", "--timeout", "10s",
                           "-s", str(script), f"http://127.0.0.1:{port}/mcp"],
                          capture_output=True, text=True, timeout=seconds + 60)
    cpu = cpu_seconds(pid) - cpu0
    m = re.search(r"^RESULT (\d+) (\d+) (\d+) (\d+) (.*)$", done.stdout, re.M)
    if done.returncode != 0 or m is None:
        raise RuntimeError(f"wrk failed: {done.stdout}\n{done.stderr}")
    requests, micros, bad, errors = (int(m.group(i)) for i in range(1, 5))
    if requests == 0:
        raise RuntimeError(f"no request answered: {m.group(5)}")
    if bad or errors:
        print(f"port {port}: {bad} bad replies, {errors} socket errors of {requests}: "
              f"{m.group(5)}", file=sys.stderr)
    return requests / (micros / 1e6), cpu / requests * 1e6, max(bad, errors)


def ratio(mine: list[tuple[float, float, int]], other: list[tuple[float, float, int]]) -> float:
    """The median of the per-round ratios of requests per second."""
    return statistics.median(a[0] / b[0] for a, b in zip(mine, other, strict=True))


def load_average() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--connections", default="1,16")
    parser.add_argument("--answers", default="json,sse")
    args = parser.parse_args()
    wrk = wrk_binary()
    connections = [int(c) for c in args.connections.split(",")]
    answer_kinds = args.answers.split(",")
    before = load_average()
    rows: dict[tuple[str, str, int], list[tuple[float, float, int]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        running = servers(folder, answer_kinds)
        try:
            for _ in range(args.rounds):
                for answers in answer_kinds:
                    sse = answers == "sse"
                    for n in connections:
                        plan = [("floor", "floor", False), ("floor", "batched", False)] \
                            if not sse else []
                        plan += [(kind, era, era == "modern") for kind in ("mcpkit", "sdk")
                                 for era in ("legacy", "modern")]
                        for kind, era, modern in plan:
                            key = ("floor-batched" if era == "batched" else "floor") \
                                if kind == "floor" else (
                                "mcpkit" if kind == "mcpkit" else f"sdk-{answers}")
                            proc, port = running[key]
                            headers = (session_headers(port, modern, sse) if kind != "floor"
                                       else {"content-type": "application/json"})
                            body = call_body(1, modern or kind == "floor", sse)
                            result = run_wrk(wrk, folder, port, proc.pid, body, headers,
                                             sse, n, args.seconds)
                            if result[2] and kind != "sdk":
                                raise SystemExit(f"{kind} {era}: {result[2]} replies failed "
                                                 "their check")
                            rows.setdefault((answers, f"{kind} {era}", n), []).append(result)
        finally:
            stop(proc for proc, _ in running.values())
    after = load_average()
    print(f"wrk (1 thread), {args.seconds} s per round, {args.rounds} rounds, medians "
          f"(min-max); load average before {before}, after {after}\n")
    print("| answer | conns | row | req/s | vs floor | vs SDK (same era) | server CPU µs/req "
          "| failed replies |")
    print("| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: |")

    def fmt(values: list[float], digits: int = 0) -> str:
        return (f"{statistics.median(values):,.{digits}f} ({min(values):,.{digits}f}-"
                f"{max(values):,.{digits}f})")

    for answers in answer_kinds:
        for n in connections:
            floor = rows.get((answers, "floor floor", n))
            for name in ("floor floor", "floor batched", "mcpkit legacy", "mcpkit modern",
                         "sdk legacy", "sdk modern"):
                mine = rows.get((answers, name, n))
                if mine is None:
                    continue
                vs_floor = f"{ratio(mine, floor):.2f}" if floor else "-"
                sdk = rows.get((answers, f"sdk {name.split()[1]}", n))
                vs_sdk = (f"{ratio(mine, sdk):.1f}x"
                          if sdk and not name.startswith(("sdk", "floor")) else "-")
                label = {"floor floor": "floor",
                         "floor batched": "floor, mcpkit's protocol"}.get(name, name)
                print(f"| {answers.upper()} | {n} | {label} | "
                      f"{fmt([r[0] for r in mine])} | {vs_floor} | {vs_sdk} | "
                      f"{fmt([r[1] for r in mine])} | {sum(r[2] for r in mine)} |")


if __name__ == "__main__":
    main()
