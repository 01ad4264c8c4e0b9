// Package openapi turns an OpenAPI 3.0/3.1 document (JSON or YAML) into http
// rows, one per operation, for `rowcall import openapi` and POST
// /api/import/openapi. Parsing and local $ref resolution are
// github.com/getkin/kin-openapi's; a $ref to another file or URL is refused.
//
//	res, err := openapi.Convert(doc, openapi.Options{Prefix: "GH_", Auth: "bearer:GH_TOKEN"})
//	for _, row := range res.Rows { … }      // each passes the directory's Check
//
// One operation becomes one row:
//
//   - key: the operationId (else METHOD_path) in the directory's convention
//     (importdoc.Key: camelCase split, anything but letters and digits made
//     '_', uppercase), Options.Prefix in front, at most 128 characters; a key
//     taken by an earlier operation gets _2, _3….
//   - target: "METHOD server+path", the first server of the operation, path
//     or document (variables at their defaults; Options.Server instead when
//     set, and needed when the document names none or a relative one), each
//     {param} of the path a $N slot and each query parameter a name=$N pair;
//     an array parameter's slot is a join reference that spreads a JSON
//     array argument as its style and explode say (package args): query
//     status=$N[&status=] (form, exploded: status=a&status=b, the default),
//     status=$N[,] (not exploded), $N[%20] (spaceDelimited), $N[%7C]
//     (pipeDelimited); path $N[,] (simple). Swagger 2.0 is not read, so
//     collectionFormat has no part; label and matrix path styles are written
//     as simple.
//   - input_schema: one property per path parameter (in path order), query
//     parameter (in declared order) and top-level property of a JSON or form
//     request body (a body of any other shape is one property, "body"), so
//     the pipe order is the schema's; a name taken twice gets "query_" or
//     "body_" in front. Property schemas are kept shallow (type, format,
//     enum, description, default, items' type) so rows stay small; an
//     optional property that is not a plain string also accepts "", the empty
//     argument a positional call gives for a skipped one. Header and cookie
//     parameters are not carried (a row sets headers only through auth).
//   - output_schema: the JSON schema of the operation's first 2xx response
//     (200 before 201 …, then 2XX) when it is an object: its top-level
//     properties with their types (null added where the document allows it),
//     an array's items' type, the required list and descriptions, at most
//     MaxOutputProperties properties and MaxOutputSchema bytes; no enum or
//     format, so a value the document did not foresee is not refused. A
//     response of any other shape (an array, text) declares none.
//   - content: the docstring (# WHAT from summary, else description, else
//     METHOD path; # WHEN_TO_USE from the description; # ARGS naming every
//     $N; # EX with sample arguments) and then the body template: a JSON
//     object whose string properties are "$N" and others $N, a form body
//     name=$N&…, or the single reference $N.
//   - sensitive: 1 for DELETE, and for any other method but GET, HEAD and
//     OPTIONS that carries x-rowcall-sensitive: true or x-sensitive: true.
//   - auth: Options.Auth, as it is (the directory checks it), else none.
//   - category: Options.Category, else the operation's first tag.
//
// A document is untrusted input, so every row targets the server the
// importer chose: Options.Server, else the document's own (its top-level
// servers; an operation's or path's server is used only on that origin, and
// the operation is skipped otherwise). Result.Server is that choice and
// Result.Source the import id its rows record ("openapi:" and its origin),
// which the directory uses to never replace a row this import did not make
// (rowcall.ImportMayReplace).
//
// x-rowcall on an operation (what GET /api/openapi.json writes) is ignored
// unless Options.TrustExtensions: then the operation is imported as the row
// in it, so your own export imports as the rows it was made from; Options
// still add the prefix and replace a category or auth that is set. Even then
// the row must be an http row (else a type in AllowTypes), target the
// server's origin (else one in AllowOrigins), and its auth must not read the
// owner key (unless AllowOwnerAuth) nor fetch an OAuth token from another
// origin. A row beyond these bounds fails the whole conversion with an error
// naming it and the option that would allow it.
package openapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/api"
	"github.com/rowcall/rowcall/internal/importdoc"
	"github.com/rowcall/rowcall/internal/redact"
)

