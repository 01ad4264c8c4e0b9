// trim-github.mjs makes github-rest.json, the large test document, from
// GitHub's REST API description (npm @octokit/openapi, MIT; LICENSE-octokit):
// the operations of the tags below, and only the components they reach.
//
//	npm pack @octokit/openapi@23.0.2 && tar xzf octokit-openapi-23.0.2.tgz
//	node trim-github.mjs package/generated/api.github.com.json > github-rest.json
import { readFileSync } from "node:fs";

const keep = new Set(["issues", "pulls", "users", "activity", "gists", "git", "reactions", "checks",
  "search", "meta", "licenses", "codes-of-conduct", "gitignore", "markdown", "emojis", "rate-limit", "teams", "projects"]);
const doc = JSON.parse(readFileSync(process.argv[2], "utf8"));
const paths = {};
for (const [p, item] of Object.entries(doc.paths)) {
  const out = {};
  for (const [k, v] of Object.entries(item)) {
    if (v && v.operationId) { if ((v.tags || []).some((t) => keep.has(t))) out[k] = v; }
    else out[k] = v; // path-level parameters, summary
  }
  if (Object.values(out).some((v) => v && v.operationId)) paths[p] = out;
}
// The components reachable from the kept paths, by following every $ref.
const used = new Set();
const walk = (v) => {
  if (Array.isArray(v)) return v.forEach(walk);
  if (!v || typeof v !== "object") return;
  if (typeof v.$ref === "string" && v.$ref.startsWith("#/components/") && !used.has(v.$ref)) {
    used.add(v.$ref);
    const [, , kind, name] = v.$ref.split("/");
    walk(doc.components[kind][name]);
  }
  Object.values(v).forEach(walk);
};
walk(paths);
const components = {};
for (const ref of [...used].sort()) {
  const [, , kind, name] = ref.split("/");
  (components[kind] ??= {})[name] = doc.components[kind][name];
}
if (doc.components.securitySchemes) components.securitySchemes = doc.components.securitySchemes;
const { webhooks, "x-webhooks": xWebhooks, ...rest } = doc; // no operations to import
process.stdout.write(JSON.stringify({ ...rest, paths, components }) + "\n");
