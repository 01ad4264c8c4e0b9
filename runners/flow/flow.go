// Package flow runs flow rows: a row whose content chains other rows.
//
// # Grammar
//
// The payload (content without its '#' lines) is a list of steps separated by
// '>'. A step is
//
//	KEY: body            call row KEY with the rendered body
//	KEY: body => NAME    the same, and bind its output to $NAME for later steps
//	{ A: x | B: y }      call A and B concurrently (a fan-out block)
//	{ … } => NAME        the same, and bind the block's output to $NAME
//
// The seed's BLOOIO_FINISH is
//
//	LAST_REPLY_OF: $1
//	> SEND_BY_CHANNEL: blooio|$2|$PREV
//
// Step separator. A '>' separates steps when it is the first non-blank
// character of its line, or when it has whitespace on both sides ("a > b").
// "=>", "->", ">=" and "a>b" never separate. A '>' inside brackets ({…} or
// […], so inside a fan-out block or a JSON body) or inside a double-quoted
// string does not separate either. A double-quoted string ends at its closing
// quote (backslash escapes honoured) or at the end of its line, so a stray '"'
// in a text body only shields the rest of its own line. Brackets are counted
// in text bodies too: an unmatched '{' hides every later '>'.
//
// Key and body. The key is the text before the first ':' and must be a row
// key (rowcall.KeyRule); the body is the text after it, trimmed, and may span
// lines. A step with no ':' or with a key that breaks the key rule is
// ERR:flow:bad_step:<step text>; so is an empty step (a leading, trailing or
// doubled '>'), reported as ERR:flow:bad_step:(empty step).
//
// Bindings. A step whose text ends with "=> NAME" (NAME being
// [A-Za-z_][A-Za-z0-9_]*) binds its output to $NAME; an "=>" followed by
// anything else is part of the body.
//
// Fan-out. A step that starts with '{' is a block and must end with the
// matching '}'. Inside it, a '|' starts a new branch only when it is followed
// by optional whitespace, a row key, ':' and whitespace (or the block's end):
// "{ A: x|y | B: z }" is two branches, A with body "x|y" and B with body "z",
// and "A: GET|https://h" keeps its pipe. So write branches as "| KEY: body",
// with a blank after the colon. A branch is a single call (blocks do not
// nest) and may end with its own "=> NAME".
//
// # Running
//
// Every step's body is rendered with args.Render in Raw mode against the
// flow's own arguments ($1…, $N+) and its named values: the invocation's Vars,
// then $PREV and the bindings made so far (so $PREV in the first step is what
// the invocation's Vars say, and otherwise stays literal). $PREV.path and
// $NAME.path pick fields out of JSON outputs, and out of the JSON body of an
// http step's "HTTP <status>:<body>" (args' package doc has the rule). The
// rendered body is run with inv.Calls.Call, and the step's result becomes
// $PREV for the next step. The flow's result is the last step's result.
//
// A block renders all its branch bodies first (all see the same $PREV), runs
// every branch in its own goroutine, and waits for all of them. Its output is
// a JSON object whose keys are the branches' names (the "=> NAME" if given,
// else the key), in written order, and whose values are the branches' result
// strings: {"A":"…","B":"…"}. Two branches with the same name are
// ERR:flow:duplicate_branch:<name>. That object becomes $PREV ($PREV.A picks
// A's result) and each branch's "=> NAME" is bound to its own result.
//
// Stopping. A step that fails (its Output.Fail) ends the flow with that
// failure; later steps are not called. In a block, every branch finishes and
// the first failed branch in written order gives the result. A canceled
// context ends the flow before its next step with ERR:flow:canceled:<reason>.
//
// Bounds, checked before anything runs: an invocation at Depth rowcall.MaxDepth or
// deeper is ERR:flow:depth_exceeded:<depth> — flows nest at most 8 deep; check
// for a flow that calls itself. More than MaxSteps calls (each branch counts)
// is ERR:flow:too_many_steps:<n>>64. An empty payload is ERR:flow:empty. A
// step or branch body whose join reference ($N[sep]) args.Check refuses is
// ERR:flow:bad_args:<why> (join references read only the flow's own
// arguments, the same for every step), and no step runs.
//
// Shape mode runs nothing: Output.Plan is the parsed []Step and the result is
// "SHAPE:flow:<n> steps", n counting branches.
//
// Output. Material is true when any step's output was material, CostUSD is
// the steps' sum, Secrets collects the steps' secrets, and Status is 0.
package flow

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/args"
	"github.com/rowcall/rowcall/internal/jsontext"
)

// The bounds on a flow.
const (
	MaxSteps = 64 // calls in one flow, each branch of a block counted
)

// Runner runs flow rows. The zero value is ready to use.
type Runner struct{}

var _ rowcall.Runner = Runner{}

