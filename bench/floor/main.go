// Command floor is bench/load.sh's floor: a bare net/http server that answers
// POST /api/dispatch with a fixed JSON body the size of a dispatch answer, and
// nothing else (no database, no sandbox, no receipt). What rowcall's host
// achieves under the same wrk load is reported as a ratio of this.
//
//	floor -addr 127.0.0.1:PORT [-work N] [-garbage BYTES]
//
// -work and -garbage make it a CPU-matched floor: each request also hashes
// N times and allocates BYTES that die with it, so that its CPU a request and
// its allocation rate can be set to rowcall's (bench/load.sh prints both
// servers' CPU a request) and its latency read at rowcall's throughput, with
// no single writer, database or sandbox behind it.
package main

import (
	"crypto/sha256"
	"flag"
	"io"
	"log"
	"net/http"
	"sync/atomic"
)

// answer is about as long as the host's answer to {"key":"ECHO","body":"hello"}.
const answer = `{"ok":true,"ran":true,"trace":"t_mio1x2y3abcdef","result":"hello","proof":{"ok":true,"invocation_id":"inv_mio1x2y3abcdefgh","public_receipt":"http://127.0.0.1:20000/receipt/inv_mio1x2y3abcdefgh","contract_sha256":"0123456789abcdef"}}` + "\n"

// hashed and held keep the work and the garbage from being optimised away
// (and the garbage on the heap).
var (
	hashed atomic.Pointer[[sha256.Size]byte]
	held   atomic.Pointer[[]byte]
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	work := flag.Int("work", 0, "SHA-256 rounds over 64 bytes per request (CPU-matched floor)")
	garbage := flag.Int("garbage", 0, "bytes allocated per request, in 1 KB pieces (CPU-matched floor)")
	flag.Parse()
	http.HandleFunc("POST /api/dispatch", func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if *work > 0 {
			cpu(*work)
		}
		for range *garbage / 1024 {
			b := make([]byte, 1024)
			held.Store(&b)
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		io.WriteString(w, answer)
	})
	log.Printf("floor serving on %s", *addr)
	log.Fatal(http.ListenAndServe(*addr, nil))
}

// cpu hashes n times.
func cpu(n int) {
	var h [sha256.Size]byte
	for range n {
		h = sha256.Sum256(append(h[:], h[:]...))
	}
	hashed.Store(&h)
}
