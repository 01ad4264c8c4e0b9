// Package typed checks a call against its row's input_schema before anything
// runs (beyond the seed, which has no types at the door).
//
// The rule: the call's pipe-separated arguments are mapped, in order, onto the
// schema's top-level "properties" in the order they are declared. An argument
// is read as the property's type says: "integer"/"number" from a decimal
// number, "boolean" from true/false, "object"/"array" from JSON text, anything
// else as the string it is (a value that does not convert stays a string, so
// the validator reports the type). A missing argument leaves its property out,
// so "required" catches it. When there are more arguments than properties and
// the last property is a string, it takes the rest with the pipes put back (the
// seed's $N+ rule); otherwise extras are discarded. The object is then validated
// with JSON Schema (github.com/google/jsonschema-go: draft 2020-12, or draft-07
// when the schema's "$schema" names it; the library the MCP SDK already uses),
// and a failing call is refused with the first failure, one line: where in the
// arguments ("at /latitude"), and what ("type: north has type "string", want
// "number"").
//
// A schema is checked against its draft's meta-schema when it is compiled
// (embedded in metaschema/, from the same library's repository), so a row
// cannot store a schema the validator would misread.
//
// Compile a row's input_schema once and Check each call's arguments against
// it. Schema.Join goes the other way, from named arguments (a JSON object) to
// the pipe-separated body, for MCP's tools.
package typed

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	lru "github.com/hashicorp/golang-lru/v2"
)

// Schema is a compiled input_schema with its properties in declared order.
type Schema struct {
	compiled *jsonschema.Resolved
	props    []property
	object   bool // "type" is absent or "object": the schema can take named arguments
}

type property struct {
	name  string
	types []string
}

// MaxCached is how many compiled schemas Compile keeps (schema text →
// *Schema), the least recently used dropped first: a directory's schemas stay
// compiled, and a stream of new or edited schemas cannot grow memory without
// bound.
const MaxCached = 1024

var cache = mustLRU(MaxCached)

func mustLRU(n int) *lru.Cache[string, *Schema] {
	c, err := lru.New[string, *Schema](n)
	if err != nil {
		panic(err)
	}
	return c
}

// Compile compiles an input_schema (cached by its text, at most MaxCached).
func Compile(text string) (*Schema, error) { return compile(text, "input_schema") }

// CompileOutput compiles a row's output_schema (the same cache; its errors
// name output_schema). Validate checks a result against it.
func CompileOutput(text string) (*Schema, error) { return compile(text, "output_schema") }

func compile(text, column string) (*Schema, error) {
	if s, ok := cache.Get(text); ok {
		return s, nil
	}
	var doc any
	if err := json.Unmarshal([]byte(text), &doc); err != nil {
		return nil, fmt.Errorf("%s is not JSON: %v", column, err)
	}
	if err := checkMeta(doc); err != nil {
		return nil, fmt.Errorf("%s is not a valid JSON Schema: %s", column, err)
	}
	var js jsonschema.Schema
	if err := json.Unmarshal([]byte(text), &js); err != nil {
		return nil, fmt.Errorf("%s is not a valid JSON Schema: %v", column, err)
	}
	compiled, err := js.Resolve(nil)
	if err != nil { // what the meta-schema cannot say: a pattern Go's regexp cannot compile, a $ref to nowhere
		return nil, fmt.Errorf("%s is not a valid JSON Schema: %s", column, strings.TrimPrefix(err.Error(), "jsonschema.Schema: <anonymous schema>: "))
	}
	props, object, err := properties(text, column)
	if err != nil {
		return nil, err
	}
	s := &Schema{compiled: compiled, props: props, object: object}
	cache.Add(text, s)
	return s, nil
}

// Check maps args onto the schema and validates them. The error is the
// validator's first failure, made one line (see flatten).
func (s *Schema) Check(args []string) error {
	// Round-trip through JSON so the instance is what the validator reads:
	// numbers as float64, objects as map[string]any.
	var inst any
	json.Unmarshal(s.Arguments(args), &inst)
	if err := s.compiled.Validate(inst); err != nil {
		return errors.New(flatten(err))
	}
	return nil
}