// Options are what `rowcall import openapi` takes besides the document.
type Options struct {
	Prefix   string // put before every key, e.g. STRIPE_
	Category string // every row's category (else the operation's first tag)
	Auth     string // every row's auth spec, e.g. bearer:STRIPE_KEY; "" is none
	Server   string // the base URL of every target, instead of the document's servers

	TrustExtensions bool     // import an operation's x-rowcall as its row (your own export)
	AllowOrigins    []string // with TrustExtensions: origins besides the server's an x-rowcall target may name ("" entries ignored)
	AllowTypes      []string // with TrustExtensions: row types besides http an x-rowcall row may have ("" entries ignored)
	AllowOwnerAuth  bool     // with TrustExtensions: an x-rowcall auth may read the owner key
}

// Result is a converted document.
type Result struct {
	Title   string
	Rows    []rowcall.Row
	Skipped []string // operations not imported, each "METHOD path: why"
	Server  string   // the base URL the rows target: Options.Server, else the document's
	Source  string   // the import id the rows record: "openapi:" and Server's origin
}

// Import is Convert as POST /api/import/openapi takes it (api.Config.OpenAPI).
func Import(doc []byte, o api.OpenAPIOptions) (api.OpenAPIResult, error) {
	res, err := Convert(doc, Options(o))
	return api.OpenAPIResult{Rows: res.Rows, Skipped: res.Skipped, Server: res.Server, Source: res.Source}, err
}

// methods is the order operations are read in, for a stable key order.
var methods = []string{"GET", "PUT", "POST", "DELETE", "OPTIONS", "HEAD", "PATCH", "TRACE"}

// Convert reads an OpenAPI document and returns one row per operation, in
// path then method order. An error means the document could not be read (not
// OpenAPI 3, malformed, an unresolvable or external $ref, no usable server).
func Convert(doc []byte, o Options) (Result, error) {
	loader := openapi3.NewLoader()
	loader.IsExternalRefsAllowed = false
	d, err := loader.LoadFromData(doc)
	if err != nil {
		return Result{}, fmt.Errorf("not a readable OpenAPI document: %v", err)
	}
	if !strings.HasPrefix(d.OpenAPI, "3.") {
		return Result{}, fmt.Errorf(`not an OpenAPI 3 document ("openapi": %q); convert Swagger 2.0 first`, d.OpenAPI)
	}
	if o.Server != "" && rowcall.URLOrigin(o.Server) == "" {
		return Result{}, fmt.Errorf("the server %q is not an absolute http(s) URL with a plain host; give the base URL, e.g. --server https://api.example.com/v1", o.Server)
	}
	b := bounds{o: o}
	for _, a := range o.AllowOrigins {
		if a = strings.TrimSpace(a); a == "" {
			continue
		}
		org := rowcall.URLOrigin(a)
		if org == "" {
			return Result{}, fmt.Errorf("the allowed origin %q is not an absolute http(s) URL with a plain host, e.g. https://api.example.com", a)
		}
		b.origins = append(b.origins, org)
	}
	for _, t := range o.AllowTypes {
		b.types = append(b.types, strings.TrimSpace(t))
	}
	res := Result{Server: o.Server}
	if res.Server == "" {
		res.Server = docServer(d)
	}
	if b.origin = rowcall.URLOrigin(res.Server); b.origin != "" {
		res.Source = "openapi:" + b.origin
	}
	if d.Info != nil {
		res.Title = d.Info.Title
	}
	if d.Paths == nil {
		return res, nil
	}
	var beyond []string
	taken := map[string]bool{}
	pm := d.Paths.Map()
	for _, path := range sortedKeys(pm) {
		item := pm[path]
		for _, m := range methods {
			op := item.GetOperation(m)
			if op == nil {
				continue
			}
			row, ext, err := convertOp(d, path, item, m, op, o, b.origin)
			if err != nil {
				res.Skipped = append(res.Skipped, m+" "+path+": "+err.Error())
				continue
			}
			if why := b.check(&row, ext); why != "" {
				beyond = append(beyond, m+" "+path+" ("+row.Key+"): "+why)
				continue
			}
			row.Key = unique(row.Key, taken)
			res.Rows = append(res.Rows, row)
		}
	}
	if len(beyond) > 0 {
		return Result{}, fmt.Errorf("%d operations would make rows beyond what this import allows, so none is imported: %s", len(beyond), strings.Join(beyond, "; "))
	}
	return res, nil
}

