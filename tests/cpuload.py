"""Keep every core busy while something runs: the loaded machine CI meets on a shared box.

    with cpu_load():            # one busy-loop process per core, killed (by pid) on exit
        ...

    python tests/cpuload.py COMMAND ...   # run COMMAND with every core busy; its exit code

Each busy loop is a child process at normal priority that also ends by itself when its
time limit passes or its parent is gone, so a test killed mid-way leaves no spinning orphan.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

#: The busy loop: spin until the limit passes or the parent (the test process) is gone.
_SPIN = """
import os, sys, time
parent, end = int(sys.argv[1]), time.monotonic() + float(sys.argv[2])
n = 0
while True:
    n += 1
    if n % 200000 == 0 and (time.monotonic() > end or os.getppid() != parent):
        break
"""


@contextmanager
def cpu_load(processes: int | None = None, limit: float = 1800.0) -> Iterator[list[int]]:
    """Run ``processes`` busy loops (default: one per core) for the ``with`` block; their pids.

    ``limit`` (seconds) is how long a loop spins at most if nobody stops it."""
    count = processes or os.cpu_count() or 1
    spinners = [subprocess.Popen([sys.executable, "-c", _SPIN, str(os.getpid()), str(limit)],
                                 stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
                for _ in range(count)]
    try:
        yield [spinner.pid for spinner in spinners]
    finally:
        for spinner in spinners:
            spinner.kill()
        for spinner in spinners:
            spinner.wait(10)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: python tests/cpuload.py COMMAND [ARGS...]")
    with cpu_load():
        sys.exit(subprocess.call(sys.argv[1:]))