// Validate checks a JSON value (a result read as JSON) against the schema;
// the error is the validator's first failure, one line, as Check's.
func (s *Schema) Validate(value json.RawMessage) error {
	var inst any
	if err := json.Unmarshal(value, &inst); err != nil {
		return fmt.Errorf("at /: not JSON: %v", err)
	}
	if err := s.compiled.Validate(inst); err != nil {
		return errors.New(flatten(err))
	}
	return nil
}

// Arguments is the JSON object the rule (the package doc) maps args onto:
// what Check validates, and what an MCP upstream receives as a tool's
// arguments (runners/mcpcall).
func (s *Schema) Arguments(args []string) json.RawMessage {
	if len(args) == 1 && args[0] == "" {
		args = nil
	}
	obj := map[string]any{}
	for i, p := range s.props {
		if i >= len(args) {
			break
		}
		v := args[i]
		if i == len(s.props)-1 && len(args) > len(s.props) && p.is("string") {
			v = strings.Join(args[i:], "|")
		}
		obj[p.name] = p.convert(v)
	}
	b, _ := json.Marshal(obj)
	return b
}

func (p property) is(t string) bool {
	if len(p.types) == 0 {
		return t == "string"
	}
	for _, x := range p.types {
		if x == t {
			return true
		}
	}
	return false
}

func (p property) convert(v string) any {
	switch {
	case p.is("integer") || p.is("number"):
		if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
			return json.Number(strconv.FormatFloat(f, 'f', -1, 64))
		}
	case p.is("boolean"):
		if b, err := strconv.ParseBool(strings.TrimSpace(v)); err == nil {
			return b
		}
	case p.is("object") || p.is("array"):
		var x any
		if json.Unmarshal([]byte(v), &x) == nil {
			return json.RawMessage(v)
		}
	}
	return v
}

// properties reads the top-level "properties" keys in declared order, with
// their "type" (a string or a list), and whether the schema's own "type" is
// absent or "object".
func properties(text, column string) ([]property, bool, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal([]byte(text), &top); err != nil {
		return nil, false, fmt.Errorf("%s must be a JSON object: %v", column, err)
	}
	typ, ok := top["type"]
	object := !ok || string(bytes.TrimSpace(typ)) == `"object"`
	raw, ok := top["properties"]
	if !ok {
		return nil, object, nil
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return nil, false, fmt.Errorf("%s's properties must be an object", column)
	}
	var out []property
	for d.More() {
		t, err := d.Token()
		if err != nil {
			return nil, false, err
		}
		var def struct {
			Type any `json:"type"`
		}
		var body json.RawMessage
		if err := d.Decode(&body); err != nil {
			return nil, false, err
		}
		json.Unmarshal(body, &def)
		p := property{name: t.(string)}
		switch ty := def.Type.(type) {
		case string:
			p.types = []string{ty}
		case []any:
			for _, x := range ty {
				if s, ok := x.(string); ok {
					p.types = append(p.types, s)
				}
			}
		}
		out = append(out, p)
	}
	return out, object, nil
}

// The meta-schemas the validator reads (draft 2020-12 and draft-07), by URL.
//
//go:embed metaschema
var metaFS embed.FS

const (
	draft2020 = "https://json-schema.org/draft/2020-12/schema"
	draft7    = "http://json-schema.org/draft-07/schema#"
)

var metaFiles = map[string]string{ // URL prefix → directory in metaFS
	"https://json-schema.org/draft/2020-12/": "metaschema/draft2020-12/",
	"http://json-schema.org/draft-07/":       "metaschema/draft7/",
	"https://json-schema.org/draft-07/":      "metaschema/draft7/",
}

