// A plain JavaScript worker doing the same D1 work as rowcall's Go worker, so
// docs/benchmarks.md can put the Go worker's latency beside it. It shares
// rowcall's local D1 database (same database_id, same --persist-to).
//
//   GET  /api/directory/{key}  the same D1 read as rowcall's row read: one
//                              statement for the row and its row_num (numbered
//                              here by a window over the table, where sqlstore
//                              counts; at the benchmark's 3 rows the same rows
//                              read), the same owner-key check.
//   POST /api/dispatch         what a warm dispatch of an http row does in the
//   {"key","body"}             Go worker, in plain JavaScript: the newest event
//                              id (the row cache's check: one query), the row
//                              and its breaker from D1 only when that id moved,
//                              the row's GET with $1 replaced, SHA-256 of input,
//                              output and contract, a chained and Ed25519-signed
//                              receipt, and one INSERT of it (into a table of
//                              its own, js_bench_receipts, with the receipts
//                              table's columns, so rowcall's chain is left alone).
const columns = `key, type, target, auth, content, updated_at, category, allowed_categories, seq,
	enabled, planner_visible, planner_rank, input_schema, examples, sensitive, runner, includes,
	created_at, version`;
const order = "seq IS NULL, seq, key";
const query = `SELECT ${columns}, row_num FROM (SELECT ${columns}, ROW_NUMBER() OVER (ORDER BY ${order}) AS row_num FROM directory) WHERE key = ?`;

const receiptColumns = `id, trace, parent, actor, key, type, runner, started_at, duration_ms, ok, material, shape, cost_usd,
	upstream_status, outcome, input_sha256, output_sha256, contract_sha256, token_id, seq, prev_sha256, sha256, sig, key_id`;
const insert = `INSERT INTO js_bench_receipts (${receiptColumns}) VALUES (${receiptColumns.split(",").map(() => "?").join(", ")})`;

// What the isolate keeps between calls, as the Go worker does.
const cache = { event: -1, rows: new Map() };
let chain = null; // {seq, hash} of the chain's end
let signer = null; // {key, id}

export default {
  async fetch(req, env) {
    const url = new URL(req.url);
    if (req.headers.get("x-terminal-key") !== env.ROWCALL_OWNER_KEY) {
      return Response.json({ error: "unauthorized" }, { status: 401 });
    }
    const m = url.pathname.match(/^\/api\/directory\/([^/]+)$/);
    if (req.method === "GET" && m) {
      const row = await env.DB.prepare(query).bind(decodeURIComponent(m[1])).first();
      if (!row) {
        return Response.json({ error: "not_found" }, { status: 404 });
      }
      return Response.json(row, { headers: { ETag: `"${row.version}"` } });
    }
    if (req.method === "POST" && url.pathname === "/api/dispatch") {
      return dispatch(await req.json(), env, url);
    }
    return Response.json({ error: "not_found" }, { status: 404 });
  },
};

async function dispatch(call, env, url) {
  const started = new Date();
  const { event } = await env.DB.prepare("SELECT COALESCE(MAX(id), 0) AS event FROM events").first();
  if (event !== cache.event) {
    cache.event = event;
    cache.rows.clear();
  }
  let looked = cache.rows.get(call.key);
  if (!looked) {
    const row = await env.DB.prepare(query).bind(call.key).first();
    if (!row) return Response.json({ error: "not_found" }, { status: 404 });
    const breaker = await env.DB.prepare("SELECT failures, opened_at FROM breakers WHERE key = ?").bind(call.key).first();
    looked = { row, breaker, contract: await sha256(JSON.stringify(row)) };
    cache.rows.set(call.key, looked);
  }
  const [method, target] = looked.row.target.split(" ");
  const res = await fetch(target.replace("$1", encodeURIComponent(call.body ?? "")), { method, redirect: "manual" });
  const text = await res.text();
  const result = `HTTP ${res.status}:${text}`;
  if (!signer) {
    const pair = await crypto.subtle.generateKey({ name: "Ed25519" }, false, ["sign", "verify"]);
    signer = { key: pair.privateKey, id: "js-bench" };
  }
  if (!chain) {
    await env.DB.prepare(`CREATE TABLE IF NOT EXISTS js_bench_receipts AS SELECT ${receiptColumns} FROM receipts WHERE 0`).run();
    const end = await env.DB.prepare("SELECT seq, sha256 FROM js_bench_receipts WHERE seq = (SELECT MAX(seq) FROM js_bench_receipts)").first();
    chain = { seq: end ? end.seq : 0, hash: end ? end.sha256 : "" };
  }
  const id = "inv_" + crypto.randomUUID().replaceAll("-", "").slice(0, 10);
  const rc = {
    id, trace: "t_" + id.slice(4), parent: null, actor: "owner:terminal-key", key: call.key, type: looked.row.type, runner: "http",
    started_at: started.toISOString(), duration_ms: Date.now() - started.getTime(), ok: 1, material: 1, shape: 0, cost_usd: 0,
    upstream_status: res.status, outcome: "ok", input_sha256: await sha256(call.body ?? ""), output_sha256: await sha256(result),
    contract_sha256: looked.contract, token_id: null, seq: chain.seq + 1, prev_sha256: chain.hash,
  };
  const canonical = new TextEncoder().encode(JSON.stringify(rc));
  rc.sha256 = await sha256(canonical);
  rc.sig = btoa(String.fromCharCode(...new Uint8Array(await crypto.subtle.sign({ name: "Ed25519" }, signer.key, canonical))));
  rc.key_id = signer.id;
  await env.DB.prepare(insert).bind(...receiptColumns.split(",").map((c) => rc[c.trim()])).run();
  chain = { seq: rc.seq, hash: rc.sha256 };
  return Response.json({
    ok: true, ran: true, trace: rc.trace, result,
    proof: { ok: true, invocation_id: id, public_receipt: `${url.origin}/receipt/${id}`, contract_sha256: rc.contract_sha256 },
  });
}

async function sha256(data) {
  const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
  const sum = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return Array.from(sum, (b) => b.toString(16).padStart(2, "0")).join("");
}
