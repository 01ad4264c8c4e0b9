package agent

import (
	"fmt"
	"strings"

	"github.com/rowcall/rowcall/internal/outbound"
)

// Settings are an operator's agent settings as text: the host's flags, or the
// environment (ROWCALL_MODEL_PROVIDERS, ROWCALL_MODEL_DEFAULT,
// ROWCALL_MODEL_PRICES) on the host and in the worker.
type Settings struct {
	Providers string // NAME=URL[,no-tools] entries separated by spaces or ';'
	Default   string // the provider for bare model ids ("": the only one)
	Prices    string // the price table's JSON ("": nothing is priced)
}

// Config checks s and returns a Config with Providers, DefaultProvider and
// Prices set; the caller adds the rest (a Client: see Allow; Rows; Catalog).
func (s Settings) Config() (Config, error) {
	providers, err := ParseProviders(s.Providers)
	if err != nil {
		return Config{}, err
	}
	if _, ok := providers[s.Default]; s.Default != "" && !ok {
		return Config{}, fmt.Errorf("the default model provider %s is not among the model providers", s.Default)
	}
	var prices Prices
	if s.Prices != "" {
		if prices, err = ParsePrices([]byte(s.Prices)); err != nil {
			return Config{}, fmt.Errorf("model prices: %w", err)
		}
	}
	return Config{Providers: providers, DefaultProvider: s.Default, Prices: prices}, nil
}

// ParseProviders reads a list of providers in ParseProvider's form, separated
// by spaces or semicolons (the ROWCALL_MODEL_PROVIDERS setting):
// "xai=https://api.x.ai/v1 local=http://127.0.0.1:8080/v1,no-tools".
func ParseProviders(list string) (map[string]Provider, error) {
	providers := map[string]Provider{}
	for _, s := range strings.FieldsFunc(list, func(r rune) bool { return r == ';' || r == ' ' || r == '\n' || r == '\t' }) {
		name, p, err := ParseProvider(s)
		if err != nil {
			return nil, err
		}
		if _, dup := providers[name]; dup {
			return nil, fmt.Errorf("model provider %s is given twice", name)
		}
		providers[name] = p
	}
	return providers, nil
}

// Allow returns policy with the operator's model providers let through: a
// provider on loopback or a private network (a local model server) is
// reachable by agent rows without opening it to http rows. Row authors choose
// a model id, never the URL, so this widens nothing they control.
func Allow(policy outbound.Policy, providers map[string]Provider) outbound.Policy {
	urls := make([]string, 0, len(providers))
	for _, p := range providers {
		urls = append(urls, p.BaseURL)
	}
	return policy.Trusting(urls...)
}
