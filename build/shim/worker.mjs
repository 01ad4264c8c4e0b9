// rowcall's Cloudflare Worker entry: one Go instance per isolate.
//
// build/worker.sh copies this file to build/out/worker/worker.mjs, beside
// syumai/workers' wasm_exec.js (Go's wasm_exec.js with syumai's "context"
// global) and app.wasm (GOOS=js GOARCH=wasm ./worker). It replaces syumai's
// worker.mjs, which starts a fresh Go runtime for every request: here the Go
// program starts on the isolate's first request and serves every request
// after it, so the Go runtime, the handler, its caches and the fn runner's
// compiled modules outlive the request that built them.
//
// Per request, Go gets the request's own env and ExecutionContext (never a
// global copy): binding.serve(head, body, env, ctx, respond); see
// worker/serve.go. A Cron Trigger's event goes the same way, with its own
// env and ExecutionContext: binding.scheduled(cron, env, ctx, done); see
// worker/scheduled.go. Go reaches the platform only through the helpers below —
// d1, fetch, r2, call (a binding's method, JSON in and out) and sign (a
// receipt's Ed25519 signature, worker/sign.go, which needs none) — always with
// a binding taken from the env of the request it works for, and each answers
// through one call of
// binding.complete (worker/ops.go).
//
// Lifecycle: the instance starts lazily (workerd allows no I/O, timers or
// randomness at module scope, and the first request pays the start); Go's main
// never returns. If the program exits or traps, every request it was serving
// fails with a 503, and the next request starts a fresh instance.
//
// Request contexts. One isolate serves concurrent requests, and Go runs every
// goroutine that is ready whenever JavaScript calls into it: so while workerd
// runs request A's callback, Go may start I/O for request B, which workerd
// accounts to A's context; and B may wait on work running in A's context (a
// lock, the receipt log's group commit) with nothing pending in its own.
// workerd resolves a promise across request contexts (the continuation runs in
// the context that created it), but it cancels a request whose context has
// nothing left to wait on ("your Worker's code had hung"), and a finished
// request's context takes its pending I/O with it. So the shim
//   - knows, every time it calls into Go, whose context it is running in
//     (serve: that request's; an operation's answer: the context that started
//     the operation; a Go timer: the context that set it), and counts each
//     operation Go starts against that context;
//   - keeps a request's context alive (ctx.waitUntil) until its response is
//     done and the operations counted against it have answered;
//   - keeps a timer pending in a request's own context while it waits for Go,
//     as workerd's own cross-context tests do, so it is not taken for hung.
import "./wasm_exec.js";
import app from "./app.wasm";

// Go's stdout and stderr: wasm_exec.js writes both with console.log, which
// wrangler shows at its "log" level only (`wrangler dev --log-level info`
// drops it). Lines of stderr — a panic's trace, the runtime's fatal errors —
// go to console.error; the worker's own log goes through the console method
// of each record's level (worker/log.go).
{
  const pending = { 1: "", 2: "" };
  const decoders = { 1: new TextDecoder("utf-8"), 2: new TextDecoder("utf-8") };
  globalThis.fs.writeSync = (fd, buf) => {
    const f = fd === 2 ? 2 : 1;
    pending[f] += decoders[f].decode(buf, { stream: true });
    const nl = pending[f].lastIndexOf("\n");
    if (nl !== -1) {
      (f === 2 ? console.error : console.log)(pending[f].substring(0, nl));
      pending[f] = pending[f].substring(nl + 1);
    }
    return buf.length;
  };
}

let live = null; // the instance serving this isolate
let started = 0; // instances this isolate has started

