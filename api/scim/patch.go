package scim

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// change is what a PUT or PATCH changes of a person; a nil field is left
// as it is.
type change struct {
	UserName, Name, Email *string
	Active                *bool
	// ExternalID is what the request says the person's subject is: it may
	// only repeat it (mutability).
	ExternalID *string
	// names are the pieces of a name a PATCH sent, resolved against the
	// person's current name (parts.name) when Name is nil.
	names parts
}

// patchOp is a PatchOp request (RFC 7644 section 3.5.2).
type patchOp struct {
	Schemas    []string `json:"schemas"`
	Operations []struct {
		Op    string          `json:"op"`
		Path  string          `json:"path"`
		Value json.RawMessage `json:"value"`
	} `json:"Operations"`
}

// maxOperations bounds the operations of one PatchOp.
const maxOperations = 100

// parsePatch reads a PatchOp into the change it makes. Every operation is
// read before anything is changed, so one malformed operation refuses the
// whole request. It takes what identity providers send besides the RFC's
// own form: an op in any case ("Replace"), no path with an object of
// attributes as the value (Okta: {"op":"replace","value":{"active":false}}),
// booleans as strings ("False": Microsoft Entra ID), and such a value's
// keys as paths ("name.givenName"). Attributes rowcall does not keep are
// accepted and ignored.
func parsePatch(body []byte) (change, error) {
	var p patchOp
	if err := json.Unmarshal(body, &p); err != nil {
		return change{}, syntax("the body is not a SCIM PatchOp: " + err.Error())
	}
	switch {
	case !hasSchema(p.Schemas, SchemaPatchOp):
		return change{}, syntax(`the body's "schemas" does not name ` + SchemaPatchOp)
	case len(p.Operations) == 0:
		return change{}, syntax(`the PatchOp has no "Operations"`)
	case len(p.Operations) > maxOperations:
		return change{}, syntax("the PatchOp has " + strconv.Itoa(len(p.Operations)) + " operations; this host takes at most " + strconv.Itoa(maxOperations))
	}
	var c change
	for i, o := range p.Operations {
		at := "operation " + strconv.Itoa(i+1) + ": "
		op := strings.ToLower(strings.TrimSpace(o.Op))
		if op != "add" && op != "replace" && op != "remove" {
			return change{}, syntax(at + "op " + strconv.Quote(o.Op) + " is not add, replace or remove")
		}
		path := strings.TrimSpace(o.Path)
		hasValue := len(o.Value) > 0 && string(o.Value) != "null"
		switch {
		case path == "" && op == "remove":
			return change{}, fail(CodeNoTarget, http.StatusBadRequest, TypeNoTarget, at+"remove names no path", "name the attribute to remove in path; nothing was changed")
		case path == "":
			var attrs map[string]json.RawMessage
			if err := json.Unmarshal(o.Value, &attrs); err != nil || attrs == nil {
				return change{}, syntax(at + "an operation without a path takes an object of attributes as its value")
			}
			keys := make([]string, 0, len(attrs))
			for k := range attrs {
				keys = append(keys, k)
			}
			slices.Sort(keys) // one order, whatever the map's
			for _, k := range keys {
				if err := c.set(at, op, k, attrs[k]); err != nil {
					return change{}, err
				}
			}
		case op != "remove" && !hasValue:
			return change{}, syntax(at + op + " " + path + " has no value")
		default:
			if err := c.set(at, op, path, o.Value); err != nil {
				return change{}, err
			}
		}
	}
	return c, nil
}

// set records one operation on path (a path as RFC 7644 section 3.10
// writes it, or a key of an operation's value object).
func (c *change) set(at, op, path string, raw json.RawMessage) error {
	attr, filter, sub, err := splitPath(path)
	if err != nil {
		return fail(CodeInvalidPath, http.StatusBadRequest, TypeInvalidPath, at+err.Error(), "write the path as RFC 7644 section 3.10 does, e.g. active, name.givenName or emails[type eq \"work\"].value; nothing was changed")
	}
	remove := op == "remove"
	text := func() (*string, error) {
		s := ""
		if !remove {
			if json.Unmarshal(raw, &s) != nil {
				return nil, fail(CodeInvalidValue, http.StatusBadRequest, TypeInvalidValue, at+path+" is "+string(raw)+", not a string", "send a string; nothing was changed")
			}
			s = strings.TrimSpace(s)
		}
		if len(s) > maxValue {
			return nil, tooLong()
		}
		return &s, nil
	}
	switch attr {
	case "active":
		if remove {
			return fail(CodeMutability, http.StatusBadRequest, TypeMutability, at+"active cannot be removed", `replace it with false to end the person's access; nothing was changed`)
		}
		a, err := boolean(raw)
		if err != nil {
			return err
		}
		c.Active = &a
	case "username", "externalid":
		if remove {
			return fail(CodeMutability, http.StatusBadRequest, TypeMutability, at+path+" cannot be removed", "nothing was changed")
		}
		s, err := text()
		if err != nil {
			return err
		}
		if attr == "username" {
			c.UserName = s
		} else {
			c.ExternalID = s
		}
	case "displayname":
		s, err := text()
		if err != nil {
			return err
		}
		c.names.display = s
	case "name":
		return c.setName(at, sub, raw, remove, text)
	case "emails":
		return c.setEmail(at, filter, sub, raw, remove, text)
	}
	return nil // id, meta, groups and attributes rowcall does not keep
}

