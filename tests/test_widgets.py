"""mcpkit.widgets and mcpkit.wiretap, against real servers (no browser: see
tests/test_browser.py for the widgets in JupyterLab)."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from mcpkit import wiretap

SERVER = [sys.executable, "-m", "mcpkit", "serve", "mcpkit.examples.everything:server"]


def test_import_mcpkit_does_not_import_ipywidgets():
    code = ("import sys, mcpkit, mcpkit.wiretap, mcpkit.display; "
            "print('ipywidgets' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert done.stdout.strip() == "False", done.stderr


def test_a_trace_pairs_responses_with_requests_and_exports_mermaid_and_bytes():
    records = (b'100.000000 > {"jsonrpc":"2.0","id":1,"method":"tools/list"}\n'
               b'100.001000 < {"jsonrpc":"2.0","method":"notifications/message","params":{}}\n'
               b'100.002500 < {"jsonrpc":"2.0","id":1,"result":{"tools":[]}}\n'
               b'100.003000 > not json\n'
               b'100.004000 < {"jsonrpc":"2.0","id":"x","error":{"code":-32601,"message":"no"}}\n'
               b'100.005000 > {"jsonrpc":"2.0","id":"x","method":"ping"}\n'
               b'100.006000 < {"jsonrpc":"2.0","id":"x","error":{"code":-32601,"mess')  # torn
    trace = wiretap.Trace.from_bytes(records)
    assert [(e.direction, e.kind, e.method, e.id) for e in trace.events] == [
        ("C->S", "request", "tools/list", 1),
        ("S->C", "notification", "notifications/message", None),
        ("S->C", "result", "tools/list", 1),
        ("C->S", "invalid", None, None),
        ("S->C", "error", None, "x"),  # answers nothing asked yet
        ("C->S", "request", "ping", "x"),
    ]
    assert trace.events[2].latency == pytest.approx(0.0025)
    assert trace.events[0].size == len(b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}\n')
    assert trace.to_bytes("C->S") == (b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}\n'
                                      b'not json\n{"jsonrpc":"2.0","id":"x","method":"ping"}\n')
    assert trace.to_bytes().startswith(b'> {"jsonrpc"')
    mermaid = trace.to_mermaid().splitlines()
    assert mermaid[:4] == ["sequenceDiagram", "    participant C as Client",
                           "    participant S as Server", "    C->>S: tools/list #1"]
    assert "    S-->>C: result tools/list #1" in mermaid
    assert len(trace.filter(direction="S->C")) == 3
    assert len(trace.filter(method="tools/")) == 2
    assert "ms" not in repr(trace)  # a saved notebook's text must not change between runs


def test_the_relay_records_a_real_session_without_changing_it(tmp_path):
    from mcpkit import Client

    log = tmp_path / "session.wire"
    with Client(wiretap.command(log, SERVER), version="legacy") as client:
        assert client.call_tool("test_simple_text")["content"][0]["type"] == "text"
    deadline = time.monotonic() + 5
    while b"tools/call" not in log.read_bytes() and time.monotonic() < deadline:
        time.sleep(0.05)
    trace = wiretap.Trace.from_file(log)
    methods = [e.method for e in trace.events if e.direction == "C->S"]
    assert methods[:2] == ["initialize", "notifications/initialized"]
    call = [e for e in trace.events if e.kind == "result" and e.method == "tools/call"]
    assert call and call[0].latency is not None and call[0].latency >= 0


widgets = pytest.importorskip("mcpkit.widgets")


def test_a_form_from_a_schema():
    schema = {
        "type": "object",
        "properties": {
            "title": {"type": "string", "description": "the title"},
            "limit": {"type": "integer", "default": 10},
            "ratio": {"type": "number"},
            "pinned": {"type": "boolean", "default": True},
            "colour": {"enum": ["red", "green"]},
            "tags": {"type": "array", "items": {"type": "string"}},
            "sizes": {"type": "array", "items": {"type": "integer"}},
            "where": {"type": "object", "properties": {"x": {"type": "number"}}},
            "maybe": {"type": ["string", "null"]},
        },
        "required": ["title", "where"],
    }
    fields = widgets.schema_fields(schema)
    assert [(f.name, f.kind, f.required) for f in fields] == [
        ("title", "string", True), ("where", "json", True), ("limit", "integer", False),
        ("ratio", "number", False), ("pinned", "boolean", False), ("colour", "enum", False),
        ("tags", "array", False), ("sizes", "array", False), ("maybe", "string", False)]
    values = {"title": "Tea", "where": '{"x": 1.5}', "limit": "3", "ratio": "", "pinned": False,
              "colour": "green", "tags": "a\nb\n", "sizes": "1\n2", "maybe": ""}
    assert widgets.arguments_from(fields, values, "en") == {
        "title": "Tea", "where": {"x": 1.5}, "limit": 3, "pinned": False, "colour": "green",
        "tags": ["a", "b"], "sizes": [1, 2]}
    with pytest.raises(ValueError, match="title: es obligatorio"):
        widgets.arguments_from(fields, {**values, "title": " "}, "es")
    with pytest.raises(ValueError, match="where: not valid JSON"):
        widgets.arguments_from(fields, {**values, "where": "{x"}, "en")
    with pytest.raises(ValueError, match="limit: not a number"):
        widgets.arguments_from(fields, {**values, "limit": "ten"}, "en")


def test_results_render_by_content_type():
    png = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJ"
           "RU5ErkJggg==")
    result = {"content": [
        {"type": "text", "text": "<b>hi</b>"},
        {"type": "image", "mimeType": "image/png", "data": png},
        {"type": "resource_link", "uri": "notes://1", "name": "Shopping"},
        {"type": "resource", "resource": {"uri": "notes://2", "text": "Body"}}],
        "structuredContent": {"notes": [{"id": "1", "title": "Shopping"}]}}
    page = widgets.result_html(result, "en")
    assert "<pre class='mcpkit-text'>&lt;b&gt;hi&lt;/b&gt;</pre>" in page  # text, escaped
    assert f"src='data:image/png;base64,{png}'" in page
    assert "notes://1" in page and "Shopping" in page and "mcpkit-resource" in page
    assert "<li><b>title</b>: <code>&quot;Shopping&quot;</code></li>" in page
    assert "mcpkit-error" not in page
    failed = widgets.result_html({"content": [{"type": "text", "text": "no"}], "isError": True},
                                 "es")
    assert "mcpkit-error" in failed and "error de herramienta (isError)" in failed
    text = widgets.result_text(result, "en")
    assert text.splitlines()[:2] == ["<b>hi</b>", "[image image/png, 70 bytes]"]
    with pytest.raises(ValueError):  # only base64 goes into an img src
        widgets.result_html({"content": [{"type": "image", "data": "x' onerror='alert(1)"}]})


def test_the_explorer_calls_a_real_server_and_shows_progress(tmp_path):
    from mcpkit import Client

    with Client(SERVER) as client:
        explorer = widgets.ToolExplorer(client, lang="es")
        assert explorer.picker.options[0] == "test_simple_text"
        seen = []
        explorer.progress.observe(lambda change: seen.append(change["new"]), names="value")
        explorer.call("test_tool_with_progress")
        assert seen and max(seen) > 0  # the bar moved while the call ran
        assert explorer.progress.layout.visibility == "hidden"
        explorer.picker.value = "test_sampling"
        assert [f.name for f in explorer.fields] == ["prompt"]
        explorer.call("test_error_handling", {})
        assert "mcpkit-error" in explorer.output.value
        explorer.call("test_image_content", {})
        assert "data:image/png;base64," in explorer.output.value
        bundle = explorer._repr_mimebundle_()
        assert "application/vnd.jupyter.widget-view+json" in bundle
        assert bundle["text/plain"].startswith("Explorador de herramientas: ")
        assert "[imagen image/png" in bundle["text/plain"]


def test_the_inspector_and_the_dashboard_show_a_host(tmp_path):
    from mcpkit import Host

    log = tmp_path / "notes.wire"
    notes = wiretap.command(log, [sys.executable, "-m", "mcpkit", "serve",
                                  "mcpkit.examples.notes:server"])
    config = {"mcpServers": {"notes": {"command": notes[0], "args": notes[1:]}}}
    with Host(config) as host:
        host.wait_ready()
        board = widgets.HostDashboard(host, lang="en")
        lines = repr(board).splitlines()
        assert lines[0] == "Host dashboard"
        assert lines[1].split() == ["server", "state", "era", "tools", "restarts"]
        assert lines[2].split()[:2] == ["notes", "ready"]
        host.call_tool("notes_search", {"query": "mcp"})
        inspector = widgets.WireInspector(log, lang="en")
        inspector.method.value = "tools/call"
        assert [e.kind for e in inspector.shown().events] == ["request", "result"]
        assert "2/" in inspector.count.value
        inspector.mermaid_button.click()
        assert inspector.export.value.startswith("sequenceDiagram")
        inspector.bytes_button.click()
        assert inspector.export.value.startswith("> {")