// A request context as the shim tracks it. From its start it holds the
// request's context open (ctx.waitUntil) until the response is done and every
// operation Go started in it has answered: operations survive a client that
// goes away, and the context closes as soon as nothing is left in it.
class Context {
  constructor(ctx) {
    this.ops = 0; // operations in flight in this context
    this.ended = false;
    this.release = null;
    ctx.waitUntil(new Promise((resolve) => (this.release = resolve)));
  }
  end() {
    this.ended = true;
    this.check();
  }
  done() {
    this.ops--;
    this.check();
  }
  check() {
    if (this.ended && this.ops === 0 && this.release !== null) {
      this.release();
      this.release = null;
    }
  }
}

class Instance {
  constructor() {
    this.number = ++started;
    this.current = null; // the Context Go is running in, while it runs
    this.failures = new Set(); // reject functions of what Go still owes an answer
    this.contexts = new Set(); // contexts holding operations
    this.dead = null;
    const t0 = Date.now();
    const go = new Go();
    this.go = go;
    go.exit = (code) => this.die(new Error(`the Go program exited with code ${code}`));
    const resume = go._resume.bind(go);
    go._resume = () => {
      if (this.dead) throw this.dead;
      try {
        resume();
      } catch (e) {
        this.die(e); // a trap leaves the Go runtime unusable
        throw e;
      }
    };
    // Go's timers: the callback runs in the context that set it.
    const schedule = go.importObject.gojs["runtime.scheduleTimeoutEvent"];
    go.importObject.gojs["runtime.scheduleTimeoutEvent"] = (sp) => {
      const context = this.current;
      const realSetTimeout = globalThis.setTimeout;
      globalThis.setTimeout = (fn, ms) => realSetTimeout(() => this.enter(context, fn), ms);
      try {
        schedule(sp);
      } finally {
        globalThis.setTimeout = realSetTimeout;
      }
    };
    // syumai's runtime context (its wasm_exec.js serves it as the global
    // "context"): rowcall's helpers, and binding, where Go registers serve
    // and complete.
    const binding = {};
    this.binding = binding;
    const context = {
      binding,
      instance: this.number,
      d1: (id, db, op, sql, params) => this.op(id, () => d1(db, op, sql, params)),
      fetch: (id, head, body, max) => this.op(id, () => fetchFor(head, body, max)),
      r2: (id, bucket, op, key, body) => this.op(id, () => r2(bucket, op, key, body)),
      call: (id, target, method, args) => this.op(id, () => call(target, method, args)),
      sign: (id, seed, msg) => this.op(id, () => sign(seed, msg)),
    };
    const wasm = new WebAssembly.Instance(app, go.importObject);
    const instantiated = Date.now();
    // run executes main synchronously until it waits: serve is registered then.
    go.run(wasm, context).catch((e) => this.die(e));
    if (this.dead) throw this.dead;
    if (typeof binding.serve !== "function" || typeof binding.complete !== "function") {
      this.die(new Error("the Go program did not register serve and complete"));
      throw this.dead;
    }
    console.info(`rowcall: Go instance ${this.number} started in ${Date.now() - t0} ms (instantiate ${instantiated - t0} ms, then Go's package init and main)`);
  }

  // enter runs fn (which calls into Go) as context.
  enter(context, fn) {
    const prev = this.current;
    this.current = context;
    try {
      return fn();
    } finally {
      this.current = prev;
    }
  }

  // op starts an operation for Go in the current context and answers
  // complete(id, ok, text, body, more) in that same context.
  op(id, start) {
    const context = this.current;
    if (context !== null) {
      context.ops++;
      this.contexts.add(context);
    } else {
      console.warn("rowcall: Go started an operation outside any request context");
    }
    Promise.resolve()
      .then(start)
      .then(
        ([text, body, more]) => [true, text, body, more],
        (e) => [false, String((e && e.message) || e), null, false],
      )
      .then(([ok, text, body, more]) => {
        try {
          if (!this.dead) {
            const complete = this.binding.complete;
            this.enter(context, () => (body === undefined || body === null ? complete(id, ok, text) : complete(id, ok, text, body, more)));
          }
        } catch {
          // Go trapped or exited in the answer: die() has failed what it owed.
        } finally {
          if (context !== null) {
            context.done();
            if (context.ops === 0) this.contexts.delete(context);
          }
        }
      });
  }

