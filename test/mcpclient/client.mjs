// A real MCP client — the official TypeScript SDK's Client over
// StreamableHTTPClientTransport — driven by test/mcp_test.go against a running
// rowcall host. It reports each step as one JSON line on stdout; the Go test
// asserts on them. When it prints {"event":"waiting"} it waits (without
// reconnecting) for notifications/tools/list_changed, which the Go test causes
// by creating a row through the REST API.
//
// Environment: MCP_URL (…/mcp), OWNER_KEY, TOKEN (a capability token whose
// scope the test chose), CALL_KEY and CALL_ARGS (a row to call), QUERY (for
// search_capabilities).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const env = (name) => {
  const v = process.env[name];
  if (v === undefined) throw new Error(`missing ${name}`);
  return v;
};
const emit = (event, data = {}) => process.stdout.write(JSON.stringify({ event, ...data }) + "\n");

async function connect(secret, onListChanged) {
  const client = new Client({ name: "rowcall-test-ts", version: "1.0.0" });
  if (onListChanged) client.setNotificationHandler(ToolListChangedNotificationSchema, onListChanged);
  const transport = new StreamableHTTPClientTransport(new URL(env("MCP_URL")), {
    requestInit: { headers: { Authorization: `Bearer ${secret}` } },
  });
  await client.connect(transport);
  return { client, transport };
}

const names = (res) => res.tools.map((t) => t.name);

async function main() {
  let changed;
  const listChanged = new Promise((resolve) => (changed = resolve));
  const owner = await connect(env("OWNER_KEY"), () => changed());
  emit("initialized", {
    protocolVersion: owner.transport.protocolVersion,
    sessionId: owner.transport.sessionId,
    server: owner.client.getServerVersion(),
    capabilities: owner.client.getServerCapabilities(),
  });

  const listed = await owner.client.listTools();
  emit("listed", {
    tools: names(listed),
    order: Object.fromEntries(listed.tools.map((t) => [t.name, Object.keys(t.inputSchema.properties ?? {})])),
  });

  const called = await owner.client.callTool({ name: env("CALL_KEY"), arguments: { args: env("CALL_ARGS") } });
  emit("called", { result: called });

  const searched = await owner.client.callTool({ name: "search_capabilities", arguments: { query: env("QUERY") } });
  emit("searched", { result: searched });

  const viaMeta = await owner.client.callTool({ name: "call_capability", arguments: { key: env("CALL_KEY"), args: env("CALL_ARGS") } });
  emit("called_meta", { result: viaMeta });

  const unknown = await owner.client.callTool({ name: "call_capability", arguments: { key: "NO_SUCH_ROW" } });
  emit("called_unknown", { result: unknown });

  const scoped = await connect(env("TOKEN"));
  emit("scoped", { tools: names(await scoped.client.listTools()) });
  await scoped.client.close();

  emit("waiting");
  const timeout = new Promise((_, reject) => setTimeout(() => reject(new Error("no notifications/tools/list_changed within 20 s")), 20000));
  await Promise.race([listChanged, timeout]);
  emit("list_changed", { tools: names(await owner.client.listTools()), sessionId: owner.transport.sessionId });

  await owner.transport.terminateSession();
  await owner.client.close();
  emit("done");
}

main().then(
  () => process.exit(0),
  (err) => {
    emit("error", { message: String(err && err.stack ? err.stack : err) });
    process.exit(1);
  },
);
