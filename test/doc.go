// Package test is rowcall's black-box suite: it starts a real host, talks to it
// over HTTP only, and asserts what a user would check. Most tests start the
// rowcall binary on its embedded SQLite file; TestHosts (suite_test.go) runs one
// set of scenarios against every host in backends_test.go: the embedded file,
// the same host booted in the test process (inprocess: hostmain.Main, for
// -race and coverage), the host on a real sqld (--db), and the Cloudflare
// worker in workerd (wrangler dev --local) on D1. TestMigrationsAgreeWithWrangler checks that
// wrangler and rowcall's migrator keep the same d1_migrations ledger.
package test
