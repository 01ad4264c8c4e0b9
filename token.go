package rowcall

import (
	"slices"
	"strings"
	"time"
)

// Token is a scoped capability token: what one caller may invoke and read.
// Its secret is shown once when minted and stored only as a SHA-256 hash.
type Token struct {
	ID          string            `json:"id"` // tok_…, public
	Name        string            `json:"name,omitempty"`
	Keys        []string          `json:"keys"`       // rows in scope by key
	Categories  []string          `json:"categories"` // rows in scope by category; "*" is every row
	Audience    string            `json:"audience"`   // the host audience this token is for
	RiskCeiling string            `json:"risk_ceiling"`
	Pins        map[string]string `json:"pins,omitempty"`       // key → pinned contract SHA-256
	FixedBody   *string           `json:"fixed_body,omitempty"` // when set, the only body allowed
	MaxPayload  int64             `json:"max_payload,omitempty"`
	ExpiresAt   string            `json:"expires_at,omitempty"`
	CreatedAt   string            `json:"created_at"`
	RevokedAt   string            `json:"revoked_at,omitempty"`
	Client      string            `json:"client,omitempty"`   // the OAuth client holding it (its client_id), when a consent minted it
	Approval    string            `json:"approval,omitempty"` // ApproveSensitive or ApproveAll: its calls wait for a person's approval
	Approve     bool              `json:"approve,omitempty"`  // may approve or deny the waiting calls of rows in its scope
	Teach       bool              `json:"teach,omitempty"`    // its questions, followed by a successful call of a match, teach ask (internal/learn)
	Person      string            `json:"person,omitempty"`   // the person (per_…) who minted it or consented to it: it never exceeds what they may do (Person.Narrow)
	Limits                        // rate and budgets, set when minted (limits.go)
}

// TokenState is whether a token may be used at a moment: the one validity
// rule every caller (the dispatch gate, the API's reads, MCP) applies.
type TokenState int

const (
	TokenLive    TokenState = iota // neither revoked nor expired
	TokenRevoked                   // RevokedAt is set
	TokenExpired                   // ExpiresAt is at or before now (or is not a time)
)

// State reports whether the token is live at now. Revocation wins over
// expiry. ExpiresAt is a stored RFC 3339 time (millisecond precision); one
// that does not parse is expired, so a damaged row fails closed.
func (t *Token) State(now time.Time) TokenState {
	if t.RevokedAt != "" {
		return TokenRevoked
	}
	if t.ExpiresAt != "" {
		at, err := time.Parse(time.RFC3339Nano, t.ExpiresAt)
		if err != nil || !at.After(now) {
			return TokenExpired
		}
	}
	return TokenLive
}

// MaxExpiresIn is the longest lifetime, in seconds, a token is minted with
// (ten years of 365 days). An expires_in outside 1..MaxExpiresIn is refused
// as EExpiryOutOfRange: a larger one would overflow the clock's arithmetic
// into a time already past. A token that should not expire has no expiry.
const MaxExpiresIn = 10 * 365 * 24 * 60 * 60

// EExpiryOutOfRange is the code of a mint request whose expires_in is
// outside 1..MaxExpiresIn.
const EExpiryOutOfRange Code = "expiry_out_of_range"

// Risk ceilings: a low token cannot invoke a sensitive row.
const (
	RiskLow  = "low"
	RiskHigh = "high"
)

// OwnerEnv is the environment name under which a host exposes its owner key to
// rows (so example rows can call the host's own API). A row whose auth names it
// acts with the owner's power, so only the owner may invoke it.
const OwnerEnv = "ROWCALL_OWNER_KEY"

// Covers reports whether row is in the token's scope.
func (t *Token) Covers(r *Row) bool { return ScopeOf(t).Covers(r) }

// Covers reports whether row is in the scope (a nil scope covers every row):
// the rule sqlstore's scope clause applies in SQL, for rows found elsewhere
// (vector hits).
func (s *Scope) Covers(r *Row) bool { return s.Holds(r.Key, r.Category) }

// Holds is Covers for the row key of category (a vector index knows no
// more of a row). The first call looks through the scope's lists; the
// second builds sets of them, which every later call looks up (a vector
// scan checks each row it passes, a tool list each row it offers).
func (s *Scope) Holds(key, category string) bool {
	if s == nil {
		return true
	}
	sets := s.sets.Load()
	if sets == nil {
		built := s.asked.Swap(true)
		sets = s.lists(built)
		if built {
			s.sets.Store(sets)
		}
	}
	return sets.all || in(sets.keys, s.Keys, key) || (category != "" && in(sets.categories, s.Categories, category))
}

// scopeSets are a Scope's lists as sets (nil until built), and whether it
// holds every row.
type scopeSets struct {
	keys, categories map[string]bool
	all              bool
}

func (s *Scope) lists(build bool) *scopeSets {
	l := &scopeSets{all: slices.Contains(s.Categories, "*")}
	if build {
		l.keys, l.categories = setOf(s.Keys), setOf(s.Categories)
	}
	return l
}

func setOf(list []string) map[string]bool {
	set := make(map[string]bool, len(list))
	for _, v := range list {
		set[v] = true
	}
	return set
}

// in reports whether v is in list, looked up in set once it is built.
func in(set map[string]bool, list []string, v string) bool {
	if set != nil {
		return set[v]
	}
	return slices.Contains(list, v)
}

// MayCall reports whether the gate could let the token call row at all: in
// scope, not owner-only, and not above its risk ceiling. Lists of what a
// token's caller may call (MCP tools, an agent's tools) offer only these.
func (t *Token) MayCall(r *Row) bool {
	return t.Covers(r) && !r.OwnerOnly() && (r.Sensitive == 0 || t.RiskCeiling == RiskHigh)
}

// MaxIncludes is how many prompt blocks one row may include.
const MaxIncludes = 32

// IncludeKeys are the keys named in the row's includes column (the prompt
// blocks an agent row sends before its own content), in order.
func (r *Row) IncludeKeys() []string {
	var keys []string
	for _, k := range strings.Split(r.Includes, ",") {
		if k = strings.TrimSpace(k); k != "" {
			keys = append(keys, k)
		}
	}
	return keys
}
