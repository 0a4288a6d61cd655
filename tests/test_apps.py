"""MCP Apps, the serving side and the host's rules (mcpkit.apps): a view served as a ui://
resource, tools that name it, the extension negotiated in both eras, app-only tools kept from
clients without views and from models, and the Content-Security-Policy a host builds. What
mcpkit sends is validated against the official extension's own JSON Schema (the schema.json
of @modelcontextprotocol/ext-apps, pinned in interop/package-lock.json)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from mcpkit import Client, Server, apps, toolformats
from mcpkit.host import Host, HostError, UnknownName

ROOT = Path(__file__).resolve().parents[1]
ERAS = ["2024-11-05", "2025-11-25", "2026-07-28"]
DECLARES = {"extensions": {apps.EXTENSION: {"mimeTypes": [apps.MIME_TYPE]}}}
VIEW = "<!doctype html><html><body><p id=votes>0</p></body></html>"


def poll_server() -> Server:
    server = Server("poll", "1.0.0")
    votes = {"yes": 0, "no": 0}
    apps.add_view(server, "ui://poll/board", VIEW, title="Poll board",
                  csp={"connectDomains": ["https://api.example.com"],
                       "resourceDomains": ["https://*.cdn.example"]},
                  permissions=["clipboardWrite"], prefers_border=True)

    @apps.tool(server, "ui://poll/board")
    def ask(question: str) -> str:
        """Put a question to the vote."""
        return f"vote open: {question}"

    @apps.tool(server, "ui://poll/board", visibility=["app"])
    def vote(choice: str) -> str:
        """Count one vote (the board's buttons call it)."""
        votes[choice] += 1
        return json.dumps(votes)

    @apps.tool(server, None, visibility=["model"])
    def close_poll() -> str:
        """Close the vote."""
        return "closed"

    @server.tool
    def plain() -> str:
        """A tool without a view."""
        return "plain"

    return server


@pytest.mark.parametrize("version", ERAS)
def test_a_client_with_views_sees_the_extension_the_view_and_every_tool(version: str) -> None:
    with Client(server=poll_server(), version=version, capabilities=DECLARES) as client:
        assert client.server_capabilities["extensions"][apps.EXTENSION] == {
            "mimeTypes": [apps.MIME_TYPE]}
        tools = {t["name"]: t for t in client.list_tools()}
        assert set(tools) == {"ask", "vote", "close_poll", "plain"}
        assert tools["ask"]["_meta"] == {"ui": {"resourceUri": "ui://poll/board",
                                                "visibility": ["model", "app"]}}
        assert tools["vote"]["_meta"]["ui"]["visibility"] == ["app"]
        assert "_meta" not in tools["plain"]
        [listed] = client.list_resources()
        assert listed["uri"] == "ui://poll/board" and listed["mimeType"] == apps.MIME_TYPE
        assert listed["_meta"]["ui"]["prefersBorder"] is True  # reviewable when connecting
        [contents] = client.read_resource("ui://poll/board")["contents"]
        assert contents["text"] == VIEW and contents["mimeType"] == apps.MIME_TYPE
        assert contents["_meta"]["ui"] == {
            "csp": {"connectDomains": ["https://api.example.com"],
                    "resourceDomains": ["https://*.cdn.example"]},
            "permissions": {"clipboardWrite": {}}, "prefersBorder": True}
        answer = client.call_tool("vote", {"choice": "yes"})
        assert json.loads(answer["content"][0]["text"]) == {"yes": 1, "no": 0}


@pytest.mark.parametrize("version", ERAS)
def test_a_client_without_views_is_not_shown_the_tools_only_a_view_calls(version: str) -> None:
    with Client(server=poll_server(), version=version) as client:
        assert {t["name"] for t in client.list_tools()} == {"ask", "close_poll", "plain"}
        assert client.server_capabilities["extensions"][apps.EXTENSION]  # still declared


def test_declaring_the_extension_is_read_strictly() -> None:
    assert apps.client_supports(DECLARES)
    for capabilities in ({}, {"extensions": {}}, {"extensions": {apps.EXTENSION: {}}},
                         {"extensions": {apps.EXTENSION: {"mimeTypes": ["text/html"]}}},
                         {"extensions": {apps.EXTENSION: {"mimeTypes": apps.MIME_TYPE}}},
                         {"extensions": [apps.EXTENSION]}, None):
        assert not apps.client_supports(capabilities), capabilities


@pytest.mark.parametrize("mistake, message", [
    (lambda s: apps.add_view(s, "https://x/view", VIEW), "ui://"),
    (lambda s: apps.add_view(s, "ui://", VIEW), "ui://"),
    (lambda s: apps.add_view(s, "ui://v", VIEW, csp={"connect": ["https://a.com"]}),
     "unknown csp field"),
    (lambda s: apps.add_view(s, "ui://v", VIEW, csp={"connectDomains": "https://a.com"}),
     "list of strings"),
    (lambda s: apps.add_view(s, "ui://v", VIEW,
                             csp={"connectDomains": ["https://a.com; script-src *"]}),
     "not an origin"),
    (lambda s: apps.add_view(s, "ui://v", VIEW, csp={"resourceDomains": ["*"]}),
     "not an origin"),
    (lambda s: apps.add_view(s, "ui://v", VIEW, permissions=["camera", "usb"]),
     "unknown permission"),
    (lambda s: apps.tool(s, "ui://v", visibility=["agent"]), "visibility"),
    (lambda s: apps.tool(s, "ui://v", visibility=[]), "visibility"),
    (lambda s: apps.tool(s, "view", visibility=["app"]), "ui://"),
    (lambda s: apps.tool(s, 7, visibility=["app"]), "ui://"),
    (lambda s: apps.tool(s, ["ui://v"], visibility=["app"]), "ui://"),
    (lambda s: apps.tool(s, "ui://v", visibility={"app"}), "visibility"),
])
def test_mistakes_fail_at_registration(mistake, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        mistake(Server("s"))


# -- the host's rules ----------------------------------------------------------------------


def test_host_keeps_app_only_tools_from_the_model_and_lets_the_view_call_them() -> None:
    other = Server("other")

    @other.tool
    def lookup() -> str:
        return "x"

    config = {"mcpServers": {"poll": {"server": poll_server()},
                             "other": {"server": other}}}
    with Host(config, client_options={"capabilities": DECLARES}) as host:
        offered = {t["name"] for t in host.tools()}
        assert offered == {"ask", "close_poll", "plain", "lookup"}
        assert {t["name"] for t in host.anthropic_tools()} == offered
        assert {t["function"]["name"] for t in host.openai_tools()} == offered
        with pytest.raises(HostError, match="app view only"):
            host.call_tool("vote", {"choice": "yes"})
        _, error = host.run_tool_call(toolformats.ToolCall("1", "vote", {"choice": "no"}))
        assert error is not None and "app view only" in error
        # The view of a poll tool calls through the host: its server's app tools only.
        answer = host.call_tool_from_app("poll", "vote", {"choice": "yes"})
        assert json.loads(answer["content"][0]["text"]) == {"yes": 1, "no": 0}
        assert host.call_tool_from_app("poll", "ask", {"question": "q"})["content"]
        with pytest.raises(HostError, match="not for app views"):
            host.call_tool_from_app("poll", "close_poll")
        with pytest.raises(UnknownName):
            host.call_tool_from_app("poll", "lookup")  # another server's tool
        with pytest.raises(UnknownName):
            host.call_tool_from_app("nobody", "vote")


def test_visibility_a_host_cannot_read_grants_nothing() -> None:
    def tool(meta: Any) -> dict[str, Any]:
        return {"name": "t", "inputSchema": {"type": "object"}, "_meta": meta}

    assert apps.model_visible({"name": "t"}) and apps.app_visible({"name": "t"})
    assert apps.model_visible(tool({"ui": {"resourceUri": "ui://a"}}))
    for meta in ({"ui": {"visibility": "model"}}, {"ui": {"visibility": ["agent"]}},
                 {"ui": {"visibility": []}}):
        assert not apps.model_visible(tool(meta)) and not apps.app_visible(tool(meta))
    assert not apps.model_visible(tool({"ui": {"visibility": ["app"]}}))
    assert toolformats.callable_tools([tool({"ui": {"visibility": ["app"]}})]) == []
    assert apps.resource_uri(tool({"ui/resourceUri": "ui://old/flat"})) == "ui://old/flat"
    assert apps.resource_uri(tool({"ui": {"resourceUri": "https://x"}})) is None


def test_content_security_policy_default_declared_and_never_looser() -> None:
    default, refused = apps.content_security_policy(None)
    assert refused == []
    directives = dict(d.split(" ", 1) for d in default.split("; "))
    assert directives["default-src"] == "'none'"
    assert directives["connect-src"] == "'none'" and directives["frame-src"] == "'none'"
    assert directives["script-src"] == "'self' 'unsafe-inline'"
    assert directives["img-src"] == "'self' data:" and directives["object-src"] == "'none'"
    assert directives["base-uri"] == "'self'"

    declared, refused = apps.content_security_policy({
        "connectDomains": ["https://api.example.com", "https://a.com; script-src *",
                           "*", "'unsafe-eval'", "data:", "javascript:alert(1)"],
        "resourceDomains": ["https://*.cdn.example", "https://x.com 'unsafe-eval'"],
        "frameDomains": "https://www.youtube.com",
        "baseUriDomains": [7]})
    directives = dict(d.split(" ", 1) for d in declared.split("; "))
    assert directives["connect-src"] == "https://api.example.com"
    assert directives["script-src"] == "'self' 'unsafe-inline' https://*.cdn.example"
    assert directives["frame-src"] == "'none'" and directives["base-uri"] == "'self'"
    assert len(refused) == 8
    assert "unsafe-eval" not in declared and "*;" not in declared and "javascript" not in declared


# -- what mcpkit sends, against the extension's own schema ---------------------------------


@pytest.fixture(scope="module")
def ext_apps_schema(node: str) -> dict[str, Any]:
    path = (ROOT / "interop" / "node_modules" / "@modelcontextprotocol" / "ext-apps" / "dist"
            / "src" / "generated" / "schema.json")
    return json.loads(path.read_text())


def _validator(schema: dict[str, Any], name: str) -> jsonschema.Validator:
    definition = schema["$defs"][name]  # its own $defs (if any) win: refs are local
    return jsonschema.Draft202012Validator({**definition, "$defs": {
        **schema["$defs"], **definition.get("$defs", {})}})


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
def test_what_mcpkit_sends_validates_against_the_extension_schema(ext_apps_schema,
                                                                  version: str) -> None:
    tool_meta = _validator(ext_apps_schema, "McpUiToolMeta")
    resource_meta = _validator(ext_apps_schema, "McpUiResourceMeta")
    with Client(server=poll_server(), version=version, capabilities=DECLARES) as client:
        tools = [t for t in client.list_tools() if "_meta" in t]
        assert len(tools) == 3
        for tool in tools:
            tool_meta.validate(tool["_meta"]["ui"])
        [contents] = client.read_resource("ui://poll/board")["contents"]
        resource_meta.validate(contents["_meta"]["ui"])
    # The schema can fail: what a careless server might send does not pass.
    with pytest.raises(jsonschema.ValidationError):
        tool_meta.validate({"resourceUri": "ui://a", "visibility": ["agent"]})
    with pytest.raises(jsonschema.ValidationError):
        resource_meta.validate({"csp": {"connect": ["https://a.com"]}})


def test_the_policy_comes_before_anything_in_the_page_can_run() -> None:
    pytest.importorskip("anywidget")
    from mcpkit.app_widget import with_policy

    policy, _ = apps.content_security_policy(None)
    meta = '<meta http-equiv="Content-Security-Policy" content="default-src &#x27;none&#x27;'
    for page in ("<!doctype html><script>fetch('x')</script><html></html>",
                 "  <!DOCTYPE html>\n<html><head></head></html>",
                 "<script>fetch('x')</script>", ""):
        framed = with_policy(page, policy)
        first_script = framed.find("<script")
        assert meta in framed and (first_script == -1 or framed.index(meta) < first_script)
        assert framed.replace(framed[framed.index(meta):framed.index(">", framed.index(meta))
                                     + 1], "") == page  # nothing else changed
    quoted = with_policy("<p>", 'x" onload="alert(1)')
    assert 'onload="' not in quoted  # a policy cannot break out of its attribute


def test_an_mcpkit_app_under_the_official_host_and_view_libraries(node: str) -> None:
    """mcpkit's poll app as a real host sees it: the official TypeScript client connects
    over stdio, the official host-side library (ext-apps' app-bridge) reads the tools and the
    view, and the official view-side library (App) gets the tool's input and result and calls
    the app's tool through the bridge (interop/apps_host.mjs)."""
    arguments = {"question": "Tea or coffee?", "choices": ["tea", "coffee"]}
    env = {**os.environ, "APPS_TOOL": "poll_ask", "APPS_ARGS": json.dumps(arguments),
           "APPS_VIEW_CALLS": json.dumps([["poll_vote", {"choice": "tea"}],
                                          ["poll_vote", {"choice": "coffee"}],
                                          ["poll_vote", {"choice": "tea"}], ["nope", {}]])}
    run = subprocess.run([node, str(ROOT / "interop" / "apps_host.mjs"), sys.executable, "-m",
                          "mcpkit.examples.poll"], capture_output=True, text=True, timeout=60,
                         env=env, cwd=ROOT / "interop")
    assert run.returncode == 0, run.stderr[-3000:]
    seen = json.loads(run.stdout)
    assert seen["serverExtensions"][apps.EXTENSION] == {"mimeTypes": [apps.MIME_TYPE]}
    assert seen["mimeType"] == apps.MIME_TYPE  # the library's constant is ours
    tools = {t["name"]: t for t in seen["tools"]}
    assert tools["poll_ask"] == {"name": "poll_ask", "view": "ui://poll/board",
                                 "appOnly": False, "modelOnly": False}
    assert tools["poll_vote"]["appOnly"] and tools["poll_reset"]["appOnly"]
    assert tools["poll_close"]["modelOnly"] and tools["poll_close"]["view"] is None
    (view,) = seen["view"]
    assert view == {"uri": "ui://poll/board", "mimeType": apps.MIME_TYPE, "html": True,
                    "meta": {"ui": {"prefersBorder": True}}}
    assert seen["viewSaw"]["input"] == arguments
    assert seen["viewSaw"]["result"]["structuredContent"] == {
        "question": "Tea or coffee?", "counts": {"tea": 0, "coffee": 0}, "open": True}
    votes = [c["result"]["structuredContent"]["counts"] for c in seen["viewCalls"][:3]]
    assert votes == [{"tea": 1, "coffee": 0}, {"tea": 1, "coffee": 1}, {"tea": 2, "coffee": 1}]
    assert "Unknown tool" in seen["viewCalls"][3]["error"]
