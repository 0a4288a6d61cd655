"""`mcpkit serve TARGET --http`: the command line starts a real HTTP server."""

from __future__ import annotations

import socket
import subprocess
import sys
import time

import httpx
from conftest import ROOT, modern_meta


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_serve_http_with_a_token():
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcpkit", "serve", "mcpkit.examples.notes:server", "--http",
         "--port", str(port), "--token", "s3cret"],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}/mcp"
    body = {"jsonrpc": "2.0", "id": 1, "method": "server/discover",
            "params": {"_meta": modern_meta()}}
    headers = {"Accept": "application/json, text/event-stream",
               "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "server/discover"}
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                denied = httpx.post(url, json=body, headers=headers, timeout=2)
                break
            except httpx.TransportError:
                assert proc.poll() is None, proc.stderr.read().decode()
                assert time.monotonic() < deadline, "server did not start in 20 s"
                time.sleep(0.1)
        assert denied.status_code == 401
        assert "Bearer" in denied.headers["WWW-Authenticate"]
        ok = httpx.post(url, json=body, headers={**headers, "Authorization": "Bearer s3cret"},
                        timeout=5)
        assert ok.status_code == 200
        assert ok.json()["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == \
            "notes"
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
        proc.stderr.close()
