"""A streamable HTTP server (2026-07-28, JSON answers) that misbehaves on request.

Stdlib only. Binds 127.0.0.1 on a free port, prints ``PORT <n>`` on stdout, and serves
until its stdin ends. Tools: ``echo``, ``bad_answer`` (``how``: v1, no_version), ``huge``
(``size`` bytes of text).
"""

from __future__ import annotations

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODERN = "2026-07-28"


def answer(message: dict[str, Any]) -> dict[str, Any]:
    request_id, method = message["id"], message["method"]
    params = message.get("params") or {}
    if method == "server/discover":
        result: dict[str, Any] = {"supportedVersions": [MODERN], "capabilities": {"tools": {}},
                                  "ttlMs": 0, "cacheScope": "private"}
    elif method == "tools/list":
        result = {"tools": [{"name": n, "inputSchema": {"type": "object"}}
                            for n in ("echo", "bad_answer", "huge")]}
    elif method == "tools/call":
        args = params.get("arguments") or {}
        name = params.get("name")
        text = "x" * int(args.get("size", 0)) if name == "huge" else str(args.get("text", ""))
        result = {"content": [{"type": "text", "text": text}]}
        if name == "bad_answer":
            reply: dict[str, Any] = {"jsonrpc": "1.0", "id": request_id, "result": result}
            if args.get("how") == "no_version":
                del reply["jsonrpc"]
            return reply
    else:
        return {"jsonrpc": "2.0", "id": request_id,
                "error": {"code": -32601, "message": f"Method not found: {method}"}}
    return {"jsonrpc": "2.0", "id": request_id, "result": {**result, "resultType": "complete"}}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("content-length", 0)))
        message = json.loads(body)
        if "id" not in message or "method" not in message:
            self.send_response(202)
            self.send_header("content-length", "0")
            self.end_headers()
            return
        data = json.dumps(answer(message)).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass  # quiet


def main() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(f"PORT {server.server_address[1]}", flush=True)
    sys.stdin.read()  # until the test closes our stdin
    server.shutdown()
    server.server_close()


if __name__ == "__main__":
    main()
