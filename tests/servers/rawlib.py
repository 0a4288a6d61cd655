"""A deliberately tiny MCP server loop, stdlib only, for fault-injection test servers.

It answers just enough of both eras (server/discover, initialize, tools/list, tools/call)
and lets each script misbehave in its own way: junk on stdout, silence, exiting. It
starts in a few tens of milliseconds, which keeps the many-server tests fast.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

MODERN = "2026-07-28"
LEGACY = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")

Tool = Callable[[dict[str, Any]], str]


def tool_def(name: str) -> dict[str, Any]:
    return {"name": name, "description": f"The {name} tool.",
            "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}}


def serve(
    tools: dict[str, Tool],
    *,
    name: str = "raw",
    discover: str = "ok",  # "ok", "error" (a legacy server: -32601) or "silent"
    ignore: frozenset[str] = frozenset(),  # methods never answered
    before_write: Callable[[dict[str, Any]], None] | None = None,
    log_received: bool = False,
) -> None:
    out = sys.stdout.buffer
    initialized = False

    def send(message: dict[str, Any]) -> None:
        if before_write is not None:
            before_write(message)
        out.write(json.dumps(message).encode() + b"\n")
        out.flush()

    for line in sys.stdin.buffer:
        if log_received:
            sys.stderr.write("RECEIVED " + line.decode().strip() + "\n")
            sys.stderr.flush()
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if "id" not in message or "method" not in message:
            continue  # notifications and responses
        method, params, request_id = message["method"], message.get("params") or {}, message["id"]
        if method in ignore:
            continue
        modern = "io.modelcontextprotocol/protocolVersion" in (params.get("_meta") or {})

        def result(value: dict[str, Any], request_id: Any = request_id,
                   modern: bool = modern) -> None:
            if modern:
                value = {**value, "resultType": "complete"}
            send({"jsonrpc": "2.0", "id": request_id, "result": value})

        def error(code: int, text: str, request_id: Any = request_id) -> None:
            send({"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": text}})

        if method == "server/discover":
            if discover == "silent":
                continue
            if discover == "error":
                error(-32601, "Method not found")
                continue
            result({"supportedVersions": [MODERN, *LEGACY[::-1]],
                    "capabilities": {"tools": {}}, "ttlMs": 0, "cacheScope": "public",
                    "_meta": {"io.modelcontextprotocol/serverInfo": {"name": name,
                                                                     "version": "1"}}})
        elif method == "initialize":
            initialized = True
            asked = params.get("protocolVersion")
            result({"protocolVersion": asked if asked in LEGACY else LEGACY[-1],
                    "capabilities": {"tools": {}}, "serverInfo": {"name": name, "version": "1"}})
        elif not modern and not initialized and method != "ping":
            error(-32602, "not initialized")
        elif method == "ping":
            result({})
        elif method == "tools/list":
            result({"tools": [tool_def(t) for t in tools]})
        elif method == "tools/call":
            fn = tools.get(params.get("name"))
            if fn is None:
                error(-32602, f"Unknown tool: {params.get('name')}")
            else:
                text = fn(params.get("arguments") or {})
                result({"content": [{"type": "text", "text": text}]})
        else:
            error(-32601, f"Method not found: {method}")


def echo(arguments: dict[str, Any]) -> str:
    return str(arguments.get("text", ""))
