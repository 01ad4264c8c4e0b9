package httpcall

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/rowcall/rowcall"
)

// The auth column's property, over every prefix, escaped names and odd JSON:
// no row reads a reserved variable (rowcall's own ROWCALL_*), and the owner
// gate (Row.OwnerOnly) holds every row whose credential carries the owner key.
// The environment here is the raw one, with every name set: the parsed spec
// alone must be the barrier (hosts also wrap it in rowcall.SecretsEnv).
//
//	go test ./runners/httpcall -run 'TestAuthSpecProperty|FuzzAuthSpec'
//	go test ./runners/httpcall -run '^$' -fuzz FuzzAuthSpec -fuzztime 60s

// authNames are the variables the generator names: rowcall's own, near
// misses that are not reserved, and ordinary ones.
var authNames = []string{
	"ROWCALL_OWNER_KEY", "ROWCALL_OWNER_KEY_PREVIOUS", "ROWCALL_RECEIPT_KEY", "ROWCALL_DB_AUTH_TOKEN",
	"ROWCALL_MODEL_PROVIDERS", "rowcall_receipt_key", "Rowcall_Db_Auth_Token", "ROWCALL_",
	"ROWCALLX", "_ROWCALL_X", "MY_ROWCALL_KEY", "GROK_API_KEY", "K", "_", "ROWCALL_OWNER_KEYS",
}

// recordingEnv answers every name with a value naming it, and records what
// was asked.
type recordingEnv struct{ asked []string }

func valueOf(name string) string { return "val<" + name + ">" }

func (e *recordingEnv) Lookup(name string) (string, bool) {
	e.asked = append(e.asked, name)
	return valueOf(name), true
}

// checkAuthSpec applies auth as the http runner does and checks the property.
func checkAuthSpec(t *testing.T, auth string) {
	t.Helper()
	row := rowcall.Row{Key: "ROW", Auth: auth}
	env := &recordingEnv{}
	u, _ := url.Parse("https://api.example.test/v1?a=1")
	c := &call{url: u, headers: http.Header{}, credHeaders: map[string]bool{}}
	spec, fail := parseAuth(auth)
	if fail == nil {
		spec.apply(c, env)
	}
	for _, name := range env.asked {
		if rowcall.ReservedVar(name) {
			t.Fatalf("auth %q read the reserved variable %s", auth, name)
		}
	}
	sent := c.url.String() + "\n" + fmt.Sprint(c.headers)
	if c.oauth != nil {
		sent += "\n" + fmt.Sprint(*c.oauth)
	}
	for _, name := range authNames {
		if rowcall.ReservedVar(name) && strings.Contains(sent, valueOf(name)) {
			t.Fatalf("auth %q injected the reserved variable %s: %s", auth, name, sent)
		}
	}
	if strings.Contains(sent, valueOf(rowcall.OwnerEnv)) && !row.OwnerOnly() {
		t.Fatalf("auth %q injects the owner key but the owner gate does not hold it: %s", auth, sent)
	}
	if fail != nil && (len(env.asked) > 0 || len(c.headers) > 0) {
		t.Fatalf("auth %q failed (%s) yet applied something", auth, fail)
	}
}

// escapeJSON writes s as JSON string content with characters escaped at
// random: \uXXXX in either case of hex, or kept.
func escapeJSON(r *rand.Rand, s string) string {
	var b strings.Builder
	for _, ch := range s {
		switch {
		case r.IntN(3) == 0:
			hex := fmt.Sprintf("%04x", ch)
			if r.IntN(2) == 0 {
				hex = strings.ToUpper(hex)
			}
			b.WriteString(`\u` + hex)
		case ch == '"' || ch == '\\':
			b.WriteString(`\` + string(ch))
		default:
			b.WriteRune(ch)
		}
	}
	return b.String()
}

// genAuth makes one auth column: any prefix in any case and spacing, naming
// one to three variables, some escaped.
func genAuth(r *rand.Rand) string {
	name := func() string { return authNames[r.IntN(len(authNames))] }
	tmpl := func() string {
		var parts []string
		for range 1 + r.IntN(3) {
			parts = append(parts, []string{"Bearer $", "$", "x-$", "$"}[r.IntN(4)]+name()+[]string{"", ":", "/", " "}[r.IntN(4)])
		}
		return escapeJSON(r, strings.Join(parts, ""))
	}
	prefix := []string{"bearer", "basic", "query", "headers", "oauth", "BEARER", "Headers", " oauth ", "token"}[r.IntN(9)]
	var rest string
	switch strings.ToLower(strings.TrimSpace(prefix)) {
	case "bearer", "basic":
		rest = name()
	case "query":
		rest = "key=" + name()
	case "headers":
		rest = fmt.Sprintf(`{"Authorization":"%s","X-%s":"%s"}`, tmpl(), escapeJSON(r, "K"), tmpl())
	case "oauth":
		rest = fmt.Sprintf(`{"token_url":"https://auth.example.test/t","client_id":"%s","client_secret":"%s","scope":"%s"}`, tmpl(), tmpl(), tmpl())
		if r.IntN(2) == 0 { // a private key: one variable, or a template (refused)
			key := escapeJSON(r, "$"+name())
			if r.IntN(4) == 0 {
				key = tmpl()
			}
			rest = fmt.Sprintf(`{"token_url":"https://auth.example.test/t","client_id":"%s","private_key":"%s","kid":"%s"}`, tmpl(), key, tmpl())
		}
	default:
		rest = name()
	}
	return prefix + ":" + []string{"", " ", "\t"}[r.IntN(3)] + rest
}

func TestAuthSpecProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 20_000 {
		checkAuthSpec(t, genAuth(r))
	}
}

func FuzzAuthSpec(f *testing.F) {
	f.Add(`headers:{"Authorization":"Bearer $ROWCALL_OWNER_KE\u0059"}`)
	f.Add(`headers:{"X-K":"$ROWCALL_RECEIPT_K\u0045Y"}`)
	f.Add(`oauth:{"token_url":"https://a.test/t","client_id":"$ID","client_secret":"$ROWCALL_DB_AUTH_TOKEN"}`)
	f.Add(`oauth:{"token_url":"https://a.test/t","client_id":"$ID","private_key":"\u0024ROWCALL_RECEIPT_KEY"}`)
	f.Add(`bearer:ROWCALL_DB_AUTH_TOKEN`)
	f.Add(`query:k=rowcall_receipt_key`)
	f.Add(`headers:{"A":"$ROWCALL_OWNER_KEY","A":"x"}`)
	f.Add(`headers:{"A":"\u0024ROWCALL_OWNER_KEY"}`)
	f.Add(`BEARER: ROWCALL_OWNER_KEY`)
	r := rand.New(rand.NewPCG(3, 4))
	for range 50 {
		f.Add(genAuth(r))
	}
	f.Fuzz(func(t *testing.T, auth string) { checkAuthSpec(t, auth) })
}
