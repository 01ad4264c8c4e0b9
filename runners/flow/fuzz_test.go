package flow

import "testing"

// FuzzParse checks that any payload parses or fails cleanly, and that a
// parsed flow keeps to the grammar's promises.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"LAST_REPLY_OF: $1\n> SEND_BY_CHANNEL: blooio|$2|$PREV",
		`{ A: x|y | B: {"a":"} > |C: "} => N } => M > D: "\" >`,
		">", "{", "}", "|", "=>", `"`, "A: [ > B: ]",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, payload string) {
		steps, err := Parse(payload)
		if err != nil {
			return
		}
		n := 0
		for _, s := range steps {
			n += s.Count()
			calls := []Step{s}
			if s.Parallel != nil {
				calls = s.Parallel
				if len(calls) == 0 {
					t.Fatalf("empty block in %q", payload)
				}
			}
			for _, c := range calls {
				if c.Key == "" || c.Parallel != nil {
					t.Fatalf("bad call %#v in %q", c, payload)
				}
			}
		}
		if n == 0 || n > MaxSteps {
			t.Fatalf("%d steps from %q", n, payload)
		}
	})
}
