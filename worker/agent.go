//go:build js && wasm

package main

import (
	"net/http"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/outbound"
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
	fail := func(name, msg, fix string) error {
		return &rowcall.Error{Code: rowcall.EInternal, Message: name + ": " + msg, HowToFix: fix}
	}
	providers, err := agent.ParseProviders(m.providers)
	if err != nil {
		return nil, fail("ROWCALL_MODEL_PROVIDERS", err.Error(), "list NAME=URL entries separated by spaces, e.g. xai=https://api.x.ai/v1")
	}
	if _, ok := providers[m.def]; m.def != "" && !ok {
		return nil, fail("ROWCALL_MODEL_DEFAULT", m.def+" is not among ROWCALL_MODEL_PROVIDERS", "name one of the providers, or leave it empty")
	}
	var prices agent.Prices
	if m.prices != "" {
		if prices, err = agent.ParsePrices([]byte(m.prices)); err != nil {
			return nil, fail("ROWCALL_MODEL_PRICES", err.Error(), `give {"MODEL":{"input":USD_per_1M_tokens,"output":USD_per_1M_tokens}}`)
		}
	}
	return agent.New(agent.Config{
		Client:          client(agent.Allow(policy, providers), fetch),
		Providers:       providers,
		DefaultProvider: m.def,
		Prices:          prices,
		Rows:            store,
		Catalog:         sqlstore.Catalog{Store: store},
	}), nil
}
