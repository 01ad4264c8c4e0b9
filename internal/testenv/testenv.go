// Package testenv builds what in-process tests of the core need, one way
// for every package: a store over a fresh database (internal/testdb), the
// fixed test signer and the keys that verify it, a signed receipt log, and a
// dispatcher with the runners a test names. Everything it opens is closed
// when the test ends.
//
//	d := testenv.Dispatcher(t, map[rowcall.Type]rowcall.Runner{rowcall.TypeHTTP: httpcall.New(cfg)})
//	d.Store.Create(ctx, row)
//	out := d.Dispatch(ctx, req)
//	_, keys := testenv.Signer(t)
//	testenv.Verify(keys, chain)
package testenv

import (
	"testing"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/dispatch"
	"github.com/rowcall/rowcall/internal/ledger"
	"github.com/rowcall/rowcall/internal/testdb"
	"github.com/rowcall/rowcall/sqlstore"
)

// Store returns a store over a fresh, migrated SQLite database.
func Store(tb testing.TB) *sqlstore.Store {
	tb.Helper()
	return sqlstore.New(testdb.Open(tb))
}

// Signer returns the test signer (the all-zero seed, so every test's receipts
// are signed by the same key) and the keys that verify its receipts.
func Signer(tb testing.TB) (*ledger.Signer, ledger.Keys) {
	tb.Helper()
	signer, err := ledger.NewSigner(make([]byte, 32))
	if err != nil {
		tb.Fatal(err)
	}
	keys, err := ledger.ParseKeys([]ledger.PublicKey{signer.Public()})
	if err != nil {
		tb.Fatal(err)
	}
	return signer, keys
}

// Receipts returns a receipt log over store, signed by Signer, closed at the
// test's end.
func Receipts(tb testing.TB, store *sqlstore.Store) *sqlstore.ReceiptLog {
	tb.Helper()
	signer, _ := Signer(tb)
	log := sqlstore.NewReceiptLog(store, signer)
	tb.Cleanup(log.Close)
	return log
}

// Dispatcher returns a dispatcher over a fresh store with a signed receipt
// log, the given runners, and an empty environment (no credential is set).
func Dispatcher(tb testing.TB, runners map[rowcall.Type]rowcall.Runner) *dispatch.Dispatcher {
	tb.Helper()
	store := Store(tb)
	return &dispatch.Dispatcher{Store: store, Receipts: Receipts(tb, store), Runners: runners,
		Env: rowcall.EnvFunc(func(string) (string, bool) { return "", false })}
}

// Verify checks a run of receipts in seq order with keys: each one's hash and
// signature, and that each links to the one before it (ledger.Chain, a
// receipt at a time, as `rowcall receipt verify` does).
func Verify(keys ledger.Keys, chain []rowcall.Receipt) error {
	c := keys.NewChain()
	for i := range chain {
		if err := c.Add(&chain[i]); err != nil {
			return err
		}
	}
	return nil
}