// bounds are what a row made from a document may be: an http row on the
// server's origin whose auth is exactly Options.Auth; with TrustExtensions an
// x-rowcall row may keep its own auth (not the owner key, unless
// AllowOwnerAuth) and have a type in AllowTypes or a target on an origin in
// AllowOrigins.
type bounds struct {
	o       Options
	origin  string   // the server's
	origins []string // AllowOrigins, as origins
	types   []string // AllowTypes, trimmed
}

// check is why row is beyond the bounds, or "". ext says it came from
// x-rowcall.
func (b bounds) check(row *rowcall.Row, ext bool) string {
	if row.Type != rowcall.TypeHTTP && !(ext && slices.Contains(b.types, string(row.Type))) {
		return fmt.Sprintf("x-rowcall makes a %s row; an import makes http rows only (allow the type with --allow-types %s)", row.Type, row.Type)
	}
	if row.Type == rowcall.TypeHTTP {
		if why := b.reach("its target", row.Origin(), row.Target, ext); why != "" {
			return why
		}
	}
	if !ext || b.o.Auth != "" {
		if row.Auth != b.o.Auth {
			return fmt.Sprintf("its auth %q is not the import's (%q)", row.Auth, b.o.Auth)
		}
		return ""
	}
	if row.OwnerOnly() && !b.o.AllowOwnerAuth {
		return fmt.Sprintf("x-rowcall's auth %q reads the owner key %s (give --auth, or allow it with --allow-owner-auth)", row.Auth, rowcall.OwnerEnv)
	}
	if a, err := rowcall.ParseAuth(row.Auth); err == nil && a.OAuth != nil {
		return b.reach("its OAuth token_url", rowcall.URLOrigin(a.OAuth.TokenURL), a.OAuth.TokenURL, ext)
	}
	return ""
}

// reach is why what (a URL, origin its origin) is not on the server's
// origin, nor, for an x-rowcall row, on an allowed one; or "".
func (b bounds) reach(what, origin, text string, ext bool) string {
	switch {
	case origin == "":
		return fmt.Sprintf("%s %q names no fixed http(s) origin", what, text)
	case origin == b.origin || (ext && slices.Contains(b.origins, origin)):
		return ""
	case ext:
		return fmt.Sprintf("%s is on %s, not on the import's server %s (choose that server with --server, or allow the origin with --allow-origins %s)", what, origin, b.origin, origin)
	}
	return fmt.Sprintf("%s is on %s, not on the import's server %s", what, origin, b.origin)
}

// slot is one input_schema property and where its argument lands.
type slot struct {
	name     string
	in       string // path, query, body
	wire     string // its name on the wire
	schema   map[string]any
	required bool
	desc     string
	sep      string // an array parameter's join separator: its slot is $N[sep]
}

// convertOp is one operation's row, and whether it came from x-rowcall.
func convertOp(d *openapi3.T, path string, item *openapi3.PathItem, method string, op *openapi3.Operation, o Options, origin string) (rowcall.Row, bool, error) {
	if x, ok := op.Extensions["x-rowcall"]; ok && o.TrustExtensions {
		row, err := fromExtension(x, o)
		return row, true, err
	}
	base, err := server(d, item, op, o.Server, origin)
	if err != nil {
		return rowcall.Row{}, false, err
	}
	row, err := opRow(path, method, op, parameters(item, op), base, o)
	return row, false, err
}

