// A plain JavaScript worker doing the same D1 read as rowcall's
// GET /api/directory/{key} (the same SQL, the same owner-key check), so
// docs/benchmarks.md can put the Go worker's latency beside it. It shares
// rowcall's local D1 database (same database_id, same --persist-to).
const columns = `key, type, target, auth, content, updated_at, category, allowed_categories, seq,
	enabled, planner_visible, planner_rank, input_schema, examples, sensitive, runner, includes,
	created_at, version`;
const order = "seq IS NULL, seq, key";
const query = `SELECT ${columns}, row_num FROM (SELECT ${columns}, ROW_NUMBER() OVER (ORDER BY ${order}) AS row_num FROM directory) WHERE key = ?`;

export default {
  async fetch(req, env) {
    const url = new URL(req.url);
    const m = url.pathname.match(/^\/api\/directory\/([^/]+)$/);
    if (req.method !== "GET" || !m) {
      return Response.json({ error: "not_found" }, { status: 404 });
    }
    if (req.headers.get("x-terminal-key") !== env.ROWCALL_OWNER_KEY) {
      return Response.json({ error: "unauthorized" }, { status: 401 });
    }
    const row = await env.DB.prepare(query).bind(decodeURIComponent(m[1])).first();
    if (!row) {
      return Response.json({ error: "not_found" }, { status: 404 });
    }
    return Response.json(row, { headers: { ETag: `"${row.version}"` } });
  },
};
