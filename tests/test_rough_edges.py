"""Issue 14, the client's rough edges: each case from real peers, against real processes."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator

import pytest
from conftest import SERVERS

from mcpkit import Client
from mcpkit.transports.http import HttpServerThread

EDGE = [sys.executable, "-m", "mcpkit", "serve", str(SERVERS / "edge_cases.py")]


@pytest.fixture(scope="module")
def edge_url() -> Iterator[str]:
    sys.path.insert(0, str(SERVERS))
    import edge_cases

    with HttpServerThread(edge_cases.server) as served:
        yield served.url


@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize("version", [None, "legacy"])
def test_a_requests_notifications_are_delivered_before_its_result(transport, version, edge_url):
    """A slow progress callback must not let call_tool return first (wire order)."""
    seen: list[str] = []

    def slow_progress(params: dict) -> None:
        time.sleep(0.05)
        seen.append(f"progress {params['progress']}")

    def on_log(params: dict) -> None:
        time.sleep(0.05)
        seen.append("log")

    kwargs = {"version": version, "log_level": "debug", "on_log": on_log, "timeout": 20}
    client = Client(url=edge_url, **kwargs) if transport == "http" else \
        Client(EDGE[0], EDGE[1:], **kwargs)
    with client:
        for _ in range(3):
            seen.clear()
            result = client.call_tool("progress_three", on_progress=slow_progress)
            assert result["content"][0]["text"] == "counted"
            assert seen == ["progress 1", "progress 2", "progress 3", "log"]


def test_the_asyncio_front_keeps_wire_order_too(edge_url: str) -> None:
    import asyncio

    from mcpkit.aclient import AsyncClient

    async def main() -> list[str]:
        seen: list[str] = []

        async def slow_progress(params: dict) -> None:
            await asyncio.sleep(0.05)
            seen.append(f"progress {params['progress']}")

        async with AsyncClient(url=edge_url, timeout=20) as client:
            await client.call_tool("progress_three", on_progress=slow_progress)
            return seen

    assert asyncio.run(asyncio.wait_for(main(), 30)) == [
        "progress 1", "progress 2", "progress 3"]
