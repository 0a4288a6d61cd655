"""What 2026-07-28 deprecates (roots, sampling, logging, dynamic client registration,
sampling's includeContext values) still works, and an application that relies on it in the
modern era is told so once: one warning per feature and process, naming what replaces it
and until when it is kept. Real servers: a process over stdio, and mcpkit's HTTP server."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator

import pytest

from mcpkit import Client, Context, Server, deprecations
from mcpkit.transports.http import HttpServerThread

NOTES = [sys.executable, "-m", "mcpkit", "serve", "mcpkit.examples.notes:server"]


@pytest.fixture
def warnings(caplog: pytest.LogCaptureFixture) -> Iterator[list[str]]:
    """The deprecation warnings logged during the test, from a clean slate."""
    deprecations.reset()
    caplog.set_level(logging.WARNING, logger="mcpkit.deprecations")
    class Collect(list):
        def __iter__(self):  # read at assertion time, not at fixture time
            return iter([r.getMessage() for r in caplog.records
                         if r.name == "mcpkit.deprecations"])

    seen = Collect()
    yield seen
    deprecations.reset()


def sampled(params: dict) -> dict:
    return {"role": "assistant", "content": {"type": "text", "text": "scripted"},
            "model": "m", "stopReason": "endTurn"}


def test_a_modern_client_that_offers_deprecated_features_is_warned_once(warnings) -> None:
    options = {"sampling": sampled, "roots": [{"uri": "file:///srv", "name": "srv"}],
               "log_level": "info", "timeout": 20}
    with Client(NOTES[0], NOTES[1:], version="2025-11-25", **options) as legacy:
        legacy.list_tools()
    assert list(warnings) == []  # the legacy era is what these were made for
    with Client(NOTES[0], NOTES[1:], **options) as modern:
        assert modern.era == "modern"
        assert modern.list_tools()  # still works
    said = list(warnings)
    assert len(said) == 3, said
    for feature, replacement in (("Sampling", "LLM provider's API"),
                                 ("Roots", "tool arguments"), ("Logging", "stderr")):
        line = next(w for w in said if w.startswith(feature))
        assert "deprecated since MCP 2026-07-28" in line and "2027-07-28" in line
        assert replacement in line and "offers it to a 2026-07-28 server" in line
    with Client(NOTES[0], NOTES[1:], **options) as again:
        again.set_log_level("debug")
    assert len(list(warnings)) == 3  # once per feature and process


def asking_server() -> Server:
    server = Server("asks", "1")

    @server.tool
    def note(ctx: Context) -> str:
        """Log a line."""
        ctx.log("info", "noted")
        return "ok"

    @server.tool
    def ask_model(ctx: Context, context: str = "none") -> str:
        """Sample the client's model."""
        answer = ctx.sample("hi", max_tokens=5, includeContext=context)
        return answer["content"]["text"]

    return server


@pytest.mark.parametrize("version", [None, "2025-11-25"])
def test_a_handler_that_relies_on_deprecated_features_is_warned_in_the_modern_era(
        warnings, version) -> None:
    with HttpServerThread(asking_server()) as http, \
            Client(url=http.url, version=version, timeout=20) as client:
        assert client.call_tool("note")["content"][0]["text"] == "ok"
        client.call_tool("note")
        if version is None:
            assert list(warnings) == [
                "Logging (notifications/message, logging/setLevel) is deprecated since MCP "
                "2026-07-28 (a handler of tools/call called ctx.log); it still works, and "
                "servers keep it until the first revision released on or after 2027-07-28. "
                "Instead: log to stderr (stdio) or through OpenTelemetry."]
        else:
            assert list(warnings) == []


def test_sampling_from_a_handler_and_its_deprecated_include_context(warnings) -> None:
    with HttpServerThread(asking_server()) as http:
        with Client(url=http.url, version="2025-11-25", sampling=sampled, timeout=20) as old:
            assert old.call_tool("ask_model")["content"][0]["text"] == "scripted"
            assert list(warnings) == []
            old.call_tool("ask_model", {"context": "thisServer"})  # deprecated in any era
            assert [w.split(" is ")[0] for w in warnings] == [
                'sampling\'s includeContext "thisServer" / "allServers"']
        with Client(url=http.url, sampling=sampled, timeout=20) as modern:
            assert modern.call_tool("ask_model")["content"][0]["text"] == "scripted"
            # The client said it first (it offers sampling); the server's handler, in the
            # same process here, finds the warning given.
            said = [w for w in warnings if w.startswith("Sampling")]
            assert len(said) == 1 and "offers it to a 2026-07-28 server" in said[0], said
            deprecations.reset()
            modern.call_tool("ask_model")
        said = [w for w in warnings if w.startswith("Sampling")]
        assert len(said) == 2 and "a handler of tools/call asked the client for " \
            "sampling/createMessage" in said[1], said
