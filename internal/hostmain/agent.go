package hostmain

import (
	"cmp"
	"flag"
	"os"
	"strings"

	"github.com/rowcall/rowcall/runners/agent"
)

// agentFlags registers the agent runner's serve flags on fs:
//
//	--model-provider NAME=URL[,no-tools]   an OpenAI-compatible API root (repeatable),
//	                                       e.g. xai=https://api.x.ai/v1
//	--model-default NAME                   the provider for bare model ids (grok-4.3)
//	--prices FILE                          {"MODEL":{"input":USD/1M,"output":USD/1M},…}
//	--model-retries N, --model-retry-base D, --model-timeout D
//
// Once the flags are parsed, models sets what they name over the settings the
// environment gave (ROWCALL_MODEL_PROVIDERS, ROWCALL_MODEL_DEFAULT,
// ROWCALL_MODEL_PRICES: the worker's settings), and tune sets the retries and
// timeout on the runner.
func agentFlags(fs *flag.FlagSet) (models func(*agent.Settings) error, tune func(*agent.Config)) {
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
	models = func(set *agent.Settings) error {
		set.Providers = cmp.Or(strings.Join(providers, " "), set.Providers)
		set.Default = cmp.Or(*def, set.Default)
		if *prices != "" {
			b, err := os.ReadFile(*prices)
			if err != nil {
				return err
			}
			set.Prices = string(b)
		}
		return nil
	}
	tune = func(cfg *agent.Config) {
		n := *retries
		if n == 0 {
			n = -1 // the flag's 0 means none; the Config's means the default
		}
		cfg.Retries, cfg.RetryBase, cfg.Timeout = n, *retryBase, *timeout
	}
	return models, tune
}