// opRow is an operation's row, its targets on base.
func opRow(path, method string, op *openapi3.Operation, params paramList, base string, o Options) (rowcall.Row, error) {
	var slots []slot
	names := map[string]bool{}
	add := func(s slot) {
		if names[s.name] {
			s.name = s.in + "_" + s.name
		}
		for names[s.name] {
			s.name += "_"
		}
		names[s.name] = true
		slots = append(slots, s)
	}
	// Path parameters in the order the path names them.
	for _, name := range pathParams(path) {
		p := params.find("path", name)
		s := slot{name: name, in: "path", wire: name, required: true, schema: map[string]any{"type": "string"}}
		if p != nil {
			s.schema, s.desc, s.sep = paramSchema(p), p.Description, listSep(p)
		}
		add(s)
	}
	for _, p := range params {
		if p.In == "query" {
			add(slot{name: p.Name, in: "query", wire: p.Name, required: p.Required, schema: paramSchema(p), desc: p.Description, sep: listSep(p)})
		}
	}
	bodyKind := ""
	if op.RequestBody != nil && op.RequestBody.Value != nil {
		var bodySlots []slot
		bodyKind, bodySlots = body(op.RequestBody.Value)
		for _, s := range bodySlots {
			add(s)
		}
	}
	// The target: path slots, then the query.
	n := map[string]int{}
	for i, s := range slots {
		n[s.in+"\x00"+s.wire] = i + 1
	}
	target := pathSlot.ReplaceAllStringFunc(path, func(m string) string {
		i := n["path\x00"+m[1:len(m)-1]]
		return slots[i-1].ref(i)
	})
	var query []string
	for i, s := range slots {
		if s.in == "query" {
			query = append(query, url.QueryEscape(s.wire)+"="+s.ref(i+1))
		}
	}
	target = strings.TrimRight(base, "/") + target
	if len(query) > 0 {
		sep := "?"
		if strings.Contains(target, "?") {
			sep = "&"
		}
		target += sep + strings.Join(query, "&")
	}

	key := o.Prefix + importdoc.Key(op.OperationID)
	if op.OperationID == "" {
		key = o.Prefix + importdoc.Key(method+"_"+path)
	}
	row := rowcall.NewRow(clipKey(key), rowcall.TypeHTTP)
	row.Target = method + " " + target
	row.Auth = o.Auth
	row.Category = o.Category
	if row.Category == "" && len(op.Tags) > 0 {
		row.Category = op.Tags[0]
	}
	row.InputSchema = inputSchema(slots)
	row.OutputSchema = outputSchema(op)
	if method == "DELETE" || (!slices.Contains([]string{"GET", "HEAD", "OPTIONS"}, method) && (flagged(op.Extensions, "x-rowcall-sensitive") || flagged(op.Extensions, "x-sensitive"))) {
		row.Sensitive = 1
	}
	sample := make([]string, len(slots))
	for i, s := range slots {
		sample[i] = importdoc.Sample(s.schema)
	}
	ex := strings.Join(sample, "|")
	exJSON, _ := json.Marshal([]string{ex})
	row.Examples = string(exJSON)
	row.Content = strings.TrimSuffix(docstring(row.Key, method, path, op, slots, ex)+bodyTemplate(bodyKind, slots), "\n")
	return row, nil
}

// fromExtension is an operation that carries its row (x-rowcall).
func fromExtension(x any, o Options) (rowcall.Row, error) {
	b, err := json.Marshal(x)
	if err != nil {
		return rowcall.Row{}, err
	}
	row := rowcall.NewRow("", "")
	if err := json.Unmarshal(b, &row); err != nil || !rowcall.ValidKey(row.Key) {
		return rowcall.Row{}, errors.New("x-rowcall is not a row with a valid key")
	}
	row.Key = clipKey(o.Prefix + row.Key)
	row.Version, row.RowNum, row.UpdatedAt, row.CreatedAt, row.ImportedFrom, row.WrittenBy = 0, 0, "", "", "", ""
	if o.Category != "" {
		row.Category = o.Category
	}
	if o.Auth != "" {
		row.Auth = o.Auth
	}
	return row, nil
}

