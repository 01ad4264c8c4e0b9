package test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOAuthPrivateKeyAtARealProvider: an http row whose oauth: auth names a
// private key (private_key_jwt) gets a client-credentials token from a real
// authorization server (the pinned npm oidc-provider, which verifies the
// assertion's signature, iss, aud, exp and jti), and the upstream, asking the
// provider's introspection endpoint, sees an active token of that client. A
// row holding the key itself is refused on write. No piece of the key is in
// an answer, the host's log or its data directory (receipts, the database).
func TestOAuthPrivateKeyAtARealProvider(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	der, _ := x509.MarshalPKCS8PrivateKey(key)
	keyPEM := string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	pubDER, _ := x509.MarshalPKIXPublicKey(key.Public())
	pubPEM := string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER}))
	const introspector = "introspector-secret-0123456789"
	issuer := oidcProvider(t, "http://127.0.0.1/unused", introspector, 3600, "KEY_CLIENT_PUBLIC_KEY="+pubPEM)

	// The upstream answers whose token it was sent, as the provider says.
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok {
			http.Error(w, "no bearer token", http.StatusUnauthorized)
			return
		}
		q, _ := http.NewRequest("POST", issuer+"/token/introspection", strings.NewReader(url.Values{"token": {tok}}.Encode()))
		q.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		q.SetBasicAuth("rowcall", introspector)
		res, err := http.DefaultClient.Do(q)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer res.Body.Close()
		var got struct {
			Active   bool   `json:"active"`
			ClientID string `json:"client_id"`
		}
		json.NewDecoder(res.Body).Decode(&got)
		json.NewEncoder(w).Encode(got)
	}))
	t.Cleanup(up.Close)

	h := startHost(t, allowLoopback, "ROWS_CLIENT_KEY="+keyPEM)
	row := map[string]any{"key": "PKJWT", "type": "http", "target": "GET " + up.URL + "/whoami", "content": "# WHAT: private_key_jwt test",
		"auth": `oauth:{"token_url":"` + issuer + `/token","client_id":"rowcall-pk","private_key":"$ROWS_CLIENT_KEY","kid":"k1"}`}
	literal := map[string]any{"key": "PKJWT_LITERAL", "type": "http", "target": "GET " + up.URL, "content": "# WHAT: refused",
		"auth": `oauth:{"token_url":"` + issuer + `/token","client_id":"rowcall-pk","private_key":` + jsonString(keyPEM) + `}`}
	refused := h.do(t, req{Method: "POST", Path: "/api/directory", Body: literal})
	expect(t, refused, http.StatusUnprocessableEntity, map[string]any{"error": "auth_private_key_in_row", "state_changed": false})
	expect(t, h.do(t, req{Method: "POST", Path: "/api/directory", Body: row}), http.StatusCreated, nil)
	var answers []string
	for range 2 {
		got := dispatchCall(t, h, "PKJWT", "")
		expect(t, got, http.StatusOK, map[string]any{"ok": true, "result": "HTTP 200:{\"active\":true,\"client_id\":\"rowcall-pk\"}\n"})
		answers = append(answers, string(got.Raw))
	}
	h.stop()

	// The key's body lines, any of which would be a piece of it.
	lines := strings.Split(strings.TrimSpace(keyPEM), "\n")
	pieces := lines[1 : len(lines)-1]
	seen := map[string]string{"the refusal": string(refused.Raw), "the answers": strings.Join(answers, "\n"), "the host's log": h.out.String()}
	filepath.WalkDir(h.Data, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(path)
			seen[path] = string(b)
		}
		return nil
	})
	for where, text := range seen {
		for _, p := range pieces {
			if strings.Contains(text, p) {
				t.Fatalf("a piece of the private key is in %s", where)
			}
		}
	}
}
