"""A legacy server whose "ask" tool sends the client a request (sampling, elicitation,
roots, ping, or anything) and returns the client's raw response as JSON text."""

import json
import sys

import rawlib


def ask(arguments):
    request = {"jsonrpc": "2.0", "id": "from-server-1", "method": arguments["text"],
               "params": arguments.get("params") or {}}
    sys.stdout.buffer.write(json.dumps(request).encode() + b"\n")
    sys.stdout.buffer.flush()
    for line in sys.stdin.buffer:
        message = json.loads(line)
        if message.get("id") == "from-server-1" and "method" not in message:
            return json.dumps(message)
    return "stdin closed"


if __name__ == "__main__":
    rawlib.serve({"ask": ask}, name="asks", discover="error")
