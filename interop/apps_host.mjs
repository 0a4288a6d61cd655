// A real MCP Apps host stack around an mcpkit app, for the interop tests: the official
// TypeScript client (@modelcontextprotocol/client) connects to the server, the official
// host-side library (@modelcontextprotocol/ext-apps/app-bridge) reads its tools and view the
// way hosts do, and the official view-side library (App) talks to that bridge through a linked
// in-memory transport, as a view's page would through postMessage.
//
//   node apps_host.mjs COMMAND [ARGS...]    an MCP Apps server on stdin/stdout
//
// APPS_TOOL names the tool that has the view, APPS_ARGS its arguments (JSON), APPS_VIEW_CALLS
// the calls the view makes ([[name, arguments], ...]). Prints one JSON object on stdout.
import { Client, InMemoryTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import {
  AppBridge,
  RESOURCE_MIME_TYPE,
  getToolUiResourceUri,
  isToolVisibilityAppOnly,
  isToolVisibilityModelOnly,
} from "@modelcontextprotocol/ext-apps/app-bridge";
import { App } from "@modelcontextprotocol/ext-apps";

const [command, ...args] = process.argv.slice(2);
const timer = setTimeout(() => { console.error("apps_host: timed out"); process.exit(3); }, 30000);
const out = { mimeType: RESOURCE_MIME_TYPE };

// What a host that shows views declares (the extension's settings, SEP-1724 style).
const client = new Client({ name: "official-apps-host", version: "1.0.0" }, {
  capabilities: { extensions: { "io.modelcontextprotocol/ui": { mimeTypes: [RESOURCE_MIME_TYPE] } } },
});
await client.connect(new StdioClientTransport({ command, args, stderr: "inherit" }));
out.serverExtensions = client.getServerCapabilities()?.extensions ?? null;

const tools = (await client.listTools()).tools;
out.tools = tools.map((tool) => ({
  name: tool.name,
  view: getToolUiResourceUri(tool) ?? null,
  appOnly: isToolVisibilityAppOnly(tool),
  modelOnly: isToolVisibilityModelOnly(tool),
}));
const name = process.env.APPS_TOOL;
const toolArgs = JSON.parse(process.env.APPS_ARGS || "{}");
const tool = tools.find((t) => t.name === name);
const uri = getToolUiResourceUri(tool);
const read = await client.readResource({ uri });
out.view = read.contents.map((c) => ({ uri: c.uri, mimeType: c.mimeType, meta: c._meta ?? null,
                                      html: typeof c.text === "string" && c.text.length > 0 }));

// The host side: the bridge forwards the view's tools/call to the server through the client.
const bridge = new AppBridge(client, { name: "official-apps-host", version: "1.0.0" },
                             { openLinks: {}, serverTools: {}, logging: {} });
const [hostEnd, viewEnd] = InMemoryTransport.createLinkedPair();
const ready = new Promise((resolve) => { bridge.oninitialized = resolve; });
await bridge.connect(hostEnd);

// The view side: the official App, as a view's page uses it.
const app = new App({ name: "probe-view", version: "1.0.0" }, {}, { autoResize: false });  // no DOM here
const seen = { input: null, result: null };
const gotResult = new Promise((resolve) => {
  app.ontoolresult = (result) => { seen.result = result; resolve(); };
});
app.ontoolinput = (params) => { seen.input = params.arguments; };
await app.connect(viewEnd);
await ready;
out.hostContext = app.getHostContext() ?? null;

const result = await client.callTool({ name, arguments: toolArgs });
await bridge.sendToolInput({ arguments: toolArgs });
await bridge.sendToolResult(result);
await gotResult;
out.viewSaw = seen;
out.viewCalls = [];
for (const [callName, callArgs] of JSON.parse(process.env.APPS_VIEW_CALLS || "[]")) {
  try {
    out.viewCalls.push({ name: callName, result: await app.callServerTool({ name: callName,
                                                                             arguments: callArgs }) });
  } catch (error) {
    out.viewCalls.push({ name: callName, error: String(error?.message ?? error) });
  }
}
await app.close();
await bridge.close();
await client.close();
clearTimeout(timer);
process.stdout.write(JSON.stringify(out) + "\n");
