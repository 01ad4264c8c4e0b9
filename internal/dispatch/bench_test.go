package dispatch_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/dispatch"
	"github.com/rowcall/rowcall/internal/testenv"
	"github.com/rowcall/rowcall/runners/flow"
	"github.com/rowcall/rowcall/runners/httpcall"
	"github.com/rowcall/rowcall/sqlstore"
)

// newDispatcher returns a dispatcher over a fresh SQLite file with the http and
// flow runners, and an upstream on loopback that answers a small JSON body.
func newDispatcher(b testing.TB) (*dispatch.Dispatcher, *httptest.Server) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"temperature_2m":15.7}`)
	}))
	b.Cleanup(up.Close)
	d := testenv.Dispatcher(b, map[rowcall.Type]rowcall.Runner{
		rowcall.TypeHTTP: httpcall.New(httpcall.Config{Client: up.Client()}),
		rowcall.TypeFlow: flow.Runner{},
	})
	store := sqlStore(d)
	rows := []rowcall.Row{
		{Key: "TEMP", Type: rowcall.TypeHTTP, Target: "GET " + up.URL + "/v1/forecast?latitude=$1&longitude=$2", Content: "# WHAT: t"},
		{Key: "THREE", Type: rowcall.TypeFlow, Content: "# WHAT: three steps\nTEMP: $1|$2\n> TEMP: 1|2\n> TEMP: $PREV.temperature_2m|3"},
	}
	for _, r := range rows {
		r.Enabled, r.PlannerVisible, r.PlannerRank = 1, 1, 100
		if _, err := store.Create(context.Background(), r); err != nil {
			b.Fatal(err)
		}
	}
	return d, up
}

// BenchmarkDirectHTTP is the baseline: the same GET to the same loopback
// upstream with a plain http.Client.
func BenchmarkDirectHTTP(b *testing.B) {
	_, up := newDispatcher(b)
	c := up.Client()
	for b.Loop() {
		res, err := c.Get(up.URL + "/v1/forecast?latitude=37.77&longitude=-122.42")
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
	}
}

// BenchmarkDispatchHTTP is a whole receipted dispatch of an http row: lookup,
// breaker check, templating, the upstream call, redaction, the receipt write.
func BenchmarkDispatchHTTP(b *testing.B) {
	d, _ := newDispatcher(b)
	ctx := context.Background()
	for b.Loop() {
		res, err := d.Dispatch(ctx, dispatch.Request{Key: "TEMP", Body: "37.77|-122.42", Principal: rowcall.Principal{Actor: "bench"}})
		if err == nil {
			err = res.Wait()
		}
		if err != nil || !res.OK {
			b.Fatal(err, res.Result)
		}
	}
}

// BenchmarkDispatchFlow3 is a 3-step flow: four receipts, three upstream calls.
func BenchmarkDispatchFlow3(b *testing.B) {
	d, _ := newDispatcher(b)
	ctx := context.Background()
	for b.Loop() {
		res, err := d.Dispatch(ctx, dispatch.Request{Key: "THREE", Body: "37.77|-122.42", Principal: rowcall.Principal{Actor: "bench"}})
		if err == nil {
			err = res.Wait()
		}
		if err != nil || !res.OK {
			b.Fatal(err, fmt.Sprint(res.Result))
		}
	}
}

// sqlStore is the test dispatcher's store as what it is, for the statements
// a test runs straight on the database.
func sqlStore(d *dispatch.Dispatcher) *sqlstore.Store { return d.Store.(*sqlstore.Store) }
