package httpcall

import (
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/args"
	"github.com/rowcall/rowcall/internal/redact"
	"github.com/rowcall/rowcall/test/leak"
)

// connectionEcho is an upstream that answers the caller's connection token
// back in the encoding ?e= names (leak.Encodings, drawn with ?seed=), between
// ?pre= and ?suf=.
func connectionEcho(t testing.TB) string {
	return newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		i, _ := strconv.Atoi(q.Get("e"))
		seed, _ := strconv.ParseUint(q.Get("seed"), 10, 64)
		e, rng := leak.Encodings[i], rand.New(rand.NewPCG(seed, 7))
		if e.Whole {
			io.WriteString(w, e.Enc(q.Get("pre")+tok+q.Get("suf"), rng))
			return
		}
		io.WriteString(w, q.Get("pre")+e.Enc(tok, rng)+q.Get("suf"))
	}).URL
}

// callConnected runs a bearer:connection:idp row whose caller's connection
// holds token, against the echo upstream at up.
func callConnected(up, token, pre, suf string, e int, seed uint64, shape bool) rowcall.Output {
	ctx := rowcall.WithConnector(context.Background(), func(_ context.Context, provider string) (string, *rowcall.Failure) {
		return token, nil
	})
	q := "e=" + strconv.Itoa(e) + "&seed=" + strconv.FormatUint(seed, 10) + "&pre=" + url.QueryEscape(pre) + "&suf=" + url.QueryEscape(suf)
	row := httpRow("ROW", "GET "+up+"/?"+q, "bearer:connection:idp", "")
	return New(Config{}).Run(ctx, &rowcall.Invocation{Row: row, Args: args.Split(""), Shape: shape})
}

// FuzzConnectionEcho extends the redaction property (internal/redact's
// FuzzString) to connections: an upstream that echoes the caller's
// connection token in any leak.Encodings spelling gets no fragment of it
// back through the runner; the token is among the output's Secrets (so
// receipts and logs redact it too); and a plan names the connection, never
// its value. The token comes from the calling credential's connector
// whichever way the host got it — a stored connection or a token exchange
// (internal/connect/exchange.go) — so the seeds include what providers issue
// in exchanges: opaque 43-character tokens (oidc-provider) and JWTs.
func FuzzConnectionEcho(f *testing.F) {
	f.Add("ya29.a0AfH6SMBx-connection/token+=", "answer: ", " end", uint64(1))
	f.Add("gho_16C7e42F292c6912E7710c838347Ae178B4a", `{"echo":"`, `"}`, uint64(2))
	f.Add("ключ-секрет-😀-значение", "t=", "&x=1", uint64(3))
	f.Add("Xq3vN8yKz0bR2mC5tW7pL9dF1hJ4sA6gE8uI0oY2kTc", `{"access_token":"`, `"}`, uint64(4))
	f.Add("eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2ln", "Bearer ", "", uint64(5))
	up := connectionEcho(f)
	f.Fuzz(func(t *testing.T, token, pre, suf string, seed uint64) {
		// Each part is whole characters: a UTF-8 sequence split between the
		// token and its surroundings is no token a provider issues.
		if len(token) < redact.MinSecretLen || len(token) > 64 || len(pre)+len(suf) > 40 || !utf8.ValidString(token) || !utf8.ValidString(pre) || !utf8.ValidString(suf) ||
			strings.ContainsAny(token, "\r\n\x00") || strings.TrimSpace(token) != token {
			return
		}
		filler := leak.Foreign(token)
		if filler == "" {
			return
		}
		for i, e := range leak.Encodings {
			out := callConnected(up, token, pre, suf, i, seed, false)
			ctxOut := callConnected(up, filler, pre, suf, i, seed, false)
			if frag := leak.Fragment(token, leak.Views(out.Result), leak.Views(ctxOut.Result)); frag != "" {
				t.Fatalf("%s: fragment %q of the connection token survives in %q", e.Name, frag, out.Result)
			}
			found := false
			for _, s := range out.Secrets {
				found = found || s == token
			}
			if !found {
				t.Fatalf("%s: the connection token is not among the output's secrets", e.Name)
			}
		}
		// Shape mode never reads the token: the plan is the one a foreign
		// token gives (the row's own URL may spell the token by chance).
		plan := callConnected(up, token, pre, suf, 0, seed, true)
		if p := plan.Plan.(map[string]any); p["connection"] != "idp" || plan.Result != callConnected(up, filler, pre, suf, 0, seed, true).Result {
			t.Fatalf("plan: %v", plan.Plan)
		}
	})
}