  die(err) {
    if (this.dead) return;
    this.dead = err instanceof Error ? err : new Error(String(err));
    if (live === this) live = null;
    console.error(`rowcall: Go instance ${this.number} stopped: ${this.dead.stack || this.dead}`);
    const failures = [...this.failures];
    this.failures.clear();
    for (const fail of failures) fail(this.dead);
    for (const context of this.contexts) {
      context.ops = 1;
      context.done();
    }
    this.contexts.clear();
  }

  // call runs fn(resolve, reject) in Go, in context; the promise also fails
  // if the instance dies first. While it waits, a timer stays pending in the
  // caller's context (see the top of the file).
  call(context, fn) {
    let reject;
    const waiting = setInterval(() => {}, 1000);
    return new Promise((res, rej) => {
      reject = rej;
      this.failures.add(rej);
      if (this.dead) throw this.dead;
      this.enter(context, () => fn(res, rej));
    }).finally(() => {
      clearInterval(waiting);
      this.failures.delete(reject);
    });
  }

  async serve(request, env, ctx) {
    const body = await boundedBody(request, this.binding.maxBody);
    const head = writeHead(request.method + " " + request.url, request.headers);
    const context = new Context(ctx);
    let res;
    try {
      res = await this.call(context, (resolve, reject) =>
        this.binding.serve(head, body, env, ctx, (status, text, body, cancel) =>
          status === 0 ? reject(new Error(text)) : resolve({ status, text, body, cancel }),
        ),
      );
    } catch (e) {
      context.end();
      throw e;
    }
    const [statusText, headers] = readHead(res.text);
    const init = { status: res.status, statusText, headers };
    // Go's handler wrote the body already encoded (e.g. gzip): send it as is.
    if (headers.has("content-encoding")) init.encodeBody = "manual";
    const nullBody = [101, 204, 205, 304].includes(res.status);
    if (typeof res.body !== "function") {
      context.end();
      return new Response(nullBody ? null : res.body, init);
    }
    // A streamed body: each pull asks Go for the next chunk.
    const read = res.body;
    const stream = new ReadableStream({
      pull: async (controller) => {
        let chunk;
        try {
          chunk = await this.call(context, (resolve, reject) => read(resolve, reject));
        } catch (e) {
          context.end();
          throw e;
        }
        if (chunk === null) {
          context.end();
          controller.close();
        } else {
          controller.enqueue(chunk);
        }
      },
      cancel: () => {
        if (!this.dead) this.enter(context, () => res.cancel());
        context.end();
      },
    });
    return new Response(nullBody ? null : stream, init);
  }

  // scheduled runs a Cron Trigger's event in Go (worker/scheduled.go), in the
  // event's own context, which stays open until Go is done with it.
  async scheduled(controller, env, ctx) {
    const context = new Context(ctx);
    try {
      await this.call(context, (resolve, reject) =>
        this.binding.scheduled(controller.cron, env, ctx, (err) => (err === null ? resolve() : reject(new Error(err)))),
      );
    } finally {
      context.end();
    }
  }
}

// d1 runs one statement on db, the request's D1 session (env.DB.withSession,
// worker/request.go): op 0 answers the rows of all() as JSON, [[names…],
// [values…], …] ([] for none), op 1 (run) [changes, last_row_id]. params is a
// JSON array ("" for none) in which {"$b": base64} is a BLOB; BLOBs come back
// the same way. The answer's first line is D1's meta for the statement and the
// session's bookmark after it: "<rows_read> <rows_written> <bookmark>" (no
// bookmark: "-"). all() rather than raw(): raw() drops meta. all() keys a row
// by column name, so a statement's result columns must be distinct and not
// integer-like (rowcall's are).
async function d1(db, op, sql, params) {
  let stmt = db.prepare(sql);
  if (params !== "") stmt = stmt.bind(...unblob(JSON.parse(params)));
  const r = op === 0 ? await stmt.all() : await stmt.run();
  const meta = r.meta ?? {};
  const head = `${meta.rows_read ?? 0} ${meta.rows_written ?? 0} ${db.getBookmark?.() || "-"}\n`;
  if (op === 0) return [head + encodeRows(r.results ?? [])];
  return [head + JSON.stringify([meta.changes ?? 0, meta.last_row_id ?? 0])];
}

