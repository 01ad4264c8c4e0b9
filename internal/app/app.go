// Package app is rowcall's one composition root. Settings are the operator's
// settings by their ROWCALL_* names, read by one function from whatever a host
// has (flags and the environment on the local host, vars and secrets on the
// worker), so one name means one thing everywhere. New assembles the core —
// the store, the directory's write path, the receipt writer, the dispatcher,
// the four runners and the API — over what a Platform provides: host/ and
// worker/ are adapters that build a Platform and serve App.Handler.
//
//	s := app.ReadSettings(lookup)
//	a, err := app.New(s, app.Platform{DB: db, Signer: signer, OwnerKeys: keys, …})
//	defer a.Close()
//	http.Serve(ln, a.Handler)
package app

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/api"
	"github.com/rowcall/rowcall/api/mcp"
	"github.com/rowcall/rowcall/internal/connect"
	"github.com/rowcall/rowcall/internal/directory"
	"github.com/rowcall/rowcall/internal/dispatch"
	"github.com/rowcall/rowcall/internal/embed/openai"
	"github.com/rowcall/rowcall/internal/expand"
	"github.com/rowcall/rowcall/internal/learn"
	"github.com/rowcall/rowcall/internal/ledger"
	"github.com/rowcall/rowcall/internal/mcpimport"
	"github.com/rowcall/rowcall/internal/outbound"
	"github.com/rowcall/rowcall/internal/rerank"
	"github.com/rowcall/rowcall/internal/signin"
	"github.com/rowcall/rowcall/internal/vectors"
	"github.com/rowcall/rowcall/runners/agent"
	"github.com/rowcall/rowcall/runners/flow"
	"github.com/rowcall/rowcall/runners/fn/modules"
	"github.com/rowcall/rowcall/runners/httpcall"
	"github.com/rowcall/rowcall/runners/mcpcall"
	"github.com/rowcall/rowcall/sqlstore"
)

// Settings are what the operator sets, by name. Every host reads them with
// ReadSettings; the local host's flags of the same meaning set them too.
type Settings struct {
	Audience       string         // ROWCALL_AUDIENCE: tokens minted for another audience are refused ("rowcall")
	PublicReads    bool           // ROWCALL_PUBLIC_READS: anyone may read the directory
	PublicURL      string         // ROWCALL_PUBLIC_URL: the base of links and of $SELF
	TrustForwarded bool           // ROWCALL_TRUST_FORWARDED: links from X-Forwarded-* (behind a proxy)
	AllowOutbound  string         // ROWCALL_ALLOW_OUTBOUND: addresses rows may reach despite the policy
	SecretsPrefix  string         // ROWCALL_SECRETS_PREFIX: the only variables rows' auth may name
	NoExamples     bool           // ROWCALL_NO_EXAMPLES: a new database stays empty
	Models         agent.Settings // ROWCALL_MODEL_PROVIDERS, ROWCALL_MODEL_DEFAULT, ROWCALL_MODEL_PRICES
	Embed          EmbedSettings  // ROWCALL_EMBED_PROVIDER, ROWCALL_EMBED_MODEL, ROWCALL_EMBED_AUTH, ROWCALL_EMBED_DIM
	AskRerank      string         // ROWCALL_ASK_RERANK: the agent row that reranks ask's best candidates ("": none)
	// ROWCALL_ASK_RERANK_ANONYMOUS: the rate ("N/minute") all anonymous
	// callers' reranks share ("": anonymous asks are not reranked).
	AskRerankAnonymous string
	// ROWCALL_ASK_EXPAND: the agent row that writes the questions a user
	// would ask of each new or changed row, kept as its learned phrases
	// (package expand; "": off).
	AskExpand string
	// ROWCALL_ASK_EXPAND_DAILY_USD: what the expansion's calls may cost in
	// a UTC day, all hosts together ("": expand.DefaultDailyUSD).
	AskExpandDailyUSD string
	// ROWCALL_ASK_LEARN: whose use teaches ask (learn.ParseTeachers):
	// owner,tokens (the default, ""), owner, tokens or off.
	AskLearn string
	// ROWCALL_APPROVAL_NOTIFY: the row called, as the owner, for each new
	// approval (body id|key|actor|why; "": none).
	ApprovalNotify string
	MCP            MCPSettings // ROWCALL_MCP_TOOLS, ROWCALL_MCP_ORIGINS, ROWCALL_MCP_IDLE, ROWCALL_MCP_SESSIONS, ROWCALL_MCP_SESSIONS_PER_CREDENTIAL, ROWCALL_MCP_DRIFT
	OIDC           OIDCSettings
	// ROWCALL_OWNER_KEY_LOOPBACK_ONLY: the owner key is accepted only from
	// a loopback address (api.Config.OwnerKeyLoopbackOnly).
	OwnerKeyLoopbackOnly bool
	SCIM                 SCIMSettings
}

