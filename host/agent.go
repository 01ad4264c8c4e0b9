package main

import (
	"cmp"
	"flag"
	"os"
	"strings"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/outbound"
	"github.com/rowcall/rowcall/runners/agent"
	"github.com/rowcall/rowcall/sqlstore"
)

// agentFlags registers the agent runner's serve flags on fs. The function it
// returns builds the runner once the flags are parsed, from the host's
// outbound policy and store.
//
//	--model-provider NAME=URL[,no-tools]   an OpenAI-compatible API root (repeatable),
//	                                       e.g. xai=https://api.x.ai/v1
//	--model-default NAME                   the provider for bare model ids (grok-4.3)
//	--prices FILE                          {"MODEL":{"input":USD/1M,"output":USD/1M},…}
//	--model-retries N, --model-retry-base D, --model-timeout D
//
// Without --model-provider, --model-default or --prices, the environment's
// ROWCALL_MODEL_PROVIDERS (NAME=URL entries separated by spaces),
// ROWCALL_MODEL_DEFAULT and ROWCALL_MODEL_PRICES (the table itself) stand in:
// the worker's settings.
func agentFlags(fs *flag.FlagSet) func(outbound.Policy, *sqlstore.Store) (rowcall.Runner, error) {
	var providers []string
	fs.Func("model-provider", "an OpenAI-compatible chat completions API for agent rows: NAME=URL[,no-tools], repeatable (e.g. xai=https://api.x.ai/v1); a row's target NAME:MODEL picks it", func(s string) error {
		_, _, err := agent.ParseProvider(s)
		providers = append(providers, s)
		return err
	})
	def := fs.String("model-default", "", "the model provider for agent targets that name none, such as grok-4.3 (default: the only provider)")
	prices := fs.String("prices", "", `JSON price table for agent rows' cost_usd: {"MODEL":{"input":USD_per_1M_tokens,"output":USD_per_1M_tokens}}`)
	retries := fs.Int("model-retries", agent.DefaultRetries, "retries after a 429 or 5xx answer from a model provider")
	retryBase := fs.Duration("model-retry-base", agent.DefaultRetryBase, "the first retry's backoff (doubled per attempt, jittered; a provider's Retry-After wins)")
	timeout := fs.Duration("model-timeout", agent.DefaultTimeout, "the longest one model request may take")

	return func(policy outbound.Policy, store *sqlstore.Store) (rowcall.Runner, error) {
		// Without flags, the worker's settings (ROWCALL_MODEL_*) from the
		// environment, so one configuration serves every host.
		set := agent.Settings{Providers: cmp.Or(strings.Join(providers, " "), os.Getenv("ROWCALL_MODEL_PROVIDERS")),
			Default: cmp.Or(*def, os.Getenv("ROWCALL_MODEL_DEFAULT")), Prices: os.Getenv("ROWCALL_MODEL_PRICES")}
		if *prices != "" {
			b, err := os.ReadFile(*prices)
			if err != nil {
				return nil, err
			}
			set.Prices = string(b)
		}
		cfg, err := set.Config()
		if err != nil {
			return nil, err
		}
		n := *retries
		if n == 0 {
			n = -1 // the flag's 0 means none; the Config's means the default
		}
		cfg.Client = agent.Allow(policy, cfg.Providers).Client(0)
		cfg.Rows, cfg.Catalog = store, sqlstore.Catalog{Store: store}
		cfg.Retries, cfg.RetryBase, cfg.Timeout = n, *retryBase, *timeout
		return agent.New(cfg), nil
	}
}