// metaSchemas are resolved on first use (not at init: the worker starts on
// a request, and most requests compile no schema).
var metaSchemas = sync.OnceValues(func() (map[string]*jsonschema.Resolved, error) {
	out := map[string]*jsonschema.Resolved{}
	for _, u := range []string{draft2020, draft7} {
		s, err := loadMeta(mustURL(u))
		if err != nil {
			return nil, err
		}
		r, err := s.Resolve(&jsonschema.ResolveOptions{Loader: loadMeta})
		if err != nil {
			return nil, err
		}
		out[u] = r
	}
	out["https://json-schema.org/draft-07/schema#"] = out[draft7]
	out[""] = out[draft2020]
	return out, nil
})

func mustURL(s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		panic(err)
	}
	return u
}

func loadMeta(u *url.URL) (*jsonschema.Schema, error) {
	full := u.String()
	for prefix, dir := range metaFiles {
		if rest, ok := strings.CutPrefix(full, prefix); ok {
			b, err := metaFS.ReadFile(dir + strings.TrimSuffix(rest, "#") + ".json")
			if err != nil {
				break
			}
			var s jsonschema.Schema
			if err := json.Unmarshal(b, &s); err != nil {
				return nil, err
			}
			return &s, nil
		}
	}
	return nil, fmt.Errorf("%s is not a meta-schema rowcall knows", full)
}

// checkMeta validates a schema document against its draft's meta-schema. A
// failure is reported at its place in the document: the meta-schema checks
// every subschema against itself, so the innermost subschema that fails on
// its own is where the mistake is ("at /properties/a/type: …").
func checkMeta(doc any) error {
	metas, err := metaSchemas()
	if err != nil {
		return err
	}
	var draft string
	if m, ok := doc.(map[string]any); ok {
		if d, ok := m["$schema"].(string); ok {
			draft = d
		}
	}
	meta, ok := metas[draft]
	if !ok {
		return fmt.Errorf("$schema %q is not a draft rowcall validates: use %s (the default when $schema is absent) or %s", draft, draft2020, draft7)
	}
	if meta.Validate(doc) == nil {
		return nil
	}
	at, doc := innermost(meta, "", doc)
	where, what := describe(meta.Validate(doc))
	loc := instanceLocation(where)
	if at != "" && loc == "/" {
		loc = at
	} else if at != "" {
		loc = at + loc
	}
	return fmt.Errorf("at %s: %s", strings.Replace(loc, "(schema ", "(meta-schema ", 1), what)
}

// innermost descends from a subschema that fails the meta-schema into the
// first of its own subschemas that fails it too, as far as that goes.
func innermost(meta *jsonschema.Resolved, at string, doc any) (string, any) {
	m, ok := doc.(map[string]any)
	if !ok {
		return at, doc
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		for _, c := range subschemas(k, m[k]) {
			if meta.Validate(c.doc) != nil {
				return innermost(meta, at+"/"+escape(k)+c.at, c.doc)
			}
		}
	}
	return at, doc
}

type sub struct {
	at  string
	doc any
}

// subschemas are the schemas a keyword's value holds (draft 2020-12 and
// draft-07 keywords).
func subschemas(keyword string, v any) []sub {
	var out []sub
	switch keyword {
	case "items", "additionalItems", "additionalProperties", "not", "if", "then", "else", "contains",
		"propertyNames", "unevaluatedItems", "unevaluatedProperties":
		if l, ok := v.([]any); ok && keyword == "items" { // draft-07's tuple form
			for i, x := range l {
				out = append(out, sub{"/" + strconv.Itoa(i), x})
			}
		} else {
			out = append(out, sub{"", v})
		}
	case "allOf", "anyOf", "oneOf", "prefixItems":
		l, _ := v.([]any)
		for i, x := range l {
			out = append(out, sub{"/" + strconv.Itoa(i), x})
		}
	case "properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies":
		m, _ := v.(map[string]any)
		names := make([]string, 0, len(m))
		for k := range m {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			if _, isList := m[k].([]any); !isList { // draft-07 dependencies may be a list of names
				out = append(out, sub{"/" + escape(k), m[k]})
			}
		}
	}
	return out
}

