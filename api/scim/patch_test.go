package scim

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rowcall/rowcall"
)

// patchOf wraps operations in a PatchOp.
func patchOf(ops ...string) string {
	return `{"schemas":["` + SchemaPatchOp + `"],"Operations":[` + strings.Join(ops, ",") + `]}`
}

// show is a change as text: each field that is set, and the name a person
// named current would have after it.
func show(c change, current string) string {
	var b strings.Builder
	for _, f := range []struct {
		name string
		v    *string
	}{{"userName", c.UserName}, {"externalId", c.ExternalID}, {"email", c.Email}} {
		if f.v != nil {
			fmt.Fprintf(&b, "%s=%q ", f.name, *f.v)
		}
	}
	if c.Active != nil {
		fmt.Fprintf(&b, "active=%v ", *c.Active)
	}
	if n, ok := c.names.name(current); ok {
		fmt.Fprintf(&b, "name=%q ", n)
	}
	return strings.TrimSpace(b.String())
}

// The PatchOp forms identity providers send, each read as the change it
// means: the RFC's own, Okta's (no path, an object of attributes), Entra
// ID's (op in any case, booleans as strings, dotted keys, filtered email
// paths, the enterprise extension, which rowcall ignores).
func TestPatchOpVariants(t *testing.T) {
	for _, c := range []struct {
		name, body, current, want string
	}{
		{"rfc", patchOf(`{"op":"replace","path":"active","value":false}`), "", "active=false"},
		{"rfc true", patchOf(`{"op":"replace","path":"active","value":true}`), "", "active=true"},
		{"okta no path", patchOf(`{"op":"replace","value":{"active":false}}`), "", "active=false"},
		{"okta no path with id", patchOf(`{"op":"replace","value":{"id":"per_1","active":false}}`), "", "active=false"},
		{"entra False", patchOf(`{"op":"Replace","path":"active","value":"False"}`), "", "active=false"},
		{"entra True", patchOf(`{"op":"Replace","path":"active","value":"True"}`), "", "active=true"},
		{"op in capitals", patchOf(`{"op":"REPLACE","path":"active","value":"false"}`), "", "active=false"},
		{"add is replace", patchOf(`{"op":"add","path":"active","value":false}`), "", "active=false"},
		{"path in the schema's urn", patchOf(`{"op":"replace","path":"` + SchemaUser + `:active","value":false}`), "", "active=false"},
		{"attribute in any case", patchOf(`{"op":"replace","path":"Active","value":false}`), "", "active=false"},
		{"entra profile", patchOf(
			`{"op":"Replace","path":"userName","value":"ada@example.com"}`,
			`{"op":"Replace","path":"displayName","value":"Ada Lovelace"}`,
			`{"op":"Replace","path":"emails[type eq \"work\"].value","value":"ada@example.com"}`,
			`{"op":"Add","path":"name.givenName","value":"Ada"}`,
			`{"op":"Add","path":"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department","value":"Engines"}`,
			`{"op":"Add","path":"phoneNumbers[type eq \"work\"].value","value":"+44 20"}`),
			"Someone", `userName="ada@example.com" email="ada@example.com" name="Ada Lovelace"`},
		{"entra dotted keys in a value", patchOf(`{"op":"Replace","value":{"name.familyName":"Lovelace","active":"False"}}`), "", `active=false name="Lovelace"`},
		{"a given name alone keeps a whole name", patchOf(`{"op":"replace","path":"name.givenName","value":"Augusta"}`), "Ada Lovelace", ""},
		{"given and family names for a person without one", patchOf(`{"op":"replace","path":"name","value":{"givenName":"Ada","familyName":"Lovelace"}}`), "", `name="Ada Lovelace"`},
		{"formatted name", patchOf(`{"op":"replace","path":"name.formatted","value":"Ada King"}`), "Ada Lovelace", `name="Ada King"`},
		{"emails list", patchOf(`{"op":"replace","path":"emails","value":[{"value":"h@example.com","type":"home"},{"value":"w@example.com","type":"work"}]}`), "", `email="w@example.com"`},
		{"primary email", patchOf(`{"op":"add","path":"emails","value":[{"value":"a@example.com"},{"value":"p@example.com","primary":true}]}`), "", `email="p@example.com"`},
		{"home email ignored", patchOf(`{"op":"replace","path":"emails[type eq \"home\"].value","value":"h@example.com"}`), "", ""},
		{"remove email", patchOf(`{"op":"remove","path":"emails"}`), "", `email=""`},
		{"remove name", patchOf(`{"op":"remove","path":"name"}`), "Ada", `name=""`},
		{"externalId repeated", patchOf(`{"op":"replace","path":"externalId","value":"sub-1"}`), "", `externalId="sub-1"`},
		{"later operation wins", patchOf(`{"op":"replace","path":"active","value":false}`, `{"op":"replace","path":"active","value":true}`), "", "active=true"},
		{"operations in lower case", `{"schemas":["` + SchemaPatchOp + `"],"operations":[{"op":"replace","path":"active","value":false}]}`, "", "active=false"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := parsePatch([]byte(c.body))
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if s := show(got, c.current); s != c.want {
				t.Fatalf("change %q, want %q", s, c.want)
			}
		})
	}
}

