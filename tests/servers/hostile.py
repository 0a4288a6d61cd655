"""A legacy stdio server that misbehaves on request: each tool is one way to break the rules.

Stdlib only, one thread, raw bytes on stdout, so that nothing in mcpkit can tidy up after
it. It refuses ``server/discover`` (a legacy server: the client falls back at once) and
announces ``tools.listChanged``, so the client keeps its tool list cached.

Tools (``tools/call`` name):
  echo        answers ``text`` back, as a good server would
  stats       how many ``tools/list`` requests arrived so far
  wrong_id    answers with ids that were never sent (a bigger int, then a string)
  twice       answers "first"; answers again ("second", same id) just before it answers
              the next request, so that the duplicate arrives while another call waits
  garbage     writes junk lines of every kind, then the right answer
  bad_answer  answers with a message that is not JSON-RPC 2.0 (``how``: v1, no_version,
              both, result_not_object)
  huge        answers with ``size`` bytes of text; ``id_last`` puts the id after the result
  huge_log    a log notification of ``size`` bytes first, then the right answer
  flood       ``count`` tools/list_changed notifications, a log "flood done", the answer
  stop_reading  answers, then reads nothing for ``seconds``
  ask_and_stop  answers, then sends the client a ``ping`` whose answer (it echoes a
              200 KB id) cannot fit in the pipe, and reads nothing for a minute
  die         exits mid-call (exit code 3), after a line on stderr

``--ignore-term`` ignores SIGTERM.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from typing import Any

out = sys.stdout.buffer
tools_listed = 0
duplicates: list[dict[str, Any]] = []  # answers to send again before the next one


def write(data: bytes) -> None:
    out.write(data)
    out.flush()


def send(message: dict[str, Any]) -> None:
    write(json.dumps(message).encode() + b"\n")


def text_result(request_id: Any, text: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id,
            "result": {"content": [{"type": "text", "text": text}]}}


def call(request_id: Any, name: str, args: dict[str, Any]) -> None:
    if name == "echo":
        send(text_result(request_id, str(args.get("text", ""))))
    elif name == "stats":
        send(text_result(request_id, str(tools_listed)))
    elif name == "wrong_id":
        send(text_result(request_id + 1000, "not yours"))
        send(text_result(str(request_id), "not yours either"))
    elif name == "twice":
        send(text_result(request_id, "first"))
        duplicates.append(text_result(request_id, "second"))
    elif name == "garbage":
        for junk in (b"not json at all", b"[1, 2, 3]", b"42", b'"a string"', b"\xff\xfe\xfd",
                     b'{"no": "envelope"}', b'{"jsonrpc": "2.0"}', b"{truncated",
                     b'{"jsonrpc": "2.0", "id": null, "error": {"code": -32700, '
                     b'"message": "Parse error"}}', b"   ", b"x" * 100_000):
            write(junk + b"\n")
        send(text_result(request_id, "after the garbage"))
    elif name == "bad_answer":
        answer = text_result(request_id, "settled by a bad answer")
        how = args.get("how")
        if how == "v1":
            answer["jsonrpc"] = "1.0"
        elif how == "no_version":
            del answer["jsonrpc"]
        elif how == "both":
            answer["error"] = {"code": 1, "message": "and an error"}
        elif how == "result_not_object":
            answer["result"] = 5
        send(answer)
    elif name == "huge":
        body = text_result(request_id, "x" * int(args.get("size", 100_000)))
        if args.get("id_last"):
            body = {"jsonrpc": "2.0", "result": body["result"], "id": request_id}
        send(body)
    elif name == "huge_log":
        send({"jsonrpc": "2.0", "method": "notifications/message",
              "params": {"level": "info", "data": "x" * int(args.get("size", 100_000))}})
        send(text_result(request_id, "after the big log"))
    elif name == "flood":
        line = json.dumps({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        write((line + "\n").encode() * int(args.get("count", 1000)))
        send({"jsonrpc": "2.0", "method": "notifications/message",
              "params": {"level": "info", "data": "flood done"}})
        send(text_result(request_id, "flooded"))
    elif name == "stop_reading":
        send(text_result(request_id, "not reading any more"))
        time.sleep(float(args.get("seconds", 60)))
    elif name == "ask_and_stop":
        send(text_result(request_id, "asking"))
        # The answer echoes the id: 200 KB, more than the pipe holds, and nobody reads it.
        send({"jsonrpc": "2.0", "id": "s" * 200_000, "method": "ping"})
        time.sleep(60)
    elif name == "die":
        sys.stderr.write("dying in the middle of a call\n")
        sys.stderr.flush()
        os._exit(3)
    else:
        send({"jsonrpc": "2.0", "id": request_id,
              "error": {"code": -32602, "message": f"Unknown tool: {name}"}})


TOOLS = ["echo", "stats", "wrong_id", "twice", "garbage", "bad_answer", "huge", "huge_log",
         "flood", "stop_reading", "ask_and_stop", "die"]


def main() -> None:
    global tools_listed
    if "--ignore-term" in sys.argv:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    for line in sys.stdin.buffer:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if not isinstance(message, dict) or "id" not in message or "method" not in message:
            continue  # notifications and the client's answers
        request_id, method = message["id"], message["method"]
        params = message.get("params") or {}
        while duplicates:
            send(duplicates.pop())
        if method == "initialize":
            send({"jsonrpc": "2.0", "id": request_id, "result": {
                "protocolVersion": params.get("protocolVersion", "2025-11-25"),
                "capabilities": {"tools": {"listChanged": True}},
                "serverInfo": {"name": "hostile", "version": "1"}}})
        elif method == "ping":
            send({"jsonrpc": "2.0", "id": request_id, "result": {}})
        elif method == "tools/list":
            tools_listed += 1
            send({"jsonrpc": "2.0", "id": request_id, "result": {"tools": [
                {"name": name, "inputSchema": {"type": "object"}} for name in TOOLS]}})
        elif method == "tools/call":
            call(request_id, params.get("name"), params.get("arguments") or {})
        else:  # server/discover included: this is a legacy server
            send({"jsonrpc": "2.0", "id": request_id,
                  "error": {"code": -32601, "message": f"Method not found: {method}"}})


if __name__ == "__main__":
    main()
