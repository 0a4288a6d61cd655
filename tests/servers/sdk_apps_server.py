"""An MCP Apps server written with the official Python SDK (PyPI ``mcp``, pinned to 2.3.0),
``mcp.server.apps.Apps``: a tally with a view. ``tally_show`` (model and app) names the view;
``tally_add`` only the view calls. The view is ours, a few lines of the view's side of the
protocol by hand; everything on the wire between host and server is the SDK's."""

from __future__ import annotations

from mcp.server.apps import Apps
from mcp.server.mcpserver import MCPServer

VIEW = """<!doctype html><html><body>
<p>tally: <b id="count">?</b></p><button id="add">+1</button><p id="status"></p>
<script>
let next = 1; const waiting = new Map();
function request(method, params) {
  const id = next++;
  parent.postMessage({jsonrpc: "2.0", id, method, params}, "*");
  return new Promise((resolve, reject) => waiting.set(id, {resolve, reject}));
}
function show(result) {
  const text = result && result.content && result.content[0] && result.content[0].text;
  if (text !== undefined) document.getElementById("count").textContent = text;
}
window.addEventListener("message", (event) => {
  const m = event.data;
  if (event.source !== parent || !m || m.jsonrpc !== "2.0") return;
  if (m.method === undefined && waiting.has(m.id)) {
    const {resolve, reject} = waiting.get(m.id); waiting.delete(m.id);
    m.error ? reject(m.error) : resolve(m.result);
  } else if (m.method === "ui/notifications/tool-result") { show(m.params); }
});
document.getElementById("add").onclick = () => request("tools/call",
  {name: "tally_add", arguments: {}}).then(show,
  (e) => { document.getElementById("status").textContent = e.message; });
request("ui/initialize", {protocolVersion: "2026-01-26", appCapabilities: {},
  appInfo: {name: "tally", version: "1"}}).then(() =>
  parent.postMessage({jsonrpc: "2.0", method: "ui/notifications/initialized"}, "*"));
</script></body></html>"""

apps = Apps()
_count = {"n": 0}


@apps.tool(resource_uri="ui://tally/view", description="Show the tally.")
def tally_show() -> str:
    return str(_count["n"])


@apps.tool(resource_uri="ui://tally/view", visibility=["app"], description="Add one.")
def tally_add() -> str:
    _count["n"] += 1
    return str(_count["n"])


apps.add_html_resource("ui://tally/view", VIEW, title="Tally", prefers_border=True)
mcp = MCPServer("sdk-apps", version="2.3.0", extensions=[apps])

if __name__ == "__main__":
    mcp.run()
