package flow

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func call(key, body string) Step        { return Step{Key: key, Body: body} }
func bound(key, body, bind string) Step { return Step{Key: key, Body: body, Bind: bind} }
func par(bind string, branches ...Step) Step {
	return Step{Bind: bind, Parallel: branches}
}

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		payload string
		want    []Step
	}{
		{"seed BLOOIO_FINISH", "LAST_REPLY_OF: $1\n> SEND_BY_CHANNEL: blooio|$2|$PREV",
			[]Step{call("LAST_REPLY_OF", "$1"), call("SEND_BY_CHANNEL", "blooio|$2|$PREV")}},
		{"one step", "NOW:", []Step{call("NOW", "")}},
		{"one line", "A: x > B: y > C: z", []Step{call("A", "x"), call("B", "y"), call("C", "z")}},
		{"line start no space", "A: x\n>B: y\n  >  C: z", []Step{call("A", "x"), call("B", "y"), call("C", "z")}},
		{"tab separated", "A: x\t>\tB: y", []Step{call("A", "x"), call("B", "y")}},
		{"bind", "A: x => R > B: $R", []Step{bound("A", "x", "R"), call("B", "$R")}},
		{"bind no spaces", "A: x=>R > B: $R", []Step{bound("A", "x", "R"), call("B", "$R")}},
		{"arrow not bind", "A: 1 => 2 > B: y", []Step{call("A", "1 => 2"), call("B", "y")}},
		{"last arrow binds", "A: a => b => C_1", []Step{bound("A", "a => b", "C_1")}},
		{"not separators", "A: x->y a>b c >d e> f >= g", []Step{call("A", "x->y a>b c >d e> f >= g")}},
		{"colon in body", "GET: https://h.test/x?a=1 > B: y", []Step{call("GET", "https://h.test/x?a=1"), call("B", "y")}},
		{"json body", `A: {"q":"a > b","n":[1]} > B: c`, []Step{call("A", `{"q":"a > b","n":[1]}`), call("B", "c")}},
		{"quoted body", `A: say "a > b" > B: c`, []Step{call("A", `say "a > b"`), call("B", "c")}},
		{"escaped quote", `A: "x\" > y" > B: c`, []Step{call("A", `"x\" > y"`), call("B", "c")}},
		{"stray quote shields its line", "A: 5\" tall > B: c\n> D: e", []Step{call("A", "5\" tall > B: c"), call("D", "e")}},
		{"multi-line json", "POST: {\n  \"a\": \"x > y\",\n  \"b\": [1, 2]\n}\n> NEXT: $PREV.a",
			[]Step{call("POST", "{\n  \"a\": \"x > y\",\n  \"b\": [1, 2]\n}"), call("NEXT", "$PREV.a")}},
		{"fan-out", "{ A: x | B: y }", []Step{par("", call("A", "x"), call("B", "y"))}},
		{"fan-out pipes in args", "{ A: x|y | B: z }", []Step{par("", call("A", "x|y"), call("B", "z"))}},
		{"fan-out url and time", "{ A: GET|https://h.test/x | B: 12|12:30 | C: q }",
			[]Step{par("", call("A", "GET|https://h.test/x"), call("B", "12|12:30"), call("C", "q"))}},
		{"fan-out tight", "{A: x|B: y}", []Step{par("", call("A", "x"), call("B", "y"))}},
		{"fan-out json branch", `{ A: {"a":"|B: x"} | B: y }`, []Step{par("", call("A", `{"a":"|B: x"}`), call("B", "y"))}},
		{"fan-out binds", "{ A: x => AX | B: y } => BOTH > C: $AX $BOTH.B",
			[]Step{par("BOTH", bound("A", "x", "AX"), call("B", "y")), call("C", "$AX $BOTH.B")}},
		{"fan-out multi-line", "W: $1\n> { A: $PREV\n  | B: $PREV }\n> C: $PREV.A",
			[]Step{call("W", "$1"), par("", call("A", "$PREV"), call("B", "$PREV")), call("C", "$PREV.A")}},
		{"fan-out one branch", "{ A: x }", []Step{par("", call("A", "x"))}},
		{"fan-out trailing pipe is an argument", "{ A: x | B: y | }", []Step{par("", call("A", "x"), call("B", "y |"))}},
		{"fan-out braces are an argument", "{ A: x | {B: y} }", []Step{par("", call("A", "x | {B: y}"))}},
		{"fan-out gt inside", "{ A: x > y | B: z }", []Step{par("", call("A", "x > y"), call("B", "z"))}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.payload)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Parse(%q)\n got %#v\nwant %#v", tt.payload, got, tt.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name    string
		payload string
		want    string
	}{
		{"empty", "", "flow:empty"},
		{"blank", " \n\t", "flow:empty"},
		{"no colon", "just text", "flow:bad_step:just text"},
		{"no colon later", "A: x\n> oops  \n> B: y", "flow:bad_step:oops"},
		{"bad key", "hello world: x", "flow:bad_step:hello world: x"},
		{"empty key", ": x", "flow:bad_step:: x"},
		{"bind without call", "A => N", "flow:bad_step:A => N"},
		{"trailing separator", "A: x >", "flow:bad_step:(empty step)"},
		{"leading separator", "> A: x", "flow:bad_step:(empty step)"},
		{"doubled separator", "A: x\n>\n> B: y", "flow:bad_step:(empty step)"},
		{"unclosed block", "{ A: x | B: y", "flow:bad_step:{ A: x | B: y"},
		{"text after block", "{ A: x } B: y", "flow:bad_step:{ A: x } B: y"},
		{"empty block", "{ }", "flow:bad_step:(empty step)"},
		{"bad first branch", "{ oops | B: y }", "flow:bad_step:oops"},
		{"bad branch key", "{ not a key: x | B: y }", "flow:bad_step:not a key: x"},
		{"stray quote hides block end", `{ A: 5" | B: y }`, `flow:bad_step:{ A: 5" | B: y }`},
		{"duplicate branch", "{ A: x | A: y }", "flow:duplicate_branch:A"},
		{"duplicate branch bind", "{ A: x | B: y => A }", "flow:duplicate_branch:A"},
		{"too many", steps(65), "flow:too_many_steps:65>64"},
		{"too many branches", steps(60) + " > { A: 1 | B: 2 | C: 3 | D: 4 | E: 5 }", "flow:too_many_steps:65>64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.payload)
			if err == nil {
				t.Fatalf("Parse(%q) = %#v, want error %s", tt.payload, got, tt.want)
			}
			if err.Error() != tt.want {
				t.Errorf("Parse(%q) error = %s, want %s", tt.payload, err, tt.want)
			}
		})
	}
}

func TestParseBounds(t *testing.T) {
	if _, err := Parse(steps(MaxSteps)); err != nil {
		t.Errorf("%d steps: %v", MaxSteps, err)
	}
	if _, err := Parse(steps(60) + " > { A: 1 | B: 2 | C: 3 | D: 4 }"); err != nil {
		t.Errorf("60 steps and 4 branches: %v", err)
	}
}

// steps returns a flow of n steps.
func steps(n int) string {
	s := make([]string, n)
	for i := range s {
		s[i] = fmt.Sprintf("S%d: %d", i, i)
	}
	return strings.Join(s, " > ")
}
