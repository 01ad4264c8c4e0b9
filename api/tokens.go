package api

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/rowcall/rowcall"
)

// mintRequest is the body of POST /api/tokens.
type mintRequest struct {
	Name        string            `json:"name"`
	Keys        []string          `json:"keys"`
	Categories  []string          `json:"categories"`
	Audience    string            `json:"audience"`
	RiskCeiling string            `json:"risk_ceiling"`
	Pin         []string          `json:"pin"`  // keys to pin to their current contract
	Pins        map[string]string `json:"pins"` // key → contract SHA-256, pinned explicitly
	FixedBody   *string           `json:"fixed_body"`
	MaxPayload  int64             `json:"max_payload"`
	ExpiresIn   int64             `json:"expires_in"` // seconds from now
	ExpiresAt   string            `json:"expires_at"`
	Approval    string            `json:"approval"` // "sensitive" or "all": the token's calls wait for a person's approval
	Approve     bool              `json:"approve"`  // may approve or deny waiting calls of rows in its scope
	Teach       bool              `json:"teach"`    // its asks followed by a successful call teach ask (internal/learn)

	rowcall.Limits // rate, burst, budget_usd_day, budget_usd_month, calls_day
}

// mintToken handles POST /api/tokens: the secret is in the answer once and
// stored only as its SHA-256.
func (h *Handler) mintToken(w http.ResponseWriter, r *http.Request, c Caller) {
	m, err := readMint(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	t, err := h.tokenFrom(r, m)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if err := bindToPerson(c, &t); err != nil {
		writeError(w, r, err)
		return
	}
	plain, err := h.storeToken(r.Context(), &t)
	if err != nil {
		writeError(w, r, err)
		return
	}
	answer := ordered{{"ok", true}, {"id", t.ID}, {"token", plain},
		{"note", "the token is shown once and stored only as a hash: keep it now"}, {"scope", t}}
	if hidden := h.aboveCeiling(r.Context(), &t); len(hidden) > 0 {
		answer = append(answer, kv{"risk_note", "risk_ceiling low hides the sensitive rows of this scope (" + strings.Join(hidden, ", ") +
			"): the token neither lists nor calls them, over the API or /mcp (an MCP tool imported without readOnlyHint is sensitive); " +
			`mint with "risk_ceiling":"high" to reach them`})
	}
	writeJSON(w, http.StatusCreated, answer)
}

// aboveCeiling returns up to three keys of sensitive rows in t's scope that
// its risk ceiling hides (none when it is high), looking at most at the
// first ten thousand rows of the scope.
func (h *Handler) aboveCeiling(ctx context.Context, t *rowcall.Token) []string {
	if t.RiskCeiling == rowcall.RiskHigh {
		return nil
	}
	var hidden []string
	f := rowcall.Filter{Scope: rowcall.ScopeOf(t), Limit: rowcall.MaxPage, Bare: true}
	for range 10 {
		page, err := h.dir.List(ctx, f)
		if err != nil {
			return hidden // a note, not the mint: a failed read leaves it out
		}
		for _, row := range page.Rows {
			if row.Sensitive != 0 && !row.OwnerOnly() {
				if hidden = append(hidden, row.Key); len(hidden) == 3 {
					return hidden
				}
			}
		}
		if len(page.Rows) < f.Limit {
			break
		}
		f.Offset += len(page.Rows)
	}
	return hidden
}

// readMint reads a mint request's body (POST /api/tokens, and the scope an
// OAuth consent grants).
func readMint(r *http.Request) (mintRequest, error) {
	var m mintRequest
	obj, err := readObject(r)
	if err != nil {
		return m, err
	}
	raw, _ := json.Marshal(obj)
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return m, invalid(err.Error(), "token fields: name, keys, categories, audience, risk_ceiling (low|high), pin, pins, fixed_body, max_payload, expires_in, expires_at, approval (sensitive|all), approve (true|false), teach (true|false), rate, burst, budget_usd_day, budget_usd_month, calls_day")
	}
	return m, nil
}

// storeToken stores t under a new secret, which it returns (the only time it
// exists outside the caller's hands: the store keeps its SHA-256).
func (h *Handler) storeToken(ctx context.Context, t *rowcall.Token) (string, error) {
	plain, sum := newSecret(TokenPrefix)
	return plain, h.store.CreateToken(ctx, t, sum)
}

// newSecret is a random secret with prefix, and its SHA-256 in hex (what is stored).
func newSecret(prefix string) (plain, sha string) {
	secret := make([]byte, 32)
	rand.Read(secret)
	plain = prefix + base64.RawURLEncoding.EncodeToString(secret)
	return plain, hashHex(plain)
}

