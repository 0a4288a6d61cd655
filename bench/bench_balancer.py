"""Requests per second through a real HAProxy in front of 1, 2 and 4 mcpkit HTTP server
processes (round robin; 2026-07-28 stateless requests, so any backend answers any request).

    python bench/bench_balancer.py [--requests 4000] [--clients 8] [--rounds 3]

The same cheap client as bench_http.py, several loops at once. On a machine with few cores
the backends, HAProxy and the client share them, which caps what more backends can add.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "tests")]

from balancer import Balanced  # noqa: E402
from bench_http import MCPKIT_SERVER, RawHttp, call_body, session_headers  # noqa: E402


def run(port: int, requests: int, clients: int) -> float:
    body = call_body(1, modern=True)
    headers = session_headers(port, modern=True)
    conns = [RawHttp(port) for _ in range(clients)]
    for conn in conns:
        assert conn.post(body, headers)[0] == 200
    per_client = requests // clients

    def loop(conn: RawHttp) -> None:
        for _ in range(per_client):
            status, _, payload = conn.post(body, headers)
            assert status == 200, payload[:200]

    threads = [threading.Thread(target=loop, args=(conn,)) for conn in conns]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started
    for conn in conns:
        conn.close()
    return per_client * clients / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=4000)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        server = Path(folder) / "bench_server.py"
        server.write_text(MCPKIT_SERVER)
        rows = []
        for backends in (1, 2, 4):
            with Balanced(f"{server}:server", backends=backends) as lb:
                rates = [run(lb.port, args.requests, args.clients) for _ in range(args.rounds)]
            rows.append((backends, rates))
    base = statistics.median(rows[0][1])
    print(f"HAProxy round robin, {args.clients} client loops, echo tool, 2026-07-28, "
          f"medians of {args.rounds} rounds (min-max)\n")
    print("| backends | req/s | vs 1 backend |")
    print("| ---: | ---: | ---: |")
    for backends, rates in rows:
        med = statistics.median(rates)
        print(f"| {backends} | {med:,.0f} ({min(rates):,.0f}-{max(rates):,.0f}) | "
              f"{med / base:.2f}x |")


if __name__ == "__main__":
    main()
