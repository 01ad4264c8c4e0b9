//go:build js && wasm

package main

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/rowcall/rowcall/internal/app"
	"github.com/rowcall/rowcall/internal/ledger"
	"github.com/rowcall/rowcall/sqlstore"
)

// Sealing on the worker: with an R2 bucket bound as RECEIPTS, the chain is
// sealed into segments there (sqlstore.Archive, as on the host), every
// ROWCALL_RECEIPT_SEGMENT receipts (default sqlstore.DefaultSegmentSize), and
// sealed receipts older than ROWCALL_RECEIPT_RETAIN (default 720h) are pruned
// from D1. A Worker has no background: the request whose receipt ends a
// segment seals it once its response is sent (the shim holds its context
// open with waitUntil), and prunes; a seal that fails is tried again by the
// first request a minute later, and one an instance dies before is caught up
// by the next request that ends a segment (Seal writes every full segment
// not yet sealed). ?confirm=, /receipt/… and
// /api/receipts read across D1 and R2 as on the host.

// sealing is one handler's archive and whether a segment is due.
type sealing struct {
	archive *sqlstore.Archive
	due     atomic.Bool  // a stored receipt ended a segment: seal after this response
	retry   atomic.Int64 // a seal failed: try again after this (Unix ns; 0: none)
}

// sealLimit bounds one request's sealing and pruning; sealRetry is how long
// after a failed seal the next is tried.
const (
	sealLimit = 25 * time.Second
	sealRetry = time.Minute
)

// newSealing gives built's store an archive in the RECEIPTS bucket and
// watches its receipt writer for receipts that end a segment.
func newSealing(built *app.App, signer *ledger.Signer, size int, retain time.Duration) *sealing {
	s := &sealing{archive: &sqlstore.Archive{Store: built.Store, Objects: receiptObjects{}, Signer: signer,
		Origin: built.API.Origin(), Size: size, Retain: retain}}
	built.Store.Archive = s.archive
	built.Receipts.Observe(func(g sqlstore.Group) {
		for i := range g.Receipts {
			if g.Errs[i] == nil && g.Receipts[i].Seq%int64(size) == 0 {
				s.due.Store(true)
			}
		}
	})
	return s
}

// after seals and prunes, once the request is answered, if a segment is due.
func (s *sealing) after(ctx context.Context) {
	if !s.due.Swap(false) && !s.retryDue() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, sealLimit)
	defer cancel()
	_, err := s.archive.Seal(ctx)
	if err == nil {
		_, err = s.archive.Prune(ctx)
	}
	if err != nil {
		s.retry.Store(time.Now().Add(sealRetry).UnixNano())
		slog.Error("rowcall: receipt segments", "err", err)
	}
}

// retryDue reports whether a failed seal's wait is over, and takes the retry.
func (s *sealing) retryDue() bool {
	at := s.retry.Load()
	return at != 0 && time.Now().UnixNano() >= at && s.retry.CompareAndSwap(at, 0)
}
