package flow

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/args"
)

// fake is a Caller that records its calls as "KEY:body" and answers from a
// table; a key not in the table answers "KEY(body)".
type fake struct {
	mu    sync.Mutex
	calls []string
	reply map[string]func(body string) rowcall.Output
}

func (f *fake) Call(_ context.Context, parent *rowcall.Invocation, key, body string) rowcall.Output {
	f.mu.Lock()
	f.calls = append(f.calls, key+":"+body)
	f.mu.Unlock()
	if r, ok := f.reply[key]; ok {
		return r(body)
	}
	return rowcall.Output{Result: key + "(" + body + ")", Material: true, CostUSD: 0.25}
}

func answer(result string) func(string) rowcall.Output {
	return func(string) rowcall.Output { return rowcall.Output{Result: result, Material: true} }
}

// failure answers the failure ERR:<code>.
func failure(code string) func(string) rowcall.Output {
	return func(string) rowcall.Output {
		o := rowcall.Fail("", code).Output()
		o.Material = true
		return o
	}
}

func invocation(content, body string, c rowcall.Caller) *rowcall.Invocation {
	row := rowcall.NewRow("F", rowcall.TypeFlow)
	row.Content = content
	return &rowcall.Invocation{Row: &row, Body: body, Args: args.Split(body), Calls: c}
}

const weather = `{"current":{"temperature_2m":15.7,"time":"04:30"}}`

