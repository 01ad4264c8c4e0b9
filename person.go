package rowcall

import (
	"context"
	"slices"
	"strings"
)

// A Person is someone of the organisation, signed in through its OpenID
// provider and bound to that provider's issuer and subject (never to an
// email alone). What they may do is their Role; which rows, their
// Categories. Everything they do is done as a Principal naming them, and
// every receipt of it names their issuer and subject, which stay on the
// receipt after the person is gone.
type Person struct {
	ID       string   `json:"id"` // per_…
	Issuer   string   `json:"issuer"`
	Subject  string   `json:"subject"`
	Email    string   `json:"email,omitempty"`
	Name     string   `json:"name,omitempty"`
	UserName string   `json:"user_name,omitempty"` // SCIM's userName, or the provider's preferred_username
	Role     Role     `json:"role"`                // "" until a role is mapped or granted: no rights
	RoleFrom string   `json:"role_from,omitempty"` // RoleFromGroups or RoleFromAdmin
	Groups   []string `json:"groups,omitempty"`    // the provider's groups claim at the last sign-in
	// Categories are the rows the person may reach: "*" is every row.
	Categories []string `json:"categories"`
	DisabledAt string   `json:"disabled_at,omitempty"`
	CreatedAt  string   `json:"created_at"`
	SeenAt     string   `json:"seen_at,omitempty"`
}

// Where a person's role came from: the provider's groups through the
// operator's mapping (renewed at each sign-in), or an admin (kept until an
// admin changes it).
const (
	RoleFromGroups = "groups"
	RoleFromAdmin  = "admin"
)

// Iss and Sub are the person's issuer and subject; "" for no person.
func (p *Person) Iss() string {
	if p == nil {
		return ""
	}
	return p.Issuer
}

// PersonID is the person's id; "" for no person.
func (p *Person) PersonID() string {
	if p == nil {
		return ""
	}
	return p.ID
}

// Sub: see Iss.
func (p *Person) Sub() string {
	if p == nil {
		return ""
	}
	return p.Subject
}

// Active reports whether the person may act at all.
func (p *Person) Active() bool { return p != nil && p.DisabledAt == "" }

// Has reports whether the person is active and their role holds right.
func (p *Person) Has(right Right) bool { return p.Active() && p.Role.Has(right) }

// Role is a fixed set of rights (docs/security.md, "People and roles").
type Role string

// The roles, from the most to the least.
const (
	RoleOwner    Role = "owner"
	RoleAdmin    Role = "admin"
	RoleEditor   Role = "editor"
	RoleApprover Role = "approver"
	RoleCaller   Role = "caller"
	RoleViewer   Role = "viewer"
)

// Roles lists every role, from the most to the least.
var Roles = []Role{RoleOwner, RoleAdmin, RoleEditor, RoleApprover, RoleCaller, RoleViewer}

// Right is one thing a role allows.
type Right string

// The rights.
const (
	RightRead     Right = "read"     // read rows and receipts in scope
	RightCall     Right = "call"     // call and ask rows in scope, mint tokens within one's own scope
	RightApprove  Right = "approve"  // decide approvals of rows in scope
	RightWrite    Right = "write"    // write rows, modules, imports, learned phrases
	RightPeople   Right = "people"   // list people, change their roles, disable them
	RightSettings Right = "settings" // every token, breakers, the whole receipt export
	RightOwner    Right = "owner"    // act as the owner key does
)

var roleRights = map[Role][]Right{
	RoleOwner:    {RightRead, RightCall, RightApprove, RightWrite, RightPeople, RightSettings, RightOwner},
	RoleAdmin:    {RightRead, RightCall, RightApprove, RightWrite, RightPeople, RightSettings},
	RoleEditor:   {RightRead, RightCall, RightWrite},
	RoleApprover: {RightRead, RightCall, RightApprove},
	RoleCaller:   {RightRead, RightCall},
	RoleViewer:   {RightRead},
}

// Rights lists the role's rights ("" has none).
func (r Role) Rights() []Right { return roleRights[r] }

