"""`mcpkit serve TARGET --http`: the command line starts a real HTTP server."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import httpx
from conftest import ROOT, modern_meta

DISCOVER = {"jsonrpc": "2.0", "id": 1, "method": "server/discover",
            "params": {"_meta": modern_meta()}}
HEADERS = {"Accept": "application/json, text/event-stream",
           "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "server/discover"}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def _serve_notes(port: int, *options: str) -> Iterator[httpx.Response]:
    """`mcpkit serve` the notes server over HTTP with ``options``; yields the answer to a
    first `server/discover` without credentials (once the server is up, within 20 s)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcpkit", "serve", "mcpkit.examples.notes:server", "--http",
         "--port", str(port), *options],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                first = httpx.post(url, json=DISCOVER, headers=HEADERS, timeout=2)
                break
            except httpx.TransportError:
                assert proc.poll() is None, proc.stderr.read().decode()
                assert time.monotonic() < deadline, "server did not start in 20 s"
                time.sleep(0.1)
        yield first
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
        proc.stderr.close()


def test_serve_http_with_a_token():
    port = _free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    with _serve_notes(port, "--token", "s3cret") as denied:
        assert denied.status_code == 401
        assert "Bearer" in denied.headers["WWW-Authenticate"]
        ok = httpx.post(url, json=DISCOVER, headers={**HEADERS, "Authorization": "Bearer s3cret"},
                        timeout=5)
        assert ok.status_code == 200
        assert ok.json()["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == \
            "notes"


def test_serve_http_with_an_authorization_server():
    """--resource, --auth-issuer, --auth-jwks: JWT access tokens from a real issuer."""
    sys.path.insert(0, str(ROOT / "tests" / "servers"))
    from oauth_as import MockAuthServer

    port = _free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    with MockAuthServer(token_format="jwt") as issuer, _serve_notes(
            port, "--resource", url, "--auth-issuer", issuer.base,
            "--auth-jwks", f"{issuer.base}/jwks", "--auth-scope", "mcp") as denied:
        assert denied.status_code == 401
        metadata = f"http://127.0.0.1:{port}/.well-known/oauth-protected-resource/mcp"
        assert f'resource_metadata="{metadata}"' in denied.headers["WWW-Authenticate"]
        assert httpx.get(metadata, timeout=5).json()["authorization_servers"] == [issuer.base]
        token = issuer.sign(issuer.claims("mcp", url))
        ok = httpx.post(url, json=DISCOVER, timeout=5,
                        headers={**HEADERS, "Authorization": f"Bearer {token}"})
        assert ok.status_code == 200, ok.text
