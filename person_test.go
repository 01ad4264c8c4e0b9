package rowcall

import (
	"slices"
	"testing"
)

func TestRolesHoldTheirRights(t *testing.T) {
	for _, c := range []struct {
		role      Role
		has, lack []Right
	}{
		{RoleOwner, []Right{RightOwner, RightPeople, RightWrite}, nil},
		{RoleAdmin, []Right{RightPeople, RightSettings, RightWrite, RightApprove}, []Right{RightOwner}},
		{RoleEditor, []Right{RightWrite, RightCall, RightRead}, []Right{RightPeople, RightApprove, RightSettings}},
		{RoleApprover, []Right{RightApprove, RightCall}, []Right{RightWrite, RightPeople}},
		{RoleCaller, []Right{RightCall, RightRead}, []Right{RightApprove, RightWrite}},
		{RoleViewer, []Right{RightRead}, []Right{RightCall}},
		{"", nil, []Right{RightRead, RightCall}},
	} {
		for _, r := range c.has {
			if !c.role.Has(r) {
				t.Errorf("%q lacks %s", c.role, r)
			}
		}
		for _, r := range c.lack {
			if c.role.Has(r) {
				t.Errorf("%q holds %s", c.role, r)
			}
		}
	}
	if !RoleAdmin.Covers(RoleEditor) || RoleAdmin.Covers(RoleOwner) || RoleEditor.Covers(RoleApprover) || !RoleAdmin.Covers("") {
		t.Error("Covers: admin covers editor and none, not owner; editor does not cover approver")
	}
}

func TestRoleMapping(t *testing.T) {
	m, err := ParseRoleMapping("tools-admins=admin, tools-editors = Editor,,viewers=viewer")
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Role([]string{"viewers", "tools-editors"}); got != RoleEditor {
		t.Errorf("viewers+editors: %q, want the role with the most rights", got)
	}
	if got := m.Role([]string{"other"}); got != "" {
		t.Errorf("unmapped groups: %q, want none", got)
	}
	for _, bad := range []string{"x=root", "=admin", "admins"} {
		if _, err := ParseRoleMapping(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

// A token minted by a person never exceeds them: narrowing follows their
// scope and role as they are now, and never widens.
func TestNarrowNeverWidens(t *testing.T) {
	tok := Token{ID: "tok_a", Keys: []string{"PAY"}, Categories: []string{"billing", "notes"}, Approve: true}
	p := Person{ID: "per_a", Role: RoleApprover, Categories: []string{"*"}}
	if n := p.Narrow(tok); !slices.Equal(n.Categories, tok.Categories) || !slices.Equal(n.Keys, tok.Keys) || !n.Approve {
		t.Errorf("a person of every row and the approve right: %+v", n)
	}
	p.Role, p.Categories = RoleCaller, []string{"billing"}
	n := p.Narrow(tok)
	if !slices.Equal(n.Categories, []string{"billing"}) || len(n.Keys) != 0 || n.Approve {
		t.Errorf("narrowed to billing without approve: %+v", n)
	}
	all := Token{Categories: []string{"*"}}
	if n := p.Narrow(all); slices.Contains(n.Categories, "*") || !slices.Equal(n.Categories, []string{"billing"}) {
		t.Errorf("a token of every row, by a person of billing: %+v", n.Categories)
	}
	p.DisabledAt = "2026-12-05T00:00:00Z"
	if p.Has(RightRead) || p.Forbids(RightRead).Code != EUnauthorized {
		t.Error("a disabled person holds no right")
	}
}