// Has reports whether the role holds right.
func (r Role) Has(right Right) bool { return slices.Contains(roleRights[r], right) }

// Valid reports whether r is one of Roles.
func (r Role) Valid() bool { _, ok := roleRights[r]; return ok }

// Covers reports whether r holds every right of other: who may grant other.
func (r Role) Covers(other Role) bool {
	for _, x := range other.Rights() {
		if !r.Has(x) {
			return false
		}
	}
	return r.Valid()
}

// RoleMapping maps the provider's groups to roles (ROWCALL_OIDC_ROLES,
// "group=role,group=role"). A person in several mapped groups gets the one
// role that holds the most rights.
type RoleMapping map[string]Role

// ParseRoleMapping reads "group=role,…"; an unknown role or a malformed pair
// is an error naming it.
func ParseRoleMapping(s string) (RoleMapping, error) {
	m := RoleMapping{}
	for _, pair := range strings.Split(s, ",") {
		if strings.TrimSpace(pair) == "" {
			continue
		}
		g, r, ok := strings.Cut(pair, "=")
		g, role := strings.TrimSpace(g), Role(strings.ToLower(strings.TrimSpace(r)))
		if !ok || g == "" || !role.Valid() {
			return nil, &Error{Code: EInvalid, Message: "ROWCALL_OIDC_ROLES: " + strings.TrimSpace(pair) + " is not group=role with a role among owner, admin, editor, approver, caller, viewer",
				HowToFix: `write it as "tools-admins=admin,tools-editors=editor"`}
		}
		m[g] = role
	}
	return m, nil
}

// Role is the role groups map to: the mapped role with the most rights, or
// "" when none is mapped.
func (m RoleMapping) Role(groups []string) Role {
	best := Role("")
	for _, g := range groups {
		if r, ok := m[g]; ok && len(r.Rights()) > len(best.Rights()) {
			best = r
		}
	}
	return best
}

// Narrow is t as its holder may use it now: a token minted by a person never
// exceeds that person's role and scope, however they changed since. Its
// categories keep only those the person reaches, its keys only when the
// person reaches every row, and its approve right only while the person's
// role holds one; whether the person may call at all is the dispatcher's
// gate's question (Principal.Person). Narrowing never widens.
func (p *Person) Narrow(t Token) Token {
	if slices.Contains(p.Categories, "*") {
		t.Approve = t.Approve && p.Has(RightApprove)
		return t
	}
	var cats []string
	for _, c := range t.Categories {
		if c == "*" {
			cats = append(cats, p.Categories...)
		} else if slices.Contains(p.Categories, c) {
			cats = append(cats, c)
		}
	}
	slices.Sort(cats)
	t.Categories, t.Keys = slices.Compact(cats), nil
	t.Approve = t.Approve && p.Has(RightApprove)
	return t
}

// Forbids is the refusal of p doing what needs right: nil when they may.
func (p *Person) Forbids(right Right) *Error {
	if p.Has(right) {
		return nil
	}
	role := string(p.Role)
	if role == "" {
		role = "none"
	}
	if !p.Active() {
		return &Error{Code: EUnauthorized, Message: "this person was disabled at " + p.DisabledAt, HowToFix: "ask an admin of this host to enable you again"}
	}
	return &Error{Code: ERoleForbids, Args: []string{role, string(right)}, Status: 403,
		Message:  "your role (" + role + ") does not hold the right " + string(right),
		HowToFix: "ask an admin for a role that holds it (docs/people.md lists each role's rights)"}
}

// Principal is who a request acts for, from the edge to the receipt: the
// owner key, a token's holder, or a signed-in person (with the token their
// session stands for). The API resolves it once per request; the dispatcher
// gates on it and writes its Actor and its Person on every receipt.
type Principal struct {
	Owner  bool   // the owner key, or a person whose role is owner
	Token  *Token // the token presented, or a person's session as a token; nil for the owner
	Person *Person
	// Session is set when Person is signed in by a session cookie (not a
	// token they minted): only then may they manage what their role allows.
	Session bool
	Actor   string // recorded on receipts: owner:terminal-key, token:tok_…, person:per_…
}

