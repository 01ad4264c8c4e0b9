// Package vectors finds rows by meaning: the one ranking every search for
// plain words uses (ask, did_you_mean, MCP's search_capabilities), the
// in-memory vector index of a host whose vectors live in its database, and
// the queue that embeds rows after their writes commit.
//
//	table := vectors.NewTable(store, fresh)          // the vectors table, scanned in memory
//	dir.Subscribe(table.Touch)                       // this process's writes: seen at once
//	x := &vectors.Indexer{Embedder: emb, Index: table, Store: store}
//	dir.Subscribe(x.Notify)
//	go x.Run(ctx)                                    // embeds what changed, 16 rows a call
//	r := &vectors.Ranker{Words: store, Embedder: emb, Index: table, Weight: vectors.Weight}
//	hits, err := r.Search(ctx, "give the buyer their money back", rowcall.SearchFilter{Limit: 5})
//
// Ranker fuses word hits (the store's bm25) and vector hits linearly
// (Fuse; the weight chosen on test/askeval's tune split), applies the same
// filter to both (Visible: enabled, planner-visible, the token's scope), and
// lets an optional rowcall.Reranker reorder the best RerankDepth. Without an
// Embedder it is word search. Table follows the event log as the
// dispatcher's row cache does, so another host's vectors, deletes and
// disabled rows are seen on the next ask; Indexer follows it too, so another
// host's writes are embedded here as well when that host does not. Memory is
// the index itself (dot.Scores over one flat slice per model); Load wraps an
// embedder whose model loads in the background (ErrNotReady until then: ask
// ranks by words meanwhile). Indexer.Begin makes a row's vector for its
// write's similar_rows beside the write (Pending.Keep stores it, so the
// queue does not embed it again); the queue's own embedding is background
// work (rowcall.InBackground), on one low-priority thread. internal/app
// assembles all of it.
package vectors