// OIDCSettings name the OpenID provider people sign in with
// (internal/signin; docs/people.md). Without Issuer nobody signs in.
type OIDCSettings struct {
	Issuer       string // ROWCALL_OIDC_ISSUER: the provider's issuer (its discovery URL without /.well-known/openid-configuration)
	ClientID     string // ROWCALL_OIDC_CLIENT_ID
	ClientSecret string // ROWCALL_OIDC_CLIENT_SECRET
	Roles        string // ROWCALL_OIDC_ROLES: group=role,… (rowcall.ParseRoleMapping)
	Name         string // ROWCALL_OIDC_NAME: the provider's name on the console ("": the issuer's host)
	GroupsClaim  string // ROWCALL_OIDC_GROUPS_CLAIM: the ID token claim listing groups ("groups")
	Scopes       string // ROWCALL_OIDC_SCOPES: scopes asked for besides openid email profile, separated by spaces or commas
}

// SignIn is the provider s names, reached with client (nil when s names
// none); a malformed setting is an error naming it.
func (s OIDCSettings) SignIn(client *http.Client, now func() time.Time) (api.SignIn, error) {
	if s.Issuer == "" {
		return nil, nil
	}
	roles, err := rowcall.ParseRoleMapping(s.Roles)
	if err != nil {
		return nil, err
	}
	p, err := signin.New(signin.Config{Issuer: s.Issuer, ClientID: s.ClientID, ClientSecret: s.ClientSecret, Name: s.Name,
		GroupsClaim: s.GroupsClaim, Scopes: signin.SplitScopes(s.Scopes), Roles: roles, Client: client, Now: now})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// SCIMSettings turn on SCIM provisioning (api/scim) for the organisation's
// identity provider.
type SCIMSettings struct {
	// Token is ROWCALL_SCIM_TOKEN: the bearer token the provider's SCIM
	// client sends ("": no /scim/v2), at least MinSCIMToken characters.
	Token string
	// Issuer is ROWCALL_OIDC_ISSUER: the OpenID provider's issuer, which
	// the people SCIM creates are bound to (with their externalId as the
	// subject).
	Issuer string
}

// MinSCIMToken is the shortest SCIM token a host takes: the token can end
// anyone's access, so it must not be guessable.
const MinSCIMToken = 32

// check refuses a token too short to be secret.
func (s SCIMSettings) check() error {
	if s.Token == "" || len(s.Token) >= MinSCIMToken {
		return nil
	}
	return &rowcall.Error{Code: rowcall.EInvalid, Message: fmt.Sprintf("ROWCALL_SCIM_TOKEN is %d characters; a SCIM token is at least %d", len(s.Token), MinSCIMToken),
		HowToFix: "make one with `openssl rand -base64 32` and give the same value to the identity provider's provisioning settings"}
}

// MCPSettings bound /mcp (mcp.Limits; "" is the default).
type MCPSettings struct {
	Tools         string // rows listed as tools in tools/list, beside the meta-tools (mcp.DefaultMaxTools; 0: none)
	Origins       string // web origins besides loopback and the public URL whose pages may call /mcp, separated by commas or spaces
	Idle          string // a duration: a session without a request this long is closed (mcp.DefaultIdle)
	Sessions      string // sessions open at once on the host (mcp.DefaultMaxSessions)
	PerCredential string // sessions open at once for one credential (mcp.DefaultSessionsPerCredential)
	// Drift is what a drifted MCP row does until the owner accepts or
	// rejects the change: hold (the default, ""): every call is refused
	// (definition_changed); warn: it runs, marked.
	Drift string
}

// DriftWarn parses Drift: whether drifted rows run (warn) or are held.
func (s MCPSettings) DriftWarn() (bool, error) {
	switch s.Drift {
	case "", "hold":
		return false, nil
	case "warn":
		return true, nil
	}
	return false, &rowcall.Error{Code: rowcall.EInternal, Message: "ROWCALL_MCP_DRIFT: " + strconv.Quote(s.Drift) + " is neither hold nor warn",
		HowToFix: "give hold (the default: a row whose MCP tool changed is refused until the owner accepts or rejects the change) or warn (it stays callable, marked drifted)"}
}

// Limits parses the settings (an error names the setting and its form).
func (s MCPSettings) Limits() (mcp.Limits, error) {
	var l mcp.Limits
	for _, o := range strings.FieldsFunc(s.Origins, func(r rune) bool { return r == ',' || unicode.IsSpace(r) }) {
		if !mcp.IsOrigin(o) {
			return l, &rowcall.Error{Code: rowcall.EInternal, Message: "ROWCALL_MCP_ORIGINS: " + strconv.Quote(o) + " is not a web origin",
				HowToFix: "list origins as scheme://host[:port] separated by commas, e.g. https://console.example.com,http://localhost:5173"}
		}
		l.Origins = append(l.Origins, o)
	}
	if s.Idle != "" {
		d, err := time.ParseDuration(s.Idle)
		if err != nil || d <= 0 {
			return l, &rowcall.Error{Code: rowcall.EInternal, Message: "ROWCALL_MCP_IDLE: " + strconv.Quote(s.Idle) + " is not a positive duration",
				HowToFix: "give a duration such as 5m or 90s"}
		}
		l.Idle = d
	}
	if s.Tools != "" {
		v, err := strconv.Atoi(s.Tools)
		if err != nil || v < 0 {
			return l, &rowcall.Error{Code: rowcall.EInternal, Message: "ROWCALL_MCP_TOOLS: " + strconv.Quote(s.Tools) + " is not a whole number of at least 0",
				HowToFix: "give how many rows /mcp lists as tools, e.g. 50 (0: only search_capabilities and call_capability; tools/call reaches every row either way)"}
		}
		l.MaxTools = cmp.Or(v, -1) // mcp.Limits: negative lists none, 0 the default
	}
	for _, n := range []struct {
		name, v string
		to      *int
	}{{"ROWCALL_MCP_SESSIONS", s.Sessions, &l.MaxSessions}, {"ROWCALL_MCP_SESSIONS_PER_CREDENTIAL", s.PerCredential, &l.SessionsPerCredential}} {
		if n.v == "" {
			continue
		}
		v, err := strconv.Atoi(n.v)
		if err != nil || v < 1 {
			return l, &rowcall.Error{Code: rowcall.EInternal, Message: n.name + ": " + strconv.Quote(n.v) + " is not a whole number of at least 1",
				HowToFix: "give how many sessions may be open at once, e.g. 100"}
		}
		*n.to = v
	}
	return l, nil
}

// EmbedSettings say which embedder ask uses (pickEmbedder).
type EmbedSettings struct {
	Provider string // "" or "use-lite": the platform's (the embedded encoder); "off": words only; else a model provider's name
	Model    string // the provider's embedding model
	Auth     string // its credential, in an auth column's form (bearer:ENV), read from Platform.Env
	Dim      string // the vectors' length ("": learned from the first answer)
}

// ReadSettings reads every setting through lookup ("" when unset). Yes-or-no
// settings take 1/true/yes/on (rowcall.SettingOn).
func ReadSettings(lookup func(name string) string) Settings {
	return Settings{
		Audience:       cmp.Or(lookup("ROWCALL_AUDIENCE"), "rowcall"),
		PublicReads:    rowcall.SettingOn(lookup("ROWCALL_PUBLIC_READS")),
		PublicURL:      lookup("ROWCALL_PUBLIC_URL"),
		TrustForwarded: rowcall.SettingOn(lookup("ROWCALL_TRUST_FORWARDED")),
		AllowOutbound:  lookup("ROWCALL_ALLOW_OUTBOUND"),
		SecretsPrefix:  lookup("ROWCALL_SECRETS_PREFIX"),
		NoExamples:     rowcall.SettingOn(lookup("ROWCALL_NO_EXAMPLES")),
		Models: agent.Settings{Providers: lookup("ROWCALL_MODEL_PROVIDERS"), Default: lookup("ROWCALL_MODEL_DEFAULT"),
			Prices: lookup("ROWCALL_MODEL_PRICES")},
		Embed: EmbedSettings{Provider: lookup("ROWCALL_EMBED_PROVIDER"), Model: lookup("ROWCALL_EMBED_MODEL"),
			Auth: lookup("ROWCALL_EMBED_AUTH"), Dim: lookup("ROWCALL_EMBED_DIM")},
		AskRerank: lookup("ROWCALL_ASK_RERANK"), AskRerankAnonymous: lookup("ROWCALL_ASK_RERANK_ANONYMOUS"),
		AskExpand: lookup("ROWCALL_ASK_EXPAND"), AskExpandDailyUSD: lookup("ROWCALL_ASK_EXPAND_DAILY_USD"),
		AskLearn:       lookup("ROWCALL_ASK_LEARN"),
		ApprovalNotify: lookup("ROWCALL_APPROVAL_NOTIFY"),
		MCP: MCPSettings{Tools: lookup("ROWCALL_MCP_TOOLS"), Origins: lookup("ROWCALL_MCP_ORIGINS"), Idle: lookup("ROWCALL_MCP_IDLE"),
			Sessions: lookup("ROWCALL_MCP_SESSIONS"), PerCredential: lookup("ROWCALL_MCP_SESSIONS_PER_CREDENTIAL"),
			Drift: lookup("ROWCALL_MCP_DRIFT")},
		OIDC: OIDCSettings{Issuer: lookup("ROWCALL_OIDC_ISSUER"), ClientID: lookup("ROWCALL_OIDC_CLIENT_ID"),
			ClientSecret: lookup("ROWCALL_OIDC_CLIENT_SECRET"), Roles: lookup("ROWCALL_OIDC_ROLES"), Name: lookup("ROWCALL_OIDC_NAME"),
			GroupsClaim: cmp.Or(lookup("ROWCALL_OIDC_GROUPS_CLAIM"), signin.DefaultGroupsClaim), Scopes: lookup("ROWCALL_OIDC_SCOPES")},
		OwnerKeyLoopbackOnly: rowcall.SettingOn(lookup("ROWCALL_OWNER_KEY_LOOPBACK_ONLY")),
		SCIM:                 SCIMSettings{Token: strings.TrimSpace(lookup("ROWCALL_SCIM_TOKEN")), Issuer: lookup("ROWCALL_OIDC_ISSUER")},
	}
}

// Fn is a host's fn runner: it runs modules and knows their digests (for the
// contract fingerprint).
type Fn interface {
	rowcall.Runner
	Digest(ctx context.Context, target string) (string, error)
}

// Platform is what a host provides, and what it can do.
type Platform struct {
	DB        *sql.DB
	MaxParams int // bound parameters a statement may carry (0: D1's 100)
	ReadPage  int // rows per query of a long read, where result sets come whole (sqlstore.Store.ReadPage)
	// BilledReads: the database bills rows read (D1; sqlstore.Store.BilledReads).
	BilledReads bool
	Signer      *ledger.Signer
	OwnerKeys   func() []string // the owner keys valid now

	// Env is where rows' credentials come from (wrapped in
	// rowcall.SecretsEnv); nil when each call sets its own (PerCall).
	Env rowcall.Env
	// RequestEnv, when Env is nil, is the credentials of the request ctx
	// belongs to, as a call's (PerCall) sees them: what listing an MCP
	// server's tools for POST /api/import/mcp and /api/mcp/sync reads an
	// auth spec from (the worker's request env).
	RequestEnv func(ctx context.Context) rowcall.Env
	// PerCall, when set, wraps every runner (the worker gives each call the
	// env of the request it belongs to).
	PerCall func(rowcall.Runner) rowcall.Runner
	// Client is the outbound transport under policy (timeout 0: none).
	Client func(policy outbound.Policy, timeout time.Duration) *http.Client
	// AllowPorts are addresses rows may always reach: the host's own listen address.
	AllowPorts []outbound.PortPrefix

	Fn      Fn                // the fn runner: compiled and deadlined, or interpreted and fuelled
	Modules *modules.Registry // fn modules, for the API

	// Embedder embeds rows and questions for ask (nil: words only); Vectors
	// stores and searches their vectors (nil: in memory over the database).
	Embedder rowcall.Embedder
	Vectors  rowcall.VectorIndex
	// KeepsVectors says the platform keeps Vectors current itself (the
	// worker's sync after each write): New builds no Indexer, so rows are
	// embedded by one mechanism only.
	KeepsVectors bool

	Now       func() time.Time // the clock (time.Now when nil)
	Fresh     time.Duration    // how long one look at the event log serves other calls (dispatch.Dispatcher.Fresh)
	Speculate bool             // run cached fn rows before looking (dispatch.Dispatcher.Speculate)

	ListenURL string                           // links' base without a public URL (the host's listen address)
	SelfBase  func(ctx context.Context) string // $SELF's base for a call ("": not served in process)
	Agent     func(*agent.Config)              // adjusts the agent runner (the host's retry flags)
	Handler   func(http.Handler) http.Handler  // wraps the API (the worker compiles modules on registration)

	// MCPStdio runs the operator's stdio MCP servers (nil: stdio rows are
	// refused, as on the worker); MCPNoPool makes each MCP call its own
	// session (mcpcall.Config.NoPool).
	MCPStdio *mcpcall.Stdio
	// Connect, when the operator configured providers (ROWCALL_CONNECTIONS)
	// or only their sealing key, holds them, the sealing keys and how to
	// read client secrets; New gives it the store (also the registry of the
	// providers it registers for MCP servers), the outbound client and the
	// public base.
	Connect   *connect.Service
	MCPNoPool bool
	// MCPToolsChanged is told each server that sent
	// notifications/tools/list_changed on a pooled session
	// (mcpcall.Config.OnToolsChanged; nil: nobody listens).
	MCPToolsChanged func(server string)

	// OpenAPI is POST /api/import/openapi's converter (api.Config.OpenAPI);
	// nil leaves the endpoint out.
	OpenAPI func([]byte, api.OpenAPIOptions) (api.OpenAPIResult, error)
}

// App is the assembled core.
type App struct {
	Store      *sqlstore.Store
	Directory  *directory.Service
	Receipts   *sqlstore.ReceiptLog
	Dispatcher *dispatch.Dispatcher
	Ranker     *vectors.Ranker  // ask's ranking: words, and vectors with an Embedder
	Learner    *learn.Learner   // ask's learning from use (Ranker.Learned, Dispatcher.Called)
	Indexer    *vectors.Indexer // keeps rows' vectors current (nil without an Embedder, or when the platform keeps them); Run runs it
	Expander   *expand.Expander // writes rows' questions through a model (nil: ROWCALL_ASK_EXPAND unset); Run runs it
	API        *api.Handler
	Handler    http.Handler // API, wrapped by Platform.Handler

	Embedder rowcall.Embedder // what ask embeds with (nil: words only; pickEmbedder)
	Reranker rowcall.Reranker // ask's rerank row (nil: none; ROWCALL_ASK_RERANK)

	mcp     *mcpcall.Runner
	connect *connect.Service // nil without ROWCALL_CONNECTIONS or its key
}

// New assembles the core for s over p.
func New(s Settings, p Platform) (*App, error) {
	policy, err := outbound.Parse(s.AllowOutbound)
	if err != nil {
		return nil, &rowcall.Error{Code: rowcall.EInternal, Message: "ROWCALL_ALLOW_OUTBOUND: " + err.Error(),
			HowToFix: "list CIDRs, IPs, IP:port or CIDR:port entries or host names separated by commas, e.g. 127.0.0.1/32, 127.0.0.1:9000"}
	}
	policy.AllowPorts = append(policy.AllowPorts, p.AllowPorts...)
	mcpLimits, err := s.MCP.Limits()
	if err != nil {
		return nil, err
	}
	driftWarn, err := s.MCP.DriftWarn()
	if err != nil {
		return nil, err
	}
	if err := s.SCIM.check(); err != nil {
		return nil, err
	}
	models, err := s.Models.Config()
	if err != nil {
		return nil, &rowcall.Error{Code: rowcall.EInternal, Message: "agent settings: " + err.Error(),
			HowToFix: "fix ROWCALL_MODEL_PROVIDERS (NAME=URL entries separated by spaces), ROWCALL_MODEL_DEFAULT (one of them) or ROWCALL_MODEL_PRICES (JSON)"}
	}
	models.Client = p.Client(agent.Allow(policy, models.Providers), 0)
	if p.Embedder, err = pickEmbedder(s.Embed, models, p); err != nil {
		return nil, err
	}
	a := &App{Store: sqlstore.New(p.DB), Embedder: p.Embedder}
	a.Store.Now = p.Now
	if p.MaxParams > 0 {
		a.Store.MaxParams = p.MaxParams
	}
	a.Store.ReadPage, a.Store.BilledReads = p.ReadPage, p.BilledReads
	// Every ranking for plain words (ask, did_you_mean, MCP's
	// search_capabilities) is the Ranker's: the directory's and the
	// dispatcher's Search is it.
	a.Ranker = &vectors.Ranker{Words: a.Store, Weight: vectors.Weight, Hub: vectors.Hub}
	teachers, err := learn.ParseTeachers(s.AskLearn)
	if err != nil {
		return nil, &rowcall.Error{Code: rowcall.EInternal, Message: "ROWCALL_ASK_LEARN: " + err.Error(),
			HowToFix: "say whose asks and calls teach ask: owner,tokens (the default), owner, tokens (those minted with teach), or off"}
	}
	a.Learner = &learn.Learner{Store: a.Store, Embedder: p.Embedder, Now: p.Now, Teachers: &teachers}
	a.Ranker.Learned = a.Learner
	ranked := rankedStore{a.Store, a.Ranker}
	a.Directory = directory.New(ranked, s.SecretsPrefix)
	if p.Embedder != nil {
		index := p.Vectors
		if index == nil {
			t := vectors.NewTable(a.Store, p.Fresh)
			a.Directory.Subscribe(t.Touch)
			index = t
		}
		a.Ranker.Embedder, a.Ranker.Index = p.Embedder, index
		if !p.KeepsVectors || p.Vectors == nil {
			a.Indexer = &vectors.Indexer{Embedder: p.Embedder, Index: index, Store: a.Store}
			a.Directory.Subscribe(a.Indexer.Notify)
		}
	}
	a.Receipts = sqlstore.NewReceiptLog(a.Store, p.Signer)

	models.Rows, models.Catalog = a.Store, sqlstore.Catalog{Store: a.Store}
	if p.Agent != nil {
		p.Agent(&models)
	}
	self := &outbound.Self{Base: p.SelfBase}
	wrap := p.PerCall
	if wrap == nil {
		wrap = func(r rowcall.Runner) rowcall.Runner { return r }
	}
	var env rowcall.Env
	if p.Env != nil {
		env = rowcall.SecretsEnv(p.Env, s.SecretsPrefix)
	}
	httpRunner := httpcall.New(httpcall.Config{Client: self.Client(p.Client(policy, httpcall.DefaultTimeout)), Self: self.Base})
	// MCP rows are http rows with runner "mcp": same policy, same auth column.
	a.mcp = mcpcall.New(mcpcall.Config{HTTP: httpRunner, Client: p.Client(policy, mcpcall.DefaultTimeout),
		Stdio: p.MCPStdio, NoPool: p.MCPNoPool, OnToolsChanged: p.MCPToolsChanged})
	if c := p.Connect; c != nil {
		c.Store, c.Registry, c.Client, c.Now = a.Store, a.Store, p.Client(policy, httpcall.DefaultTimeout), p.Now
		a.connect = c
		c.Base = func(ctx context.Context) string {
			if s.PublicURL != "" || p.SelfBase == nil {
				return strings.TrimRight(s.PublicURL, "/")
			}
			return p.SelfBase(ctx)
		}
	}
	a.Dispatcher = &dispatch.Dispatcher{
		Store: ranked, Receipts: a.Receipts, Env: env, Audience: s.Audience, Now: p.Now,
		Fresh: p.Fresh, Speculate: p.Speculate, Modules: p.Fn, Approvals: a.Store, ApprovalNotify: s.ApprovalNotify, DriftWarn: driftWarn,
		Runners: map[rowcall.Type]rowcall.Runner{
			rowcall.TypeHTTP:  wrap(mcpcall.Route{HTTP: httpRunner, MCP: a.mcp}),
			rowcall.TypeFlow:  wrap(flow.Runner{}),
			rowcall.TypeFn:    wrap(p.Fn),
			rowcall.TypeAgent: wrap(agent.New(models)),
		},
	}
	if p.Connect != nil {
		a.Dispatcher.Connect = p.Connect.Token
	}
	a.Dispatcher.Called = a.Learner.Called
	a.Directory.Subscribe(a.Dispatcher.Touch)
	a.Receipts.OnIdle(a.Dispatcher.LookAhead) // a lone client's next call finds the event log looked at
	if s.AskRerank != "" {
		anon, err := rerank.Anon(s.AskRerankAnonymous)
		if err != nil {
			return nil, &rowcall.Error{Code: rowcall.EInternal, Message: "ROWCALL_ASK_RERANK_ANONYMOUS: " + err.Error(),
				HowToFix: `give the rate all anonymous callers' reranks share, e.g. 10/minute, or leave it unset to rerank only for the owner and tokens`}
		}
		a.Reranker = rerank.Agent{Dispatcher: a.Dispatcher, Key: s.AskRerank, Anonymous: anon}
		a.Ranker.Reranker = a.Reranker
	}
	if s.AskExpand != "" {
		daily := expand.DefaultDailyUSD
		if s.AskExpandDailyUSD != "" {
			var err error
			if daily, err = strconv.ParseFloat(s.AskExpandDailyUSD, 64); err != nil || !(daily > 0) || math.IsInf(daily, 0) {
				return nil, &rowcall.Error{Code: rowcall.EInvalid, Message: "ROWCALL_ASK_EXPAND_DAILY_USD is " + strconv.Quote(s.AskExpandDailyUSD) + ", not an amount of US dollars above 0",
					HowToFix: fmt.Sprintf("give what the expansion's calls may cost in a UTC day, e.g. 0.50, or leave it unset for %g", expand.DefaultDailyUSD)}
			}
		}
		// An expansion row that offers tools is refused now, and again
		// before each call (it may be written later).
		if rows, err := a.Store.RowsByKey(context.Background(), []string{s.AskExpand}); err == nil {
			if r, ok := rows[s.AskExpand]; ok {
				if err := expand.Check(&r); err != nil {
					return nil, err
				}
			}
		}
		a.Expander = &expand.Expander{Dispatcher: a.Dispatcher, Store: a.Store, Learner: a.Learner, Key: s.AskExpand, DailyUSD: daily}
		if err := a.Expander.Start(context.Background()); err != nil {
			return nil, fmt.Errorf("ROWCALL_ASK_EXPAND: reading where the event log stands: %w", err)
		}
		a.Directory.Subscribe(a.Expander.Notify)
	}
	// The OpenID provider people sign in with: the operator named it, so
	// it is reached even on loopback or a private network, as a model
	// provider is (outbound.Policy.Trusting), without opening it to rows.
	signIn, err := s.OIDC.SignIn(p.Client(policy.Trusting(s.OIDC.Issuer), signInTimeout), p.Now)
	if err != nil {
		return nil, err
	}
	envOf := func(context.Context) rowcall.Env { return env }
	if env == nil && p.RequestEnv != nil {
		envOf = p.RequestEnv
	}
	a.API = api.New(api.Config{OwnerKeys: p.OwnerKeys, ReceiptKeys: func() []ledger.PublicKey { return []ledger.PublicKey{p.Signer.Public()} }, Signer: p.Signer,
		PublicReads: s.PublicReads, PublicURL: s.PublicURL, ListenURL: p.ListenURL, TrustForwarded: s.TrustForwarded,
		Modules: p.Modules, OpenAPI: p.OpenAPI, MCPTools: a.mcpTools(envOf), MCPSync: a.mcpSync(envOf), SimilarRows: a.begin(), Near: a.near(), MCP: mcpLimits,
		OAuth: a.Store, Fetch: p.Client(policy, metadataFetchTimeout), Connect: p.Connect, Learned: a.Learner, People: a.Store,
		SignIn: signIn, OwnerKeyLoopbackOnly: s.OwnerKeyLoopbackOnly,
		SCIMToken: s.SCIM.Token, SCIMIssuer: s.SCIM.Issuer}, a.Directory, a.Store, a.Dispatcher)
	a.Handler = a.API
	if p.Handler != nil {
		a.Handler = p.Handler(a.API)
	}
	self.Handler = a.Handler // rows' $SELF calls are served in process
	return a, nil
}

// signInTimeout bounds each request to the OpenID provider (discovery, the
// code's redemption, its keys).
const signInTimeout = 10 * time.Second

// metadataFetchTimeout bounds the fetch of an OAuth client's metadata document.
const metadataFetchTimeout = 5 * time.Second

// pickEmbedder is the embedder ROWCALL_EMBED_PROVIDER names: the
// platform's own (unset or use-lite), none (off), or the OpenAI-compatible
// embeddings API of the model provider of that name, reached through the
// agent runner's client (so the outbound policy lets it through as it does
// for agent rows) with its credential read from the platform's Env.
func pickEmbedder(s EmbedSettings, models agent.Config, p Platform) (rowcall.Embedder, error) {
	switch s.Provider {
	case "", "use-lite":
		return p.Embedder, nil
	case "off":
		return nil, nil
	}
	prov, ok := models.Providers[s.Provider]
	if !ok {
		return nil, &rowcall.Error{Code: rowcall.EInternal, Message: "ROWCALL_EMBED_PROVIDER: " + s.Provider + " is not among the model providers",
			HowToFix: "name one of ROWCALL_MODEL_PROVIDERS (NAME=URL entries), or use-lite (the embedded encoder) or off (words only)"}
	}
	if s.Auth != "" && p.Env == nil {
		return nil, &rowcall.Error{Code: rowcall.EInternal, Message: "ROWCALL_EMBED_AUTH: this platform has no environment to read " + s.Auth + " from",
			HowToFix: "on the worker, leave ROWCALL_EMBED_PROVIDER unset to embed with Workers AI (the AI binding), or use a provider that needs no credential"}
	}
	dim := 0
	if s.Dim != "" {
		n, err := strconv.Atoi(s.Dim)
		if err != nil || n <= 0 {
			return nil, &rowcall.Error{Code: rowcall.EInternal, Message: "ROWCALL_EMBED_DIM: " + strconv.Quote(s.Dim) + " is not a positive whole number",
				HowToFix: "give the model's vector length (e.g. 1536 for text-embedding-3-small), or leave it unset to learn it from the first answer"}
		}
		dim = n
	}
	return openai.New(openai.Config{Provider: s.Provider, BaseURL: prov.BaseURL, Model: s.Model, Dim: dim,
		Auth: s.Auth, Env: p.Env, Client: models.Client})
}

// rankedStore is the store with its Search replaced by the Ranker's.
type rankedStore struct {
	*sqlstore.Store
	r *vectors.Ranker
}

func (s rankedStore) Search(ctx context.Context, query string, f rowcall.SearchFilter) ([]rowcall.Hit, error) {
	return s.r.Search(ctx, query, f)
}

// begin is how the API makes a written row's vector for its similar_rows
// (nil without an Embedder): through the Indexer, so one mechanism embeds
// and stores rows (the queue waits for a write's embedding rather than
// making its own), or, where the platform keeps its vectors, embedded and
// left for the platform to store.
func (a *App) begin() func(ctx context.Context, row *rowcall.Row) rowcall.PendingVector {
	if a.Ranker.Embedder == nil {
		return nil
	}
	begin := vectors.Begin(a.Ranker.Embedder, a.Ranker.Index)
	if a.Indexer != nil {
		begin = a.Indexer.Begin
	}
	return func(ctx context.Context, row *rowcall.Row) rowcall.PendingVector { return begin(ctx, row) }
}

// near is the API's near-duplicate finder: the Ranker's (nil without an
// Embedder).
func (a *App) near() func(ctx context.Context, v []float32, self string, f rowcall.SearchFilter, n int, atLeast float64) ([]rowcall.VectorHit, error) {
	if a.Ranker.Embedder == nil {
		return nil
	}
	return a.Ranker.Similar
}

// mcpTools is POST /api/import/mcp's lister: the MCP runner lists the
// server's tools with the import's auth read from the request's env (without
// auth, a server that asks for a person's sign-in is listed with the owner's
// connection to the provider the host registers for it: mcpimport.List), and
// mcpimport.Rows makes them rows.
func (a *App) mcpTools(envOf func(context.Context) rowcall.Env) func(context.Context, api.MCPImportOptions) ([]rowcall.Row, []string, error) {
	return func(ctx context.Context, o api.MCPImportOptions) ([]rowcall.Row, []string, error) {
		tools, secrets, auth, err := mcpimport.List(ctx, a.mcp, a.connect, rowcall.OwnerHolder, o.Server, o.Auth, envOf(ctx))
		if err != nil {
			return nil, nil, err
		}
		rows, skipped := mcpimport.Rows(o.Server, tools, secrets, mcpimport.Options{Prefix: o.Prefix, Category: o.Category, Auth: auth})
		return rows, skipped, nil
	}
}

// mcpSync is POST /api/mcp/sync's comparison: the MCP runner lists the
// server's tools with a credential the host holds (mcpimport.ListAuth: a
// row's that is not a per-caller connection, else the owner's own
// connection to that provider), and mcpimport.Sync compares. A server it
// cannot list is an error, which SyncMCP keeps on the server's rows.
func (a *App) mcpSync(envOf func(context.Context) rowcall.Env) func(context.Context, string, []rowcall.Row, func(string) bool, func(string) bool) ([]rowcall.Row, any, error) {
	return func(ctx context.Context, server string, stored []rowcall.Row, accept, reject func(string) bool) ([]rowcall.Row, any, error) {
		auth, provider := mcpimport.ListAuth(stored)
		if provider != "" && a.Dispatcher.Connect != nil {
			ctx = rowcall.WithConnector(ctx, func(ctx context.Context, p string) (string, *rowcall.Failure) {
				return a.Dispatcher.Connect(ctx, rowcall.OwnerHolder, p)
			})
		}
		tools, secrets, err := a.mcp.ListTools(ctx, server, auth, envOf(ctx))
		if err != nil && provider != "" {
			return nil, nil, fmt.Errorf("every row that calls %s uses a per-caller connection (%s), so its tools were listed with the owner's connection to %s: %w; "+
				"connect the owner's %s account, or give one of the server's rows an auth the host holds (bearer:ENV), then sync again", server, auth, provider, err, provider)
		}
		if err != nil {
			return nil, nil, err
		}
		writes, changes := mcpimport.Sync(server, stored, tools, secrets, accept, reject)
		return writes, changes, nil
	}
}

// Run does the core's background work until ctx ends: embedding rows after
// their writes (when there is an Embedder), and having a model write their
// questions (ROWCALL_ASK_EXPAND). A host runs it in a goroutine.
func (a *App) Run(ctx context.Context) {
	var wg sync.WaitGroup
	if a.Expander != nil {
		wg.Go(func() { a.Expander.Run(ctx) })
	}
	if a.Indexer != nil {
		a.Indexer.Run(ctx)
	}
	wg.Wait()
}

// Close stops the receipt writer once what it holds is stored, and closes
// the MCP sessions the runner holds.
func (a *App) Close() {
	a.mcp.Close()
	a.Receipts.Close()
}