// Has reports whether the principal holds right: the owner holds every
// right; a person, their role's; a token alone, read and call (its scope
// and the gate decide the rest).
func (p Principal) Has(right Right) bool {
	switch {
	case p.Owner:
		return true
	case p.Person != nil:
		return p.Person.Has(right)
	case p.Token != nil:
		return right == RightRead || right == RightCall || (right == RightApprove && p.Token.Approve)
	}
	return false
}

// Asker is p as a search's SearchFilter.For: who a rerank is made for.
func (p Principal) Asker() *Asker { return &Asker{Owner: p.Owner, Token: p.Token} }

// Session is a person's signed-in browser: its cookie holds a secret stored
// only as its SHA-256 (ID). It ends at ExpiresAt, or after IdleUntil passes
// without a request, or when revoked.
type Session struct {
	ID        string `json:"-"` // SHA-256 hex of the cookie's secret
	PersonID  string `json:"person_id"`
	CreatedAt string `json:"created_at"`
	ExpiresAt string `json:"expires_at"`
	IdleUntil string `json:"idle_until"`
}

// Login is a sign-in begun at GET /login and not yet finished: its state
// (stored as its SHA-256) is taken once by the callback.
type Login struct {
	State     string // SHA-256 hex of the state sent to the provider
	Nonce     string
	Verifier  string // PKCE code verifier
	ReturnTo  string // a path on this host
	CreatedAt string
}

// Claims are what a verified ID token says of the person signing in.
type Claims struct {
	Issuer, Subject, Email, Name, UserName string
	Groups                                 []string
}

// People are the organisation's people, their sessions and sign-ins
// (sqlstore implements it).
type People interface {
	// SignedIn finds the person bound to claims' issuer and subject, or
	// creates them (just in time), and records their email, name, groups,
	// and, when the role is not an admin's, the role mapped from the groups
	// (role, possibly ""). A disabled person stays disabled.
	SignedIn(ctx context.Context, c Claims, role Role, now string) (Person, error)
	// Person returns one person by id; an *Error ENotFound when none.
	Person(ctx context.Context, id string) (Person, error)
	// PersonByUserName finds a person by user_name, or else by email (SCIM's
	// filter userName eq "…"); an *Error ENotFound when none.
	PersonByUserName(ctx context.Context, userName string) (Person, error)
	// CreatePerson stores a person provisioned ahead of their first sign-in
	// (SCIM), bound to p.Issuer and p.Subject; EConflict when that pair is
	// taken.
	CreatePerson(ctx context.Context, p Person) (Person, error)
	// PeopleList returns every person, oldest first.
	PeopleList(ctx context.Context) ([]Person, error)
	// SetPerson stores p's role, role_from, categories and name fields.
	SetPerson(ctx context.Context, p Person) (Person, error)
	// DisablePerson marks the person disabled at now and, at once, revokes
	// their sessions and tokens (OAuth grants among them), deletes their
	// connections and denies their pending approvals. Their receipts stay.
	DisablePerson(ctx context.Context, id, now string) error
	// EnablePerson clears DisabledAt (their old sessions and tokens stay
	// revoked).
	EnablePerson(ctx context.Context, id string) error
	// DeletePerson disables the person, then removes them.
	DeletePerson(ctx context.Context, id, now string) error

	// StartSession stores a new session; Session returns it with its
	// person when it is live at now (an *Error EUnauthorized otherwise) and
	// renews its idle time to idleUntil; EndSession revokes it.
	StartSession(ctx context.Context, s Session) error
	Session(ctx context.Context, id, now, idleUntil string) (Session, Person, error)
	EndSession(ctx context.Context, id string) error

	// PutLogin stores a sign-in begun; TakeLogin returns and deletes it
	// (once: a replayed state finds nothing, an *Error ENotFound).
	PutLogin(ctx context.Context, l Login) error
	TakeLogin(ctx context.Context, state string) (Login, error)
}
