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


def test_serve_http_with_an_authorization_server():
    """--resource, --auth-issuer, --auth-jwks: JWT access tokens from a real issuer."""
    sys.path.insert(0, str(ROOT / "tests" / "servers"))
    from oauth_as import MockAuthServer

    port = _free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    body = {"jsonrpc": "2.0", "id": 1, "method": "server/discover",
            "params": {"_meta": modern_meta()}}
    headers = {"Accept": "application/json, text/event-stream",
               "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "server/discover"}
    with MockAuthServer(token_format="jwt") as issuer:
        proc = subprocess.Popen(
            [sys.executable, "-m", "mcpkit", "serve", "mcpkit.examples.notes:server",
             "--http", "--port", str(port), "--resource", url, "--auth-issuer", issuer.base,
             "--auth-jwks", f"{issuer.base}/jwks", "--auth-scope", "mcp"],
            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
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
            metadata = f"http://127.0.0.1:{port}/.well-known/oauth-protected-resource/mcp"
            assert f'resource_metadata="{metadata}"' in denied.headers["WWW-Authenticate"]
            assert httpx.get(metadata, timeout=5).json()["authorization_servers"] == [
                issuer.base]
            token = issuer.sign(issuer.claims("mcp", url))
            ok = httpx.post(url, json=body, timeout=5,
                            headers={**headers, "Authorization": f"Bearer {token}"})
            assert ok.status_code == 200, ok.text
        finally:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)
            proc.stderr.close()
