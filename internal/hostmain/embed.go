package hostmain

import (
	"context"
	"path/filepath"
	"runtime/debug"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/app"
	"github.com/rowcall/rowcall/internal/embed/use"
	"github.com/rowcall/rowcall/internal/vectors"
)

// embedder is the local host's own embedder for s: the embedded encoder
// (use-lite), loading in the background (vectors.Load) so the host serves at
// once and ask ranks by words until it is ready; nil when
// ROWCALL_EMBED_PROVIDER is off or names an OpenAI-compatible server (which
// app.New reaches instead).
func embedder(ctx context.Context, s app.Settings, dataDir string) rowcall.Embedder {
	if p := s.Embed.Provider; p != "" && p != "use-lite" {
		return nil
	}
	return vectors.Load(use.Model, func() (rowcall.Embedder, error) {
		enc, err := use.Open(ctx, WeightsDir(dataDir))
		if err != nil {
			return nil, err
		}
		// Loading read the 28 MB of shards and the vocabulary, garbage now;
		// at serve's GOGC=400 no collection would come for it on an idle
		// host, which would keep it resident (docs/RATIONALE.md, "Why does
		// the host return the encoder's load to the OS?").
		debug.FreeOSMemory()
		return use.Embedder{Enc: enc}, nil
	})
}

// WeightsDir is where the encoder's weights are: DATA/models/use-lite-VERSION
// when fetched there, else the user's cache (where `go run
// ./internal/embed/use/fetch` and other data directories' hosts put them),
// else DATA/models/use-lite-VERSION, where use.Open fetches them once.
func WeightsDir(dataDir string) string {
	own := filepath.Join(dataDir, "models", "use-lite-"+use.Version)
	if use.Fetched(own, use.Registry) {
		return own
	}
	if shared, err := use.DefaultDir(); err == nil && use.Fetched(shared, use.Registry) {
		return shared
	}
	return own
}
