package fn_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/runners/fn"
	"github.com/rowcall/rowcall/wasm/examples"
)

func TestExamples(t *testing.T) {
	lastReplyOf, _ := examples.ByName("last_reply_of")
	r, reg := newRunner(t, fn.Config{})
	addGo(t, reg)
	tests := []struct {
		name, target, content, body, want string
	}{
		{"wat echo default template", "echo", "", "hello|world", "hello"},
		{"wat echo two args", "echo", `["$1","$2"]`, "hello|world", "hello world"},
		{"wat echo whole body", "echo", whole, "a|b|c", "a|b|c"},
		{"wat echo escaped quote", "echo", `["$1"]`, `say "hi"\n`, `say "hi"\n`},
		{"wat echo no args", "echo", `[]`, "", ""},
		{"wat echo json values", "echo", `[1, true, {"a": [1, 2]}, null, "$1"]`, "s", `1 true {"a":[1,2]} null s`},
		{"wat echo joined array", "echo", `[$1[,], "$2"]`, `["a b",2]|c`, "a b 2 c"},
		{"as upper", "upper", whole, "hello wörld|ok", "HELLO WÖRLD|OK"},
		{"as upper docstring stripped", "upper", "# WHAT: shout\n[\"$1\", \"$2\"]", "a|b", "A B"},
		{"go last_reply_of", "last_reply_of", whole, "thinking… [REPLY]draft[/REPLY] no: [REPLY] Hi | there! [/REPLY] bye", "Hi | there!"},
		{"go last_reply_of pinned by docs row", "last_reply_of", lastReplyOf.Content, "x [REPLY]ok[/REPLY]", "ok"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := call(r, tt.target, tt.content, tt.body)
			if out.Result != tt.want || !out.Material {
				t.Fatalf("result %q (material %v); want %q", out.Result, out.Material, tt.want)
			}
		})
	}
}

func TestLastReplyOfWithoutReply(t *testing.T) {
	r, reg := newRunner(t, fn.Config{})
	addGo(t, reg)
	out := call(r, "last_reply_of", whole, "the model forgot its tags")
	want := "ERR:fn:exit:1:last_reply_of: no [REPLY]…[/REPLY] block in the 25-byte text; the model's output must end with [REPLY]your text[/REPLY]"
	if out.Result != want || !out.Material {
		t.Fatalf("result %q; want %q", out.Result, want)
	}
}

// TestSeedErrors: the seed's three fn failure strings, literally.
func TestSeedErrors(t *testing.T) {
	r, _ := newRunner(t, fn.Config{})
	tests := []struct {
		target, content, body, want string
	}{
		{"nope", "", "", "ERR:fn:unknown_target:nope"},
		{"Not A Name", "", "", "ERR:fn:unknown_target:Not A Name"},
		{"echo", `{"a": "$1"}`, "x", "ERR:fn:content_not_array"},
		{"echo", `"$1"`, "x", "ERR:fn:content_not_array"},
		{"echo", `["$1"`, "x", "ERR:fn:bad_content_json:unexpected end of JSON input"},
		{"echo", `[$$1]`, "x", "ERR:fn:bad_content_json:invalid character 'x' looking for beginning of value"},
		{"nope", `not json`, "", "ERR:fn:unknown_target:nope"}, // the target is checked first, as in the seed
		{"echo", "[\"$1\"]", "a\x00b", "ERR:fn:bad_args:argument 1 contains a NUL byte, which a WASI argument cannot hold"},
		{"echo", `[$1[,]]`, `{"a":1}`, "ERR:fn:bad_args:argument 1 is a JSON object; $1[,] takes a JSON array of strings, numbers or booleans, or one plain value"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			out := call(r, tt.target, tt.content, tt.body)
			if out.Result != tt.want || out.Material {
				t.Fatalf("result %q (material %v); want %q, not material", out.Result, out.Material, tt.want)
			}
		})
	}
}

func TestPinnedTarget(t *testing.T) {
	r, reg := newRunner(t, fn.Config{})
	m, err := reg.Get(ctx, "echo")
	if err != nil {
		t.Fatal(err)
	}
	if out := call(r, m.Ref(), "", "pinned"); out.Result != "pinned" {
		t.Fatalf("pinned call: %q", out.Result)
	}
	echo, _ := examples.ByName("echo")
	d, err := r.Digest(ctx, "echo")
	if sum := sha256.Sum256(echo.Wasm); err != nil || d != hex.EncodeToString(sum[:]) {
		t.Fatalf("Digest = %s, %v; want the SHA-256 of echo.wasm", d, err)
	}

	// Changing the module's code changes its digest (the contract fingerprint
	// folds it in) and stops the pinned row.
	m2, err := reg.Put(ctx, "echo", examples.Hostile()["trap"])
	if err != nil {
		t.Fatal(err)
	}
	if d2, _ := r.Digest(ctx, "echo"); d2 == d || d2 != m2.Digest {
		t.Fatalf("Digest after new code = %s; want %s", d2, m2.Digest)
	}
	want := fmt.Sprintf("ERR:fn:digest_mismatch:sha256:%s!=sha256:%s", m.Digest, m2.Digest)
	if out := call(r, m.Ref(), "", "x"); out.Result != want || out.Material {
		t.Fatalf("result %q; want %q", out.Result, want)
	}
}

func TestShape(t *testing.T) {
	r, reg := newRunner(t, fn.Config{})
	loop, _ := reg.Get(ctx, "loop")
	row := rowcall.NewRow("LOOP", rowcall.TypeFn)
	row.Target, row.Content = "loop", `["$1", "$2"]`
	start := time.Now()
	out := r.Run(ctx, &rowcall.Invocation{Row: &row, Body: `a"b|c`, Shape: true})
	want := fn.Plan{Module: "loop", Digest: loop.Digest, Argv: []string{"loop", `a"b`, "c"}}
	plan, ok := out.Plan.(fn.Plan)
	if !ok || fmt.Sprint(plan) != fmt.Sprint(want) || out.Material || out.Result != "SHAPE:fn:loop 2 args" {
		t.Fatalf("shape = %+v; want plan %+v and nothing run", out, want)
	}
	if time.Since(start) > time.Second {
		t.Fatal("shape mode ran the module")
	}
	if out := r.Run(ctx, &rowcall.Invocation{Row: &rowcall.Row{Type: rowcall.TypeFn, Target: "nope"}, Shape: true}); out.Result != "ERR:fn:unknown_target:nope" {
		t.Fatalf("shape of an unknown target: %q", out.Result)
	}
}

// TestConcurrentCalls: 50 goroutines share one runner: every result is right.
func TestConcurrentCalls(t *testing.T) {
	r, _ := newRunner(t, fn.Config{})
	var wg sync.WaitGroup
	errs := make(chan string, 1000)
	for g := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 10 {
				body := fmt.Sprintf("g%d-i%d", g, i)
				checks := []struct{ target, want string }{
					{"echo", body},
					{"upper", strings.ToUpper(body)},
					{"trap", "ERR:fn:trap:unreachable:trap: reaching unreachable on purpose"},
				}
				c := checks[(g+i)%len(checks)]
				if out := call(r, c.target, whole, body); out.Result != c.want {
					errs <- fmt.Sprintf("%s(%s) = %q; want %q", c.target, body, out.Result, c.want)
				}
				if g%10 == 0 {
					if out := call(r, "now", "", ""); !strings.HasPrefix(out.Result, `{"now":"`) {
						errs <- "now: " + out.Result
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
