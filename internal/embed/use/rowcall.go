package use

import (
	"context"

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
// (EmbedBatchOn).
func (e Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	cores := rowcall.Cores(ctx)
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += 16 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		out = append(out, e.Enc.EmbedBatchOn(texts[start:min(start+16, len(texts))], cores)...)
	}
	return out, nil
}
