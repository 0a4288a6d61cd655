"""Lab 06's test server: the smallest peer a supervisor can start, ping and kill.

Run as a plain script (``python -I lab06_server.py [LOG]``): standard library only, so it
starts in a few tens of milliseconds. It reads newline-delimited JSON on standard input and
answers every request with ``{"pid": <its process id>}`` (whatever the method), so a
supervisor can tell one run of it from the next. End of input ends it.

With a ``LOG`` path it first appends its process id to that file, one line per start: the
checks read it to know which servers really started. With ``--refuse`` (before ``LOG``) it
stays up but answers every request with a JSON-RPC error, as a server that is not ready does.
"""

import json
import os
import sys


def main():
    args = sys.argv[1:]
    refuse = args[:1] == ["--refuse"]
    args = args[1:] if refuse else args
    if args:
        with open(args[0], "a", encoding="utf-8") as log:
            log.write(f"{os.getpid()}\n")
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if isinstance(message, dict) and "id" in message and "method" in message:
            answer = {"jsonrpc": "2.0", "id": message["id"], "result": {"pid": os.getpid()}}
            if refuse:
                answer = {"jsonrpc": "2.0", "id": message["id"],
                          "error": {"code": -32002, "message": "not ready"}}
            out.write(json.dumps(answer).encode() + b"\n")
            out.flush()


if __name__ == "__main__":
    main()