// fetchFor runs one fetch(): head is "METHOD URL" and one "name:value" line per
// header, body a Uint8Array or null. It answers "STATUS TEXT" and one
// "name:value" line per header, at most max bytes of the body, and whether
// the body went on.
async function fetchFor(head, body, max) {
  const [first, headers] = readHead(head);
  const sp = first.indexOf(" ");
  const res = await fetch(first.slice(sp + 1), { method: first.slice(0, sp), headers, body, redirect: "manual" });
  const text = writeHead(res.status + " " + res.statusText, res.headers);
  const [bytes, more] = await readAtMost(res.body, max);
  return [text, bytes, more];
}

// The header codec, the only way headers cross between JavaScript and Go
// (worker/head.go is its other half): a head is a first line and then one
// "name:value" line per header. Headers' own values hold no line breaks.
function writeHead(first, headers) {
  let head = first;
  for (const [name, value] of headers) head += "\n" + name + ":" + value;
  return head;
}

// readHead splits a head into its first line and a Headers (a line without
// ':' is skipped).
function readHead(head) {
  const lines = head.split("\n");
  const headers = new Headers();
  for (let i = 1; i < lines.length; i++) {
    const c = lines[i].indexOf(":");
    if (c > 0) headers.append(lines[i].slice(0, c), lines[i].slice(c + 1));
  }
  return [lines[0], headers];
}

// r2 runs one operation on the R2 bucket binding: "head" and "get" answer
// "found" (get with the object's bytes) or "missing"; "put" and "delete" "ok".
async function r2(bucket, op, key, body) {
  switch (op) {
    case "head":
      return [(await bucket.head(key)) === null ? "missing" : "found"];
    case "get": {
      const obj = await bucket.get(key);
      if (obj === null) return ["missing"];
      return ["found", new Uint8Array(await obj.arrayBuffer()), false];
    }
    case "put":
      await bucket.put(key, body);
      return ["ok"];
    case "delete":
      await bucket.delete(key);
      return ["ok"];
  }
  throw new Error(`r2: unknown operation ${op}`);
}

// call runs one method of a binding (Workers AI's run, Vectorize's query,
// upsert, getByIds, deleteByIds, describe; worker/vectors_js.go): args is a
// JSON array of its arguments, and the answer is JSON of what it resolves to.
async function call(target, method, args) {
  if (typeof target[method] !== "function") throw new Error(`the binding has no method ${method}`);
  const out = await target[method](...JSON.parse(args));
  return [JSON.stringify(out ?? null)];
}

// sign signs msg (a Uint8Array) with the Ed25519 key of seed (base64, 32
// bytes; worker/sign.go), imported once per isolate: it answers "ok" and the
// 64-byte signature.
const signKeys = new Map(); // seed → Promise of its CryptoKey
async function sign(seed, msg) {
  let key = signKeys.get(seed);
  if (key === undefined) {
    // PKCS #8 of an Ed25519 private key (RFC 8410): a fixed prefix, then the seed.
    const der = new Uint8Array([0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20, ...bytesOf(seed)]);
    key = crypto.subtle.importKey("pkcs8", der, { name: "Ed25519" }, false, ["sign"]);
    signKeys.set(seed, key);
    key.catch(() => signKeys.delete(seed));
  }
  const sig = await crypto.subtle.sign({ name: "Ed25519" }, await key, msg);
  return ["ok", new Uint8Array(sig), false];
}