// A malformed PatchOp is refused whole, with its SCIM type: nothing of it
// is applied, not even the well-formed operations before the bad one.
func TestPatchOpRefused(t *testing.T) {
	deactivate := `{"op":"replace","path":"active","value":false}`
	for _, c := range []struct {
		name, body, scimType string
	}{
		{"not json", `{"schemas":`, TypeInvalidSyntax},
		{"not an object", `[1,2]`, TypeInvalidSyntax},
		{"no schemas", `{"Operations":[` + deactivate + `]}`, TypeInvalidSyntax},
		{"another schema", `{"schemas":["` + SchemaUser + `"],"Operations":[` + deactivate + `]}`, TypeInvalidSyntax},
		{"no operations", `{"schemas":["` + SchemaPatchOp + `"]}`, TypeInvalidSyntax},
		{"empty operations", patchOf(), TypeInvalidSyntax},
		{"operations not a list", `{"schemas":["` + SchemaPatchOp + `"],"Operations":{"op":"replace"}}`, TypeInvalidSyntax},
		{"unknown op after a good one", patchOf(deactivate, `{"op":"frobnicate","path":"userName","value":"x"}`), TypeInvalidSyntax},
		{"no op", patchOf(`{"path":"active","value":false}`), TypeInvalidSyntax},
		{"replace without value", patchOf(`{"op":"replace","path":"active"}`), TypeInvalidSyntax},
		{"no path, value not an object", patchOf(`{"op":"replace","value":false}`), TypeInvalidSyntax},
		{"remove without path", patchOf(deactivate, `{"op":"remove"}`), TypeNoTarget},
		{"active neither true nor false", patchOf(`{"op":"replace","path":"active","value":"maybe"}`), TypeInvalidValue},
		{"active a number", patchOf(`{"op":"replace","path":"active","value":0}`), TypeInvalidValue},
		{"remove active", patchOf(`{"op":"remove","path":"active"}`), TypeMutability},
		{"remove userName", patchOf(`{"op":"remove","path":"userName"}`), TypeMutability},
		{"userName not a string", patchOf(`{"op":"replace","path":"userName","value":{"x":1}}`), TypeInvalidValue},
		{"unclosed filter", patchOf(`{"op":"replace","path":"emails[type eq \"work\".value","value":"a@b"}`), TypeInvalidPath},
		{"path not a name", patchOf(`{"op":"replace","path":"1active","value":false}`), TypeInvalidPath},
		{"bad sub-attribute", patchOf(`{"op":"replace","path":"name.","value":"x"}`), TypeInvalidPath},
		{"value too long", patchOf(`{"op":"replace","path":"displayName","value":"` + strings.Repeat("x", maxValue+1) + `"}`), TypeInvalidValue},
		{"too many operations", patchOf(strings.Split(strings.Repeat(deactivate+"\n", maxOperations+1), "\n")[:maxOperations+1]...), TypeInvalidSyntax},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := parsePatch([]byte(c.body))
			e := errorOf(err)
			if e == nil {
				t.Fatalf("accepted (%v)", err)
			}
			if got, _ := e.Extra["scimType"].(string); got != c.scimType || e.Status != 400 || e.HowToFix == "" {
				t.Fatalf("refused as %s (%d, %q): %v; want %s, 400, how to fix", got, e.Status, e.HowToFix, e, c.scimType)
			}
		})
	}
}

