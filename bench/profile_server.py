"""A whole HTTP server's instructions per request, counted under valgrind: uvicorn, the
protocol, the event loop and the app together (user space only: the kernel's share of a
request, the system calls, is not counted).

    python bench/profile_server.py [--requests 3000]

Rows (each server its own process, as ``bench_wrk.py`` serves them):

  floor                     bench/floor.py on uvicorn's own httptools protocol
  floor, mcpkit's protocol  the same app on the protocol ``mcpkit serve --http`` uses
  mcpkit legacy             a 2025-11-25 session's ``tools/call`` of ``echo``
  mcpkit modern             the same call as a 2026-07-28 request

One client sends the requests one after another on one keep-alive connection (so no
batching: a request is never in progress beside another). Each row is run twice under
callgrind, with 500 requests and with 500 + ``--requests``; the difference per request
leaves start-up and shutdown out. Counts do not move with the machine's load (they vary by
about 1% from run to run), which is what makes them worth having beside ``bench_wrk.py``'s
timings. valgrind is installed with apt-get when it is missing (as root).
"""

from __future__ import annotations

import argparse
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_http import MCPKIT_SERVER, PY, RawHttp, call_body, free_port, session_headers  # noqa: E402
from profile_http import ensure_valgrind  # noqa: E402

FLOOR = Path(__file__).resolve().parent / "floor.py"
WARM_UP = 500


def command(row: str, port: int, folder: Path) -> list[str]:
    if row.startswith("floor"):
        extra = ["--mcpkit-protocol"] if "mcpkit" in row else []
        return [PY, str(FLOOR), str(port), *extra]
    script = folder / "bench_server.py"
    script.write_text(MCPKIT_SERVER)
    return [PY, "-m", "mcpkit", "serve", str(script), "--http", "--port", str(port),
            "--log-level", "warning"]


def collected(row: str, requests: int, folder: Path) -> int:
    """Instructions callgrind counted in a server that answered ``requests`` calls."""
    port = free_port()
    proc = subprocess.Popen(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
         *command(row, port, folder)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 300  # a Python start-up under valgrind is slow
        while True:
            try:
                client = RawHttp(port)
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError(f"{row}: the server did not start") from None
                time.sleep(0.5)
        modern = row != "mcpkit legacy"
        client.close()
        headers = session_headers(port, modern, False)
        client = RawHttp(port)
        for n in range(requests):
            status, _, body = client.post(call_body(n + 2, modern, False), headers)
            if status != 200 or b"0123456789abcdef" not in body:
                raise RuntimeError(f"{row}: a bad reply: {status} {body[:200]!r}")
        client.close()
        proc.send_signal(signal.SIGINT)  # uvicorn stops cleanly; callgrind then reports
        _, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=30)
    found = re.search(r"Collected : (\d+)", err)
    if found is None:
        raise RuntimeError(f"{row}: callgrind reported no count:\n{err[-2000:]}")
    return int(found.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=3000)
    args = parser.parse_args()
    ensure_valgrind()
    rows = ("floor", "floor, mcpkit's protocol", "mcpkit legacy", "mcpkit modern")
    counts = {}
    with tempfile.TemporaryDirectory() as tmp:
        for row in rows:
            short = collected(row, WARM_UP, Path(tmp))
            long = collected(row, WARM_UP + args.requests, Path(tmp))
            counts[row] = (long - short) // args.requests
    floor = counts["floor"]
    print("\n| server | instructions per request | vs floor |")
    print("| --- | ---: | ---: |")
    for row in rows:
        print(f"| {row} | {counts[row]:,} | {counts[row] / floor:.2f} |")


if __name__ == "__main__":
    main()
