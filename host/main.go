// Command rowcall is the local host: it serves the directory and dispatcher over
// HTTP on the embedded SQLite file (or a libSQL server: --db URL), migrates the
// database, and talks to a running host from the command line.
//
//	rowcall serve                 run the host (127.0.0.1:8787, data under ./data)
//	rowcall migrate [list]        apply pending migrations, or list them
//	rowcall reindex [--force]     embed rows whose vectors are missing or stale
//	rowcall call KEY 'a|b'        invoke a row on a running host
//	rowcall receipt inv_…         show a receipt from a running host
//	rowcall receipt export|keys   save the signed receipt chain, or the public keys
//	rowcall receipt checkpoint    save the signed chain head, for verify --checkpoint
//	rowcall receipt verify FILE   check receipts offline, against a saved checkpoint too
//	rowcall key rotate            make a new owner key; the old one stays valid for a window
//	rowcall export / import FILE  the whole registry as one JSON file, and back
//
// This package is wiring only: every behaviour lives in the core packages.
package main

import (
	"fmt"
	"os"
)

const usage = `rowcall: a capability directory and dispatcher

usage:
  rowcall serve   [--addr 127.0.0.1:8787] [--data ./data] [--db URL] [--public-reads] [--allow-outbound CIDRS] [--no-examples]
  rowcall migrate [list] [--data ./data] [--db URL]
  rowcall reindex [--data ./data] [--db URL] [--force]
  rowcall call    KEY ['ARGS|…'] [--url URL] [--shape]
  rowcall receipt INVOCATION_ID [--url URL]
  rowcall receipt export [--url URL] > chain.json
  rowcall receipt keys   [--url URL] > keys.json
  rowcall receipt checkpoint [--url URL] > checkpoint.txt
  rowcall receipt verify chain.json --keys keys.json [--checkpoint checkpoint.txt]
  rowcall key rotate [--data ./data] [--window 24h]
  rowcall export [--url URL] > registry.json
  rowcall import registry.json [--dry-run] [--url URL]

The owner key is read from $ROWCALL_OWNER_KEY or DATA/owner.key (created on first serve).
`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	var err error
	switch cmd, rest := os.Args[1], os.Args[2:]; cmd {
	case "serve":
		err = serve(rest)
	case "migrate":
		err = migrate(rest)
	case "reindex":
		err = reindex(rest)
	case "call":
		err = call(rest)
	case "receipt":
		err = receiptCmd(rest)
	case "export":
		err = exportRegistry(rest)
	case "import":
		err = importRegistry(rest)
	case "key":
		if len(rest) == 0 || rest[0] != "rotate" {
			err = fmt.Errorf("usage: rowcall key rotate [--data ./data] [--window 24h]")
		} else {
			err = rotateKey(rest[1:])
		}
	case "help", "-h", "--help":
		fmt.Print(usage)
	default:
		fmt.Fprintf(os.Stderr, "rowcall: unknown command %q\n\n%s", cmd, usage)
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "rowcall:", err)
		os.Exit(1)
	}
}
