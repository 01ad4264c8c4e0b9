package rowcall

import (
	"strings"
	"testing"
)

// oldOutcome is how the dispatcher read a receipt's outcome out of the ERR:
// text before failures were values: its first three ':'-separated parts, cut
// at a space or a dash. Failure.Outcome must agree with it on every form.
func oldOutcome(s string) string {
	parts := strings.SplitN(s, ":", 4)
	code := strings.Join(parts[:min(3, len(parts))], ":")
	if i := strings.IndexAny(code, " —"); i > 0 {
		code = code[:i]
	}
	return code
}

// TestFailureRendering pins, for every ERR: form the runners, the dispatcher
// and the gate report, the literal text Failure renders and the receipt
// outcome it gives.
func TestFailureRendering(t *testing.T) {
	for _, tt := range []struct {
		f    *Failure
		want string
	}{
		{Fail("fn", "content_not_array"), "ERR:fn:content_not_array"},
		{Fail("fn", "bad_content_json", "invalid character 'x'"), "ERR:fn:bad_content_json:invalid character 'x'"},
		{Fail("fn", "memory_limit", "16", "the module declares 17 initial pages of memory"), "ERR:fn:memory_limit:16:the module declares 17 initial pages of memory"},
		{Fail("fn", "timeout", "1000 loop iterations"), "ERR:fn:timeout:1000 loop iterations"},
		{Fail("fn", "timeout", "caller_deadline"), "ERR:fn:timeout:caller_deadline"},
		{Fail("fn", "canceled"), "ERR:fn:canceled"},
		{Fail("fn", "unknown_target", ""), "ERR:fn:unknown_target:"},
		{Fail("fn", "digest_mismatch", "sha256:aa!=sha256:bb"), "ERR:fn:digest_mismatch:sha256:aa!=sha256:bb"},
		{Fail("flow", "no_caller"), "ERR:flow:no_caller"},
		{Fail("flow", "depth_exceeded", "8").Because("flows nest at most 8 deep; check for a flow that calls itself"),
			"ERR:flow:depth_exceeded:8 — flows nest at most 8 deep; check for a flow that calls itself"},
		{Fail("flow", "too_many_steps", "65>64"), "ERR:flow:too_many_steps:65>64"},
		{Fail("http", "401", `{"error":"no"}`), `ERR:http:401:{"error":"no"}`},
		{Fail("http", "fetch", "outbound: 10.0.0.1:80 is a private address"), "ERR:http:fetch:outbound: 10.0.0.1:80 is a private address"},
		{Fail("http", "too_large", "1024 bytes").Because("the upstream answered 200 with a larger body"),
			"ERR:http:too_large:1024 bytes — the upstream answered 200 with a larger body"},
		{Fail("http", "ROW").Wrapping(Fail("auth", "oauth_token", "token endpoint answered 401: ...")),
			"ERR:http:ROW:ERR:auth:oauth_token:token endpoint answered 401: ..."},
		{Fail("agent", "empty").Because("the model answered with no text and no calls (round 1)"),
			"ERR:agent:empty — the model answered with no text and no calls (round 1)"},
		{Fail("agent", "429", "Rate limit reached"), "ERR:agent:429:Rate limit reached"},
		{Fail("agent", "includes", "too_many", "9").Because("a row includes at most 8 blocks"),
			"ERR:agent:includes:too_many:9 — a row includes at most 8 blocks"},
		{Fail("", "unknown_key", "NOPE"), "ERR:unknown_key:NOPE"},
		{Fail("", "breaker_open", "ROW").Because("8 consecutive auth failures; credential is dead until replaced."),
			"ERR:breaker_open:ROW — 8 consecutive auth failures; credential is dead until replaced."},
		{Fail("dispatch", "depth_exceeded", "9").Because("calls nest at most 8 deep; check for a flow that calls itself"),
			"ERR:dispatch:depth_exceeded:9 — calls nest at most 8 deep; check for a flow that calls itself"},
		{Fail("http", "no_runner").Because("this host has no runner for http rows"), "ERR:http:no_runner — this host has no runner for http rows"},
		{Fail("gate", "token_revoked", "tok_abc").Because("this token was revoked at 2026-01-01"),
			"ERR:gate:token_revoked:tok_abc — this token was revoked at 2026-01-01"},
		{Fail("gate", "invalid_arguments").Because("lat: not a number"), "ERR:gate:invalid_arguments — lat: not a number"},
	} {
		if got := tt.f.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
		if got, want := tt.f.Outcome(), oldOutcome(tt.want); got != want {
			t.Errorf("%q: Outcome() = %q, want %q", tt.want, got, want)
		}
		out := tt.f.Output()
		if !out.Failed() || out.Result != tt.want {
			t.Errorf("%q: Output() = %+v", tt.want, out)
		}
	}
}

