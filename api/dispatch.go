package api

import (
	"bytes"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/api/console"
	"github.com/rowcall/rowcall/internal/dispatch"
	"github.com/rowcall/rowcall/internal/jsontext"
	"github.com/rowcall/rowcall/internal/ledger"
)

// dispatchRow handles POST /api/dispatch {"key","body","shape"}: the seed's
// {"ok","ran","trace","result","proof":{…}}. A runner's failure is a result
// starting with ERR:, answered 200; only a call that could not be made at all
// (unknown key, disabled row, bad request) is an HTTP error.
func (h *Handler) dispatchRow(w http.ResponseWriter, r *http.Request, c Caller) {
	var req dispatchRequest
	if err := readJSON(r, &req); err != nil {
		writeError(w, r, err)
		return
	}
	if req.Key == "" {
		writeError(w, r, &rowcall.Error{Code: rowcall.EInvalid, Message: `a dispatch needs "key" (a string) and optionally "body" and "shape"`,
			HowToFix: `send {"key":"NOW","body":"arg1|arg2"}`})
		return
	}
	body, ok := bodyString(req.Body)
	if !ok {
		writeError(w, r, &rowcall.Error{Code: rowcall.EInvalid, Message: "body must be one string of pipe-separated arguments",
			HowToFix: `send "body":"37.77|-122.42"; a JSON argument goes in as text, e.g. "body":"ROUTER|{\"content\":\"x\"}"`})
		return
	}
	h.call(w, r, dispatch.Request{Key: req.Key, Body: body, Shape: req.Shape, Principal: c, Approval: req.Approval})
}

// dispatchRequest is POST /api/dispatch's body.
type dispatchRequest struct {
	Key   string `json:"key"`
	Body  any    `json:"body"`
	Shape bool   `json:"shape"`
	// Approval names the approval (apr_…) the call runs on.
	Approval string `json:"approval"`
}

// decodePlain reads body when it is an object of "key" and "body" strings
// without escapes, and "shape" true or false, in any order, each at most once:
// nearly every call's, read without encoding/json (readJSON). ok is false for
// anything else (another field or spelling, an escape, a number, null, a
// repeated field), which readJSON decodes as JSON; FuzzDispatchRequest checks
// that the two agree.
func (d *dispatchRequest) decodePlain(body []byte) (ok bool) {
	var t dispatchRequest
	if !utf8.Valid(body) {
		return false
	}
	s := strings.Trim(string(body), jsontext.Space)
	if len(s) < 2 || s[0] != '{' || s[len(s)-1] != '}' {
		return false
	}
	s = strings.TrimLeft(s[1:len(s)-1], jsontext.Space)
	var seen [3]bool
	for s != "" {
		name, rest, ok := jsontext.PlainString(s)
		if !ok {
			return false
		}
		if s = strings.TrimLeft(rest, jsontext.Space); s == "" || s[0] != ':' {
			return false
		}
		s = strings.TrimLeft(s[1:], jsontext.Space)
		var field int
		switch name {
		case "key", "body":
			v, rest, ok := jsontext.PlainString(s)
			if !ok {
				return false
			}
			if field = 0; name == "key" {
				t.Key = v
			} else {
				field, t.Body = 1, v
			}
			s = rest
		case "shape":
			switch {
			case strings.HasPrefix(s, "true"):
				t.Shape, s = true, s[4:]
			case strings.HasPrefix(s, "false"):
				t.Shape, s = false, s[5:]
			default:
				return false
			}
			field = 2
		default:
			return false
		}
		if seen[field] {
			return false
		}
		seen[field] = true
		if s = strings.TrimLeft(s, jsontext.Space); s == "" {
			break
		}
		if s[0] != ',' {
			return false
		}
		if s = strings.TrimLeft(s[1:], jsontext.Space); s == "" {
			return false // a trailing comma
		}
	}
	*d = t
	return true
}

