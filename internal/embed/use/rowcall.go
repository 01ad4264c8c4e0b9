package use

import (
	"context"
	"runtime"
	"sync"

	"github.com/rowcall/rowcall"
)

// Model is the encoder's model as rowcall stores its vectors.
var Model = rowcall.EmbedModel{Provider: "use-lite", Name: "use-lite-" + Version, Dim: Dim}

// Embedder is an Encoder as a rowcall.Embedder: rowcall's embedded default.
type Embedder struct{ Enc *Encoder }

// Model implements rowcall.Embedder.
func (e Embedder) Model() rowcall.EmbedModel { return Model }

// Embed implements rowcall.Embedder: EmbedBatch, 16 texts at a time; a
// call marked by rowcall.OnOneCore or rowcall.InBackground on one goroutine
// (EmbedBatchOn). A few texts embedded in the foreground (a written row's
// rowcall.EmbedTexts, which its caller waits for) are shared out among the
// cores by their tokens, each share one forward pass on one core: a small
// pass barely spreads across cores itself, so the row's texts take about the
// time of its longest.
func (e Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	cores := rowcall.Cores(ctx)
	if n := min(runtime.GOMAXPROCS(0), len(texts)); cores == 0 && n > 1 && len(texts) <= 16 {
		return e.spread(texts, n), ctx.Err()
	}
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += 16 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		out = append(out, e.Enc.EmbedBatchOn(texts[start:min(start+16, len(texts))], cores)...)
	}
	return out, nil
}

// spread embeds texts as n runs of them, in order, of about equal tokens,
// at once, each on one core. The vectors are those of EmbedBatch: a text's
// vector does not depend on its batch.
func (e Embedder) spread(texts []string, n int) [][]float32 {
	tokens := make([]int, len(texts))
	total := 0
	for i, t := range texts {
		tokens[i] = len(e.Enc.Tokens(t))
		total += tokens[i]
	}
	out := make([][]float32, len(texts))
	var wg sync.WaitGroup
	start, sum, runs := 0, 0, 0
	for i := range texts {
		sum += tokens[i]
		// A run ends once the runs so far hold their share of the tokens; the last takes the rest.
		if i == len(texts)-1 || (runs < n-1 && sum*n >= total*(runs+1)) {
			runs++
			run := texts[start : i+1]
			at := start
			wg.Add(1)
			go func() {
				defer wg.Done()
				copy(out[at:], e.Enc.EmbedBatchOn(run, 1))
			}()
			start = i + 1
		}
	}
	wg.Wait()
	return out
}
