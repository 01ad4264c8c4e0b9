package sqlstore

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"time"

	"github.com/rowcall/rowcall"
)

// People, their sessions and sign-ins (rowcall.People). Every write is one
// statement, as D1 requires; disabling a person is several, the first of
// which (disabled_at) already stops everything of theirs, because every
// session and every token of theirs is resolved with the person at each
// request.

const personColumns = `id, issuer, subject, email, name, user_name, role, role_from, groups, categories, disabled_at, created_at, seen_at`

func scanPerson(sc scanner) (rowcall.Person, error) {
	var p rowcall.Person
	var role, groups, cats string
	err := sc.Scan(&p.ID, &p.Issuer, &p.Subject, &p.Email, &p.Name, &p.UserName, &role, &p.RoleFrom, &groups, &cats,
		&p.DisabledAt, &p.CreatedAt, &p.SeenAt)
	p.Role = rowcall.Role(role)
	json.Unmarshal([]byte(groups), &p.Groups)
	json.Unmarshal([]byte(cats), &p.Categories)
	return p, err
}

func jsonList(v []string) string {
	b, _ := json.Marshal(orNone(v))
	return string(b)
}

var errNoPerson = &rowcall.Error{Code: rowcall.ENotFound, Message: "no such person", HowToFix: "GET /api/people lists the people"}

func (s *Store) person(ctx context.Context, cond string, args ...any) (rowcall.Person, error) {
	p, err := scanPerson(s.DB.QueryRowContext(ctx, `SELECT `+personColumns+` FROM people WHERE `+cond, args...))
	if errors.Is(err, sql.ErrNoRows) {
		return p, errNoPerson
	}
	return p, err
}

// NewPersonID is a new person's id: per_ and 16 random hex digits.
func NewPersonID() string {
	b := make([]byte, 8)
	rand.Read(b)
	return "per_" + hex.EncodeToString(b)
}

// SignedIn implements rowcall.People.
func (s *Store) SignedIn(ctx context.Context, c rowcall.Claims, role rowcall.Role, now string) (rowcall.Person, error) {
	cats := jsonList([]string{"*"})
	// One statement creates the person or refreshes what the provider says
	// of them; an admin's role is kept, a mapped one follows the groups.
	return scanPerson(s.DB.QueryRowContext(ctx, `INSERT INTO people (id, issuer, subject, email, name, user_name, role, role_from, groups, categories, created_at, seen_at)
		VALUES (?,?,?,?,?,?,?,?,?,?,?,?)
		ON CONFLICT (issuer, subject) DO UPDATE SET email = excluded.email, name = excluded.name,
			user_name = CASE WHEN excluded.user_name <> '' THEN excluded.user_name ELSE people.user_name END,
			groups = excluded.groups, seen_at = excluded.seen_at,
			role = CASE WHEN people.role_from = '`+rowcall.RoleFromAdmin+`' THEN people.role ELSE excluded.role END,
			role_from = CASE WHEN people.role_from = '`+rowcall.RoleFromAdmin+`' THEN people.role_from ELSE excluded.role_from END
		RETURNING `+personColumns,
		NewPersonID(), c.Issuer, c.Subject, c.Email, c.Name, c.UserName, string(role), rowcall.RoleFromGroups,
		jsonList(c.Groups), cats, now, now))
}

// Person implements rowcall.People.
func (s *Store) Person(ctx context.Context, id string) (rowcall.Person, error) {
	return s.person(ctx, `id = ?`, id)
}

// PersonByUserName implements rowcall.People. Both comparisons ignore case,
// as SCIM's userName does (RFC 7643 section 4.1.1: caseExact false).
func (s *Store) PersonByUserName(ctx context.Context, userName string) (rowcall.Person, error) {
	p, err := s.person(ctx, `lower(user_name) = lower(?) ORDER BY created_at LIMIT 1`, userName)
	if errors.Is(err, errNoPerson) {
		return s.person(ctx, `user_name = '' AND lower(email) = lower(?) ORDER BY created_at LIMIT 1`, userName)
	}
	return p, err
}