// docServer is the document's first top-level server, variables at their
// defaults, when it is an absolute http(s) URL; else "".
func docServer(d *openapi3.T) string {
	if len(d.Servers) == 0 || d.Servers[0] == nil {
		return ""
	}
	if u := withDefaults(d.Servers[0]); absoluteHTTP(u) {
		return u
	}
	return ""
}

func withDefaults(s *openapi3.Server) string {
	u := s.URL
	for name, v := range s.Variables {
		if v != nil {
			u = strings.ReplaceAll(u, "{"+name+"}", v.Default)
		}
	}
	return u
}

// server is the base URL of an operation: base when set, else the first of
// its own servers, its path's or the document's, variables at their
// defaults, which must be on origin (the document's server's).
func server(d *openapi3.T, item *openapi3.PathItem, op *openapi3.Operation, base, origin string) (string, error) {
	if base != "" {
		return base, nil
	}
	var list openapi3.Servers
	switch {
	case op.Servers != nil && len(*op.Servers) > 0:
		list = *op.Servers
	case len(item.Servers) > 0:
		list = item.Servers
	default:
		list = d.Servers
	}
	if len(list) == 0 || list[0] == nil || list[0].URL == "" || list[0].URL == "/" {
		return "", errors.New("the document names no server; give the base URL (--server URL)")
	}
	u := withDefaults(list[0])
	if !absoluteHTTP(u) {
		return "", fmt.Errorf("the server %q is not an absolute http(s) URL; give the base URL (--server URL)", u)
	}
	if o := rowcall.URLOrigin(u); o != origin {
		return "", fmt.Errorf("its server %q is not on the document's server's origin %q, which this import targets; import it with --server URL", u, origin)
	}
	return u, nil
}

// absoluteHTTP reports whether u is an absolute http or https URL, as every
// http row's target must be.
func absoluteHTTP(u string) bool {
	return strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "https://")
}

type paramList []*openapi3.Parameter

func (l paramList) find(in, name string) *openapi3.Parameter {
	for _, p := range l {
		if p.In == in && p.Name == name {
			return p
		}
	}
	return nil
}

// parameters merges the path item's parameters with the operation's (which
// win on the same name and location).
func parameters(item *openapi3.PathItem, op *openapi3.Operation) paramList {
	var out paramList
	for _, r := range op.Parameters {
		if r != nil && r.Value != nil {
			out = append(out, r.Value)
		}
	}
	for _, r := range item.Parameters {
		if r != nil && r.Value != nil && out.find(r.Value.In, r.Value.Name) == nil {
			out = append(out, r.Value)
		}
	}
	return out
}

var pathSlot = regexp.MustCompile(`\{[^{}/]+\}`)

func pathParams(path string) []string {
	var out []string
	for _, m := range pathSlot.FindAllString(path, -1) {
		out = append(out, m[1:len(m)-1])
	}
	return out
}

// ref is the slot's reference in the target, it being argument n: $n, or
// $n[sep] for an array parameter.
func (s slot) ref(n int) string {
	if s.sep != "" {
		return fmt.Sprintf("$%d[%s]", n, s.sep)
	}
	return fmt.Sprintf("$%d", n)
}

// listSep is the separator an array parameter's items are joined by on the
// wire (OpenAPI 3's style and explode, their defaults as kin-openapi reads
// them), "" for a parameter that is not an array. A query parameter exploded
// (form's default) repeats its name, status=a&status=b; not exploded it is
// status=a,b (form), a%20b (spaceDelimited) or a%7Cb (pipeDelimited). A path
// parameter (simple) is a,b.
func listSep(p *openapi3.Parameter) string {
	if p.Schema == nil || p.Schema.Value == nil || !hasType(shallow(p.Schema, 0), "array") {
		return ""
	}
	m, err := p.SerializationMethod()
	switch {
	case err != nil || p.In == openapi3.ParameterInPath:
		return ","
	case m.Explode:
		return "&" + url.QueryEscape(p.Name) + "="
	case m.Style == openapi3.SerializationSpaceDelimited:
		return "%20"
	case m.Style == openapi3.SerializationPipeDelimited:
		return "%7C"
	}
	return ","
}

