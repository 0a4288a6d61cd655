"""Completes the handshake, then never answers tools/call; logs what it receives to stderr.

With --silent it answers nothing at all, not even the handshake.
"""

import sys

import rawlib

if __name__ == "__main__":
    if "--silent" in sys.argv:
        for _line in sys.stdin.buffer:
            pass
    else:
        rawlib.serve({"echo": rawlib.echo, "hang": rawlib.echo}, name="hang",
                     ignore=frozenset({"tools/call"}), log_received=True)
