// The official TypeScript SDK's client, driving an MCP server, for the interop tests.
//
//   node ts_client.mjs stdio COMMAND [ARGS...]     a server on stdin/stdout
//   node ts_client.mjs http URL                    a streamable HTTP server
//
// Lists tools, resources, templates and prompts, calls each tool named in TS_CALLS (a JSON
// object {tool: arguments}), reads TS_READ (a URI) and gets TS_PROMPT ({name, arguments}),
// then prints one JSON object with everything it saw (and the negotiated version) on stdout.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [mode, target, ...rest] = process.argv.slice(2);
const transport = mode === "stdio"
  ? new StdioClientTransport({ command: target, args: rest, stderr: "inherit" })
  : new StreamableHTTPClientTransport(new URL(target));
const client = new Client({ name: "ts-sdk-interop", version: "1.0.0" });
const timer = setTimeout(() => { console.error("ts_client: timed out"); process.exit(3); }, 30000);

const out = { protocolVersion: null };
const setVersion = transport.setProtocolVersion?.bind(transport);
transport.setProtocolVersion = (version) => {  // the version initialize agreed on
  out.protocolVersion = version;
  setVersion?.(version);
};
await client.connect(transport);
out.serverVersion = client.getServerVersion();
out.tools = (await client.listTools()).tools;
out.resources = (await client.listResources()).resources;
out.templates = (await client.listResourceTemplates()).resourceTemplates;
out.prompts = (await client.listPrompts()).prompts;
out.calls = {};
for (const [name, args] of Object.entries(JSON.parse(process.env.TS_CALLS || "{}"))) {
  out.calls[name] = await client.callTool({ name, arguments: args });
}
if (process.env.TS_READ) out.read = await client.readResource({ uri: process.env.TS_READ });
if (process.env.TS_PROMPT) out.prompt = await client.getPrompt(JSON.parse(process.env.TS_PROMPT));
await client.close();
clearTimeout(timer);
process.stdout.write(JSON.stringify(out) + "\n");