// hasType reports whether a shallow schema's type is t or lists it.
func hasType(s map[string]any, t string) bool {
	switch x := s["type"].(type) {
	case string:
		return x == t
	case []string:
		return slices.Contains(x, t)
	}
	return false
}

func paramSchema(p *openapi3.Parameter) map[string]any {
	var s *openapi3.SchemaRef = p.Schema
	if s == nil {
		for _, mt := range p.Content {
			if mt != nil && mt.Schema != nil {
				s = mt.Schema
				break
			}
		}
	}
	out := shallow(s, 1)
	if p.Description != "" {
		out["description"] = clip(redact.Line(p.Description), 300)
	}
	return out
}

// body reads a request body: "json" or "form" with one slot per top-level
// property, or "raw" with the one slot "body".
func body(rb *openapi3.RequestBody) (string, []slot) {
	var mt *openapi3.MediaType
	kind := "raw"
	for _, ct := range sortedKeys(rb.Content) {
		c := strings.ToLower(ct)
		if strings.Contains(c, "json") {
			mt, kind = rb.Content[ct], "json"
			break
		}
		if c == "application/x-www-form-urlencoded" && mt == nil {
			mt, kind = rb.Content[ct], "form"
		}
	}
	if mt == nil {
		for _, ct := range sortedKeys(rb.Content) {
			mt = rb.Content[ct]
			break
		}
	}
	var s *openapi3.Schema
	if mt != nil && mt.Schema != nil {
		s = mt.Schema.Value
	}
	if s != nil && (kind == "json" || kind == "form") && isObject(s) && len(s.Properties) > 0 && len(s.Properties) <= 64 {
		var slots []slot
		for _, name := range sortedKeys(s.Properties) {
			ps := s.Properties[name]
			if ps != nil && ps.Value != nil && ps.Value.ReadOnly {
				continue
			}
			slots = append(slots, slot{name: name, in: "body", wire: name, required: slices.Contains(s.Required, name), schema: shallow(ps, 1)})
		}
		return kind, slots
	}
	var ref *openapi3.SchemaRef
	if mt != nil {
		ref = mt.Schema
	}
	sch := map[string]any{"type": "string"}
	if kind == "json" {
		sch = shallow(ref, 1)
	}
	if rb.Description != "" {
		sch["description"] = clip(redact.Line(rb.Description), 300)
	}
	return "raw", []slot{{name: "body", in: "body", wire: "body", required: rb.Required, schema: sch}}
}

func isObject(s *openapi3.Schema) bool {
	return s.Type == nil || s.Type.IsEmpty() || s.Type.Includes("object")
}

