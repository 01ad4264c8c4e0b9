package rowcall

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math"
	"strconv"

	"github.com/rowcall/rowcall/internal/jsontext"
)

// Receipt is the engine's record of one invocation: written by the dispatcher in
// the code path that ran the call, never by the caller or the runner. It holds
// fingerprints of what went in and came out, never the values themselves, so it
// can be public and can never leak a credential.
type Receipt struct {
	ID        string  `json:"invocation_id"` // inv_…
	Trace     string  `json:"trace"`         // shared by a call and every nested call it made
	Parent    string  `json:"parent,omitempty"`
	Actor     string  `json:"actor"` // who called: owner:terminal-key, token:…
	Key       string  `json:"key"`
	Type      Type    `json:"type"`
	Runner    string  `json:"runner"`
	StartedAt string  `json:"started_at"`
	Millis    float64 `json:"duration_ms"`
	OK        bool    `json:"ok"`
	Material  bool    `json:"material"` // the call really ran: code executed or an upstream answered
	Shape     bool    `json:"shape"`    // a shape preview: nothing was sent
	CostUSD   float64 `json:"cost_usd"`
	Status    int     `json:"upstream_status,omitempty"`
	Outcome   string  `json:"outcome"` // "ok", or the failure's code, e.g. ERR:http:401
	Input     string  `json:"input_sha256"`
	Output    string  `json:"output_sha256"`
	Contract  string  `json:"contract_sha256"`
	TokenID   string  `json:"token_id,omitempty"` // the capability token the caller presented
	Approval  string  `json:"approval,omitempty"` // the approval the call ran on (apr_…), or an approval's own receipt's
	Approver  string  `json:"approver,omitempty"` // who approved it (an actor)
	// The person behind the call (the session's, or the one whose token
	// called), by their OpenID provider's issuer and subject.
	PersonIssuer  string `json:"person_iss,omitempty"`
	PersonSubject string `json:"person_sub,omitempty"`

	// The chain: written by the ledger when the receipt is stored.
	Seq    int64  `json:"seq"`         // 1, 2, 3… across every receipt of the database
	Prev   string `json:"prev_sha256"` // the previous receipt's SHA256 ("" for the first)
	KeyID  string `json:"key_id"`      // which signing key signed it
	SHA256 string `json:"sha256"`      // SHA-256 of Canonical()
	Sig    string `json:"sig"`         // base64 Ed25519 signature of the root of Batch's tree
	Batch  *Batch `json:"batch,omitempty"`
}

// Batch places a receipt in the group of receipts one signature covers: the
// writer signs the root of a Merkle tree over every receipt it stores at once,
// and each receipt carries the path from its own hash to that root, so it can
// be verified alone (see package ledger). A receipt without a Batch (written
// before batches) has its signature over its canonical form.
type Batch struct {
	Index int      `json:"index"` // this receipt's place in the batch, from 0
	Size  int      `json:"size"`  // how many receipts the signature covers
	Path  []string `json:"path"`  // sibling hashes (hex) from the leaf up to the root
}

// Canonical is the receipt's hashed form: its JSON without sha256, sig and batch, in
// RFC 8785 (JCS) form — keys sorted, no insignificant space, strings escaped
// only where JSON requires, numbers in their shortest round-trip form — with
// empty omitempty fields left out. Anyone holding a receipt can recompute it
// from the receipt's JSON, in any language with a JCS library.
func (r *Receipt) Canonical() []byte { return r.AppendCanonical(make([]byte, 0, 640)) }

// AppendCanonical appends Canonical's bytes to dst (a signer reuses one
// buffer for a whole group).
func (r *Receipt) AppendCanonical(dst []byte) []byte {
	start := len(dst)
	w := &appender{b: dst}
	w.b = append(w.b, '{')
	w.field("actor", r.Actor)
	if r.Approval != "" {
		w.field("approval", r.Approval)
	}
	if r.Approver != "" {
		w.field("approver", r.Approver)
	}
	w.field("contract_sha256", r.Contract)
	w.b = appendNumber(append(w.b, `,"cost_usd":`...), r.CostUSD)
	w.b = appendNumber(append(w.b, `,"duration_ms":`...), r.Millis)
	w.field("input_sha256", r.Input)
	w.field("invocation_id", r.ID)
	w.field("key", r.Key)
	w.field("key_id", r.KeyID)
	w.b = strconv.AppendBool(append(w.b, `,"material":`...), r.Material)
	w.b = strconv.AppendBool(append(w.b, `,"ok":`...), r.OK)
	w.field("outcome", r.Outcome)
	w.field("output_sha256", r.Output)
	if r.Parent != "" {
		w.field("parent", r.Parent)
	}
	if r.PersonIssuer != "" {
		w.field("person_iss", r.PersonIssuer)
	}
	if r.PersonSubject != "" {
		w.field("person_sub", r.PersonSubject)
	}
	w.field("prev_sha256", r.Prev)
	w.field("runner", r.Runner)
	w.b = strconv.AppendInt(append(w.b, `,"seq":`...), r.Seq, 10)
	w.b = strconv.AppendBool(append(w.b, `,"shape":`...), r.Shape)
	w.field("started_at", r.StartedAt)
	if r.TokenID != "" {
		w.field("token_id", r.TokenID)
	}
	w.field("trace", r.Trace)
	w.field("type", string(r.Type))
	if r.Status != 0 {
		w.b = strconv.AppendInt(append(w.b, `,"upstream_status":`...), int64(r.Status), 10)
	}
	b := append(w.b, '}')
	return append(b[:start+1], b[start+2:]...) // drop the first field's leading comma
}