func TestRun(t *testing.T) {
	tests := []struct {
		name    string
		content string
		body    string
		vars    map[string]string
		want    string
		calls   []string
	}{
		{"seed BLOOIO_FINISH",
			"# Phase C of the inbound turn.\n# $1=agent output text. $2=recipient phone.\nLAST_REPLY_OF: $1\n> SEND_BY_CHANNEL: blooio|$2|$PREV",
			"hi [REPLY]yo[/REPLY]|+15550001111", nil,
			"SEND_BY_CHANNEL(blooio|+15550001111|LAST_REPLY_OF(hi [REPLY]yo[/REPLY]))",
			[]string{"LAST_REPLY_OF:hi [REPLY]yo[/REPLY]", "SEND_BY_CHANNEL:blooio|+15550001111|LAST_REPLY_OF(hi [REPLY]yo[/REPLY])"}},
		{"rest argument", "A: $2+", `k|{"a":"x|y"}`, nil, `A({"a":"x|y"})`, []string{`A:{"a":"x|y"}`}},
		{"bindings", "A: $1 => R > B: b > C: $R/$PREV", "x", nil, "C(A(x)/B(b))",
			[]string{"A:x", "B:b", "C:A(x)/B(b)"}},
		{"gjson picks", "WEATHER: $1|$2 => W > SAY: $PREV.current.temperature_2m C at $W.current.time.", "37.77|-122.42", nil,
			"SAY(15.7 C at 04:30.)", []string{"WEATHER:37.77|-122.42", "SAY:15.7 C at 04:30."}},
		{"gjson picks an http body", "HTTPWEATHER: $1|$2 => W > SAY: $PREV.current.temperature_2m C at $W.current.time, from $PREV", "1|2", nil,
			"SAY(15.7 C at 04:30, from HTTP 200:" + weather + ")", []string{"HTTPWEATHER:1|2", "SAY:15.7 C at 04:30, from HTTP 200:" + weather}},
		{"first PREV literal", "A: $PREV $NOPE", "", nil, "A($PREV $NOPE)", []string{"A:$PREV $NOPE"}},
		{"invocation vars", "A: $PREV $WHO", "", map[string]string{"PREV": "p", "WHO": "w"}, "A(p w)", []string{"A:p w"}},
		{"fan-out", "{ A: $1 | B: $2 => BY } > C: $PREV.A/$BY/$PREV", "x|y", nil,
			`C(A(x)/B(y)/{"A":"A(x)","BY":"B(y)"})`, []string{"A:x", "B:y", `C:A(x)/B(y)/{"A":"A(x)","BY":"B(y)"}`}},
		{"fan-out bind and escaping", `{ A: a "b" | Q: <q>\ & } => BOTH > C: $BOTH`, "", nil,
			`C({"A":"A(a \"b\")","Q":"Q(<q>\\ &)"})`, []string{`A:a "b"`, `Q:<q>\ &`, `C:{"A":"A(a \"b\")","Q":"Q(<q>\\ &)"}`}},
		{"fan-out last", "{ A: 1 | B: 2 }", "", nil, `{"A":"A(1)","B":"B(2)"}`, []string{"A:1", "B:2"}},
		{"err stops", "A: x > FAIL: y > C: z", "", nil, "ERR:boom", []string{"A:x", "FAIL:y"}},
		{"err in fan-out", "{ A: 1 | FAIL: 2 | FAIL2: 3 } > C: z", "", nil, "ERR:boom", []string{"A:1", "FAIL:2", "FAIL2:3"}},
		{"err in fan-out order", "{ FAIL2: 3 | FAIL: 2 } > C: z", "", nil, "ERR:boom2", []string{"FAIL2:3", "FAIL:2"}},
		{"bad step runs nothing", "A: x > oops > C: z", "", nil, "ERR:flow:bad_step:oops", nil},
		{"join spreads an array", "A: $1[|] > B: $1[,]", `["x","y"]`, nil, "B(x,y)", []string{"A:x|y", "B:x,y"}},
		{"bad join runs nothing", "A: x > B: $1[,]", `{"a":1}`, nil,
			"ERR:flow:bad_args:argument 1 is a JSON object; $1[,] takes a JSON array of strings, numbers or booleans, or one plain value", nil},
		{"bad join in a branch runs nothing", "A: x > { B: 1 | C: $1[,] }", `[{"a":1}]`, nil,
			"ERR:flow:bad_args:argument 1 is a JSON array whose item 1 is an object; $1[,] takes a JSON array of strings, numbers or booleans, or one plain value", nil},
		{"empty", "# only docs\n", "", nil, "ERR:flow:empty", nil},
		{"too many", steps(65), "", nil, "ERR:flow:too_many_steps:65>64", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fake{reply: map[string]func(string) rowcall.Output{
				"FAIL":        failure("boom"),
				"FAIL2":       failure("boom2"),
				"WEATHER":     answer(weather),
				"HTTPWEATHER": answer("HTTP 200:" + weather),
			}}
			inv := invocation(tt.content, tt.body, f)
			inv.Vars = tt.vars
			out := Runner{}.Run(context.Background(), inv)
			if out.Result != tt.want {
				t.Errorf("result = %s\n          want %s", out.Result, tt.want)
			}
			slices.Sort(f.calls) // branches run in any order
			want := slices.Clone(tt.calls)
			slices.Sort(want)
			if !slices.Equal(f.calls, want) {
				t.Errorf("calls = %q\n want %q", f.calls, want)
			}
		})
	}
}

func TestRunOutput(t *testing.T) {
	f := &fake{reply: map[string]func(string) rowcall.Output{
		"S": func(string) rowcall.Output { return rowcall.Output{Result: "s", Secrets: []string{"k1"}, CostUSD: 0.5} },
	}}
	out := Runner{}.Run(context.Background(), invocation("S: 1 > { A: 2 | B: 3 }", "", f))
	if !out.Material || out.CostUSD != 1 || out.Status != 0 || !slices.Equal(out.Secrets, []string{"k1"}) {
		t.Errorf("output = %+v, want material, cost 1, status 0, secrets [k1]", out)
	}
	out = Runner{}.Run(context.Background(), invocation("S: 1", "", f))
	if out.Material || out.Result != "s" {
		t.Errorf("output = %+v, want not material (no step was)", out)
	}
}

// TestRunConcurrent proves a block's branches run at the same time: each
// waits at a barrier that opens only once both have started.
func TestRunConcurrent(t *testing.T) {
	var started sync.WaitGroup
	started.Add(2)
	open := make(chan struct{})
	go func() { started.Wait(); close(open) }()
	wait := func(body string) rowcall.Output {
		started.Done()
		select {
		case <-open:
			return rowcall.Output{Result: body}
		case <-time.After(5 * time.Second):
			return rowcall.Fail("", "not concurrent").Output()
		}
	}
	f := &fake{reply: map[string]func(string) rowcall.Output{"A": wait, "B": wait}}
	out := Runner{}.Run(context.Background(), invocation("{ A: a | B: b }", "", f))
	if out.Result != `{"A":"a","B":"b"}` {
		t.Errorf("result = %s", out.Result)
	}
}

