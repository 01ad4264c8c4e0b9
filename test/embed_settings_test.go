package test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/rowcall/rowcall/test/embedserver"
)

// The host reads the embedding settings from its environment: a provider
// that is not among the model providers stops it with the setting to fix,
// and a configured one lets it start. (That ask's embeddings then reach the
// provider is internal/app's TestEmbedProviderSetting, over the host's own
// outbound client and environment.)
func TestHostReadsEmbedSettings(t *testing.T) {
	cmd := exec.Command(binary, "serve", "--addr", "127.0.0.1:0", "--data", t.TempDir(), "--no-examples")
	cmd.Env = append(os.Environ(), "ROWCALL_OWNER_KEY=", "ROWCALL_EMBED_PROVIDER=nosuch")
	done := time.AfterFunc(20*time.Second, func() { cmd.Process.Kill() })
	out, err := cmd.CombinedOutput()
	done.Stop()
	if err == nil || !strings.Contains(string(out), "ROWCALL_EMBED_PROVIDER: nosuch is not among the model providers") {
		t.Fatalf("serve with ROWCALL_EMBED_PROVIDER=nosuch: %v\n%s", err, out)
	}
	s := embedserver.Start(t, nil)
	h := startHost(t, nil, "ROWCALL_MODEL_PROVIDERS=emb="+s.URL, "ROWCALL_EMBED_PROVIDER=emb",
		"ROWCALL_EMBED_MODEL=nomic-embed-text", "ROWCALL_EMBED_AUTH=bearer:EMB_KEY", "EMB_KEY=sk-x")
	expect(t, h.do(t, req{Method: "GET", Path: "/api/directory"}), 200, nil)
}
