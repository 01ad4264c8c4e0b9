// The official TypeScript SDK client signing in with OAuth, as a desktop
// client does: it is given only MCP_URL, finds the authorization server from
// the 401, registers itself, and "opens a browser" by printing
// {"event":"authorize","url":…}; test/oauth_test.go opens that URL in
// headless Chromium and approves in the console, whose redirect reaches this
// script's loopback callback. Then it lists and calls tools (CALL_KEY,
// CALL_ARGS), prints {"event":"waiting"} and, on a line on stdin (the test
// has revoked the token in the console), calls again and reports the result.
import http from "node:http";
import readline from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";

const emit = (event, data = {}) => process.stdout.write(JSON.stringify({ event, ...data }) + "\n");
const url = new URL(process.env.MCP_URL);

let gotCode;
const code = new Promise((resolve) => (gotCode = resolve));
const callback = http.createServer((req, res) => {
  const q = new URL(req.url, "http://127.0.0.1").searchParams;
  res.end("signed in; you may close this window");
  gotCode(q);
});
await new Promise((resolve) => callback.listen(0, "127.0.0.1", resolve));
const redirectUrl = `http://127.0.0.1:${callback.address().port}/callback`;

const store = {};
let authorizations = 0;
const provider = {
  get redirectUrl() { return redirectUrl; },
  state: () => "ts-state",
  get clientMetadata() {
    return { client_name: "rowcall TypeScript test client", redirect_uris: [redirectUrl],
      grant_types: ["authorization_code", "refresh_token"], response_types: ["code"], token_endpoint_auth_method: "none" };
  },
  clientInformation: () => store.client,
  saveClientInformation: (c) => { store.client = c; },
  tokens: () => store.tokens,
  saveTokens: (t) => { store.tokens = t; },
  redirectToAuthorization: (u) => { authorizations++; emit(authorizations === 1 ? "authorize" : "reauthorize", { url: u.toString() }); },
  saveCodeVerifier: (v) => { store.verifier = v; },
  codeVerifier: () => store.verifier,
  invalidateCredentials: (scope) => { if (scope === "all" || scope === "tokens") delete store.tokens; },
};

async function connect() {
  const client = new Client({ name: "rowcall-test-ts-oauth", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(url, { authProvider: provider });
  await client.connect(transport);
  return client;
}

async function main() {
  let client;
  try {
    client = await connect();
    throw new Error("connected without signing in");
  } catch (e) {
    if (!(e instanceof UnauthorizedError)) throw e;
  }
  const q = await code;
  if (q.get("error")) throw new Error("authorization refused: " + q.get("error"));
  emit("redirected", { state: q.get("state"), iss: q.get("iss") });
  const transport = new StreamableHTTPClientTransport(url, { authProvider: provider });
  await transport.finishAuth(q.get("code"));
  emit("token", { prefix: store.tokens.access_token.slice(0, 4), refresh: !!store.tokens.refresh_token, client_id: store.client.client_id });
  client = await connect();
  emit("tools", { names: (await client.listTools()).tools.map((t) => t.name) });
  const args = { args: process.env.CALL_ARGS };
  const called = await client.callTool({ name: process.env.CALL_KEY, arguments: args });
  emit("called", { isError: !!called.isError });
  emit("waiting");
  const lines = readline.createInterface({ input: process.stdin });
  for await (const _ of lines) break;
  try {
    const again = await client.callTool({ name: process.env.CALL_KEY, arguments: args });
    emit("after_revoke", { ok: !again.isError });
  } catch (e) {
    emit("after_revoke", { ok: false, message: String(e.message || e) });
  }
  await client.close().catch(() => {});
  callback.close();
  emit("done");
}

main().then(() => process.exit(0), (e) => { emit("error", { message: String(e.stack || e) }); process.exit(1); });