// shallow is a small JSON Schema for a property: its type (the first of an
// allOf/oneOf/anyOf when it has none of its own), format, enum, default and
// description, and, for an array, its items' type.
func shallow(ref *openapi3.SchemaRef, depth int) map[string]any {
	out := map[string]any{}
	if ref == nil || ref.Value == nil {
		return map[string]any{"type": "string"}
	}
	s := ref.Value
	for (s.Type == nil || s.Type.IsEmpty()) && len(s.Properties) == 0 {
		var next *openapi3.SchemaRef
		for _, list := range []openapi3.SchemaRefs{s.AllOf, s.OneOf, s.AnyOf} {
			if len(list) > 0 && list[0] != nil && list[0].Value != nil {
				next = list[0]
				break
			}
		}
		if next == nil {
			break
		}
		if s.Description != "" && out["description"] == nil {
			out["description"] = clip(redact.Line(s.Description), 300)
		}
		s = next.Value
	}
	var types []string
	if s.Type != nil {
		for _, t := range s.Type.Slice() {
			if t != "null" {
				types = append(types, t)
			}
		}
	}
	switch {
	case len(types) == 1:
		out["type"] = types[0]
	case len(types) > 1:
		out["type"] = types
	case len(s.Properties) > 0:
		out["type"] = "object"
	}
	if s.Format != "" && out["type"] != nil {
		out["format"] = s.Format
	}
	if len(s.Enum) > 0 {
		var enum []any
		for _, e := range s.Enum {
			if e != nil {
				enum = append(enum, e)
			}
		}
		if len(enum) > 0 {
			out["enum"] = enum
		}
	}
	if s.Default != nil {
		out["default"] = s.Default
	}
	if s.Description != "" {
		out["description"] = clip(redact.Line(s.Description), 300)
	}
	if out["type"] == "array" && depth > 0 {
		out["items"] = shallow(s.Items, depth-1)
		if s.Items == nil {
			delete(out, "items")
		}
	}
	return out
}

// Bounds on an imported output_schema.
const (
	MaxOutputProperties = 64
	MaxOutputSchema     = 16 << 10
)

// outputSchema is the row's output_schema from the operation's first 2xx
// JSON response (the package doc), "" when there is none of object shape.
func outputSchema(op *openapi3.Operation) string {
	if op.Responses == nil {
		return ""
	}
	var codes []string
	for code := range op.Responses.Map() {
		if len(code) == 3 && code[0] == '2' {
			codes = append(codes, code)
		}
	}
	sort.Strings(codes) // 200 … 299, then 2XX
	for _, code := range codes {
		r := op.Responses.Value(code)
		if r == nil || r.Value == nil {
			continue
		}
		var media *openapi3.MediaType
		for _, ct := range sortedKeys(r.Value.Content) {
			if base, _, _ := strings.Cut(ct, ";"); base == "application/json" || strings.HasSuffix(base, "+json") {
				media = r.Value.Content[ct]
				break
			}
		}
		if media == nil || media.Schema == nil || media.Schema.Value == nil {
			return "" // the first 2xx answers no JSON: its result is text
		}
		s := media.Schema.Value
		if len(s.Properties) == 0 || !isObject(s) || len(s.Properties) > MaxOutputProperties {
			return ""
		}
		props := make(map[string]any, len(s.Properties))
		for name, ref := range s.Properties {
			props[name] = nullable(ref, shallowOutput(ref))
		}
		out := map[string]any{"type": "object", "properties": props}
		var required []string
		for _, n := range s.Required {
			if _, ok := s.Properties[n]; ok {
				required = append(required, n)
			}
		}
		if len(required) > 0 {
			out["required"] = required
		}
		b, err := json.Marshal(out)
		if err != nil || len(b) > MaxOutputSchema {
			return ""
		}
		return string(b)
	}
	return ""
}

// shallowOutput is shallow for a result's property: no enum, format or
// default (a result is checked against it, not offered as a choice).
func shallowOutput(ref *openapi3.SchemaRef) map[string]any {
	s := shallow(ref, 1)
	delete(s, "enum")
	delete(s, "format")
	delete(s, "default")
	if items, ok := s["items"].(map[string]any); ok {
		s["items"] = map[string]any{"type": items["type"]}
		if items["type"] == nil {
			delete(s, "items")
		}
	}
	return s
}

// nullable adds "null" to s's type when the document lets the value be
// null (OpenAPI 3.0's nullable, 3.1's "null" type).
func nullable(ref *openapi3.SchemaRef, s map[string]any) map[string]any {
	if ref == nil || ref.Value == nil || !(ref.Value.Nullable || ref.Value.Type != nil && ref.Value.Type.Includes("null")) {
		return s
	}
	switch t := s["type"].(type) {
	case string:
		s["type"] = []string{t, "null"}
	case []string:
		s["type"] = append(t, "null")
	}
	return s
}

