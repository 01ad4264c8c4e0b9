// Package askeval is rowcall's own dev set for finding capabilities by
// meaning, and the one way to score a ranking on it.
//
// The set: targets.jsonl holds 120 hand-written target rows in 24 domains;
// intents.jsonl holds 240 plain-word intents, two per target, each labelled
// with its target key, its kind ("shared": it shares a word stem with the
// row; "none": it shares no word and no stem) and its split ("tune" or
// "test"). Distractors generates the 10,000 admin and housekeeping rows the
// targets hide among, from a fixed seed. The test in this package proves every
// label; README.md states the rules.
//
// To score a ranking, build a store with NewStore, wrap it in a Ranker
// (WordSearch is today's ask) and call Score; or run
//
//	go run ./test/askeval/cmd/score [-split all|tune|test] [-rows 10000]
package askeval

import (
	"bufio"
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"

	"github.com/rowcall/rowcall"
)

//go:embed targets.jsonl
var targetsJSONL []byte

//go:embed intents.jsonl
var intentsJSONL []byte

// Kinds of intent.
const (
	Shared = "shared" // shares at least one word stem with its target row
	None   = "none"   // shares no word and no stem with its target row
)

// Splits of the intents. Tuning looks only at Tune; Test is the figure that counts.
const (
	Tune = "tune"
	Test = "test"
)

// Intent is one plain-word question and the row that answers it.
type Intent struct {
	Text  string `json:"intent"`
	Key   string `json:"key"`
	Kind  string `json:"kind"`
	Split string `json:"split"`
}

// Targets returns the hand-written target rows, in file order.
func Targets() []rowcall.Row { return readTargets(targetsJSONL) }

// readTargets reads target rows, one JSON object a line.
func readTargets(data []byte) []rowcall.Row {
	var out []rowcall.Row
	mustEachLine(data, func(line []byte) error {
		var t struct {
			Key, Type, Category, Target, Content string
		}
		if err := json.Unmarshal(line, &t); err != nil {
			return err
		}
		r := rowcall.NewRow(t.Key, rowcall.Type(t.Type))
		r.Category, r.Target, r.Content = t.Category, t.Target, t.Content
		out = append(out, r)
		return nil
	})
	return out
}

// Intents returns every intent, in file order.
func Intents() []Intent { return readIntents(intentsJSONL) }

// readIntents reads intents, one JSON object a line.
func readIntents(data []byte) []Intent {
	var out []Intent
	mustEachLine(data, func(line []byte) error {
		var in Intent
		if err := json.Unmarshal(line, &in); err != nil {
			return err
		}
		out = append(out, in)
		return nil
	})
	return out
}

// mustEachLine calls fn on each non-empty line; the files are embedded, so a
// bad line is a bug in the set and panics with its line number.
func mustEachLine(data []byte, fn func([]byte) error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		if line := bytes.TrimSpace(sc.Bytes()); len(line) > 0 {
			if err := fn(line); err != nil {
				panic(fmt.Sprintf("askeval: line %d: %v", n, err))
			}
		}
	}
}
