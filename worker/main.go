//go:build js && wasm

// Command worker is rowcall on Cloudflare Workers: the same api.Handler as the
// local host, compiled to GOOS=js GOARCH=wasm.
//
// One Go instance per isolate. rowcall's own JavaScript entry
// (build/shim/worker.mjs, copied to build/out/worker/worker.mjs by
// build/worker.sh, beside syumai/workers' wasm_exec.js) starts this program on
// the isolate's first request and hands it every request after that; main
// registers serve (serve.go) and never returns. If the program dies, the shim
// starts a fresh one on the next request. So everything built here — the
// *sql.DB, the dispatcher with its row cache, the receipt log, the fn runner
// with its compiled modules — lives as long as the isolate, and nothing in it
// holds a platform object: each request brings its own env and
// ExecutionContext (request.go), every binding is looked up through the handle
// of the request that uses it, and the platform is reached only through the
// shim's d1, fetch and r2 helpers (ops.go), which account every operation to
// the request context it runs in.
//
// Platform pieces, all taken from each request's env (wrangler.toml):
//
//	DB                       D1 binding: the directory, event log and receipts (d1.go;
//	                         single statements: D1 has no interactive transactions, and
//	                         rowcall needs none). The schema is applied by
//	                         `wrangler d1 migrations apply DB` from migrations/.
//	MODULES                  R2 binding: fn module bytes, addressed by SHA-256 (optional:
//	                         without it the bytes go to D1's module_blobs table).
//	RECEIPTS                 R2 binding: the receipt chain sealed into segments (optional:
//	                         without it every receipt stays in D1; sealing.go), every
//	                         ROWCALL_RECEIPT_SEGMENT receipts (var, default 10000), sealed
//	                         receipts kept in D1 for ROWCALL_RECEIPT_RETAIN (var, default 720h).
//	ROWCALL_OWNER_KEY        secret: the owner key (wrangler secret put ROWCALL_OWNER_KEY);
//	ROWCALL_OWNER_KEY_PREVIOUS  optional second key accepted during a rotation.
//	ROWCALL_RECEIPT_KEY      secret: the receipt signing key, a base64 32-byte Ed25519 seed
//	                         (openssl rand -base64 32 | npx wrangler secret put ROWCALL_RECEIPT_KEY).
//	ROWCALL_AUDIENCE         var: this host's token audience (default "rowcall").
//	ROWCALL_PUBLIC_READS     var: "true" (or 1, yes, on) lets anyone read the directory.
//	ROWCALL_PUBLIC_URL       var: base URL of public receipt links and of $SELF (default: the
//	                         request's origin).
//	ROWCALL_ALLOW_OUTBOUND   var: CIDRs (CIDR:port for one port) and host names http rows may
//	                         reach although they are loopback or private literals (see guard.go).
//	ROWCALL_SECRETS_PREFIX   var: only variables starting with it may be named in rows' auth.
//	ROWCALL_MODEL_PROVIDERS, ROWCALL_MODEL_DEFAULT, ROWCALL_MODEL_PRICES
//	                         vars: agent rows' model providers (agent.go).
//	ROWCALL_ASK_RERANK       var: the agent row that reranks ask's best candidates (optional);
//	ROWCALL_ASK_RERANK_ANONYMOUS  var: the rate all anonymous callers' reranks share
//	                         (e.g. 10/minute; unset: anonymous asks are not reranked).
//	ROWCALL_APPROVAL_NOTIFY  var: the row called for each new approval (optional).
//	ROWCALL_ASK_LEARN        var: whose asks and calls teach ask: owner,tokens (unset),
//	                         owner, tokens or off (learn.ParseTeachers).
//	ROWCALL_ASK_EXPAND       ignored: rows' questions are written by a model on the local host
//	                         only (internal/expand runs beside the host; no isolate outlives
//	                         its request).
//	ROWCALL_CONNECTIONS      var: the connection providers' JSON, {"providers": {…}}
//	                         (docs/tokens.md#connections; optional: without it
//	                         bearer:connection: rows answer connections_off).
//	ROWCALL_CONNECTIONS_KEY  secret: the keys that seal connections' tokens (ID:BASE64KEY,…).
//	ROWCALL_OIDC_ISSUER, ROWCALL_OIDC_CLIENT_ID, ROWCALL_OIDC_ROLES, ROWCALL_OIDC_NAME,
//	ROWCALL_OIDC_GROUPS_CLAIM, ROWCALL_OIDC_SCOPES
//	                         vars: the OpenID provider people sign in with (internal/signin,
//	                         docs/people.md; reached through fetch() like every outbound call);
//	ROWCALL_OIDC_CLIENT_SECRET  secret: rowcall's client secret at that provider.
//	ROWCALL_OWNER_KEY_LOOPBACK_ONLY  var: the owner key counts only from a loopback
//	                         CF-Connecting-IP (on a deployed worker: never).
//	ROWCALL_SCIM_TOKEN       secret: the bearer token of the identity provider's SCIM client
//	                         (optional: without it no /scim/v2; api/scim). The people it
//	                         creates are bound to ROWCALL_OIDC_ISSUER (var).
//	ROWCALL_NO_EXAMPLES      var: "true" (or 1, yes, on) keeps a fresh database empty (no
//	                         example rows; seed.go).
//	AI                       Workers AI binding ([ai]): rows and questions embedded for ask
//	                         (optional: without it ask finds by words only; vectors.go).
//	VECTORIZE                Vectorize binding ([[vectorize]]): one cosine index per model,
//	                         kept current after every directory write (vectorsync.go).
//	ROWCALL_EMBED_MODEL      var: the Workers AI embedding model (default
//	                         @cf/baai/bge-base-en-v1.5); ROWCALL_EMBED_DIM its dimensions
//	                         when rowcall does not know them (docs/vectors.md).
//	ROWCALL_WORKER_DEBUG     var: "1" enables POST /_worker/crash and /_worker/nearest
//	                         (tests only; see stats.go).
//	any other secret or var  a credential that rows name in their auth column.
//
// The settings are read from a request's env when it is not the env object the
// current handler's settings were read from (workerd hands every request of
// an isolate the same one), and compared with those; a change builds a new
// handler for the requests that carry it.
//
// Outbound HTTP goes through the Worker's fetch() (fetch.go), behind guard.
package main

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/app"
	"github.com/rowcall/rowcall/internal/connect"
	"github.com/rowcall/rowcall/internal/outbound"
	"github.com/rowcall/rowcall/sqlstore"
)