// answer writes a dispatch result in the seed's shape, once its receipt is
// stored: nothing is acknowledged that a crash could lose. The answer
// {"ok","ran","trace","result"[,"shape"],"proof":{"ok","invocation_id",
// "public_receipt","contract_sha256"}} is written straight into a pooled
// buffer, field by field (no ordered pairs to box): it is every call's.
func (h *Handler) answer(w http.ResponseWriter, r *http.Request, res dispatch.Result, shape bool) {
	if err := res.Wait(); err != nil {
		writeError(w, r, fmt.Errorf("receipt %s could not be stored: %w", res.Receipt.ID, err))
		return
	}
	b := answers.Get().(*bytes.Buffer)
	defer answers.put(b)
	b.WriteString(`{"ok":`)
	b.WriteString(strconv.FormatBool(res.OK))
	b.WriteString(`,"ran":`)
	b.WriteString(strconv.FormatBool(res.Ran))
	b.WriteString(`,"trace":`)
	jsontext.Write(b, res.Trace)
	b.WriteString(`,"result":`)
	jsontext.Write(b, res.Result)
	if shape {
		j, err := marshal(res.Plan)
		if err != nil {
			writeError(w, r, fmt.Errorf("unencodable plan: %w", err))
			return
		}
		b.WriteString(`,"shape":`)
		b.Write(j)
	}
	b.WriteString(`,"proof":{"ok":`)
	b.WriteString(strconv.FormatBool(res.Receipt.ID != ""))
	b.WriteString(`,"invocation_id":`)
	jsontext.Write(b, res.Receipt.ID)
	b.WriteString(`,"public_receipt":"`)
	jsontext.WriteChars(b, h.baseURL(r))
	b.WriteString(receiptPath)
	jsontext.WriteChars(b, res.Receipt.ID)
	b.WriteString(`","contract_sha256":`)
	jsontext.Write(b, res.Receipt.Contract)
	b.WriteString("}}\n")
	w.Header()["Content-Type"] = jsonContentType
	w.WriteHeader(http.StatusOK)
	w.Write(b.Bytes())
}

// bodyString accepts a string (or nothing, or a number, which reads as text).
func bodyString(v any) (string, bool) {
	switch b := v.(type) {
	case nil:
		return "", true
	case string:
		return b, true
	case float64:
		return fmt.Sprint(b), true
	}
	return "", false
}

// receiptURL is the public, keyless address of a receipt.
func (h *Handler) receiptURL(r *http.Request, id string) string {
	return h.baseURL(r) + receiptPath + id
}

// receiptPath is where a public receipt lives under the base URL (receiptURL;
// answer writes the same URL straight into its buffer).
const receiptPath = "/receipt/"

// Receipt statuses reported by confirm.
const (
	provenMaterial = "PROVEN_MATERIAL_RESULT"  // ran, reached the world, succeeded
	provenFailure  = "PROVEN_MATERIAL_FAILURE" // ran, reached the world, failed
	recordedOnly   = "RECORDED_NOT_MATERIAL"   // recorded, but nothing ran (shape preview, refusal)
	altered        = "RECEIPT_ALTERED"         // the stored receipt fails its hash, batch path or signature
	unverifiable   = "RECEIPT_UNVERIFIABLE"    // signed by a key this host does not publish
	unavailable    = "RECEIPT_UNAVAILABLE"     // cannot be read now (rowcall.EReceiptUnavailable)
)

func receiptStatus(rc rowcall.Receipt) string {
	switch {
	case rc.Material && rc.OK:
		return provenMaterial
	case rc.Material:
		return provenFailure
	}
	return recordedOnly
}

// verdict checks a stored receipt against this host's receipt keys (its
// hash, its batch path to the signed root, the signature: ledger.Keys.Check)
// before anything is said about it. A receipt that fails is not confirmed and
// its status says why, never PROVEN…; reason is "" for one that verifies.
func (h *Handler) verdict(rc *rowcall.Receipt) (confirmed bool, status, reason string) {
	_, keys := h.keys()
	err := keys.Check(rc)
	switch {
	case err == nil:
		return true, receiptStatus(*rc), ""
	case errors.Is(err, ledger.ErrUnknownKey):
		return false, unverifiable, err.Error() + " — this host does not publish that key (/.well-known/rowcall-receipt-keys), so it cannot tell whether the receipt is intact"
	}
	return false, altered, err.Error()
}

// confirmation is the JSON answer about a stored receipt, for confirm and the
// receipt page: {"confirmed","status","verified","reason"?,"receipt"}.
func (h *Handler) confirmation(rc rowcall.Receipt) ordered {
	ok, status, reason := h.verdict(&rc)
	out := ordered{{"confirmed", ok}, {"status", status}, {"verified", ok}}
	if reason != "" {
		out = append(out, kv{"reason", reason})
	}
	return append(out, kv{"receipt", rc})
}

