"""One Host starting many servers: wall time to all ready, memory, a call to each; next to
the same number of bare interpreters (spawned and answering one line each) in the same run.

    python bench/bench_host.py [--servers 100] [--rounds 2]

The servers are mcpkit's notes example over stdio; the host starts them all at once.
Memory is the sum of the servers' resident sets (VmRSS) once all are ready.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

from mcpkit import Host

NOTES = [sys.executable, "-m", "mcpkit", "serve", "mcpkit.examples.notes:server"]
BARE = [sys.executable, "-c", "import sys; sys.stdout.write(sys.stdin.readline())"]


def rss_kib(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def bare(n: int) -> float:
    started = time.perf_counter()
    procs = [subprocess.Popen(BARE, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
             for _ in range(n)]
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write(b"ping\n")
        proc.stdin.flush()
    for proc in procs:
        assert proc.stdout is not None and proc.stdout.readline() == b"ping\n"
    elapsed = time.perf_counter() - started
    for proc in procs:
        proc.wait(10)
    return elapsed


def host(n: int) -> tuple[float, float, float]:
    config = {"mcpServers": {f"notes{i}": {"command": NOTES[0], "args": NOTES[1:]}
                             for i in range(n)}}
    started = time.perf_counter()
    with Host(config, naming="prefix", ready_timeout=120) as running:
        assert running.wait_ready(timeout=120)
        ready = time.perf_counter() - started
        memory = sum(rss_kib(s.pid) for s in running.status().values() if s.pid) / 1024
        started = time.perf_counter()
        for i in range(n):
            running.call_tool(f"notes{i}__notes_list")
        calls = time.perf_counter() - started
    return ready, memory, calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--servers", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    bares, hosts = [], []
    for _ in range(args.rounds):
        bares.append(bare(args.servers))
        hosts.append(host(args.servers))
    ready = statistics.median(h[0] for h in hosts)
    base = statistics.median(bares)
    print(f"{args.servers} servers, medians of {args.rounds} rounds\n")
    print("| measure | value |")
    print("| --- | ---: |")
    print(f"| {args.servers} bare interpreters, spawned and answering | {base:.2f} s |")
    print(f"| Host with {args.servers} notes servers, all ready | {ready:.2f} s "
          f"({ready / base:.1f}x bare) |")
    print(f"| their memory (sum of VmRSS) | {statistics.median(h[1] for h in hosts):,.0f} MiB |")
    print(f"| one call to each, in turn | {statistics.median(h[2] for h in hosts):.2f} s |")


if __name__ == "__main__":
    main()
