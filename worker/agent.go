//go:build js && wasm

package main

import (
	"net/http"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/outbound"
	"github.com/rowcall/rowcall/runners/agent"
	"github.com/rowcall/rowcall/sqlstore"
)

// modelSettings configure agent rows, as the host's --model-* flags do:
//
//	ROWCALL_MODEL_PROVIDERS  NAME=URL[,no-tools] …, separated by spaces or ';'
//	                         (e.g. xai=https://api.x.ai/v1); a row's target NAME:MODEL picks one
//	ROWCALL_MODEL_DEFAULT    the provider for bare model ids (default: the only one)
//	ROWCALL_MODEL_PRICES     {"MODEL":{"input":USD_per_1M_tokens,"output":USD_per_1M_tokens}}
//
// The credential an agent row names (auth) is read from the request's env,
// like an http row's: a secret (`wrangler secret put GROK_API_KEY`).
type modelSettings struct{ providers, def, prices string }

// runner builds the agent runner: its model requests go through fetch() under
// the outbound guard, with the configured providers let through.
func (m modelSettings) runner(policy outbound.Policy, store *sqlstore.Store, fetch http.RoundTripper) (rowcall.Runner, error) {
	cfg, err := agent.Settings{Providers: m.providers, Default: m.def, Prices: m.prices}.Config()
	if err != nil {
		return nil, &rowcall.Error{Code: rowcall.EInternal, Message: "agent settings: " + err.Error(),
			HowToFix: "fix ROWCALL_MODEL_PROVIDERS (NAME=URL entries separated by spaces), ROWCALL_MODEL_DEFAULT (one of them) or ROWCALL_MODEL_PRICES (JSON)"}
	}
	cfg.Client = client(agent.Allow(policy, cfg.Providers), fetch)
	cfg.Rows, cfg.Catalog = store, sqlstore.Catalog{Store: store}
	return agent.New(cfg), nil
}
