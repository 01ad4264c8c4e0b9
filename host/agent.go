package main

import (
	"cmp"
	"flag"
	"fmt"
	"os"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/outbound"
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
	providers := map[string]agent.Provider{}
	fs.Func("model-provider", "an OpenAI-compatible chat completions API for agent rows: NAME=URL[,no-tools], repeatable (e.g. xai=https://api.x.ai/v1); a row's target NAME:MODEL picks it", func(s string) error {
		name, p, err := agent.ParseProvider(s)
		if err != nil {
			return err
		}
		if _, dup := providers[name]; dup {
			return fmt.Errorf("model provider %s is given twice", name)
		}
		providers[name] = p
		return nil
	})
	def := fs.String("model-default", "", "the model provider for agent targets that name none, such as grok-4.3 (default: the only provider)")
	prices := fs.String("prices", "", `JSON price table for agent rows' cost_usd: {"MODEL":{"input":USD_per_1M_tokens,"output":USD_per_1M_tokens}}`)
	retries := fs.Int("model-retries", agent.DefaultRetries, "retries after a 429 or 5xx answer from a model provider")
	retryBase := fs.Duration("model-retry-base", agent.DefaultRetryBase, "the first retry's backoff (doubled per attempt, jittered; a provider's Retry-After wins)")
	timeout := fs.Duration("model-timeout", agent.DefaultTimeout, "the longest one model request may take")

	return func(policy outbound.Policy, store *sqlstore.Store) (rowcall.Runner, error) {
		// Without flags, the worker's settings (ROWCALL_MODEL_*) from the
		// environment, so one configuration serves every host.
		if env := os.Getenv("ROWCALL_MODEL_PROVIDERS"); len(providers) == 0 && env != "" {
			p, err := agent.ParseProviders(env)
			if err != nil {
				return nil, fmt.Errorf("ROWCALL_MODEL_PROVIDERS: %w", err)
			}
			providers = p
		}
		*def = cmp.Or(*def, os.Getenv("ROWCALL_MODEL_DEFAULT"))
		if *def != "" {
			if _, ok := providers[*def]; !ok {
				return nil, fmt.Errorf("--model-default %s names no --model-provider", *def)
			}
		}
		var table agent.Prices
		if *prices != "" {
			b, err := os.ReadFile(*prices)
			if err != nil {
				return nil, err
			}
			if table, err = agent.ParsePrices(b); err != nil {
				return nil, fmt.Errorf("%s: %w", *prices, err)
			}
		} else if env := os.Getenv("ROWCALL_MODEL_PRICES"); env != "" {
			var err error
			if table, err = agent.ParsePrices([]byte(env)); err != nil {
				return nil, fmt.Errorf("ROWCALL_MODEL_PRICES: %w", err)
			}
		}
		n := *retries
		if n == 0 {
			n = -1 // the flag's 0 means none; the Config's means the default
		}
		return agent.New(agent.Config{
			Client:          agent.Allow(policy, providers).Client(0),
			Providers:       providers,
			DefaultProvider: *def,
			Prices:          table,
			Rows:            store,
			Catalog:         sqlstore.Catalog{Store: store},
			Retries:         n,
			RetryBase:       *retryBase,
			Timeout:         *timeout,
		}), nil
	}
}
