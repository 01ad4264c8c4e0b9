package flow

import (
	"fmt"
	"strings"

	"github.com/rowcall/rowcall"
)

// Step is one step of a parsed flow: a call of row Key with the body template
// Body, or a fan-out block whose branches (each a call) are in Parallel. Bind
// is the NAME of a trailing "=> NAME", or "".
type Step struct {
	Key      string `json:"key,omitempty"`
	Body     string `json:"body,omitempty"`
	Bind     string `json:"bind,omitempty"`
	Parallel []Step `json:"parallel,omitempty"`
}

// Count is how many calls s makes: 1, or one per branch of a block.
func (s Step) Count() int {
	if s.Parallel != nil {
		return len(s.Parallel)
	}
	return 1
}

// Error is a flow that cannot run; its Failure is the flow's result.
type Error struct {
	Code   string // empty, bad_step, duplicate_branch, too_many_steps, depth_exceeded
	Detail string
}

func (e *Error) Error() string {
	if e.Detail == "" {
		return "flow:" + e.Code
	}
	return "flow:" + e.Code + ":" + e.Detail
}

// Failure is e as the flow's failure: ERR:flow:<code>[:<detail>].
func (e *Error) Failure() *rowcall.Failure {
	if e.Detail == "" {
		return rowcall.Fail("flow", e.Code)
	}
	return rowcall.Fail("flow", e.Code, e.Detail)
}

// Parse reads a flow payload (content without its '#' lines) into steps. It
// checks the whole flow, so nothing runs when any part of it is wrong.
func Parse(payload string) ([]Step, error) {
	payload = strings.TrimSpace(payload)
	if payload == "" {
		return nil, &Error{Code: "empty"}
	}
	var steps []Step
	n := 0
	for _, text := range split(payload, isStepSep) {
		st, err := parseStep(text)
		if err != nil {
			return nil, err
		}
		steps = append(steps, st)
		n += st.Count()
	}
	if n > MaxSteps {
		return nil, &Error{Code: "too_many_steps", Detail: fmt.Sprintf("%d>%d", n, MaxSteps)}
	}
	return steps, nil
}

func parseStep(text string) (Step, error) {
	text = strings.TrimSpace(text)
	body, bind := cutBind(text)
	if strings.HasPrefix(body, "{") {
		return parseBlock(text, body, bind)
	}
	st, ok := parseCall(body)
	if !ok {
		return Step{}, badStep(text)
	}
	st.Bind = bind
	return st, nil
}

// parseBlock reads "{ A: x | B: y }" (body) whose full step text is text.
func parseBlock(text, body, bind string) (Step, error) {
	if closing(body) != len(body)-1 {
		return Step{}, badStep(text)
	}
	st := Step{Bind: bind, Parallel: []Step{}}
	seen := map[string]bool{}
	for _, b := range split(body[1:len(body)-1], isBranchSep) {
		b = strings.TrimSpace(b)
		call, bbind := cutBind(b)
		br, ok := parseCall(call)
		if !ok {
			return Step{}, badStep(b)
		}
		br.Bind = bbind
		name := br.output()
		if seen[name] {
			return Step{}, &Error{Code: "duplicate_branch", Detail: name}
		}
		seen[name] = true
		st.Parallel = append(st.Parallel, br)
	}
	return st, nil
}

// output is the name a branch's result has in its block's JSON object.
func (s Step) output() string {
	if s.Bind != "" {
		return s.Bind
	}
	return s.Key
}

// parseCall reads "KEY: body".
func parseCall(text string) (Step, bool) {
	key, body, ok := strings.Cut(text, ":")
	key = strings.TrimSpace(key)
	if !ok || !rowcall.ValidKey(key) {
		return Step{}, false
	}
	return Step{Key: key, Body: strings.TrimSpace(body)}, true
}

// cutBind splits a trailing "=> NAME" off a step.
func cutBind(text string) (step, name string) {
	i := strings.LastIndex(text, "=>")
	if i < 0 {
		return text, ""
	}
	name = strings.TrimSpace(text[i+2:])
	if !validName(name) {
		return text, ""
	}
	return strings.TrimSpace(text[:i]), name
}

func badStep(text string) error {
	if text == "" {
		text = "(empty step)"
	}
	return &Error{Code: "bad_step", Detail: text}
}

func validName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '_' && !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || i > 0 && '0' <= c && c <= '9') {
			return false
		}
	}
	return s != ""
}