// appender is a byte slice that jsontext can write to: one for a whole
// canonical form, so its fields cost no allocation each.
type appender struct{ b []byte }

func (a *appender) WriteString(s string) (int, error) { a.b = append(a.b, s...); return len(s), nil }
func (a *appender) WriteByte(c byte) error            { a.b = append(a.b, c); return nil }

// field writes ,"name":"value" (RFC 8785 string escaping).
func (a *appender) field(name, v string) {
	a.b = append(append(append(a.b, ',', '"'), name...), '"', ':')
	jsontext.Write(a, v)
}

// appendNumber writes f as encoding/json writes a float64.
func appendNumber(b []byte, f float64) []byte {
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' { // clean up e-09 to e-9, as encoding/json does
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// Fingerprint is the SHA-256 of b in lowercase hex.
func Fingerprint(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// contract is what defines a call: the fields whose change changes what a caller
// gets, and the description a caller chooses it by (the "# WHAT:" line, as the
// seed hashes its description). The other documentation (content's other '#'
// lines, examples, planner hints) is not in it, so such an edit keeps the
// fingerprint. contract's package doc states the rule for callers.
type contract struct {
	Key         string `json:"key"`
	Type        Type   `json:"type"`
	Runner      string `json:"runner"`
	Category    string `json:"category"`
	Description string `json:"description"` // Row.Description: the # WHAT line
	Target      string `json:"target"`
	Payload     string `json:"payload"` // content without its documentation lines
	InputSchema string `json:"input_schema"`
	// OutputSchema is left out when empty, so a row that declares no output
	// keeps the fingerprint it had before the column existed (RATIONALE.md,
	// "A row declares its output").
	OutputSchema      string  `json:"output_schema,omitempty"`
	Auth              string  `json:"auth"` // the spec (prefix and variable name), never a value
	Sensitive         int64   `json:"risk"`
	Enabled           int64   `json:"status"`
	AllowedCategories string  `json:"allowed_categories"`
	Includes          string  `json:"includes"`
	Approval          int64   `json:"approval,omitempty"`      // the approval requirement (0 leaves older contracts as they were)
	Module            string  `json:"module_sha256,omitempty"` // fn rows: the digest of the module that runs
	Blocks            []block `json:"included,omitempty"`      // rows with includes: what each block sends
}

// block is one included row as it counts in a contract: what the agent runner
// sends of it (nothing when it is disabled or missing).
type block struct {
	Key     string `json:"key"`
	Enabled int64  `json:"enabled"`
	Payload string `json:"payload"`
}

// ContractFingerprint is the SHA-256 of the row's callable contract. module is
// the digest of the Wasm module an fn row runs ("" otherwise): changing a
// module's code changes the contract of every row that runs it. blocks are the
// rows its includes name, in order (a missing one with only its key): editing
// an included block's text changes the contract of every row that sends it.
func ContractFingerprint(r *Row, module string, blocks []Row) string {
	c := contract{
		Key: r.Key, Type: r.Type, Runner: r.RunnerName(), Category: r.Category, Description: r.Description(), Target: r.Target,
		Payload: r.Payload(), InputSchema: r.InputSchema, OutputSchema: r.OutputSchema, Auth: r.Auth, Sensitive: r.Sensitive,
		Enabled: r.Enabled, AllowedCategories: r.AllowedCategories, Includes: r.Includes, Approval: r.Approval, Module: module,
	}
	for i := range blocks {
		b := block{Key: blocks[i].Key, Enabled: blocks[i].Enabled}
		if b.Enabled != 0 {
			b.Payload = blocks[i].Payload()
		}
		c.Blocks = append(c.Blocks, b)
	}
	j, _ := json.Marshal(c)
	return Fingerprint(j)
}

// RunnerName is the runner recorded for the row: the runner column when set,
// otherwise the type.
func (r *Row) RunnerName() string {
	if r.Runner != "" {
		return r.Runner
	}
	return string(r.Type)
}
