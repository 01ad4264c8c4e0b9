package sqlstore

import (
	"context"
	"slices"
	"testing"

	"github.com/rowcall/rowcall"
)

// Every query that takes a token's scope (List, AllRows, Search) answers with
// the same rows: by key or by category, nothing for an empty scope, all for
// "*" — the one clause (scopeClause).
func TestScopeClause(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	for _, r := range []struct{ key, cat string }{{"A_ONE", "alpha"}, {"A_TWO", "alpha"}, {"B_ONE", "beta"}, {"C_ONE", ""}} {
		row := rowcall.NewRow(r.key, rowcall.TypeHTTP)
		row.Target, row.Content, row.Category = "GET http://127.0.0.1:1/", "# WHAT: weather row "+r.key, r.cat
		if _, err := s.Create(ctx, row); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		scope *rowcall.Scope
		want  []string
	}{
		{nil, []string{"A_ONE", "A_TWO", "B_ONE", "C_ONE"}},
		{&rowcall.Scope{Categories: []string{"*"}}, []string{"A_ONE", "A_TWO", "B_ONE", "C_ONE"}},
		{&rowcall.Scope{}, nil},
		{&rowcall.Scope{Categories: []string{"alpha"}}, []string{"A_ONE", "A_TWO"}},
		{&rowcall.Scope{Keys: []string{"B_ONE", "C_ONE"}}, []string{"B_ONE", "C_ONE"}},
		{&rowcall.Scope{Keys: []string{"C_ONE"}, Categories: []string{"beta"}}, []string{"B_ONE", "C_ONE"}},
	} {
		var got [3][]string
		page, err := s.List(ctx, rowcall.Filter{Scope: c.scope})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range page.Rows {
			got[0] = append(got[0], r.Key)
		}
		all, err := s.AllRows(ctx, c.scope, true)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range all {
			got[1] = append(got[1], r.Key)
		}
		hits, err := s.Search(ctx, "weather", rowcall.SearchFilter{Scope: c.scope, All: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hits {
			got[2] = append(got[2], h.Row.Key)
		}
		slices.Sort(got[2])
		for i, name := range []string{"List", "AllRows", "Search"} {
			if !slices.Equal(got[i], c.want) {
				t.Errorf("%s with scope %+v: %v, want %v", name, c.scope, got[i], c.want)
			}
		}
	}
}
