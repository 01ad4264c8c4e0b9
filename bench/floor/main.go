// Command floor is bench/load.sh's floor: a bare net/http server that answers
// POST /api/dispatch with a fixed JSON body the size of a dispatch answer, and
// nothing else (no database, no sandbox, no receipt). What rowcall's host
// achieves under the same wrk load is reported as a ratio of this.
//
//	floor -addr 127.0.0.1:PORT
package main

import (
	"flag"
	"io"
	"log"
	"net/http"
)

// answer is about as long as the host's answer to {"key":"ECHO","body":"hello"}.
const answer = `{"ok":true,"ran":true,"trace":"t_mio1x2y3abcdef","result":"hello","proof":{"ok":true,"invocation_id":"inv_mio1x2y3abcdefgh","public_receipt":"http://127.0.0.1:20000/receipt/inv_mio1x2y3abcdefgh","contract_sha256":"0123456789abcdef"}}` + "\n"

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	flag.Parse()
	http.HandleFunc("POST /api/dispatch", func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		io.WriteString(w, answer)
	})
	log.Printf("floor serving on %s", *addr)
	log.Fatal(http.ListenAndServe(*addr, nil))
}
