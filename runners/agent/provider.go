package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/rowcall/rowcall"
)

// Provider is one OpenAI-compatible chat completions endpoint the operator
// configured.
type Provider struct {
	// BaseURL is the API root; requests go to BaseURL + "/chat/completions"
	// (https://api.x.ai/v1, https://api.openai.com/v1, a gateway's compat root).
	BaseURL string
	// NoTools stops the runner offering native tools to this provider's
	// models; the [KEY]args[/KEY] tag protocol works either way.
	NoTools bool
}

// ParseProvider reads the --model-provider flag form NAME=URL[,no-tools].
func ParseProvider(s string) (name string, p Provider, err error) {
	name, rest, ok := strings.Cut(s, "=")
	name = strings.TrimSpace(name)
	if !ok || name == "" || strings.ContainsAny(name, ":/ ") {
		return "", p, fmt.Errorf("model provider %q: want NAME=URL, e.g. xai=https://api.x.ai/v1", s)
	}
	rawURL, opt, _ := strings.Cut(rest, ",")
	switch strings.TrimSpace(opt) {
	case "":
	case "no-tools":
		p.NoTools = true
	default:
		return "", p, fmt.Errorf("model provider %q: unknown option %q (the only one is no-tools)", s, opt)
	}
	u, err := url.Parse(strings.TrimSpace(rawURL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" {
		return "", p, fmt.Errorf("model provider %q: %q is not an absolute http(s) URL without a query", s, rawURL)
	}
	p.BaseURL = strings.TrimRight(u.String(), "/")
	return name, p, nil
}

// endpoint is where one agent row's requests go.
type endpoint struct {
	name     string // the provider's name
	url      string // …/chat/completions
	model    string // the model id sent
	provider Provider
}

// resolve maps a row's target to a provider and a model id. A target
// "NAME:MODEL" whose NAME is a configured provider goes to that provider with
// model MODEL ("gw:openai/gpt-4.1-mini" sends "openai/gpt-4.1-mini" to the
// provider named gw); any other target (grok-4.3, or an id that holds ':' of
// its own) goes whole to the default provider.
func (r *Runner) resolve(target string) (endpoint, *rowcall.Failure) {
	target = strings.TrimSpace(target)
	if target == "" {
		return endpoint{}, rowcall.Fail("agent", "bad_target", "empty").Because("an agent row's target is a model id, e.g. grok-4.3 or gw:openai/gpt-4.1-mini")
	}
	name, model := r.defaultProvider, target
	if n, m, ok := strings.Cut(target, ":"); ok {
		if _, known := r.providers[n]; known && m != "" {
			name, model = n, m
		}
	}
	p, ok := r.providers[name]
	if !ok {
		return endpoint{}, rowcall.Fail("agent", "no_provider", target).Because(r.noProvider())
	}
	return endpoint{name: name, url: p.BaseURL + "/chat/completions", model: model, provider: p}, nil
}

func (r *Runner) noProvider() string {
	if len(r.providers) == 0 {
		return "this host has no model provider; start it with --model-provider NAME=URL"
	}
	names := make([]string, 0, len(r.providers))
	for n := range r.providers {
		names = append(names, n)
	}
	sort.Strings(names)
	return "no default provider for a bare model id; prefix the target with one of " + strings.Join(names, ", ") +
		" (e.g. " + names[0] + ":MODEL) or start the host with --model-default NAME"
}

// Price is what a model costs, in US dollars per million tokens.
type Price struct {
	Input  float64 `json:"input"`  // per 1M prompt tokens
	Output float64 `json:"output"` // per 1M completion tokens
}

// Prices maps a model id to its price. A row's cost is looked up by its
// whole target first ("gw:openai/gpt-4.1-mini"), then by the model id sent
// ("openai/gpt-4.1-mini"); a model with no price costs 0.
type Prices map[string]Price

// ParsePrices reads a price table: a JSON object of model id →
// {"input": USD per 1M input tokens, "output": USD per 1M output tokens}.
// Unknown fields and negative prices are refused, so a typo cannot price a
// model at zero unnoticed.
func ParsePrices(b []byte) (Prices, error) {
	var p Prices
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf(`price table: want {"model":{"input":USD_per_1M,"output":USD_per_1M},…}: %v`, err)
	}
	if dec.More() {
		return nil, errors.New("price table: text after the JSON object")
	}
	for m, pr := range p {
		if pr.Input < 0 || pr.Output < 0 {
			return nil, fmt.Errorf("price table: %s has a negative price", m)
		}
	}
	return p, nil
}

// lookup is the price of a row's target and the model id sent, and the
// entry's name ("" when there is none).
func (p Prices) lookup(target, model string) (Price, string) {
	if pr, ok := p[target]; ok {
		return pr, target
	}
	if pr, ok := p[model]; ok {
		return pr, model
	}
	return Price{}, ""
}

// cost is the USD cost of u at pr.
func (pr Price) cost(u usage) float64 {
	return (float64(u.PromptTokens)*pr.Input + float64(u.CompletionTokens)*pr.Output) / 1e6
}
