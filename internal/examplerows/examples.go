// Package examplerows holds the capabilities a new host starts with, so a
// newcomer can call something offline right after `go run ./host serve` (or
// the first request to a fresh worker): rows that read and edit this host's
// own directory through its API as $SELF (as the seed's DIR_PATCH does), a
// flow that fans out over two of them, and fn rows backed by the built-in
// WebAssembly modules. InstallAll installs them all; the local host calls it
// when it creates its database, the worker on its first request to an empty
// one (worker/seed.go).
package examplerows

import (
	"context"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/runners/fn/modules"
	wasmexamples "github.com/rowcall/rowcall/wasm/examples"
)

// Creator stores a new row (sqlstore.Store does).
type Creator interface {
	Create(ctx context.Context, r rowcall.Row) (rowcall.Row, error)
}

// HTTPRows returns the example http and flow rows. They call the host they
// run on as $SELF (its base URL, resolved at each call: see package args), so
// they keep working when exported to another host, with the owner key the host
// exposes to rows as ROWCALL_OWNER_KEY.
func HTTPRows() []rowcall.Row {
	const base = "$SELF"
	return []rowcall.Row{
		row("DIR_GET", rowcall.TypeHTTP, "GET "+base+"/api/directory/$1", "bearer:ROWCALL_OWNER_KEY", "rowcall", `# WHAT: Read one row of this directory: its whole contract, version and row_num.
# WHEN_TO_USE: you need to see how a capability is defined before calling or editing it.
# ARGS: $1=key
# EX: [DIR_GET]NOW[/DIR_GET]
# OUTPUT: HTTP 200 with the row as JSON`, `["NOW"]`),
		row("DIR_LIST", rowcall.TypeHTTP, "GET "+base+"/api/directory?category=$1&limit=50", "bearer:ROWCALL_OWNER_KEY", "rowcall", `# WHAT: List the rows of one category of this directory.
# WHEN_TO_USE: you want to see what capabilities exist in an area.
# ARGS: $1=category
# EX: [DIR_LIST]rowcall[/DIR_LIST]
# OUTPUT: HTTP 200 with {"rows":[…],"total":…}`, `["rowcall","time"]`),
		row("DIR_HISTORY", rowcall.TypeHTTP, "GET "+base+"/api/directory/$1/history", "bearer:ROWCALL_OWNER_KEY", "rowcall", `# WHAT: Every version of one row, from the append-only event log.
# WHEN_TO_USE: you need to know who changed a capability, and how, before trusting it.
# ARGS: $1=key
# EX: [DIR_HISTORY]DIR_PATCH[/DIR_HISTORY]
# OUTPUT: HTTP 200 with {"key":…,"events":[…]}`, `["DIR_PATCH"]`),
		row("DIR_PATCH", rowcall.TypeHTTP, "PATCH "+base+"/api/directory/$1", "bearer:ROWCALL_OWNER_KEY", "rowcall", `# WHAT: Edit fields of another row of this directory (the seed's DIR_PATCH).
# WHEN_TO_USE: a capability's definition must change, e.g. its category or prompt.
# ARGS: key | json_body (the last argument may contain pipes: it is passed whole by $2+)
# EX: [DIR_PATCH]DIR_LIST|{"planner_rank":50}[/DIR_PATCH]
# OUTPUT: HTTP 200 with {"ok":true,"key":…,"updated_at":…,"version":…}
$2+`, `["DIR_LIST|{\"planner_rank\":50}"]`),
		row("RECEIPT_CONFIRM", rowcall.TypeHTTP, "GET "+base+"/api/dispatch?confirm=$1", "", "rowcall", `# WHAT: Confirm that an invocation really ran, from its public receipt.
# WHEN_TO_USE: you must prove afterwards what ran, given an invocation id (inv_…).
# ARGS: $1=invocation id
# EX: [RECEIPT_CONFIRM]inv_c23irnzhx1[/RECEIPT_CONFIRM]
# OUTPUT: HTTP 200 with {"confirmed":true,"status":"PROVEN_MATERIAL_RESULT","receipt":{…}}`, ""),
		row("ROW_DOSSIER", rowcall.TypeFlow, "", "", "rowcall", `# WHAT: A row's definition and its history together, fetched concurrently.
# WHEN_TO_USE: you are reviewing a capability before relying on it.
# ARGS: $1=key
# EX: [ROW_DOSSIER]DIR_PATCH[/ROW_DOSSIER]
# OUTPUT: JSON object {"ROW":"HTTP 200:…","HISTORY":"HTTP 200:…"}
{ DIR_GET: $1 => ROW | DIR_HISTORY: $1 => HISTORY }`, `["DIR_PATCH"]`),
	}
}

func row(key string, typ rowcall.Type, target, auth, category, content, examples string) rowcall.Row {
	r := rowcall.NewRow(key, typ)
	r.Target, r.Auth, r.Category, r.Content, r.Examples = target, auth, category, content, examples
	return r
}

// Install creates rows that do not exist yet; an existing key is left alone.
// Each names the host as its writer (rowcall.WriterExamples).
func Install(ctx context.Context, store Creator, rows []rowcall.Row) (created []string, err error) {
	for _, r := range rows {
		r.WrittenBy = rowcall.WriterExamples
		if _, err := store.Create(ctx, r); err != nil {
			if rowcall.ErrorCode(err) == rowcall.EConflict {
				continue
			}
			return created, err
		}
		created = append(created, r.Key)
	}
	return created, nil
}

// ModuleStore registers fn modules (modules.Registry does).
type ModuleStore interface {
	Get(ctx context.Context, name string) (modules.Module, error)
	Put(ctx context.Context, name string, wasm []byte) (modules.Module, error)
}

// InstallAll installs everything a new host starts with: the example http and
// flow rows, and the built-in modules with their rows. What exists already (a
// row's key, a module's name) is left alone, so running it again, or on two
// hosts at once, changes nothing.
func InstallAll(ctx context.Context, reg ModuleStore, store Creator) (created []string, err error) {
	created, err = Install(ctx, store, HTTPRows())
	if err != nil {
		return created, err
	}
	fnRows, err := InstallModules(ctx, reg, store)
	return append(created, fnRows...), err
}

// InstallModules registers the built-in example modules (those whose bytes are
// committed; see wasm/examples) that are not registered yet, and creates
// their rows.
func InstallModules(ctx context.Context, reg ModuleStore, store Creator) (created []string, err error) {
	var rows []rowcall.Row
	for _, e := range wasmexamples.All() {
		if e.Wasm == nil {
			continue
		}
		switch _, err := reg.Get(ctx, e.Name); {
		case rowcall.ErrorCode(err) == rowcall.ENotFound:
			if _, err := reg.Put(ctx, e.Name, e.Wasm); err != nil {
				return nil, err
			}
		case err != nil:
			return nil, err
		}
		r := rowcall.NewRow(e.Key, rowcall.TypeFn)
		r.Target, r.Content, r.Category = e.Name, e.Content, "examples"
		if e.Name == "now" {
			r.Category, r.Examples = "time", `[""]`
		}
		rows = append(rows, r)
	}
	return Install(ctx, store, rows)
}
