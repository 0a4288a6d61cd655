"""Scale-out behind a real load balancer (HAProxy, Debian's package; .ci/run installs it):
two mcpkit HTTP server processes, round robin. The modern era keeps no state, so the rounds
of one input_required request are answered by different backends; a legacy session stays on
the backend that created it by affinity on Mcp-Session-Id."""

from __future__ import annotations

import shutil

import httpx
import pytest
from balancer import ROOT, Balanced

TARGET = str(ROOT / "tests" / "http_workers_server.py") + ":server"
ACCEPT = "application/json, text/event-stream"
MODERN = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}

pytestmark = pytest.mark.skipif(
    shutil.which("haproxy") is None and not __import__("os").path.exists("/usr/sbin/haproxy"),
    reason="HAProxy is not installed (apt-get install haproxy; .ci/run does it)")


def call(client: httpx.Client, url: str, params: dict, request_id: int = 1) -> httpx.Response:
    body = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
            "params": {**params, "_meta": MODERN}}
    return client.post(url, json=body, headers={
        "accept": ACCEPT, "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call",
        "mcp-name": params["name"]})


def test_modern_rounds_are_answered_by_any_backend() -> None:
    with Balanced(TARGET, backends=2) as lb, httpx.Client(timeout=10) as client:
        pids = {call(client, lb.url, {"name": "whoami", "arguments": {}}).json()["result"]
                ["content"][0]["text"] for _ in range(6)}
        assert len(pids) == 2, f"round robin reached one backend only: {pids}"
        crossed = None
        for attempt in range(20):
            first = call(client, lb.url, {"name": "greet", "arguments": {}}, attempt).json()
            state = first["result"]
            assert state["resultType"] == "input_required"
            retry = {"name": "greet", "arguments": {}, "requestState": state["requestState"],
                     "inputResponses": {"name": {"action": "accept",
                                                 "content": {"name": "Ada"}}}}
            done = call(client, lb.url, retry, attempt).json()["result"]["content"][0]["text"]
            assert done.endswith("Hello, Ada!")
            asked, answered = (part.split("=")[1] for part in done.split()[:2])
            if asked != answered:
                crossed = (asked, answered)
                break
        assert crossed, "no round trip was answered by a second backend in 20 tries"


def test_a_legacy_session_stays_on_its_backend() -> None:
    with Balanced(TARGET, backends=2) as lb, httpx.Client(timeout=10) as client:
        init = client.post(lb.url, headers={"accept": ACCEPT}, json={
            "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "lb-test", "version": "0"}}})
        assert init.status_code == 200
        backend = init.headers["x-mcpkit-backend"]
        headers = {"accept": ACCEPT, "mcp-session-id": init.headers["mcp-session-id"],
                   "mcp-protocol-version": "2025-11-25"}
        client.post(lb.url, headers=headers,
                    json={"jsonrpc": "2.0", "method": "notifications/initialized"})
        pids = set()
        for i in range(8):  # without affinity, every other one would be a 404 elsewhere
            reply = client.post(lb.url, headers=headers, json={
                "jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
                "params": {"name": "whoami", "arguments": {}}})
            assert reply.status_code == 200, reply.text
            assert reply.headers["x-mcpkit-backend"] == backend
            pids.add(reply.json()["result"]["content"][0]["text"])
        assert len(pids) == 1
