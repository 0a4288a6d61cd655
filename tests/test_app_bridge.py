"""The host's side of an MCP Apps view (mcpkit.app_bridge), driven message by message as a
view would drive it, over a Host connected to the poll example server (in memory: the same
session code as a pipe). What the bridge sends is validated against the official extension's
schema (@modelcontextprotocol/ext-apps, pinned in interop/package-lock.json)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from mcpkit import Server, apps
from mcpkit.app_bridge import AppBridge, AppError
from mcpkit.host import Host

ROOT = Path(__file__).resolve().parents[1]
DECLARES = {"extensions": {apps.EXTENSION: {"mimeTypes": [apps.MIME_TYPE]}}}
INIT = {"jsonrpc": "2.0", "id": 1, "method": "ui/initialize",
        "params": {"protocolVersion": "2026-01-26", "appInfo": {"name": "t", "version": "1"},
                   "appCapabilities": {"availableDisplayModes": ["inline"]}}}
READY = {"jsonrpc": "2.0", "method": "ui/notifications/initialized", "params": {}}


def request(request_id: int, method: str, **params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


@pytest.fixture
def host():
    from importlib import reload

    from mcpkit.examples import poll

    poll = reload(poll)  # a fresh poll each test: the example keeps its votes in the module
    other = Server("other")

    @other.tool
    def lookup() -> str:
        return "x"

    config = {"mcpServers": {"poll": {"server": poll.server}, "other": {"server": other}}}
    with Host(config, client_options={"capabilities": DECLARES}) as running:
        yield running


def ready_bridge(host: Host, **options: Any) -> AppBridge:
    bridge = AppBridge(host, "poll", "poll_ask", {"question": "Tea?"}, **options)
    bridge.open()
    assert bridge.deliver_result(host.call_tool("poll_ask", {"question": "Tea?"})) == []
    [answer] = bridge.receive(INIT)
    assert answer["result"]["protocolVersion"] == apps.APPS_VERSION
    bridge.receive(READY)
    return bridge


def test_the_view_is_read_and_gets_the_restrictive_default_policy(host: Host) -> None:
    bridge = AppBridge(host, "poll", "poll_ask")
    view = bridge.open()
    assert view.uri == "ui://poll/board" and "<html>" in view.html
    assert "connect-src 'none'" in view.csp and view.refused == []
    assert view.prefers_border is True
    with pytest.raises(AppError, match="names no view"):
        AppBridge(host, "poll", "poll_close").open()
    with pytest.raises(AppError, match="no tool named"):
        AppBridge(host, "poll", "lookup").open()


def test_a_host_that_did_not_declare_the_extension_is_told_how(host: Host) -> None:
    from mcpkit.examples import poll

    config = {"mcpServers": {"poll": {"server": poll.server}}}
    with Host(config) as plain, pytest.raises(AppError, match="apps.CAPABILITIES"):
        AppBridge(plain, "poll", "poll_ask").open()


def test_nothing_reaches_the_view_before_it_says_it_is_ready(host: Host) -> None:
    bridge = AppBridge(host, "poll", "poll_ask", {"question": "Tea?"}, language="es")
    bridge.open()
    result = host.call_tool("poll_ask", {"question": "Tea?"})
    assert bridge.deliver_result(result) == []  # kept until initialized
    [early] = bridge.receive(request(5, "tools/call", name="poll_vote",
                                     arguments={"choice": "yes"}))
    assert early["error"]["code"] == -32600 and "before ui/initialize" in early["error"]["message"]
    [answer] = bridge.receive(INIT)
    context = answer["result"]["hostContext"]
    assert context["locale"] == "es-ES" and context["displayMode"] == "inline"
    assert context["toolInfo"]["tool"]["name"] == "poll_ask"
    assert answer["result"]["hostCapabilities"]["serverTools"] == {}
    sent = bridge.receive(READY)
    assert [m["method"] for m in sent] == ["ui/notifications/tool-input",
                                           "ui/notifications/tool-result"]
    assert sent[0]["params"] == {"arguments": {"question": "Tea?"}}
    assert sent[1]["params"]["structuredContent"]["question"] == "Tea?"
    assert bridge.receive(READY) == []  # a second initialized changes nothing


def test_the_views_tool_calls_go_through_the_hosts_checks(host: Host) -> None:
    asked: list[tuple[str, dict]] = []
    bridge = ready_bridge(host, confirm=lambda name, args: asked.append((name, args)) or False)
    [vote] = bridge.receive(request(2, "tools/call", name="poll_vote",
                                    arguments={"choice": "yes"}))
    assert vote["result"]["structuredContent"]["counts"] == {"yes": 1, "no": 0}
    [wrong] = bridge.receive(request(3, "tools/call", name="poll_vote",
                                     arguments={"choice": "maybe"}))
    assert wrong["result"]["isError"] is True  # the tool's own error, passed on
    [model_only] = bridge.receive(request(4, "tools/call", name="poll_close", arguments={}))
    assert model_only["error"]["code"] == -32000
    assert "not for app views" in model_only["error"]["message"]
    [elsewhere] = bridge.receive(request(5, "tools/call", name="lookup", arguments={}))
    assert elsewhere["error"]["code"] == -32602  # another server's tool: unknown here
    [declined] = bridge.receive(request(6, "tools/call", name="poll_reset", arguments={}))
    assert declined["error"]["code"] == -32000 and "declined" in declined["error"]["message"]
    assert asked == [("poll_reset", {})]
    [bad] = bridge.receive(request(7, "tools/call", name="poll_vote", arguments=[1]))
    assert bad["error"]["code"] == -32602
    assert [e["outcome"] for e in bridge.audit] == ["ok", "tool-error", "refused", "unknown",
                                                    "declined", "invalid"]
    assert host.call_tool("poll_close")["content"][0]["text"] == "closed: yes: 1, no: 0"


def test_a_destructive_app_tool_runs_when_the_user_agrees(host: Host) -> None:
    bridge = ready_bridge(host, confirm=lambda name, args: True)
    bridge.receive(request(2, "tools/call", name="poll_vote", arguments={"choice": "no"}))
    [reset] = bridge.receive(request(3, "tools/call", name="poll_reset", arguments={}))
    assert reset["result"]["structuredContent"]["counts"] == {"yes": 0, "no": 0}


def test_messages_context_links_and_the_rest(host: Host) -> None:
    opened: list[str] = []
    bridge = ready_bridge(host, open_link=lambda url: opened.append(url) or True)
    text = {"type": "text", "text": "yes: 2"}
    assert bridge.receive(request(2, "ui/message", role="user", content=text))[0]["result"] == {}
    assert bridge.messages == [{"role": "user", "content": [text]}]
    [bad] = bridge.receive(request(3, "ui/message", role="assistant", content=text))
    assert bad["error"]["code"] == -32602
    bridge.receive(request(4, "ui/update-model-context", structuredContent={"counts": 1}))
    bridge.receive(request(5, "ui/update-model-context", content=[text]))
    assert bridge.model_context == {"content": [text]}  # each update replaces the last
    [link] = bridge.receive(request(6, "ui/open-link", url="https://example.com/a"))
    assert link["result"] == {} and opened == ["https://example.com/a"]
    [script] = bridge.receive(request(7, "ui/open-link", url="javascript:alert(1)"))
    assert script["error"]["code"] == -32602 and len(opened) == 1
    for odd in ("http://user@", "http://[", "https:///no-host", "ftp://example.com", 7):
        [refused] = bridge.receive(request(70, "ui/open-link", url=odd))  # no host, unparsable
        assert refused["error"]["code"] == -32602 and len(opened) == 1, odd
    [mode] = bridge.receive(request(8, "ui/request-display-mode", mode="fullscreen"))
    assert mode["result"] == {"mode": "inline"}
    [board] = bridge.receive(request(9, "resources/read", uri="ui://poll/board"))
    assert board["result"]["contents"][0]["mimeType"] == apps.MIME_TYPE
    [missing] = bridge.receive(request(10, "resources/read", uri="notes://1"))
    assert "error" in missing
    assert bridge.receive({"jsonrpc": "2.0", "method": "notifications/message",
                           "params": {"level": "info", "data": "hi"}}) == []
    assert bridge.log == [{"level": "info", "data": "hi"}]
    assert bridge.receive({"jsonrpc": "2.0", "method": "ui/notifications/size-changed",
                           "params": {"width": 300, "height": 120}}) == []
    assert bridge.size == (300, 120)
    [ping] = bridge.receive(request(11, "ping"))
    assert ping["result"] == {}


def test_a_link_is_not_opened_without_the_users_yes(host: Host) -> None:
    bridge = ready_bridge(host)  # no open_link: nobody to ask, so no
    [link] = bridge.receive(request(2, "ui/open-link", url="https://example.com"))
    assert link["error"] == {"code": -32000, "message": "Link opening denied by user"}


@pytest.mark.parametrize("message, code", [
    ("not an object", -32600),
    ({"jsonrpc": "1.0", "id": 1, "method": "ping"}, -32600),
    ({"jsonrpc": "2.0", "id": True, "method": "ping"}, -32600),
    ({"jsonrpc": "2.0", "id": 1, "method": 5}, -32600),
    ({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": [1]}, -32602),
    ({"jsonrpc": "2.0", "id": 1, "method": "sampling/createMessage", "params": {}}, -32601),
])
def test_bad_messages_get_the_right_error_and_the_bridge_carries_on(host: Host, message,
                                                                    code: int) -> None:
    bridge = ready_bridge(host)
    [answer] = bridge.receive(message)
    assert answer["error"]["code"] == code
    assert bridge.receive(request(99, "ping"))[0]["result"] == {}


def test_unknown_notifications_and_stray_responses_get_no_answer(host: Host) -> None:
    bridge = ready_bridge(host)
    assert bridge.receive({"jsonrpc": "2.0", "method": "ui/notifications/nonsense"}) == []
    assert bridge.receive({"jsonrpc": "2.0", "id": 77, "result": {}}) == []


def test_teardown_is_asked_and_answered(host: Host) -> None:
    bridge = ready_bridge(host)
    ask = bridge.teardown()
    assert ask["method"] == "ui/resource-teardown" and not bridge.torn_down
    bridge.receive({"jsonrpc": "2.0", "id": ask["id"] + 1, "result": {}})
    assert not bridge.torn_down  # not the answer to our request
    bridge.receive({"jsonrpc": "2.0", "id": ask["id"], "result": {}})
    assert bridge.torn_down
    directions = [d for d, _ in bridge.traffic]
    assert directions[0] == "from view" and "to view" in directions


def test_what_the_bridge_sends_validates_against_the_extension_schema(node, host) -> None:
    schema = json.loads((ROOT / "interop" / "node_modules" / "@modelcontextprotocol"
                         / "ext-apps" / "dist" / "src" / "generated"
                         / "schema.json").read_text())

    def body(message: dict[str, Any]) -> dict[str, Any]:
        """The schema describes method and params (the JSON-RPC envelope is MCP's own)."""
        assert message["jsonrpc"] == "2.0"
        return {k: message[k] for k in ("method", "params")}

    def check(name: str, value: Any) -> None:
        definition = schema["$defs"][name]  # its own $defs (if any) win: refs are local
        jsonschema.Draft202012Validator({**definition, "$defs": {
            **schema["$defs"], **definition.get("$defs", {})}}).validate(value)

    bridge = AppBridge(host, "poll", "poll_ask", {"question": "Tea?"})
    bridge.open()
    bridge.deliver_result(host.call_tool("poll_ask", {"question": "Tea?"}))
    [answer] = bridge.receive(INIT)
    # The generated schema.json turns the spec's (height | maxHeight) & (width | maxWidth)
    # into an allOf of objects that each forbid the other's keys: only {} passes it. So
    # containerDimensions is checked against the spec's TypeScript type here, by hand.
    result = {**answer["result"], "hostContext": dict(answer["result"]["hostContext"])}
    dimensions = result["hostContext"].pop("containerDimensions")
    assert set(dimensions) <= {"height", "maxHeight", "width", "maxWidth"}
    assert not {"height", "maxHeight"} <= set(dimensions)
    assert not {"width", "maxWidth"} <= set(dimensions)
    assert all(isinstance(v, int | float) and v > 0 for v in dimensions.values())
    check("McpUiInitializeResult", result)
    check("McpUiInitializeRequest", body(INIT))  # and the test's view speaks it right too
    tool_input, tool_result = bridge.receive(READY)
    check("McpUiToolInputNotification", body(tool_input))
    check("McpUiToolResultNotification", body(tool_result))
    check("McpUiResourceTeardownRequest", body(bridge.teardown()))
    with pytest.raises(jsonschema.ValidationError):
        check("McpUiInitializeResult", {**result, "hostContext": {"theme": "blue"}})


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
def test_an_app_served_by_the_official_python_sdk(version: str) -> None:
    """The official Python SDK 2.3.0 serves an app (mcp.server.apps.Apps,
    tests/servers/sdk_apps_server.py): mcpkit's host side reads and drives it the same way.
    (The SDK declares the extension only in 2026-07-28, with empty settings, and lists its
    app-only tool to every client: the host's own rules keep it from the model.)"""
    import sys

    server = [sys.executable, str(ROOT / "tests" / "servers" / "sdk_apps_server.py")]
    config = {"mcpServers": {"sdk": {"command": server[0], "args": server[1:],
                                     "version": version}}}
    with Host(config, client_options={"capabilities": DECLARES}) as running:
        assert [t["name"] for t in running.tools()] == ["tally_show"]
        asked: list[str] = []  # the SDK's tools say nothing of themselves: the host asks
        bridge = AppBridge(running, "sdk", "tally_show",
                           confirm=lambda name, arguments: asked.append(name) or True)
        view = bridge.open()
        assert "tally" in view.html and view.prefers_border is True
        bridge.deliver_result(running.call_tool("tally_show"))
        bridge.receive(INIT)
        tool_input, tool_result = bridge.receive(READY)
        assert tool_result["params"]["content"][0]["text"] == "0"
        [added] = bridge.receive(request(2, "tools/call", name="tally_add", arguments={}))
        assert added["result"]["content"][0]["text"] == "1"
        assert bridge.audit[-1]["outcome"] == "ok" and asked == ["tally_add"]


def test_the_notebook_host_records_the_views_wire_for_the_inspector(host, tmp_path) -> None:
    """AppView(..., log=...) writes each postMessage in wiretap's record format, so the wire
    inspector reads a view's traffic as it reads a server's. Driven here as the widget's
    front end would drive it (its messages to the kernel), without a browser; the browser
    test does the same in Chromium."""
    pytest.importorskip("anywidget")
    import time

    from mcpkit.app_widget import AppView
    from mcpkit.wiretap import FROM_SERVER, TO_SERVER, Trace

    log = tmp_path / "view.wire"
    view = AppView(host, "poll_ask", {"question": "Tea?"}, log=log)

    def send(message: dict[str, Any], then: int) -> None:  # then: records once answered
        view._on_msg(view.box, {"kind": "from_view", "message": message}, [])
        deadline = time.monotonic() + 10
        while len(Trace.from_file(log)) < then and time.monotonic() < deadline:
            time.sleep(0.02)

    try:
        send(INIT, 2)
        send(READY, 5)
        send(request(2, "tools/call", name="poll_vote", arguments={"choice": "yes"}), 7)
        trace = Trace.from_file(log)
        assert [(e.direction, e.kind, e.method) for e in trace.events] == [
            (TO_SERVER, "request", "ui/initialize"),
            (FROM_SERVER, "result", "ui/initialize"),
            (TO_SERVER, "notification", "ui/notifications/initialized"),
            (FROM_SERVER, "notification", "ui/notifications/tool-input"),
            (FROM_SERVER, "notification", "ui/notifications/tool-result"),
            (TO_SERVER, "request", "tools/call"),
            (FROM_SERVER, "result", "tools/call"),
        ]
        assert trace.events[-1].latency is not None  # paired with its request, as on a pipe
    finally:
        view.close()