// Run parses the flow and runs its steps through inv.Calls.
func (Runner) Run(ctx context.Context, inv *rowcall.Invocation) rowcall.Output {
	if inv.Depth >= rowcall.MaxDepth { // nesting: a flow at this Depth or deeper refuses to run
		return rowcall.Fail("flow", "depth_exceeded", strconv.Itoa(inv.Depth)).
			Because(fmt.Sprintf("flows nest at most %d deep; check for a flow that calls itself", rowcall.MaxDepth)).Output()
	}
	steps, err := Parse(inv.Row.Payload())
	if err != nil {
		var fe *Error
		if !errors.As(err, &fe) {
			fe = &Error{Code: "bad_step", Detail: err.Error()}
		}
		return fe.Failure().Output()
	}
	if inv.Shape {
		n := 0
		for _, s := range steps {
			n += s.Count()
		}
		return rowcall.Output{Result: fmt.Sprintf("SHAPE:flow:%d steps", n), Plan: steps}
	}
	if inv.Calls == nil {
		return rowcall.Fail("flow", "no_caller").Output()
	}
	ctx, progress := rowcall.TakeProgress(ctx)
	r := newRun(ctx, inv)
	if err := r.check(steps); err != nil {
		return rowcall.Fail("flow", "bad_args", err.Error()).Output()
	}
	for i, s := range steps {
		if err := ctx.Err(); err != nil {
			r.out.Fails(rowcall.Fail("flow", "canceled", err.Error()))
			break
		}
		if s.Parallel != nil {
			r.block(s)
		} else {
			r.step(s)
		}
		if r.out.Failed() {
			break
		}
		progress(float64(i+1), float64(len(steps)), fmt.Sprintf("step %d of %d done", i+1, len(steps)))
	}
	return r.out
}

// run is one execution of a flow.
type run struct {
	ctx  context.Context
	inv  *rowcall.Invocation
	args []string
	vars map[string]string
	out  rowcall.Output // Result is the latest step's result
}

func newRun(ctx context.Context, inv *rowcall.Invocation) *run {
	r := &run{ctx: ctx, inv: inv, args: inv.Args, vars: make(map[string]string, len(inv.Vars)+2)}
	if r.args == nil {
		r.args = args.Split(inv.Body)
	}
	for k, v := range inv.Vars {
		r.vars[k] = v
	}
	return r
}

// check is args.Check of every step's and branch's body.
func (r *run) check(steps []Step) error {
	v := args.Values{Args: r.args, Vars: r.vars}
	for _, s := range steps {
		if err := args.Check(s.Body, v); err != nil {
			return err
		}
		if err := r.check(s.Parallel); err != nil {
			return err
		}
	}
	return nil
}

func (r *run) render(body string) string {
	return args.Render(body, args.Raw, args.Values{Args: r.args, Vars: r.vars})
}

// add counts a step's output into the flow's.
func (r *run) add(o rowcall.Output) {
	r.out.Material = r.out.Material || o.Material
	r.out.CostUSD += o.CostUSD
	r.out.Secrets = append(r.out.Secrets, o.Secrets...)
}

// done records a step's result: it becomes $PREV and its binding.
func (r *run) done(result, bind string) {
	r.out.Result = result
	r.vars["PREV"] = result
	if bind != "" {
		r.vars[bind] = result
	}
}

func (r *run) step(s Step) {
	o := r.inv.Calls.Call(r.ctx, r.inv, s.Key, r.render(s.Body))
	r.add(o)
	if o.Failed() {
		r.out.Result, r.out.Fail = o.Result, o.Fail
		return
	}
	r.done(o.Result, s.Bind)
}

func (r *run) block(s Step) {
	bodies := make([]string, len(s.Parallel))
	for i, b := range s.Parallel {
		bodies[i] = r.render(b.Body)
	}
	outs := make([]rowcall.Output, len(s.Parallel))
	var (
		wg       sync.WaitGroup
		once     sync.Once
		panicked any
	)
	for i, b := range s.Parallel {
		wg.Go(func() {
			defer func() { // re-raised below, on the caller's goroutine
				if p := recover(); p != nil {
					once.Do(func() { panicked = p })
				}
			}()
			outs[i] = r.inv.Calls.Call(r.ctx, r.inv, b.Key, bodies[i])
		})
	}
	wg.Wait()
	if panicked != nil {
		panic(panicked)
	}
	for _, o := range outs {
		r.add(o)
	}
	for _, o := range outs {
		if o.Failed() {
			r.out.Result, r.out.Fail = o.Result, o.Fail
			return
		}
	}
	var obj strings.Builder
	obj.WriteByte('{')
	for i, b := range s.Parallel {
		if i > 0 {
			obj.WriteByte(',')
		}
		jsontext.Write(&obj, b.output())
		obj.WriteByte(':')
		jsontext.Write(&obj, outs[i].Result)
		if b.Bind != "" {
			r.vars[b.Bind] = outs[i].Result
		}
	}
	obj.WriteByte('}')
	r.done(obj.String(), s.Bind)
}