// CreatePerson implements rowcall.People.
func (s *Store) CreatePerson(ctx context.Context, p rowcall.Person) (rowcall.Person, error) {
	if p.ID == "" {
		p.ID = NewPersonID()
	}
	if p.Categories == nil {
		p.Categories = []string{"*"}
	}
	if p.CreatedAt == "" {
		p.CreatedAt = s.now()
	}
	out, err := scanPerson(s.DB.QueryRowContext(ctx, `INSERT INTO people (id, issuer, subject, email, name, user_name, role, role_from, groups, categories, disabled_at, created_at)
		VALUES (?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT (issuer, subject) DO NOTHING RETURNING `+personColumns,
		p.ID, p.Issuer, p.Subject, p.Email, p.Name, p.UserName, string(p.Role), p.RoleFrom, jsonList(p.Groups), jsonList(p.Categories), p.DisabledAt, p.CreatedAt))
	if errors.Is(err, sql.ErrNoRows) {
		return out, &rowcall.Error{Code: rowcall.EConflict, Message: "a person with this issuer and subject exists", HowToFix: "find them with GET /api/people"}
	}
	return out, err
}

// PeopleList implements rowcall.People.
func (s *Store) PeopleList(ctx context.Context) ([]rowcall.Person, error) {
	return queryAll(ctx, s, scanPerson, `SELECT `+personColumns+` FROM people ORDER BY created_at, id`)
}

// SetPerson implements rowcall.People.
func (s *Store) SetPerson(ctx context.Context, p rowcall.Person) (rowcall.Person, error) {
	out, err := scanPerson(s.DB.QueryRowContext(ctx, `UPDATE people SET role = ?, role_from = ?, categories = ?, email = ?, name = ?, user_name = ?
		WHERE id = ? RETURNING `+personColumns,
		string(p.Role), p.RoleFrom, jsonList(p.Categories), p.Email, p.Name, p.UserName, p.ID))
	if errors.Is(err, sql.ErrNoRows) {
		return out, errNoPerson
	}
	return out, err
}

// DisablePerson implements rowcall.People. The first statement is the one
// that stops the person: from it on, no session or token of theirs
// resolves. The others clean up what they held.
func (s *Store) DisablePerson(ctx context.Context, id, now string) error {
	res, err := s.DB.ExecContext(ctx, `UPDATE people SET disabled_at = CASE WHEN disabled_at = '' THEN ? ELSE disabled_at END WHERE id = ?`, now, id)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return errNoPerson
	}
	// Each statement is given exactly the parameters it uses: D1 refuses a
	// statement bound to more than it names.
	holders := `(SELECT id FROM tokens WHERE person_id = ?1 UNION SELECT ?1)`
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`UPDATE sessions SET revoked_at = ?2 WHERE person_id = ?1 AND revoked_at = ''`, []any{id, now}},
		{`UPDATE tokens SET revoked_at = COALESCE(revoked_at, ?2) WHERE person_id = ?1`, []any{id, now}},
		{`DELETE FROM connections WHERE holder IN ` + holders, []any{id}},
		{`UPDATE approvals SET status = 'denied', decided_at = ?2, decided_by = 'rowcall:person-disabled', reason = 'the person who asked was disabled'
			WHERE status = 'pending' AND caller IN ` + holders, []any{id, now}},
	} {
		if _, err := s.DB.ExecContext(ctx, q.sql, q.args...); err != nil {
			return err
		}
	}
	return nil
}

// EnablePerson implements rowcall.People.
func (s *Store) EnablePerson(ctx context.Context, id string) error {
	res, err := s.DB.ExecContext(ctx, `UPDATE people SET disabled_at = '' WHERE id = ?`, id)
	if err == nil {
		if n, _ := res.RowsAffected(); n == 0 {
			return errNoPerson
		}
	}
	return err
}

