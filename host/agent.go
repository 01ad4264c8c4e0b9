package main

import (
	"context"
	"flag"
	"fmt"
	"net/netip"
	"net/url"
	"os"
	"slices"
	"strconv"

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
		}
		n := *retries
		if n == 0 {
			n = -1 // the flag's 0 means none; the Config's means the default
		}
		return agent.New(agent.Config{
			Client:          allowProviders(policy, providers).Client(0),
			Providers:       providers,
			DefaultProvider: *def,
			Prices:          table,
			Rows:            store,
			Catalog:         storeCatalog{store},
			Retries:         n,
			RetryBase:       *retryBase,
			Timeout:         *timeout,
		}), nil
	}
}

// allowProviders returns policy with the operator's model providers let
// through: a provider on loopback or a private network (a local model
// server) is reachable by agent rows without opening it to http rows. Row
// authors choose a model id, never the URL, so this widens nothing they
// control.
func allowProviders(policy outbound.Policy, providers map[string]agent.Provider) outbound.Policy {
	policy.AllowAddrs = slices.Clone(policy.AllowAddrs)
	policy.AllowHosts = slices.Clone(policy.AllowHosts)
	for _, p := range providers {
		u, err := url.Parse(p.BaseURL)
		if err != nil {
			continue
		}
		host := u.Hostname()
		if ip, err := netip.ParseAddr(host); err == nil {
			port := u.Port()
			if port == "" {
				port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
			}
			if n, err := strconv.ParseUint(port, 10, 16); err == nil {
				policy.AllowAddrs = append(policy.AllowAddrs, netip.AddrPortFrom(ip, uint16(n)))
			}
			continue
		}
		policy.AllowHosts = append(policy.AllowHosts, host)
	}
	return policy
}

// storeCatalog lists rows for the agent runner's tool projection.
type storeCatalog struct{ store *sqlstore.Store }

func (c storeCatalog) Rows(ctx context.Context, category string, limit int) ([]rowcall.Row, error) {
	on := int64(1)
	p, err := c.store.List(ctx, sqlstore.Filter{Category: category, Enabled: &on, Limit: limit})
	return p.Rows, err
}