func TestRunDepth(t *testing.T) {
	f := &fake{}
	inv := invocation("A: x", "", f)
	inv.Depth = rowcall.MaxDepth
	out := Runner{}.Run(context.Background(), inv)
	want := "ERR:flow:depth_exceeded:8 — flows nest at most 8 deep; check for a flow that calls itself"
	if out.Result != want || len(f.calls) != 0 {
		t.Errorf("depth %d: result %q, calls %q; want %q, none", inv.Depth, out.Result, f.calls, want)
	}
	inv.Depth = rowcall.MaxDepth - 1
	if out := (Runner{}).Run(context.Background(), inv); out.Result != "A(x)" {
		t.Errorf("depth %d: result %q", inv.Depth, out.Result)
	}
}

// selfCaller runs every call as the same flow row, one level deeper.
type selfCaller struct{ calls int }

func (s *selfCaller) Call(ctx context.Context, parent *rowcall.Invocation, key, body string) rowcall.Output {
	s.calls++
	child := *parent
	child.Body, child.Args, child.Depth = body, args.Split(body), parent.Depth+1
	return Runner{}.Run(ctx, &child)
}

func TestRunSelfCallingFlowEnds(t *testing.T) {
	s := &selfCaller{}
	out := Runner{}.Run(context.Background(), invocation("LOOP: $1", "x", s))
	if !strings.HasPrefix(out.Result, "ERR:flow:depth_exceeded:8 ") || s.calls != rowcall.MaxDepth {
		t.Errorf("result %q after %d calls", out.Result, s.calls)
	}
}

func TestRunShape(t *testing.T) {
	f := &fake{}
	inv := invocation("A: $1 => R > { B: $R | C: $PREV.x } > D: done", "a", f)
	inv.Shape = true
	out := Runner{}.Run(context.Background(), inv)
	want := []Step{bound("A", "$1", "R"), par("", call("B", "$R"), call("C", "$PREV.x")), call("D", "done")}
	if out.Result != "SHAPE:flow:4 steps" || !reflect.DeepEqual(out.Plan, want) || out.Material || len(f.calls) != 0 {
		t.Errorf("shape: result %q plan %#v material %v calls %q", out.Result, out.Plan, out.Material, f.calls)
	}
}

func TestRunCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	f := &fake{reply: map[string]func(string) rowcall.Output{
		"A": func(string) rowcall.Output { cancel(); return rowcall.Output{Result: "a"} },
	}}
	out := Runner{}.Run(ctx, invocation("A: x > B: y", "", f))
	if out.Result != "ERR:flow:canceled:context canceled" || !slices.Equal(f.calls, []string{"A:x"}) {
		t.Errorf("result %q calls %q", out.Result, f.calls)
	}
}

func TestRunArgsFromBody(t *testing.T) {
	f := &fake{}
	inv := invocation("A: $2", "x|y", f)
	inv.Args = nil
	if out := (Runner{}).Run(context.Background(), inv); out.Result != "A(y)" {
		t.Errorf("result %q", out.Result)
	}
}

func TestRunBranchPanic(t *testing.T) {
	f := &fake{reply: map[string]func(string) rowcall.Output{
		"P": func(string) rowcall.Output { panic("caller bug") },
	}}
	defer func() {
		if p := recover(); p != "caller bug" {
			t.Errorf("recovered %v, want the branch's panic", p)
		}
	}()
	Runner{}.Run(context.Background(), invocation("{ A: 1 | P: 2 }", "", f))
	t.Error("no panic")
}

func TestRunNoCaller(t *testing.T) {
	if out := (Runner{}).Run(context.Background(), invocation("A: x", "", nil)); out.Result != "ERR:flow:no_caller" {
		t.Errorf("result %q", out.Result)
	}
}
