package main

import (
	"slices"
	"strings"
	"testing"
)

// TestAnalyze: a function no call reaches is dead, and so is an exported
// method reachable only through reflection (cmd/deadcode counts it live once
// text/template is linked in); a function used as a value, a generic
// function's instance, and a method that satisfies an interface are live.
func TestAnalyze(t *testing.T) {
	declared, live := map[string]string{}, map[string]bool{}
	analyze("testdata/prog", nil, []string{"."}, declared, live)
	var dead []string
	for pos, name := range declared {
		if !live[pos] {
			_, fn, _ := strings.Cut(name, " ")
			dead = append(dead, fn)
		}
	}
	slices.Sort(dead)
	if want := []string{"deadFunc", "store.DeadExported"}; !slices.Equal(dead, want) {
		t.Fatalf("dead = %v; want %v", dead, want)
	}
}
