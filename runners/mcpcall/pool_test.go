package mcpcall

import (
	"errors"
	"net"
	"net/http"
	"testing"
)

type failingTransport struct{ err error }

func (f failingTransport) RoundTrip(*http.Request) (*http.Response, error) { return nil, f.err }

// TestInjectRemembersAnyTransportError: a session's transport fails in
// different ways over its life (a refused dial, a body over the cap, a closed
// connection while the session is being closed); each is kept, whatever its
// type, and none panics.
func TestInjectRemembersAnyTransportError(t *testing.T) {
	in := &inject{max: 1}
	for _, want := range []error{
		&net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")},
		errTooLarge,
		net.ErrClosed,
	} {
		in.next = failingTransport{want}
		req, _ := http.NewRequest(http.MethodDelete, "http://127.0.0.1:1/mcp", nil)
		if _, err := in.RoundTrip(req); err != want {
			t.Fatalf("RoundTrip = %v, want %v", err, want)
		}
		if got := in.cause.Load(); got == nil || *got != want {
			t.Fatalf("cause = %v, want %v", got, want)
		}
	}
}
