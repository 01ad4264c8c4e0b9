package vectors

import (
	"testing"

	"github.com/rowcall/rowcall"
)

// TestNearKeepsBestThree: ask's cut-off keeps the best NearKeep hits down to
// KeepFloor × the best (C, far under it, is dropped), and drops later hits
// under floor × the best.
func TestNearKeepsBestThree(t *testing.T) {
	var hits []rowcall.Hit
	for i, s := range []float64{1, 0.6, 0.1, 0.9, 0.05} {
		hits = append(hits, rowcall.Hit{Row: rowcall.Row{Key: string(rune('A' + i))}, Score: s})
	}
	got := near(hits, Floor)
	var keys string
	for _, h := range got {
		keys += h.Row.Key
	}
	if keys != "ABD" {
		t.Errorf("near kept %q, want ABD (B at 0.6 of the best among the best three, D at 0.9; C under %.2f, E under %.2f)", keys, KeepFloor, Floor)
	}
}

// TestMemoryCentroid: the centroid follows upserts, replacements and deletes.
func TestMemoryCentroid(t *testing.T) {
	ctx := t.Context()
	model := rowcall.EmbedModel{Provider: "test", Name: "t", Dim: 2}
	m := NewMemory()
	if c := m.Centroid(model); c != nil {
		t.Fatalf("empty index: centroid %v, want nil", c)
	}
	put := func(key string, v ...float32) {
		if err := m.Upsert(ctx, model, []rowcall.Vector{{Key: key, Values: v, Enabled: true, Visible: true}}); err != nil {
			t.Fatal(err)
		}
	}
	near := func(want ...float32) {
		t.Helper()
		c := m.Centroid(model)
		for i := range want {
			if d := c[i] - want[i]; d > 0.02 || d < -0.02 {
				t.Fatalf("centroid %v, want %v", c, want)
			}
		}
	}
	put("A", 1, 0)
	put("B", 0, 1)
	near(0.7071, 0.7071)
	put("B", 1, 0) // replaced
	near(1, 0)
	if err := m.Delete(ctx, model, []string{"A", "B"}); err != nil {
		t.Fatal(err)
	}
	put("C", 0, 1)
	near(0, 1)
}