// The one filter, in the forms providers write it; any other is refused
// invalidFilter.
func TestFilter(t *testing.T) {
	for f, want := range map[string]string{
		`userName eq "ada@example.com"`:                      "ada@example.com",
		`username EQ "ada@example.com"`:                      "ada@example.com",
		`  userName   eq   "a \"b\" c"  `:                    `a "b" c`,
		SchemaUser + `:userName eq "ada"`:                    "ada",
		`userName eq "6d5a3c6e-0000-4000-8000-000000000000"`: "6d5a3c6e-0000-4000-8000-000000000000",
	} {
		got, err := parseFilter(f)
		if err != nil || got != want {
			t.Errorf("parseFilter(%s) = %q, %v; want %q", f, got, err, want)
		}
	}
	for _, f := range []string{`userName co "ada"`, `emails.value eq "ada@example.com"`, `externalId eq "x"`, `userName eq ada`,
		`userName eq "ada" and active eq true`, `userName eq "ada" or userName eq "bob"`, `userName`, `(userName eq "ada")`} {
		_, err := parseFilter(f)
		if e := errorOf(err); e == nil || e.Code != CodeInvalidFilter || e.Extra["scimType"] != TypeInvalidFilter || e.Status != 400 {
			t.Errorf("parseFilter(%s): %v, want invalidFilter", f, err)
		}
	}
}

// A User body: the attributes rowcall keeps, active as a boolean or Entra's
// string, and the refusals.
func TestUserBody(t *testing.T) {
	u, err := parseUser([]byte(`{"schemas":["` + SchemaUser + `","` + SchemaEnterprise + `"],"userName":" ada@example.com ","externalId":"00u1",
		"name":{"givenName":"Ada","familyName":"Lovelace"},"emails":[{"value":"ada@example.com","type":"work","primary":true}],
		"active":"False","phoneNumbers":[{"value":"+44"}],"` + SchemaEnterprise + `":{"department":"Engines"}}`))
	if err != nil || u.UserName != "ada@example.com" || u.ExternalID != "00u1" || !u.HasExternalID || u.Name != "Ada Lovelace" ||
		u.Email != "ada@example.com" || u.Active == nil || *u.Active {
		t.Fatalf("parseUser: %+v %v", u, err)
	}
	u, err = parseUser([]byte(`{"schemas":["` + SchemaUser + `"],"userName":"bob","displayName":"Robert","name":{"formatted":"Bob B"}}`))
	if err != nil || u.Name != "Robert" || u.HasExternalID || u.Active != nil {
		t.Fatalf("parseUser: %+v %v", u, err)
	}
	for body, code := range map[string]rowcall.Code{
		`{"userName":"x"}`:                                                                        CodeInvalidSyntax,
		`{"schemas":["` + SchemaUser + `"]}`:                                                      CodeInvalidValue,
		`{"schemas":["` + SchemaUser + `"],"userName":"x","active":3}`:                            CodeInvalidValue,
		`{"schemas":["` + SchemaUser + `"],"userName":5}`:                                         CodeInvalidSyntax,
		`{"schemas":["` + SchemaUser + `"],"userName":"` + strings.Repeat("x", maxValue+1) + `"}`: CodeInvalidValue,
	} {
		if _, err := parseUser([]byte(body)); errorOf(err) == nil || errorOf(err).Code != code {
			t.Errorf("parseUser(%.60s): %v, want %s", body, err, code)
		}
	}
}
