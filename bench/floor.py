"""The floor of the HTTP benchmarks: a bare ASGI app on mcpkit's uvicorn stack (httptools,
uvloop, no access log) that reads the body, ``json.loads`` it and writes a JSON-RPC result
carrying the text. No MCP: what Python and uvicorn cost anyway.

    python bench/floor.py PORT [--mcpkit-protocol]

``bench_wrk.py`` serves it; ``profile_http.py`` calls ``app`` in a loop. With
``--mcpkit-protocol`` it runs on the uvicorn protocol mcpkit serves with (its deadlines, and
its writes batched under load): what that protocol gives an app that does no MCP at all.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Awaitable, Callable
from typing import Any


async def app(scope: dict[str, Any], receive: Callable[[], Awaitable[dict[str, Any]]],
              send: Callable[[dict[str, Any]], Awaitable[None]]) -> None:
    if scope["type"] != "http":
        return
    body = b""
    while True:
        event = await receive()
        body += event.get("body", b"")
        if not event.get("more_body"):
            break
    message = json.loads(body)
    text = message["params"]["arguments"]["text"]
    answer = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": {
        "content": [{"type": "text", "text": text}], "isError": False}}).encode()
    await send({"type": "http.response.start", "status": 200, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(answer)).encode())]})
    await send({"type": "http.response.body", "body": answer})


if __name__ == "__main__":
    import uvicorn

    protocol = "httptools"
    if "--mcpkit-protocol" in sys.argv[2:]:
        from pathlib import Path

        sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
        protocol = "mcpkit.transports.http_protocol:FastHeadDeadlineProtocol"
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning",
                http=protocol, loop="uvloop", access_log=False)
