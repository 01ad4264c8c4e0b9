package main

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/vectors"
)

// Only requests that can change rows start a vector sync pass: reads, and
// writes outside the directory, do not.
func TestIsDirectoryWrite(t *testing.T) {
	for _, c := range []struct {
		method, path string
		want         bool
	}{
		{"POST", "/api/directory", true},
		{"PATCH", "/api/directory/NOW", true},
		{"DELETE", "/api/directory/NOW", true},
		{"POST", "/api/import", true},
		{"GET", "/api/directory/NOW", false},
		{"HEAD", "/api/directory", false},
		{"POST", "/api/dispatch", false},
		{"POST", "/api/tokens", false},
		{"POST", "/api/directoryx", false},
	} {
		if got := isDirectoryWrite(httptest.NewRequest(c.method, c.path, nil)); got != c.want {
			t.Errorf("%s %s: %v, want %v", c.method, c.path, got, c.want)
		}
	}
}

// unit embeds every text as the same axis-aligned vector, by its first letter.
type unit struct{}

func (unit) Model() rowcall.EmbedModel {
	return rowcall.EmbedModel{Provider: "test", Name: "unit", Dim: 2}
}
func (unit) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = []float32{1, 0}
		if t != "" && t[0] == 'b' {
			out[i] = []float32{0, 1}
		}
	}
	return out, nil
}

// The debug route's nearest asks the index for the embedded text's nearest
// rows, hidden ones only with all.
func TestNearest(t *testing.T) {
	ctx := context.Background()
	ix := vectors.NewMemory()
	ix.Upsert(ctx, unit{}.Model(), []rowcall.Vector{
		{Key: "A", Values: []float32{1, 0}, Enabled: true, Visible: true},
		{Key: "B", Values: []float32{0, 1}, Enabled: true, Visible: true},
		{Key: "HIDDEN_A", Values: []float32{1, 0}, Enabled: false, Visible: true},
	})
	for _, c := range []struct {
		q    nearestRequest
		want []string
	}{
		{nearestRequest{Text: "apple", K: 1}, []string{"A"}},
		{nearestRequest{Text: "banana", K: 1}, []string{"B"}},
		{nearestRequest{Text: "apple", K: 2, All: true}, []string{"A", "HIDDEN_A"}},
	} {
		out, err := nearest(ctx, unit{}, ix, c.q)
		if err != nil {
			t.Fatal(err)
		}
		hits := out["hits"].([]rowcall.VectorHit)
		var keys []string
		for _, h := range hits {
			keys = append(keys, h.Key)
		}
		if len(keys) != len(c.want) || (len(keys) > 0 && keys[0] != c.want[0]) || out["model"] != "test/unit/2" {
			t.Errorf("%+v: %v %v, want %v", c.q, keys, out["model"], c.want)
		}
	}
}
