// Package test is rowcall's black-box suite: it starts a real host (the rowcall
// binary on its embedded SQLite file; later libSQL and the Cloudflare worker),
// talks to it over HTTP only, and asserts what a user would check. The same
// scenarios run against every host.
package test
