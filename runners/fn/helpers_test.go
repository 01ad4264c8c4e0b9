package fn_test

import (
	"context"
	"errors"
	"os"
	"sync"
	"testing"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/testdb"
	"github.com/rowcall/rowcall/runners/fn"
	"github.com/rowcall/rowcall/runners/fn/modules"
	"github.com/rowcall/rowcall/wasm/examples"
	_ "modernc.org/sqlite"
)

var ctx = context.Background()

// openRegistry is a registry over a fresh, migrated SQLite file.
func openRegistry(t testing.TB) *modules.Registry {
	t.Helper()
	db := testdb.Open(t)
	return modules.NewRegistry(db, modules.NewSQLBlobs(db))
}

// newRunner is a runner over a registry holding the committed examples (now,
// upper, echo) and the runnable hostile modules; addGo adds the Go ones.
func newRunner(t testing.TB, cfg fn.Config) (*fn.Runner, *modules.Registry) {
	t.Helper()
	reg := openRegistry(t)
	r, err := fn.New(ctx, reg, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(ctx) })
	for _, e := range examples.Builtin() {
		if _, err := reg.Put(ctx, e.Name, e.Wasm); err != nil {
			t.Fatalf("register %s: %v", e.Name, err)
		}
	}
	for _, name := range []string{"loop", "sleep", "grow", "flood", "trap", "exit"} {
		if _, err := reg.Put(ctx, name, examples.Hostile()[name]); err != nil {
			t.Fatalf("register %s: %v", name, err)
		}
	}
	return r, reg
}

// addGo registers the Go examples (last_reply_of) in reg.
func addGo(t testing.TB, reg *modules.Registry) {
	t.Helper()
	for _, e := range examples.All() {
		if e.Lang != "go" {
			continue
		}
		if _, err := reg.Put(ctx, e.Name, goExample(t, e.Name)); err != nil {
			t.Fatalf("register %s: %v", e.Name, err)
		}
	}
}

var goBuilds sync.Map // name → []byte

// goExample builds a Go example once per test binary. Without a go command it
// skips, unless CI is set.
func goExample(t testing.TB, name string) []byte {
	if b, ok := goBuilds.Load(name); ok {
		return b.([]byte)
	}
	b, err := examples.BuildGo(ctx, name)
	if errors.Is(err, examples.ErrNoGo) && os.Getenv("CI") == "" {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	goBuilds.Store(name, b)
	return b
}

// call runs a row of target and content with body.
func call(r *fn.Runner, target, content, body string) rowcall.Output {
	return callCtx(ctx, r, target, content, body)
}

func callCtx(ctx context.Context, r *fn.Runner, target, content, body string) rowcall.Output {
	row := rowcall.NewRow("T", rowcall.TypeFn)
	row.Target, row.Content = target, content
	return r.Run(ctx, &rowcall.Invocation{Row: &row, Body: body})
}

// content for a row whose template passes the whole body as one argument.
const whole = `["$1+"]`
