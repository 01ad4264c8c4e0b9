//go:build js && wasm

// Command worker is rowcall on Cloudflare Workers: the same api.Handler as the
// local host, compiled to GOOS=js GOARCH=wasm with github.com/syumai/workers.
//
// Platform pieces, all taken from the Worker's environment (wrangler.toml):
//
//	DB                       D1 binding: the directory, event log and receipts, through
//	                         syumai's database/sql driver (single statements; D1 has no
//	                         interactive transactions, and rowcall needs none). The schema
//	                         is applied by `wrangler d1 migrations apply DB` from migrations/.
//	MODULES                  R2 binding: fn module bytes, addressed by SHA-256 (optional:
//	                         without it the bytes go to D1's module_blobs table).
//	ROWCALL_OWNER_KEY        secret: the owner key (wrangler secret put ROWCALL_OWNER_KEY);
//	ROWCALL_OWNER_KEY_PREVIOUS  optional second key accepted during a rotation.
//	ROWCALL_RECEIPT_KEY      secret: the receipt signing key, a base64 32-byte Ed25519 seed
//	                         (openssl rand -base64 32 | npx wrangler secret put ROWCALL_RECEIPT_KEY).
//	ROWCALL_AUDIENCE         var: this host's token audience (default "rowcall").
//	ROWCALL_PUBLIC_READS     var: "true" lets anyone read the directory.
//	ROWCALL_PUBLIC_URL       var: base URL of public receipt links (default: the request's).
//	ROWCALL_ALLOW_OUTBOUND   var: CIDRs and host names http rows may reach although they are
//	                         loopback or private literals (see guard.go).
//	any other secret or var  a credential that rows name in their auth column.
//
// Outbound HTTP goes through fetch() bound to the real globalThis (calling it
// through syumai's default binding, a proxy of the global, throws "Illegal
// invocation"), behind guard. syumai's worker.mjs starts a fresh Go runtime for
// every request, so main runs once per request: everything here is cheap.
package main

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/base64"
	"net/http"
	"strings"
	"syscall/js"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/api"
	"github.com/rowcall/rowcall/dispatch"
	"github.com/rowcall/rowcall/ledger"
	"github.com/rowcall/rowcall/outbound"
	"github.com/rowcall/rowcall/runners/flow"
	"github.com/rowcall/rowcall/runners/httpcall"
	"github.com/rowcall/rowcall/sqlstore"
	"github.com/syumai/workers"
	"github.com/syumai/workers/cloudflare/d1"
	"github.com/syumai/workers/cloudflare/fetch"
)

func main() {
	h, err := build(context.Background())
	if err != nil {
		workers.Serve(failing(err))
		return
	}
	workers.Serve(h)
}

// build wires the worker's handler from its environment.
func build(ctx context.Context) (http.Handler, error) {
	keys := ownerKeys()
	if len(keys) == 0 {
		return nil, &rowcall.Error{Code: rowcall.EInternal,
			Message:  "the worker has no owner key: the secret ROWCALL_OWNER_KEY is not set",
			HowToFix: "run `npx wrangler secret put ROWCALL_OWNER_KEY` (or, with wrangler dev, --var ROWCALL_OWNER_KEY:<key> or a .dev.vars file)"}
	}
	signer, err := receiptSigner()
	if err != nil {
		return nil, err
	}
	conn, err := d1.OpenConnector("DB")
	if err != nil {
		return nil, &rowcall.Error{Code: rowcall.EInternal, Message: "the worker has no D1 binding named DB",
			HowToFix: "add [[d1_databases]] binding = \"DB\" to wrangler.toml (see README.md)"}
	}
	db := sql.OpenDB(conn)
	policy, err := outbound.Parse(envString("ROWCALL_ALLOW_OUTBOUND"))
	if err != nil {
		return nil, &rowcall.Error{Code: rowcall.EInternal, Message: "ROWCALL_ALLOW_OUTBOUND: " + err.Error(),
			HowToFix: "list CIDRs, IPs or host names separated by commas, e.g. 127.0.0.1/32"}
	}
	fetcher := fetch.NewClient(fetch.WithBinding(js.Global().Get("globalThis"))).HTTPClient(fetch.RedirectModeManual)
	store := sqlstore.New(db)
	disp := &dispatch.Dispatcher{
		Store:    store,
		Env:      workerEnv{},
		Receipts: sqlstore.NewReceiptLog(store, signer),
		Audience: cmp.Or(envString("ROWCALL_AUDIENCE"), "rowcall"),
		Runners: map[rowcall.Type]rowcall.Runner{
			rowcall.TypeHTTP: httpcall.New(httpcall.Config{Client: client(policy, fetcher.Transport)}),
			rowcall.TypeFlow: flow.Runner{},
		},
	}
	fnr := newLazyFn(ctx, db)
	disp.Runners[rowcall.TypeFn], disp.Modules = fnr, fnr
	return fnr.registering(api.New(api.Config{OwnerKeys: func() []string { return keys }, ReceiptKeys: []ledger.PublicKey{signer.Public()},
		PublicReads: envBool("ROWCALL_PUBLIC_READS"), PublicURL: envString("ROWCALL_PUBLIC_URL"), Modules: fnr.reg}, store, disp)), nil
}

// ownerKeys returns the configured owner keys.
func ownerKeys() []string {
	var keys []string
	for _, name := range []string{"ROWCALL_OWNER_KEY", "ROWCALL_OWNER_KEY_PREVIOUS"} {
		if k := strings.TrimSpace(envString(name)); k != "" {
			keys = append(keys, k)
		}
	}
	return keys
}

// receiptSigner reads the receipt signing key from the secret ROWCALL_RECEIPT_KEY.
// A worker cannot keep a generated key (it has no disk), so the key is required.
func receiptSigner() (*ledger.Signer, error) {
	enc := strings.TrimSpace(envString("ROWCALL_RECEIPT_KEY"))
	fix := "run `openssl rand -base64 32 | npx wrangler secret put ROWCALL_RECEIPT_KEY` (or, with wrangler dev, --var ROWCALL_RECEIPT_KEY:<base64 seed>)"
	if enc == "" {
		return nil, &rowcall.Error{Code: rowcall.EInternal, Message: "the worker has no receipt signing key: the secret ROWCALL_RECEIPT_KEY is not set", HowToFix: fix}
	}
	seed, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		return nil, &rowcall.Error{Code: rowcall.EInternal, Message: "ROWCALL_RECEIPT_KEY is not base64: " + err.Error(), HowToFix: fix}
	}
	s, err := ledger.NewSigner(seed)
	if err != nil {
		return nil, &rowcall.Error{Code: rowcall.EInternal, Message: "ROWCALL_RECEIPT_KEY: " + err.Error(), HowToFix: fix}
	}
	return s, nil
}

// failing answers every request with err: a worker that is not configured says
// what to fix instead of failing in obscure ways.
func failing(err error) http.Handler {
	e, _ := err.(*rowcall.Error)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(http.StatusServiceUnavailable)
		msg, fix := err.Error(), ""
		if e != nil {
			msg, fix = e.Message, e.HowToFix
		}
		w.Write(jsonObject("error", "not_configured", "message", msg, "how_to_fix", fix))
	})
}
