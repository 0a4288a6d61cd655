"""Prints junk to stdout between protocol messages (which the spec forbids)."""

import sys

import rawlib

JUNK = [
    b"Starting server... done\n",  # not JSON
    b"\n",  # blank
    b"42\n",  # JSON, not JSON-RPC
    b'{"hello": "world"}\n',  # an object, not JSON-RPC
    b'{"jsonrpc": "2.0", "id": 999999, "result": {}}\n',  # a response to nobody
    b"\xff\xfe not utf-8\n",
]
count = 0


def junk(message):
    global count
    sys.stdout.buffer.write(JUNK[count % len(JUNK)])
    count += 1


if __name__ == "__main__":
    rawlib.serve({"echo": rawlib.echo}, name="junk", before_write=junk)
