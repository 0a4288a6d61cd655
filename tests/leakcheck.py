"""Leak checks shared by the client and host tests: after each test, no extra thread, no
child process (zombies count) and no extra open file descriptor may be left."""

from __future__ import annotations

import os
import threading
import time

import pytest

from mcpkit.grading.core import child_processes as children

GRACE = 15.0  # seconds for a test's threads, children and descriptors to be gone


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def fd_targets() -> dict[str, str]:
    """What each open descriptor is (a pipe, a socket, an event fd...), for the message."""
    targets = {}
    for fd in os.listdir("/proc/self/fd"):
        try:
            targets[fd] = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:  # closed meanwhile, or the listing's own descriptor
            pass
    return targets


@pytest.fixture(autouse=True)
def no_leaks():
    threads, kids, fds = set(threading.enumerate()), children(), open_fds()
    before = fd_targets()
    yield
    # A bound, not a timing: a child that was told to exit may need seconds to be gone on a
    # loaded machine (a 1 s grace failed 85 client and host tests at load 15-20); a clean
    # test leaves the loop at once, and only a real leak waits the whole bound.
    deadline = time.monotonic() + GRACE
    while time.monotonic() < deadline:
        extra_threads = set(threading.enumerate()) - threads
        extra_kids = children() - kids
        if not extra_threads and not extra_kids and open_fds() <= fds:
            break
        time.sleep(0.02)
    assert not extra_threads, f"threads left running: {extra_threads}"
    assert not extra_kids, f"child processes left (zombies count): {extra_kids}"
    new = {fd: what for fd, what in fd_targets().items() if before.get(fd) != what}
    assert open_fds() <= fds, f"file descriptors left open: {new}"