// DeletePerson implements rowcall.People.
func (s *Store) DeletePerson(ctx context.Context, id, now string) error {
	if err := s.DisablePerson(ctx, id, now); err != nil {
		return err
	}
	for _, q := range []string{`DELETE FROM sessions WHERE person_id = ?`, `DELETE FROM people WHERE id = ?`} {
		if _, err := s.DB.ExecContext(ctx, q, id); err != nil {
			return err
		}
	}
	return nil
}

// StartSession implements rowcall.People.
func (s *Store) StartSession(ctx context.Context, ss rowcall.Session) error {
	_, err := s.DB.ExecContext(ctx, `INSERT INTO sessions (id, person_id, created_at, expires_at, idle_until) VALUES (?,?,?,?,?)`,
		ss.ID, ss.PersonID, ss.CreatedAt, ss.ExpiresAt, ss.IdleUntil)
	return err
}

var errNoSession = &rowcall.Error{Code: rowcall.EUnauthorized, Message: "the session ended", HowToFix: "sign in again at /login"}

// Session implements rowcall.People: one statement renews a live session's
// idle time and returns it with its person (who may be disabled: the
// caller decides).
func (s *Store) Session(ctx context.Context, id, now, idleUntil string) (rowcall.Session, rowcall.Person, error) {
	var ss rowcall.Session
	row := s.DB.QueryRowContext(ctx, `UPDATE sessions SET idle_until = ? WHERE id = ? AND revoked_at = '' AND expires_at > ? AND idle_until > ?
		RETURNING id, person_id, created_at, expires_at, idle_until`, idleUntil, id, now, now)
	if err := row.Scan(&ss.ID, &ss.PersonID, &ss.CreatedAt, &ss.ExpiresAt, &ss.IdleUntil); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			err = errNoSession
		}
		return ss, rowcall.Person{}, err
	}
	p, err := s.Person(ctx, ss.PersonID)
	if errors.Is(err, errNoPerson) {
		err = errNoSession
	}
	return ss, p, err
}

// EndSession implements rowcall.People.
func (s *Store) EndSession(ctx context.Context, id string) error {
	_, err := s.DB.ExecContext(ctx, `UPDATE sessions SET revoked_at = ? WHERE id = ? AND revoked_at = ''`, s.now(), id)
	return err
}

// LoginTTL is how long a sign-in begun may be finished.
const LoginTTL = 10 * time.Minute

// PutLogin implements rowcall.People; sign-ins older than ten minutes are
// forgotten as a new one is stored.
func (s *Store) PutLogin(ctx context.Context, l rowcall.Login) error {
	if _, err := s.DB.ExecContext(ctx, `DELETE FROM logins WHERE created_at < ?`, s.ago(LoginTTL)); err != nil {
		return err
	}
	_, err := s.DB.ExecContext(ctx, `INSERT INTO logins (state, nonce, verifier, return_to, created_at) VALUES (?,?,?,?,?)`,
		l.State, l.Nonce, l.Verifier, l.ReturnTo, l.CreatedAt)
	return err
}

// TakeLogin implements rowcall.People: one DELETE … RETURNING, so a state is
// taken once however many callbacks race with it.
func (s *Store) TakeLogin(ctx context.Context, state string) (rowcall.Login, error) {
	var l rowcall.Login
	err := s.DB.QueryRowContext(ctx, `DELETE FROM logins WHERE state = ? AND created_at >= ? RETURNING state, nonce, verifier, return_to, created_at`,
		state, s.ago(LoginTTL)).Scan(&l.State, &l.Nonce, &l.Verifier, &l.ReturnTo, &l.CreatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return l, &rowcall.Error{Code: rowcall.ENotFound, Message: "this sign-in is unknown, used or expired", HowToFix: "start again at /login"}
	}
	return l, err
}
