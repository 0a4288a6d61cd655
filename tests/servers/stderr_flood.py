"""Writes 10 MB to stderr before serving, and again inside the "flood" tool."""

import sys

import rawlib

LINE = "x" * 99 + "\n"  # 100 bytes


def flood(arguments):
    for _ in range(100_000):  # 10 MB
        sys.stderr.write(LINE)
    sys.stderr.write("END OF FLOOD\n")
    sys.stderr.flush()
    return "flooded"


if __name__ == "__main__":
    flood({})
    rawlib.serve({"echo": rawlib.echo, "flood": flood}, name="flood")
