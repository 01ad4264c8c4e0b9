package main

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/rowcall/rowcall/internal/outbound"
)

func TestGuardRefusesLocalLiterals(t *testing.T) {
	allow, err := outbound.Parse("127.0.0.1/32, internal.example")
	if err != nil {
		t.Fatal(err)
	}
	ports, err := outbound.Parse("127.0.0.2:9000, [::1]:8443")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		url     string
		refused bool
		policy  outbound.Policy
	}{
		{"http://127.0.0.1:8080/x", true, outbound.Policy{}},
		{"http://127.1/x", true, outbound.Policy{}},
		{"http://0x7f.0.0.1/x", true, outbound.Policy{}},
		{"http://2130706433/x", true, outbound.Policy{}},
		{"http://0177.0.0.1/x", true, outbound.Policy{}},
		{"http://127.0.0.1./x", true, outbound.Policy{}},
		{"http://[::1]/x", true, outbound.Policy{}},
		{"http://[::ffff:127.0.0.1]/x", true, outbound.Policy{}},
		{"http://10.1.2.3/x", true, outbound.Policy{}},
		{"http://192.168.0.1/x", true, outbound.Policy{}},
		{"http://169.254.169.254/latest/meta-data", true, outbound.Policy{}},
		{"http://0.0.0.0/x", true, outbound.Policy{}},
		{"http://localhost:8787/x", true, outbound.Policy{}},
		{"http://api.localhost/x", true, outbound.Policy{}},
		{"http://LOCALHOST/x", true, outbound.Policy{}},
		{"ftp://example.com/x", true, outbound.Policy{}},
		{"https://api.open-meteo.com/v1/forecast", false, outbound.Policy{}},
		{"https://8.8.8.8/", false, outbound.Policy{}},
		{"https://1.2.3/", false, outbound.Policy{}},
		{"http://127.0.0.1:8080/x", false, allow},
		{"http://127.0.0.2:8080/x", true, allow},
		{"http://internal.example/x", false, allow},
		{"http://localhost/x", true, allow},
		// The IANA special-purpose ranges, through the same table as the host's.
		{"http://192.0.0.8/x", true, outbound.Policy{}},
		{"http://192.0.2.1/x", true, outbound.Policy{}},
		{"http://198.18.0.1/x", true, outbound.Policy{}},
		{"http://198.51.100.1/x", true, outbound.Policy{}},
		{"http://203.0.113.1/x", true, outbound.Policy{}},
		{"http://[2001:db8::1]/x", true, outbound.Policy{}},
		{"http://[::8.8.8.8]/x", true, outbound.Policy{}},
		{"http://[::127.0.0.1]/x", true, outbound.Policy{}},
		{"http://[2002:c0a8:101::1]/x", true, outbound.Policy{}},
		{"http://[fec0::1]/x", true, outbound.Policy{}},
		{"http://[64:ff9b::a00:1]/x", true, outbound.Policy{}},
		{"http://[2606:4700::1111]/x", false, outbound.Policy{}},
		// A port-scoped allow opens that port only.
		{"http://127.0.0.2:9000/x", false, ports},
		{"http://127.0.0.2:9001/x", true, ports},
		{"http://127.0.0.2/x", true, ports},
		{"https://[::1]:8443/x", false, ports},
		{"https://[::1]/x", true, ports},
	} {
		u, err := url.Parse(tt.url)
		if err != nil {
			t.Fatal(err)
		}
		err = guard{policy: tt.policy}.check(u)
		if (err != nil) != tt.refused {
			t.Errorf("%s: err = %v, want refused=%v", tt.url, err, tt.refused)
		}
		var r interface{ Refused() bool }
		if err != nil && u.Scheme != "ftp" && (!errors.As(err, &r) || !strings.Contains(err.Error(), "refuses")) {
			t.Errorf("%s: %v is not a policy refusal", tt.url, err)
		}
	}
}

// Every redirect hop passes the guard.
func TestGuardChecksRedirects(t *testing.T) {
	calls := 0
	next := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		calls++
		h := http.Header{"Location": {"http://10.0.0.1/internal"}}
		return &http.Response{StatusCode: 302, Header: h, Body: http.NoBody, Request: r}, nil
	})
	_, err := client(outbound.Policy{}, next).Get("https://example.com/")
	if err == nil || !strings.Contains(err.Error(), "private") || calls != 1 {
		t.Fatalf("err %v after %d calls", err, calls)
	}
}

// A redirect to another origin goes out without the credentials and body
// the first request carried (outbound.CheckRedirect, as on the host).
func TestGuardRedirectDropsCredentials(t *testing.T) {
	var sent []*http.Request
	next := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		sent = append(sent, r)
		if len(sent) > 1 {
			return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		}
		h := http.Header{"Location": {"https://api.example.com:8443/landed"}}
		return &http.Response{StatusCode: 307, Header: h, Body: http.NoBody, Request: r}, nil
	})
	req, _ := http.NewRequest("POST", "https://api.example.com/start?key=sk-q", strings.NewReader("client_secret=cs"))
	req.Header.Set("X-Api-Key", "sk-h")
	req.Header.Set("Authorization", "Bearer sk-b")
	if _, err := client(outbound.Policy{}, next).Do(req); err != nil || len(sent) != 2 {
		t.Fatalf("%v after %d requests", err, len(sent))
	}
	hop := sent[1]
	if len(hop.Header) != 0 || hop.Body != nil || hop.Method != "POST" {
		t.Fatalf("the hop to another port went out %s with %v and body %v", hop.Method, hop.Header, hop.Body)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
