"""Trace context through MCP (mcpkit.tracing): one trace from the application through the
client into the server, over HTTP and stdio, in both eras, with OpenTelemetry's own SDK
recording the spans; and nothing of OpenTelemetry imported where the application does not
use it. Each scenario runs in a fresh Python process (a tracer provider is set once per
process), with real servers."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("opentelemetry.sdk")

ROOT = Path(__file__).resolve().parents[1]

# Spans recorded in memory and printed as JSON lines: what the test reads.
RECORDER = """
import json, sys
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

exporter = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exporter))
trace.set_tracer_provider(provider)


def dump(out):
    for span in exporter.get_finished_spans():
        out.write(json.dumps({
            "name": span.name, "kind": span.kind.name,
            "trace": format(span.context.trace_id, "032x"),
            "id": format(span.context.span_id, "016x"),
            "parent": format(span.parent.span_id, "016x") if span.parent else None,
            "error": span.status.status_code.name == "ERROR",
            "attributes": dict(span.attributes or {})}) + "\\n")
"""


def run(code: str, tmp_path: Path) -> subprocess.CompletedProcess:
    script = tmp_path / "scenario.py"
    script.write_text(RECORDER + textwrap.dedent(code))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def spans(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


def one(found: list[dict], name: str, kind: str) -> dict:
    matching = [s for s in found if s["name"] == name and s["kind"] == kind]
    assert len(matching) == 1, (name, kind, found)
    return matching[0]


@pytest.mark.parametrize("version", [None, "2025-11-25"])
def test_one_trace_from_the_application_through_the_client_into_the_server_over_http(
        tmp_path, version) -> None:
    done = run(f"""
        from mcpkit import Client, Server
        from mcpkit.client import ServerError
        from mcpkit.transports.http import HttpServerThread

        server = Server("traced", "1")

        @server.tool
        def echo(text: str) -> str:
            with trace.get_tracer("app").start_as_current_span("inside the tool"):
                return text

        @server.tool
        def broken() -> str:
            raise ValueError("no")

        with HttpServerThread(server) as http, \\
                Client(url=http.url, version={version!r}, timeout=20) as client:
            with trace.get_tracer("app").start_as_current_span("turn"):
                assert client.call_tool("echo", {{"text": "hi"}})["content"][0]["text"] == "hi"
                assert client.call_tool("broken")["isError"]
                try:
                    client.request("tools/call", {{"name": "missing", "arguments": {{}}}})
                except ServerError:
                    pass
        dump(sys.stdout)
        """, tmp_path)
    found = spans(done.stdout)
    turn = one(found, "turn", "INTERNAL")
    client = one(found, "tools/call echo", "CLIENT")
    served = one(found, "tools/call echo", "SERVER")
    inside = one(found, "inside the tool", "INTERNAL")
    assert {s["trace"] for s in (turn, client, served, inside)} == {turn["trace"]}
    assert (client["parent"], served["parent"], inside["parent"]) == \
        (turn["id"], client["id"], served["id"])
    era = version or "2026-07-28"
    for span, transport in ((client, "tcp"), (served, "tcp")):
        assert span["attributes"]["mcp.method.name"] == "tools/call"
        assert span["attributes"]["gen_ai.tool.name"] == "echo"
        assert span["attributes"]["gen_ai.operation.name"] == "execute_tool"
        assert span["attributes"]["network.transport"] == transport
        assert span["attributes"]["mcp.protocol.version"] == era
        assert not span["error"]
    assert client["attributes"]["jsonrpc.request.id"] == served["attributes"][
        "jsonrpc.request.id"]
    # A tool's error result and a JSON-RPC error both mark the spans, on both sides.
    assert one(found, "tools/call broken", "SERVER")["error"]
    missing = one(found, "tools/call missing", "CLIENT")
    assert missing["error"] and missing["attributes"]["error.type"] == "-32602"
    assert one(found, "tools/call missing", "SERVER")["attributes"][
        "rpc.response.status_code"] == "-32602"


SERVER_SCRIPT = """
import atexit
from mcpkit import Context, Server

server = Server("traced-stdio", "1")


@server.tool
def ask(ctx: Context) -> str:
    return ctx.sample("hi", max_tokens=5)["content"]["text"]


atexit.register(lambda: dump(open(OUT, "w")))
server.run()
"""


def test_the_trace_crosses_a_stdio_pipe_both_ways(tmp_path) -> None:
    """Client in one process, server in another, each with its own recorder: the server's
    span is a child of the client's; the server's question to the client (legacy sampling)
    carries the trace of the call that asks it."""
    server_file = tmp_path / "server.py"
    server_out = tmp_path / "server-spans.jsonl"
    server_file.write_text(RECORDER + f"OUT = {str(server_out)!r}\n" + SERVER_SCRIPT)
    done = run(f"""
        from mcpkit import Client
        asked = []

        def model(params):
            asked.append(params.get("_meta", {{}}).get("traceparent"))
            return {{"role": "assistant", "model": "m",
                    "content": {{"type": "text", "text": "sampled"}}}}

        with Client(sys.executable, [{str(server_file)!r}], version="2025-11-25",
                    sampling=model, timeout=20) as client:
            assert client.call_tool("ask")["content"][0]["text"] == "sampled"
        dump(sys.stdout)
        print("asked", json.dumps(asked))
        """, tmp_path)
    client = one(spans(done.stdout), "tools/call ask", "CLIENT")
    served = one(spans(server_out.read_text()), "tools/call ask", "SERVER")
    assert served["trace"] == client["trace"] and served["parent"] == client["id"]
    assert served["attributes"]["network.transport"] == "pipe"
    asked = json.loads(done.stdout.split("asked ", 1)[1])
    assert len(asked) == 1 and asked[0].startswith(f"00-{client['trace']}-{served['id']}-")


def test_nothing_of_opentelemetry_is_imported_when_the_application_does_not_use_it(
        tmp_path) -> None:
    script = tmp_path / "plain.py"
    script.write_text(textwrap.dedent("""
        import sys
        from mcpkit import Client
        with Client(sys.executable, ["-m", "mcpkit", "serve",
                                     "mcpkit.examples.notes:server"], timeout=20) as client:
            client.list_tools()
            sent = client._session.message(client._session.call("tools/list"))
        print(sorted(m for m in sys.modules if m.startswith("opentelemetry")))
        print(sorted(sent["params"]["_meta"]))
        import opentelemetry.trace  # imported, as the official SDK does, but no provider set
        with Client(sys.executable, ["-m", "mcpkit", "serve",
                                     "mcpkit.examples.notes:server"], timeout=20) as client:
            print(client._session.tracing)
        """))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=60, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    imported, meta, merely_imported = done.stdout.splitlines()
    assert imported == "[]"
    assert "traceparent" not in meta
    assert merely_imported == "None"