func TestFailureMap(t *testing.T) {
	f := Fail("http", "ROW", "s3cret").Wrapping(Fail("auth", "oauth_token", "bad s3cret")).Because("no s3cret")
	g := f.Map(func(s string) string { return strings.ReplaceAll(s, "s3cret", "[REDACTED]") })
	if got := g.String(); got != "ERR:http:ROW:[REDACTED]:ERR:auth:oauth_token:bad [REDACTED] — no [REDACTED]" {
		t.Fatalf("mapped = %q", got)
	}
	if f.String() != "ERR:http:ROW:s3cret:ERR:auth:oauth_token:bad s3cret — no s3cret" {
		t.Fatalf("Map changed the original: %q", f)
	}
	if (Output{Result: "HTTP 200:ok"}).Failed() {
		t.Fatal("a success reads as failed")
	}
}

// TestErrorReason pins the seed's literal reason for every refusal whose code
// has dynamic parts, and the ERR:gate: text a nested call gets for it.
func TestErrorReason(t *testing.T) {
	for _, tt := range []struct {
		e    *Error
		want string
	}{
		{&Error{Code: ETokenRevoked, Args: []string{"tok_abc"}}, "token_revoked:tok_abc"},
		{&Error{Code: ETokenExpired, Args: []string{"2026-01-01T00:00:00Z"}}, "token_expired:2026-01-01T00:00:00Z"},
		{&Error{Code: EAudienceMismatch, Args: []string{"a.test", "b.test"}}, "audience_mismatch:a.test!=b.test"},
		{&Error{Code: EOwnerOnly, Args: []string{"ROW"}}, "owner_only:ROW"},
		{&Error{Code: EIncludeOutOfScope, Args: []string{"BLOCK"}}, "include_out_of_scope:BLOCK"},
		{&Error{Code: EContractChanged, Args: []string{"aa", "bb"}}, "contract_changed:aa!=bb"},
		{&Error{Code: ERiskCeiling, Args: []string{"low"}}, "risk_ceiling:low<row:high"},
		{&Error{Code: EFixedBody, Args: []string{"mismatch"}}, "fixed_body:mismatch"},
		{&Error{Code: EPayloadCeiling, Args: []string{"12", "8"}}, "payload_ceiling:12>8"},
		{&Error{Code: EInvalidInputSchema, Args: []string{"ROW"}}, "invalid_input_schema:ROW"},
		{&Error{Code: EInvalidArguments}, "invalid_arguments"},
		{&Error{Code: EHygiene, Args: []string{"secret_in_content"}}, "registry_hygiene_refused: secret_in_content"},
	} {
		if got := tt.e.Reason(); got != tt.want {
			t.Errorf("Reason() = %q, want %q", got, tt.want)
		}
		tt.e.Message = "why"
		f := tt.e.Failure("gate")
		if got, want := f.String(), "ERR:gate:"+tt.want+" — why"; got != want {
			t.Errorf("Failure = %q, want %q", got, want)
		}
		if got, want := f.Outcome(), oldOutcome("ERR:gate:"+tt.want+" — why"); got != want {
			t.Errorf("%q: Outcome = %q, want %q", tt.want, got, want)
		}
		if got, want := tt.e.Error(), tt.want+": why"; got != want {
			t.Errorf("Error() = %q, want %q", got, want)
		}
	}
}