function bytesOf(b64) {
  const bin = atob(b64);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  return bytes;
}

// boundedBody is a request's body for Go: null when it has none or when its
// Content-Length is over max (Go refuses it by that length, unread), else
// at most max bytes and one more (Go refuses a body over its route's bound,
// and every bound is at most max).
async function boundedBody(request, max) {
  if (request.body === null) return null;
  if (Number(request.headers.get("content-length")) > max) return null;
  const [bytes] = await readAtMost(request.body, max + 1);
  return bytes;
}

// readAtMost reads up to max bytes of a body stream: [bytes, whether more followed].
async function readAtMost(stream, max) {
  if (stream === null) return [new Uint8Array(0), false];
  const reader = stream.getReader();
  const chunks = [];
  let n = 0;
  let more = false;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (n + value.byteLength > max) {
      chunks.push(value.subarray(0, max - n));
      n = max;
      more = true;
      await reader.cancel();
      break;
    }
    chunks.push(value);
    n += value.byteLength;
  }
  if (chunks.length === 1) return [chunks[0], more];
  const out = new Uint8Array(n);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return [out, more];
}

// BLOBs travel between Go and the d1 helper as {"$b": base64}: unblob makes
// the parameters' ones (worker/d1json.go's encodeParams writes a flat array)
// Uint8Arrays, in place. (A JSON.parse reviver did it too, at several times
// the cost: it is called for every value.)
function unblob(params) {
  for (let i = 0; i < params.length; i++) {
    const v = params[i];
    if (v !== null && typeof v === "object" && typeof v.$b === "string") params[i] = bytesOf(v.$b);
  }
  return params;
}

// encodeRows turns all()'s row objects into [[names…], [values…], …].
function encodeRows(results) {
  if (results.length === 0) return "[]";
  const names = Object.keys(results[0]);
  const rows = [names];
  for (const obj of results) {
    const row = new Array(names.length);
    for (let i = 0; i < names.length; i++) {
      const v = obj[names[i]];
      row[i] = v !== null && typeof v === "object" ? { $b: base64(v) } : v;
    }
    rows.push(row);
  }
  return JSON.stringify(rows);
}

function base64(v) {
  const bytes =
    v instanceof ArrayBuffer
      ? new Uint8Array(v)
      : ArrayBuffer.isView(v)
        ? new Uint8Array(v.buffer, v.byteOffset, v.byteLength)
        : Uint8Array.from(v);
  let bin = "";
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
  return btoa(bin);
}

function unavailable(inst, err) {
  const why = err && err.message ? err.message : String(err);
  const stopped = inst === null || inst.dead;
  const body = stopped
    ? {
        error: "internal",
        message: `the worker's Go instance stopped: ${why}`,
        how_to_fix: "retry: the next request starts a fresh instance (`wrangler tail`, or wrangler dev's output, shows the cause)",
      }
    : { error: "internal", message: `the request failed: ${why}` };
  return Response.json(body, { status: stopped ? 503 : 500 });
}

// current returns the live instance, started now when there is none (a
// start that fails leaves none, and throws).
function current() {
  try {
    if (live === null || live.dead) live = new Instance();
    return live;
  } catch (e) {
    live = null;
    throw e;
  }
}

export default {
  async fetch(request, env, ctx) {
    let inst;
    try {
      inst = current();
    } catch (e) {
      return unavailable(null, e);
    }
    try {
      return await inst.serve(request, env, ctx);
    } catch (e) {
      return unavailable(inst, e);
    }
  },

  // A Cron Trigger (wrangler.toml's [triggers]): Go checks every MCP server
  // for drift. A failure fails the event (wrangler tail, the dashboard's
  // Cron Events).
  async scheduled(controller, env, ctx) {
    const done = current().scheduled(controller, env, ctx);
    ctx.waitUntil(done);
    return done;
  },
};
