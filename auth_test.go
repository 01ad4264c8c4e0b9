package rowcall

import (
	"strings"
	"testing"
)

// An oauth: column authenticates its client with a secret or with a private
// key named by one variable; the key itself in the row is refused on write
// (422 auth_private_key_in_row), and its message never quotes it.
func TestParseAuthPrivateKey(t *testing.T) {
	a, err := ParseAuth(`oauth:{"token_url":"https://as.example.test/token","client_id":"$CID","private_key":"$ROWS_KEY","kid":"k1","alg":"ES256"}`)
	if err != nil || a.OAuth.PrivateKey != "$ROWS_KEY" || a.OAuth.KeyID != "k1" || strings.Join(a.Vars, ",") != "CID,ROWS_KEY" {
		t.Fatalf("parsed %+v %+v, %v", a, a.OAuth, err)
	}
	const pem = `-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg\n-----END PRIVATE KEY-----`
	bad := map[string]string{
		`oauth:{"client_id":"c","private_key":"` + pem + `"}`:             AuthKeyInRow,
		`oauth:{"client_id":"c","private_key":"$A$B"}`:                    AuthKeyInRow,
		`oauth:{"client_id":"c","private_key":"x$ROWS_KEY"}`:              AuthKeyInRow,
		`oauth:{"client_id":"c","private_key":"$ROWCALL_RECEIPT_KEY"}`:    AuthReservedVariable,
		`oauth:{"client_id":"c","private_key":"$K","client_secret":"$S"}`: "bad_spec",
		`oauth:{"client_id":"c","private_key":"$K","alg":"HS256"}`:        "bad_spec",
		`oauth:{"client_id":"c","private_key":"$K","auth_style":"body"}`:  "bad_spec",
		`oauth:{"client_id":"c","client_secret":"$S","kid":"k1"}`:         "bad_spec",
		`oauth:{"client_id":"c"}`:                                         "bad_spec",
	}
	for auth, code := range bad {
		_, err := ParseAuth(auth)
		ae, ok := err.(*AuthError)
		if !ok || ae.Code != code {
			t.Errorf("%s: %v, want code %s", auth, err, code)
		}
	}
	e := CheckAuth(`oauth:{"client_id":"c","private_key":"`+pem+`"}`, "")
	if e == nil || e.Code != AuthKeyInRow || strings.Contains(e.Message+e.HowToFix, "MIGH") {
		t.Fatalf("CheckAuth of a key in the row: %+v", e)
	}
	if e := CheckAuth(`oauth:{"client_id":"c","private_key":"$OTHER_KEY"}`, "ROWS_"); e == nil || e.Code != EAuthOutsidePrefix {
		t.Fatalf("CheckAuth outside the prefix: %+v", e)
	}
}