// setName records an operation on name or one of its sub-attributes.
func (c *change) setName(at, sub string, raw json.RawMessage, remove bool, text func() (*string, error)) error {
	if sub == "" {
		if remove {
			empty := ""
			c.names.formatted = &empty
			return nil
		}
		var n Name
		if err := json.Unmarshal(raw, &n); err != nil {
			return fail(CodeInvalidValue, http.StatusBadRequest, TypeInvalidValue, at+"name is "+string(raw)+", not an object", `send {"formatted":…,"givenName":…,"familyName":…}; nothing was changed`)
		}
		c.names.formatted, c.names.given, c.names.family = nonEmpty(n.Formatted), nonEmpty(n.GivenName), nonEmpty(n.FamilyName)
		return nil
	}
	to := map[string]**string{"formatted": &c.names.formatted, "givenname": &c.names.given, "familyname": &c.names.family}[sub]
	if to == nil {
		return nil // middleName, honorificPrefix, …: not kept
	}
	s, err := text()
	if err != nil {
		return err
	}
	*to = s
	return nil
}

// setEmail records an operation on emails: rowcall keeps one email, the
// primary or work one, so a filter that names another type is ignored.
func (c *change) setEmail(at, filter, sub string, raw json.RawMessage, remove bool, text func() (*string, error)) error {
	if filter != "" && !workOrPrimary(filter) {
		return nil
	}
	if remove {
		empty := ""
		c.Email = &empty
		return nil
	}
	switch sub {
	case "value":
		s, err := text()
		if err != nil {
			return err
		}
		c.Email = s
	case "":
		var list []Email
		if json.Unmarshal(raw, &list) != nil {
			var one Email
			if json.Unmarshal(raw, &one) != nil {
				return fail(CodeInvalidValue, http.StatusBadRequest, TypeInvalidValue, at+"emails is "+string(raw)+", not a list of emails", `send [{"value":…,"type":"work","primary":true}]; nothing was changed`)
			}
			list = []Email{one}
		}
		s := primary(list)
		if len(s) > maxValue {
			return tooLong()
		}
		c.Email = &s
	}
	return nil
}

// workOrPrimary reports whether an emails filter picks the work or the
// primary email (type eq "work", primary eq true).
func workOrPrimary(filter string) bool {
	f := strings.ToLower(strings.Join(strings.Fields(filter), " "))
	return f == `type eq "work"` || f == "primary eq true"
}

// splitPath splits a path, attrPath ["[" valFilter "]"] ["." subAttr] with
// attrPath optionally prefixed by the User schema's URN, into its
// attribute and sub-attribute (lower case) and its filter. A path in
// another schema (the enterprise extension) is no attribute of rowcall's:
// "" and no error.
func splitPath(path string) (attr, filter, sub string, err error) {
	if n := len(SchemaUser) + 1; len(path) > n && strings.EqualFold(path[:n], SchemaUser+":") {
		path = path[n:]
	} else if len(path) >= 4 && strings.EqualFold(path[:4], "urn:") {
		return "", "", "", nil
	}
	end := strings.IndexAny(path, "[.")
	if end < 0 {
		end = len(path)
	}
	attr, rest := path[:end], path[end:]
	if strings.HasPrefix(rest, "[") {
		close := closing(rest)
		if close < 0 {
			return "", "", "", errPath(path, "its filter has no closing ]")
		}
		filter, rest = rest[1:close], rest[close+1:]
	}
	if rest != "" {
		var ok bool
		if sub, ok = strings.CutPrefix(rest, "."); !ok || !attrName(sub) {
			return "", "", "", errPath(path, "it does not end with a sub-attribute's name")
		}
	}
	if !attrName(attr) {
		return "", "", "", errPath(path, "it does not begin with an attribute's name")
	}
	return strings.ToLower(attr), filter, strings.ToLower(sub), nil
}

type pathError string

func (e pathError) Error() string { return string(e) }

func errPath(path, why string) error {
	return pathError("path " + strconv.Quote(path) + " is malformed: " + why)
}

// closing is the index in s (which begins with "[") of the "]" that closes
// it, outside quoted strings; -1 when none does.
func closing(s string) int {
	quoted := false
	for i := 1; i < len(s); i++ {
		switch {
		case s[i] == '\\' && quoted:
			i++
		case s[i] == '"':
			quoted = !quoted
		case s[i] == ']' && !quoted:
			return i
		}
	}
	return -1
}

// attrName reports whether s is an attribute name: ALPHA *(nameChar)
// (RFC 7643 section 2.1).
func attrName(s string) bool {
	for i, r := range s {
		letter := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
		if !letter && (i == 0 || !(r >= '0' && r <= '9' || r == '-' || r == '_')) {
			return false
		}
	}
	return s != ""
}