func hashHex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// tokenFrom validates a mint request into a token.
func (h *Handler) tokenFrom(r *http.Request, m mintRequest) (rowcall.Token, error) {
	t := rowcall.Token{ID: "tok_" + randomID(12), Name: m.Name, Keys: m.Keys, Categories: m.Categories, Audience: m.Audience,
		RiskCeiling: m.RiskCeiling, FixedBody: m.FixedBody, MaxPayload: m.MaxPayload, Pins: map[string]string{},
		Approval: m.Approval, Approve: m.Approve, Teach: m.Teach}
	switch t.Approval {
	case "", rowcall.ApproveSensitive, rowcall.ApproveAll:
	default:
		return t, invalid("approval must be sensitive or all; got "+t.Approval, `use "sensitive" (calls of sensitive rows wait for a person) or "all" (every call does), or omit it`)
	}
	if len(t.Keys) == 0 && len(t.Categories) == 0 {
		return t, invalid("a token needs a scope: keys and/or categories", `send e.g. {"keys":["NOW"]} or {"categories":["time"]} ("*" is every row)`)
	}
	for _, k := range t.Keys {
		if err := validKey(k); err != nil {
			return t, err
		}
	}
	if t.Audience == "" {
		t.Audience = h.disp.Audience
	}
	switch t.RiskCeiling {
	case "":
		t.RiskCeiling = rowcall.RiskLow
	case rowcall.RiskLow, rowcall.RiskHigh:
	default:
		return t, invalid("risk_ceiling must be low or high; got "+t.RiskCeiling, "use low (the default) or high (may call sensitive rows)")
	}
	if err := m.Limits.Validate(); err != nil {
		return t, invalid(err.Error(), `limits take e.g. {"rate":"2/minute","burst":5,"budget_usd_day":5,"budget_usd_month":50,"calls_day":1000}; omit one for no limit`)
	}
	t.Limits = m.Limits
	if t.MaxPayload < 0 {
		return t, invalid("max_payload must be a positive number of bytes", "omit it for no ceiling")
	}
	switch {
	case m.ExpiresIn < 0 || m.ExpiresIn > rowcall.MaxExpiresIn:
		return t, &rowcall.Error{Code: rowcall.EExpiryOutOfRange,
			Message:  fmt.Sprintf("expires_in must be from 1 to %d seconds (ten years); got %d", rowcall.MaxExpiresIn, m.ExpiresIn),
			HowToFix: "give the token's lifetime in seconds (86400 is a day), or omit expires_in for a token that does not expire"}
	case m.ExpiresIn > 0:
		t.ExpiresAt = time.Now().Add(time.Duration(m.ExpiresIn) * time.Second).UTC().Format(rowcall.Timestamp)
	case m.ExpiresAt != "":
		at, err := time.Parse(time.RFC3339, m.ExpiresAt)
		if err != nil {
			return t, invalid("expires_at must be an RFC 3339 time; got "+m.ExpiresAt, "e.g. 2026-12-31T00:00:00Z")
		}
		t.ExpiresAt = at.UTC().Format(rowcall.Timestamp)
	}
	for k, sum := range m.Pins {
		if len(sum) != 64 {
			return t, invalid("pins["+k+"] must be a contract SHA-256 (64 hex digits)", "take it from a receipt's contract_sha256, or use \"pin\":[\""+k+"\"] to pin the current contract")
		}
		t.Pins[k] = sum
	}
	for _, k := range m.Pin {
		row, err := h.dir.Lookup(r.Context(), k)
		if err != nil {
			return t, invalid("cannot pin "+k+": no such row", "pin only existing rows")
		}
		if t.Pins[k], err = h.disp.Contract(r.Context(), &row); err != nil {
			return t, err
		}
	}
	for k := range t.Pins {
		if row, err := h.dir.Lookup(r.Context(), k); err == nil && !t.Covers(&row) || err != nil && !contains(t.Keys, k) {
			return t, invalid("pinned key "+k+" is outside the token's scope", "add it to keys")
		}
	}
	return t, nil
}

func (h *Handler) listTokens(w http.ResponseWriter, r *http.Request, c Caller) {
	list, err := h.store.Tokens(r.Context())
	if err != nil {
		writeError(w, r, err)
		return
	}
	if !c.Has(rowcall.RightSettings) {
		list = slices.DeleteFunc(list, func(t rowcall.Token) bool { return !ownToken(c, &t) })
	}
	writeJSON(w, http.StatusOK, ordered{{"tokens", list}})
}

func (h *Handler) getToken(w http.ResponseWriter, r *http.Request, c Caller) {
	t, err := h.store.Token(r.Context(), r.PathValue("id"))
	if err == nil && !c.Has(rowcall.RightSettings) && !ownToken(c, &t) {
		err = errNoToken
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, t)
}

func (h *Handler) revokeToken(w http.ResponseWriter, r *http.Request, c Caller) {
	if t, err := h.store.Token(r.Context(), r.PathValue("id")); err != nil || !c.Has(rowcall.RightSettings) && !ownToken(c, &t) {
		writeError(w, r, cmp.Or(err, error(errNoToken)))
		return
	}
	t, err := h.revokeWithConnections(r, r.PathValue("id"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, ordered{{"ok", true}, {"id", t.ID}, {"revoked_at", t.RevokedAt}})
}

// revokeWithConnections revokes the capability token id, and its connections
// go with it (docs/security.md#connections): every path that revokes a token
// (DELETE /api/tokens/{id}, /oauth/revoke, a replayed refresh token or
// authorization code) comes here.
func (h *Handler) revokeWithConnections(r *http.Request, id string) (rowcall.Token, error) {
	t, err := h.store.RevokeToken(r.Context(), id)
	if err == nil && h.cfg.Connect != nil {
		err = h.forgetConnections(r, t.ID)
	}
	return t, err
}

func invalid(msg, fix string) error {
	return &rowcall.Error{Code: rowcall.EInvalid, Message: msg, HowToFix: fix}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func randomID(n int) string {
	const alphabet = "0123456789abcdefghijklmnopqrstuvwxyz"
	b := make([]byte, n)
	rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}