// escape makes a name one JSON Pointer token (RFC 6901).
func escape(name string) string {
	return strings.ReplaceAll(strings.ReplaceAll(name, "~", "~0"), "/", "~1")
}

// flatten makes a validation error one line: where the first failure is in
// the instance ("at /latitude", "at /" for the whole object), then what failed
// ("type: north has type "string", want "number""). The validator wraps its
// failure in one "validating <schema location>" per schema it descended into;
// the innermost location is read off that chain, and while it is a path of
// "properties" it names the instance location too. Past anything else (items,
// $ref, allOf, …) the schema location is added in parentheses.
func flatten(err error) string {
	where, what := describe(err)
	return "at " + instanceLocation(where) + ": " + what
}

// describe splits a validation error into the innermost schema location the
// validator names and the failure there.
func describe(err error) (where, what string) {
	where = "root"
	leaf := err
	for e := err; e != nil; e = errors.Unwrap(e) {
		inner := errors.Unwrap(e)
		if inner == nil {
			leaf = e
			break
		}
		if loc, ok := strings.CutPrefix(strings.TrimSuffix(e.Error(), ": "+inner.Error()), "validating "); ok {
			where = loc
		}
	}
	return where, failure(leaf.Error())
}

// failure's patterns, compiled on the first failure (not at package init:
// every process that links typed, the worker's first request among them,
// would pay for them before anything failed).
var (
	patternsOnce             sync.Once
	validating, anyOf, bound *regexp.Regexp
)

func patterns() {
	patternsOnce.Do(func() {
		validating = regexp.MustCompile(`(validating \S+: )+`)
		anyOf = regexp.MustCompile(`^anyOf: did not validate against any of \[[^\]]*\]:\s*`)
		bound = regexp.MustCompile(`^(minimum|maximum|exclusiveMinimum|exclusiveMaximum|multipleOf): (-?\d+/\d+) (.*) (-?\d+\.\d+)$`)
	})
}

// failure is the validator's message for one keyword, made one line and
// plain: anyOf's alternatives joined by "; ", numbers in decimal (the
// validator prints the value as a fraction and the bound with six places).
func failure(msg string) string {
	patterns()
	if anyOf.MatchString(msg) {
		alts := strings.Split(strings.TrimSpace(anyOf.ReplaceAllString(msg, "")), "\n")
		for i := range alts {
			alts[i] = validating.ReplaceAllString(strings.TrimSpace(alts[i]), "")
		}
		return fmt.Sprintf("anyOf: none of its %d schemas matched: %s", len(alts), strings.Join(alts, "; "))
	}
	if m := bound.FindStringSubmatch(msg); m != nil {
		if r, ok := new(big.Rat).SetString(m[2]); ok {
			f, _ := r.Float64()
			b, _ := strconv.ParseFloat(m[4], 64)
			return m[1] + ": " + strconv.FormatFloat(f, 'g', -1, 64) + " " + m[3] + " " + strconv.FormatFloat(b, 'g', -1, 64)
		}
	}
	return strings.Join(strings.Fields(msg), " ")
}

// instanceLocation turns a schema location from the validator ("root",
// "/properties/a/properties/b", "/properties/l/items", an $id) into the
// instance location it checks ("/", "/a/b", "/l (schema /properties/l/items)").
func instanceLocation(schema string) string {
	if schema == "root" {
		return "/"
	}
	if !strings.HasPrefix(schema, "/") {
		return "/ (schema " + schema + ")"
	}
	segs := strings.Split(schema[1:], "/")
	var at strings.Builder
	i := 0
	for ; i+1 < len(segs) && segs[i] == "properties"; i += 2 {
		at.WriteString("/" + segs[i+1])
	}
	out := at.String()
	if out == "" {
		out = "/"
	}
	if i < len(segs) {
		out += " (schema " + schema + ")"
	}
	return out
}