// confirm handles GET /api/dispatch?confirm=inv_… (public, keyless).
func (h *Handler) confirm(w http.ResponseWriter, r *http.Request) {
	if id := r.URL.Query().Get("confirm"); id != "" {
		rc, err := h.store.Receipt(r.Context(), id)
		if err != nil {
			var e *rowcall.Error
			errors.As(err, &e)
			switch rowcall.ErrorCode(err) {
			case rowcall.ENotFound:
				writeJSON(w, http.StatusNotFound, ordered{{"confirmed", false}, {"status", "NO_SUCH_RECEIPT"}, {"invocation_id", id}})
				return
			case rowcall.EReceiptUnavailable: // a status, as for a receipt that fails its check
				writeJSON(w, status(e), ordered{{"confirmed", false}, {"status", unavailable}, {"invocation_id", id},
					{"reason", e.Message}, {"how_to_fix", e.HowToFix}})
				return
			}
			writeError(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, h.confirmation(rc))
		return
	}
	writeError(w, r, &rowcall.Error{Code: rowcall.EInvalid, Message: "confirm needs an invocation id: ?confirm=inv_…"})
}

// receiptPage is parsed on the first receipt page shown, not at start: a
// worker's first request pays every package's init (docs/benchmarks.md).
var receiptPage = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("receipt").Parse(receiptHTML))
})

// receiptHTML's links are relative to the page (BASE/receipt/ID), so they stay
// under whatever base it was served at: a tenant's /t/NAME, a proxy's path.
const receiptHTML = `<!doctype html>
<html><head><meta charset="utf-8"><title>rowcall receipt {{.R.ID}}</title>
<link rel="stylesheet" href="../console/receipt.css"></head>
<body><h1>Receipt {{.R.ID}}</h1>{{if .Confirmed}}<p><strong>{{.Status}}</strong>: written by the rowcall engine in the code path that ran the call, and verified against this host's receipt keys.</p>
{{else}}<p><strong>{{.Status}}</strong>: NOT CONFIRMED. {{.Reason}}. What follows is what the stored record claims.</p>
{{end}}<table>
<tr><td>key</td><td><code>{{.R.Key}}</code> ({{.R.Type}}, runner {{.R.Runner}})</td></tr>
<tr><td>actor</td><td>{{.R.Actor}}</td></tr>{{if .R.PersonSubject}}
<tr><td>person</td><td><code>{{.R.PersonSubject}}</code> at <code>{{.R.PersonIssuer}}</code></td></tr>{{end}}{{if .R.Approval}}
<tr><td>approval</td><td><code>{{.R.Approval}}</code>{{if .R.Approver}}, approved by {{.R.Approver}}{{end}}</td></tr>{{end}}
<tr><td>trace</td><td><code>{{.R.Trace}}</code>{{if .R.Parent}} (nested in <a href="../receipt/{{.R.Parent}}">{{.R.Parent}}</a>){{end}}</td></tr>
<tr><td>started</td><td>{{.R.StartedAt}} ({{.R.Millis}} ms)</td></tr>
<tr><td>outcome</td><td>{{.R.Outcome}}{{if .R.Status}} (upstream {{.R.Status}}){{end}}; material: {{.R.Material}}; cost: ${{.R.CostUSD}}</td></tr>
<tr><td>input sha256</td><td><code>{{.R.Input}}</code></td></tr>
<tr><td>output sha256</td><td><code>{{.R.Output}}</code></td></tr>
<tr><td>contract sha256</td><td><code>{{.R.Contract}}</code></td></tr>
</table><p>JSON: <a href="../api/dispatch?confirm={{.R.ID}}">/api/dispatch?confirm={{.R.ID}}</a> · <a href="../#/receipt/{{.R.ID}}">in the console</a></p>
<div id="browser-check" aria-live="polite"></div><script type="module" src="../console/receipt-page.js"></script></body></html>
`

// receiptGet handles GET /receipt/{id}: the public, keyless receipt page (JSON
// for a client that asks for it), with the console's security headers.
func (h *Handler) receiptGet(w http.ResponseWriter, r *http.Request) {
	console.Secure(w.Header()) // the console's: its CSP, nosniff, no framing
	rc, err := h.store.Receipt(r.Context(), r.PathValue("id"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	if strings.Contains(r.Header.Get("Accept"), "application/json") || r.URL.Query().Get("format") == "json" {
		writeJSON(w, http.StatusOK, h.confirmation(rc))
		return
	}
	ok, status, reason := h.verdict(&rc)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	receiptPage().Execute(w, struct {
		R              rowcall.Receipt
		Confirmed      bool
		Status, Reason string
	}{rc, ok, status, reason})
}

// clearBreaker handles DELETE /api/breakers/{key}: the owner replaced the
// credential.
func (h *Handler) clearBreaker(w http.ResponseWriter, r *http.Request, c Caller) {
	key := r.PathValue("key")
	if err := validKey(key); err != nil {
		writeError(w, r, err)
		return
	}
	cleared, err := h.store.ClearBreaker(r.Context(), key)
	if err != nil {
		writeError(w, r, err)
		return
	}
	h.dir.Changed()
	writeJSON(w, http.StatusOK, ordered{{"ok", true}, {"key", key}, {"cleared", cleared}})
}