func main() {
	slog.SetDefault(slog.New(newConsoleHandler(nil))) // log.go
	inst := newInstance()
	registerServe(inst)
	select {} // serve answers from callbacks; main must never return
}

// build assembles the core for s (app.New) over the instance's database,
// fetch client and fn runner, and the embedder and vector index the
// bindings give, which it records in a.
func (inst *instance) build(s settings, a *served) (*app.App, error) {
	keys := s.ownerKeys
	if len(keys) == 0 {
		return nil, &rowcall.Error{Code: rowcall.EInternal,
			Message:  "the worker has no owner key: the secret ROWCALL_OWNER_KEY is not set",
			HowToFix: "run `npx wrangler secret put ROWCALL_OWNER_KEY` (or, with wrangler dev, --var ROWCALL_OWNER_KEY:<key> or a .dev.vars file)"}
	}
	signer, err := receiptSigner(s.receiptKey)
	if err != nil {
		return nil, err
	}
	signer.SignWith(webCryptoSign(s.receiptKey)) // sign.go
	if !s.hasDB {
		return nil, &rowcall.Error{Code: rowcall.EInternal, Message: "the worker has no D1 binding named DB",
			HowToFix: "add [[d1_databases]] binding = \"DB\" to wrangler.toml (see docs/cloudflare.md)"}
	}
	if s.hasAI {
		m, err := embedModel(s.embedModel, s.embedDim)
		if err != nil {
			return nil, err
		}
		a.embedder = remember(workersAI{model: m, b: jsBinder{}})
		if s.hasVectorize {
			a.vectors = newVectorize(jsBinder{})
			a.sync = newVectorSync(inst.db, a.embedder, a.vectors)
		}
	}
	var size int
	var retain time.Duration
	if s.hasReceipts {
		if size, retain, err = archiveSettings(s.receiptSegment, s.retain); err != nil {
			return nil, err
		}
	}
	// Connections: D1's connections table, sealed as on the host; a
	// provider's client secret is read from the env of the request that
	// needs it.
	conns, err := connect.Load(s.connections, s.connectionsKey, nil, func(ctx context.Context, name string) (string, bool) {
		if h, err := handleFrom(ctx); err == nil {
			return h.Lookup(name)
		}
		return "", false
	})
	if err != nil {
		return nil, &rowcall.Error{Code: rowcall.EInternal, Message: "the worker's connection settings: " + err.Error(),
			HowToFix: "set ROWCALL_CONNECTIONS to the providers' JSON and ROWCALL_CONNECTIONS_KEY with `npx wrangler secret put` (docs/tokens.md#connections)"}
	}
	core := s.Settings
	core.AskExpand = "" // ignored here (the list above): no Expander is built
	built, err := app.New(core, app.Platform{
		Connect: conns,
		// With Vectorize, the sync after each write (vectorsync.go) is what
		// embeds rows: the core builds no Indexer of its own.
		Embedder: a.embedder, Vectors: a.vectors, KeepsVectors: a.sync != nil,
		DB: inst.db, Signer: signer, OwnerKeys: func() []string { return keys },
		ReadPage:    sqlstore.WholePage, // D1 answers a query's rows at once
		BilledReads: true,               // and bills each row a query reads
		// Each call reads its own request's env (requestEnv), and so does
		// listing an MCP server's tools for an import or a sync.
		PerCall:    func(r rowcall.Runner) rowcall.Runner { return requestEnv{r, s.SecretsPrefix} },
		RequestEnv: func(ctx context.Context) rowcall.Env { return envOf(ctx, s.SecretsPrefix) },
		Client:     func(policy outbound.Policy, _ time.Duration) *http.Client { return client(policy, inst.fetcher) },
		Fn:         inst.fn, Modules: inst.fn.registry(),
		// MCP rows: HTTP servers only (no MCPStdio: a Worker starts no
		// process), one session per call (a fetch belongs to its request);
		// importing and syncing them as on the host (internal/mcpimport).
		MCPNoPool: true,
		// Every call would look at D1's event log first: fn calls let the
		// receipt's INSERT look.
		Speculate: true,
		// Rows reach this worker's own API as $SELF (ROWCALL_PUBLIC_URL, else
		// the origin the request came in on), served in process: a Worker
		// cannot fetch() its own hostname.
		SelfBase: func(ctx context.Context) string {
			if s.PublicURL != "" {
				return strings.TrimRight(s.PublicURL, "/")
			}
			if h, err := handleFrom(ctx); err == nil {
				return h.origin
			}
			return ""
		},
		Handler: inst.fn.registering,
	})
	if err == nil && s.hasReceipts {
		a.sealing = newSealing(built, signer, size, retain)
	}
	return built, err
}
