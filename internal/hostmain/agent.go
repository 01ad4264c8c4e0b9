package hostmain

import (
	"flag"
	"os"
	"strings"

	"github.com/rowcall/rowcall/runners/agent"
)

// agentFlags registers the agent runner's serve flags on fs:
//
//	--model-provider NAME=URL[,no-tools]   an OpenAI-compatible API root (repeatable),
//	                                       e.g. xai=https://api.x.ai/v1 ($ROWCALL_MODEL_PROVIDERS)
//	--model-default NAME                   the provider for bare model ids (grok-4.3)
//	--prices FILE                          {"MODEL":{"input":USD/1M,"output":USD/1M},…}
//	--model-retries N, --model-retry-base D, --model-timeout D
//
// --model-provider and --model-default are the settings ROWCALL_MODEL_PROVIDERS
// and ROWCALL_MODEL_DEFAULT (settingsFrom reads them through the flags); once
// the flags are parsed, prices sets ROWCALL_MODEL_PRICES (JSON) from the
// --prices file when one is given, and tune sets the retries and timeout on
// the runner.
func agentFlags(fs *flag.FlagSet) (prices func(*agent.Settings) error, tune func(*agent.Config)) {
	fs.Var(&providers{}, "model-provider", "an OpenAI-compatible chat completions API for agent rows: NAME=URL[,no-tools], repeatable (e.g. xai=https://api.x.ai/v1); a row's target NAME:MODEL picks it. The variable holds them separated by spaces")
	fs.String("model-default", "", "the model provider for agent targets that name none, such as grok-4.3 (default: the only provider)")
	file := fs.String("prices", "", `file of the JSON price table for agent rows' cost_usd: {"MODEL":{"input":USD_per_1M_tokens,"output":USD_per_1M_tokens}} (else $ROWCALL_MODEL_PRICES holds the JSON itself)`)
	retries := fs.Int("model-retries", agent.DefaultRetries, "retries after a 429 or 5xx answer from a model provider")
	retryBase := fs.Duration("model-retry-base", agent.DefaultRetryBase, "the first retry's backoff (doubled per attempt, jittered; a provider's Retry-After wins)")
	timeout := fs.Duration("model-timeout", agent.DefaultTimeout, "the longest one model request may take")
	prices = func(set *agent.Settings) error {
		if *file == "" {
			return nil
		}
		b, err := os.ReadFile(*file)
		set.Prices = string(b)
		return err
	}
	tune = func(cfg *agent.Config) {
		n := *retries
		if n == 0 {
			n = -1 // the flag's 0 means none; the Config's means the default
		}
		cfg.Retries, cfg.RetryBase, cfg.Timeout = n, *retryBase, *timeout
	}
	return prices, tune
}

// providers is --model-provider: each use adds NAME=URL entries (separated
// by spaces, as in ROWCALL_MODEL_PROVIDERS, its variable).
type providers []string

func (p *providers) String() string { return strings.Join(*p, " ") }

func (p *providers) Set(s string) error {
	for _, e := range strings.Fields(s) {
		if _, _, err := agent.ParseProvider(e); err != nil {
			return err
		}
		*p = append(*p, e)
	}
	return nil
}

func (*providers) EnvVar() string { return "ROWCALL_MODEL_PROVIDERS" }