// inputSchema writes the slots as a JSON Schema object, properties in slot
// order (encoding/json would sort a map's keys).
func inputSchema(slots []slot) string {
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{`)
	var required []string
	for i, s := range slots {
		if i > 0 {
			b.WriteByte(',')
		}
		name, _ := json.Marshal(s.name)
		sch := s.schema
		if !s.required {
			sch = emptyAllowed(sch)
		} else {
			required = append(required, s.name)
		}
		v, _ := json.Marshal(sch)
		b.Write(name)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteString(`}`)
	if len(required) > 0 {
		r, _ := json.Marshal(required)
		b.WriteString(`,"required":`)
		b.Write(r)
	}
	b.WriteString(`}`)
	return b.String()
}

// emptyAllowed lets an optional property take "", which is what a
// positional call sends for an argument it skips: an enum gains "", and a
// type that is not a string gains "string" limited to length 0.
func emptyAllowed(s map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range s {
		out[k] = v
	}
	if enum, ok := s["enum"].([]any); ok && !slices.Contains(enum, any("")) {
		out["enum"] = append(slices.Clip(enum), "")
	}
	switch t := s["type"].(type) {
	case string:
		if t != "string" {
			out["type"], out["maxLength"] = []string{t, "string"}, 0
		}
	case []string:
		if !slices.Contains(t, "string") {
			out["type"], out["maxLength"] = append(slices.Clip(t), "string"), 0
		}
	}
	return out
}

func bodyTemplate(kind string, slots []slot) string {
	var parts []string
	for i, s := range slots {
		if s.in != "body" {
			continue
		}
		ref := fmt.Sprintf("$%d", i+1)
		switch kind {
		case "json":
			name, _ := json.Marshal(s.wire)
			if s.schema["type"] == "string" {
				ref = `"` + ref + `"`
			}
			parts = append(parts, string(name)+":"+ref)
		case "form":
			parts = append(parts, url.QueryEscape(s.wire)+"="+ref)
		default:
			return ref
		}
	}
	switch {
	case len(parts) == 0:
		return ""
	case kind == "form":
		return strings.Join(parts, "&")
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func docstring(key, method, path string, op *openapi3.Operation, slots []slot, ex string) string {
	what := redact.Line(op.Summary)
	desc := redact.Line(op.Description)
	if what == "" {
		what = importdoc.FirstSentence(desc)
	}
	if what == "" {
		what = method + " " + path
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# WHAT: %s\n", clip(what, 200))
	if desc != "" && desc != what {
		fmt.Fprintf(&b, "# WHEN_TO_USE: %s\n", clip(desc, 400))
	}
	if len(slots) > 0 {
		args := make([]string, len(slots))
		for i, s := range slots {
			args[i] = fmt.Sprintf("$%d=%s", i+1, s.name)
			if !s.required {
				args[i] += " (optional)"
			}
		}
		fmt.Fprintf(&b, "# ARGS: %s\n", strings.Join(args, " | "))
	}
	fmt.Fprintf(&b, "# EX: [%s]%s[/%s]\n", key, ex, key)
	return b.String()
}

func clipKey(k string) string {
	if len(k) > 128 {
		k = k[:128]
	}
	if k == "" {
		k = "OP"
	}
	return k
}

// unique returns key, or key_2, key_3… when an earlier operation took it.
func unique(key string, taken map[string]bool) string {
	k := key
	for i := 2; taken[k]; i++ {
		suffix := fmt.Sprintf("_%d", i)
		k = clipKey(key[:min(len(key), 128-len(suffix))] + suffix)
	}
	taken[k] = true
	return k
}

func flagged(ext map[string]any, name string) bool {
	v, ok := ext[name]
	if !ok {
		return false
	}
	b, _ := json.Marshal(v)
	return string(b) == "true"
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && s[cut]&0xC0 == 0x80 { // not inside a UTF-8 sequence
		cut--
	}
	return strings.TrimSpace(s[:cut]) + "…"
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
