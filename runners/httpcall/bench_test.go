package httpcall

import (
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/args"
	"github.com/rowcall/rowcall/internal/outbound"
)

const benchBody = `{"object":"list","data":[{"id":"grok-4","object":"model","owned_by":"xai"}]}`

func benchServer(b *testing.B) *upstream {
	return newUpstream(b, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, benchBody) })
}

// BenchmarkDirectCall is the floor: a plain http.Client GET of the same
// loopback server, body read and closed.
func BenchmarkDirectCall(b *testing.B) {
	up := benchServer(b)
	client := up.Client()
	for b.Loop() {
		resp, err := client.Get(up.URL + "/v1/models")
		if err != nil {
			b.Fatal(err)
		}
		io.ReadAll(resp.Body)
		resp.Body.Close()
	}
}

// BenchmarkHTTPDispatch is the runner on the same server and transport: a
// GROK_MODELS-shaped row (bearer credential from the environment, URL
// rendered, result redacted).
func BenchmarkHTTPDispatch(b *testing.B) {
	up := benchServer(b)
	benchRunner(b, New(Config{Client: up.Client()}), up)
}

// BenchmarkHTTPDispatchOutbound adds the host's outbound policy client.
func BenchmarkHTTPDispatchOutbound(b *testing.B) {
	up := benchServer(b)
	allow, _ := outbound.Parse("127.0.0.1/32")
	benchRunner(b, New(Config{Client: allow.Client(0)}), up)
}

func benchRunner(b *testing.B, r *Runner, up *upstream) {
	inv := &rowcall.Invocation{
		Row:  httpRow("GROK_MODELS", "GET "+up.URL+"/v1/$1", "bearer:GROK_API_KEY", "# WHAT: List every model on the xAI API. No args"),
		Body: "models", Args: args.Split("models"),
		Env: env{"GROK_API_KEY": "xai-0123456789abcdef"},
	}
	ctx := context.Background()
	for b.Loop() {
		if out := r.Run(ctx, inv); out.Result != "HTTP 200:"+benchBody {
			b.Fatal(out.Result)
		}
	}
}
