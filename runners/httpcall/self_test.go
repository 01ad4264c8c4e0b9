package httpcall

import (
	"context"
	"testing"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/args"
)

type baseKey struct{}

// $SELF is the base URL Config.Self gives for the call's context, read at
// call time, unescaped in the URL and the body.
func TestSelfURL(t *testing.T) {
	up := newUpstream(t, nil)
	r := New(Config{Self: func(ctx context.Context) string { s, _ := ctx.Value(baseKey{}).(string); return s }})
	row := httpRow("DIR_GET", "POST $SELF/api/directory/$1", "", `{"back":"$SELF/receipt"}`)
	ctx := context.WithValue(context.Background(), baseKey{}, up.URL+"/")
	out := r.Run(ctx, &rowcall.Invocation{Row: row, Args: args.Split("a/b")})
	if out.Result != "HTTP 200:ok" {
		t.Fatalf("result %q", out.Result)
	}
	if s := up.seen(); s.Path != "/api/directory/a%2Fb" || s.Body != `{"back":"`+up.URL+`/receipt"}` {
		t.Fatalf("upstream saw %+v", s)
	}
	// No base URL for this call: $SELF stays as written, and the URL is refused.
	out = r.Run(context.Background(), &rowcall.Invocation{Row: row, Args: args.Split("a")})
	if out.Result != `ERR:http:bad_target:url "$SELF/api/directory/$1" is not an absolute http or https URL` {
		t.Fatalf("result %q", out.Result)
	}
}
