// Stand-ins for Workers AI and Vectorize in workerd, for the worker's tests
// (test/worker_vectors_test.go): no network reaches Cloudflare here. The test
// configuration binds the rowcall worker's AI and VECTORIZE as service
// bindings to the entrypoints below, so the worker's Go code calls
// env.AI.run(...) and env.VECTORIZE.query(...) exactly as in production, and
// each method speaks the documented shapes and limits:
//
//   AI.run(model, {text, pooling})      → {shape: [n, dims], data: [[…], …], pooling}
//     (developers.cloudflare.com/workers-ai/models/bge-base-en-v1.5)
//   Vectorize.upsert([{id, values, metadata}])            → {mutationId}
//   Vectorize.query(vector, {topK, returnValues, returnMetadata, filter})
//                                                         → {count, matches: [{id, score, values?, metadata?}]}
//   Vectorize.getByIds([id, …])                           → [{id, values, metadata}]
//   Vectorize.deleteByIds([id, …])                        → {mutationId}
//   Vectorize.describe()                                  → {dimensions, vectorCount, processedUpToDatetime, processedUpToMutation}
//     (developers.cloudflare.com/vectorize/reference/client-api, …/platform/limits,
//      …/reference/metadata-filtering)
//
// The vectors are real: AI.run asks the test's loopback service (EMBED_URL)
// for Universal Sentence Encoder lite embeddings (512 dimensions, rowcall's
// embedded encoder) and pads them with zeros to DIMENSIONS, scaled so they
// are not unit length (rowcall normalises what it is given). Padding keeps
// every cosine. Vectorize is an exact cosine top-K over what was upserted, in
// this isolate's memory, filtered first on the metadata properties named in
// METADATA_INDEXES (a property with no metadata index matches nothing, as in
// Vectorize).
import { WorkerEntrypoint } from "cloudflare:workers";

const models = { "@cf/baai/bge-small-en-v1.5": 384, "@cf/baai/bge-base-en-v1.5": 768, "@cf/baai/bge-large-en-v1.5": 1024 };

export class AI extends WorkerEntrypoint {
  async run(model, inputs) {
    const dims = models[model];
    if (dims === undefined) throw new Error(`AiError: No such model ${model} or task`);
    let text = inputs?.text;
    if (typeof text === "string") text = [text];
    if (!Array.isArray(text) || text.length < 1 || text.length > 100 || text.some((t) => typeof t !== "string" || t.length < 1))
      throw new Error("AiError: Input validation error: text must be a non-empty string or an array of 1 to 100 of them");
    const pooling = inputs.pooling ?? "mean";
    if (pooling !== "mean" && pooling !== "cls") throw new Error(`AiError: Input validation error: pooling ${pooling}`);
    const res = await fetch(this.env.EMBED_URL, { method: "POST", body: JSON.stringify({ text }) });
    if (!res.ok) throw new Error(`AiError: the embedding service answered ${res.status}: ${await res.text()}`);
    const { data } = await res.json();
    const out = data.map((v) => {
      const p = new Array(dims).fill(0);
      for (let i = 0; i < v.length && i < dims; i++) p[i] = v[i] * 2.5;
      return p;
    });
    return { shape: [out.length, dims], data: out, pooling };
  }
}

const vectors = new Map(); // id → {id, values, metadata}
let mutations = 0;

function dims(env) {
  return Number(env.DIMENSIONS);
}

function indexed(env) {
  return new Set(String(env.METADATA_INDEXES || "").split(",").filter(Boolean));
}

function matches(metadata, filter, idx) {
  for (const [prop, cond] of Object.entries(filter ?? {})) {
    if (!idx.has(prop)) return false;
    const v = metadata?.[prop];
    const ops = cond !== null && typeof cond === "object" && !Array.isArray(cond) ? cond : { $eq: cond };
    for (const [op, want] of Object.entries(ops)) {
      const ok = {
        $eq: () => v === want,
        $ne: () => v !== want,
        $in: () => Array.isArray(want) && want.includes(v),
        $nin: () => Array.isArray(want) && !want.includes(v),
        $lt: () => v < want,
        $lte: () => v <= want,
        $gt: () => v > want,
        $gte: () => v >= want,
      }[op];
      if (ok === undefined) throw new Error(`VECTOR_QUERY_ERROR: unsupported filter operator ${op}`);
      if (!ok()) return false;
    }
  }
  return true;
}

function cosine(a, b) {
  let dot = 0, na = 0, nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

function checkVector(env, values) {
  const list = Array.from(values ?? []);
  if (list.length !== dims(env) || list.some((x) => typeof x !== "number" || !Number.isFinite(x)))
    throw new Error(`VECTOR_DIMENSION_MISMATCH: the index has ${dims(env)} dimensions, the vector ${list.length}`);
  return list;
}

export class Vectorize extends WorkerEntrypoint {
  async upsert(list) {
    if (!Array.isArray(list) || list.length > 1000) throw new Error("VECTOR_UPSERT_ERROR: 1 to 1000 vectors per upsert from a Worker");
    const next = list.map((v) => {
      if (typeof v.id !== "string" || v.id === "" || new TextEncoder().encode(v.id).length > 64)
        throw new Error(`VECTOR_UPSERT_ERROR: id ${JSON.stringify(v.id)} is not 1 to 64 bytes`);
      if (JSON.stringify(v.metadata ?? {}).length > 10240) throw new Error(`VECTOR_UPSERT_ERROR: ${v.id}: metadata over 10 KiB`);
      return { id: v.id, values: checkVector(this.env, v.values), metadata: v.metadata ?? {} };
    });
    for (const v of next) vectors.set(v.id, v);
    return { mutationId: String(++mutations) };
  }

  async query(vector, options = {}) {
    const q = checkVector(this.env, vector);
    const topK = options.topK ?? 5;
    const returnValues = options.returnValues === true;
    const returnMetadata = options.returnMetadata === true ? "all" : options.returnMetadata || "none";
    const max = returnValues || returnMetadata === "all" ? 20 : 100;
    if (!Number.isInteger(topK) || topK < 1 || topK > max)
      throw new Error(`VECTOR_QUERY_ERROR: topK ${topK}: at most ${max} ${max === 20 ? "with values or metadata" : "without values and metadata"}`);
    const idx = indexed(this.env);
    const found = [];
    for (const v of vectors.values()) if (matches(v.metadata, options.filter, idx)) found.push({ v, score: cosine(q, v.values) });
    found.sort((a, b) => b.score - a.score);
    const out = found.slice(0, topK).map(({ v, score }) => {
      const m = { id: v.id, score };
      if (returnValues) m.values = v.values;
      if (returnMetadata === "all") m.metadata = v.metadata;
      if (returnMetadata === "indexed") m.metadata = Object.fromEntries(Object.entries(v.metadata).filter(([k]) => idx.has(k)));
      return m;
    });
    return { count: out.length, matches: out };
  }

  async getByIds(ids) {
    return ids.filter((id) => vectors.has(id)).map((id) => vectors.get(id));
  }

  async deleteByIds(ids) {
    for (const id of ids) vectors.delete(id);
    return { mutationId: String(++mutations) };
  }

  async describe() {
    return { dimensions: dims(this.env), vectorCount: vectors.size, processedUpToDatetime: Date.now(), processedUpToMutation: mutations };
  }
}

export default {
  async fetch() {
    return new Response("rowcall's Workers AI and Vectorize stand-ins: reach them through service bindings\n");
  },
};
