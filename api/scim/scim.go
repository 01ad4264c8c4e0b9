// Package scim is rowcall's SCIM 2.0 service provider (RFC 7643, RFC 7644):
// the organisation's identity provider (Okta, Microsoft Entra ID, any SCIM
// client) creates people ahead of their first sign-in, keeps their names
// current, and ends their access, under /scim/v2.
//
// A person is bound to the OpenID provider's issuer and subject, never to an
// email or a user name alone: a User created here is bound to the host's
// issuer (ROWCALL_OIDC_ISSUER) and to its externalId as the subject, so
// externalId is required. Setting active to false, or deleting the User,
// disables the person (rowcall.People.DisablePerson): every session, token,
// OAuth grant, connection and pending approval of theirs stops in that one
// request; their receipts stay.
//
// The wire format is SCIM's: application/scim+json, the core User schema,
// ListResponse, PatchOp, and the Error message for every refusal (the API
// writes its errors under Path through WriteError). What identity providers
// send besides the RFC's own forms is read too (parsePatch). The only
// filter is userName eq "…", which is the one the providers use.
// Authentication (the operator's ROWCALL_SCIM_TOKEN) and body bounds are the
// API's, which serves Routes.
package scim

import (
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/rowcall/rowcall"
)

// Path is where SCIM is served: the base URL a provider is given is the
// host's followed by Path.
const Path = "/scim/v2"

// MaxBody is the largest request body SCIM reads: a User is a few hundred
// bytes, a PatchOp of a hundred operations a few kilobytes.
const MaxBody = 64 << 10

// MaxResults is the most Users one list answers (ServiceProviderConfig's
// filter.maxResults).
const MaxResults = 200

// Service serves SCIM over the host's people.
type Service struct {
	People rowcall.People
	// Issuer is the OpenID provider's issuer (ROWCALL_OIDC_ISSUER) that a
	// person created here is bound to; "" refuses creation.
	Issuer string
	Now    func() time.Time
	// Base is the host's base URL for r (links: meta.location).
	Base func(r *http.Request) string
	// Fail writes a refusal; the API's writes SCIM's Error under Path
	// (WriteError).
	Fail func(w http.ResponseWriter, r *http.Request, err error)
}

// Route is one pattern SCIM serves.
type Route struct {
	Pattern string
	Handler http.HandlerFunc
}

// Routes lists what SCIM serves, the last a catch-all for any other path
// under Path.
func (s *Service) Routes() []Route {
	return []Route{
		{"GET " + Path + "/Users", s.list},
		{"POST " + Path + "/Users", s.create},
		{"GET " + Path + "/Users/{id}", s.get},
		{"PUT " + Path + "/Users/{id}", s.replace},
		{"PATCH " + Path + "/Users/{id}", s.patch},
		{"DELETE " + Path + "/Users/{id}", s.delete},
		{"GET " + Path + "/ServiceProviderConfig", s.config},
		{"GET " + Path + "/ResourceTypes", s.resourceTypes},
		{"GET " + Path + "/ResourceTypes/{id}", s.resourceType},
		{"GET " + Path + "/Schemas", s.schemas},
		{"GET " + Path + "/Schemas/{id}", s.schema},
		{Path + "/", s.unknown},
	}
}

// IsPath reports whether a request path is SCIM's: its errors are SCIM
// Errors.
func IsPath(p string) bool { return p == Path || strings.HasPrefix(p, Path+"/") }

func (s *Service) now() string { return s.Now().UTC().Format(rowcall.Timestamp) }

// unknown answers any other path under Path.
func (s *Service) unknown(w http.ResponseWriter, r *http.Request) {
	s.Fail(w, r, &rowcall.Error{Code: rowcall.ENotFound, Message: r.Method + " " + r.URL.Path + " is not part of this host's SCIM",
		HowToFix: "this host serves " + Path + "/Users (GET, POST), " + Path + "/Users/{id} (GET, PUT, PATCH, DELETE), /ServiceProviderConfig, /ResourceTypes and /Schemas"})
}

// person reads the person id names, with SCIM's 404 when none.
func (s *Service) person(ctx context.Context, id string) (rowcall.Person, error) {
	p, err := s.People.Person(ctx, id)
	if e := errorOf(err); e != nil && e.Code == rowcall.ENotFound {
		return p, &rowcall.Error{Code: rowcall.ENotFound, Message: "no person has the id " + id,
			HowToFix: `find a person with GET ` + Path + `/Users?filter=userName eq "…"`}
	}
	return p, err
}

// body reads a request's JSON body: application/scim+json or
// application/json (or no Content-Type), at most MaxBody bytes.
func body(r *http.Request) ([]byte, error) {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, _ := mime.ParseMediaType(ct)
		if mt != ContentType && mt != "application/json" {
			return nil, &rowcall.Error{Code: rowcall.EMediaType, Message: "Content-Type " + ct + " is not SCIM's", HowToFix: "send the body as " + ContentType}
		}
	}
	b, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, MaxBody))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return nil, &rowcall.Error{Code: rowcall.ETooLarge, Message: "the body is over 64 KiB", HowToFix: "send one User or PatchOp"}
	}
	return b, err
}

func (s *Service) answer(w http.ResponseWriter, r *http.Request, status int, p rowcall.Person, err error) {
	if err != nil {
		s.Fail(w, r, err)
		return
	}
	write(w, status, userOf(p, s.Base(r)))
}

// list handles GET /scim/v2/Users: every person, a page at a time, or the
// one a filter userName eq "…" finds (by user name, else by the email of a
// person who signed in without one).
func (s *Service) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	start, count, err := paging(q)
	if err != nil {
		s.Fail(w, r, err)
		return
	}
	var people []rowcall.Person
	if f := q.Get("filter"); strings.TrimSpace(f) != "" {
		name, err := parseFilter(f)
		if err != nil {
			s.Fail(w, r, err)
			return
		}
		if name != "" { // nobody's userName is empty
			p, err := s.People.PersonByUserName(r.Context(), name)
			if e := errorOf(err); err != nil && (e == nil || e.Code != rowcall.ENotFound) {
				s.Fail(w, r, err)
				return
			}
			if err == nil {
				people = []rowcall.Person{p}
			}
		}
	} else if people, err = s.People.PeopleList(r.Context()); err != nil {
		s.Fail(w, r, err)
		return
	}
	base := s.Base(r)
	var page []any
	for _, p := range people[min(start-1, len(people)):min(start-1+count, len(people))] {
		page = append(page, userOf(p, base))
	}
	write(w, http.StatusOK, listOf(len(people), start, page))
}

// get handles GET /scim/v2/Users/{id}.
func (s *Service) get(w http.ResponseWriter, r *http.Request) {
	p, err := s.person(r.Context(), r.PathValue("id"))
	s.answer(w, r, http.StatusOK, p, err)
}

// create handles POST /scim/v2/Users: a person ahead of their first
// sign-in, bound to the host's issuer and to externalId as their subject,
// with no role until their groups map to one at sign-in or an admin grants
// one. active false creates them disabled.
func (s *Service) create(w http.ResponseWriter, r *http.Request) {
	if s.Issuer == "" {
		s.Fail(w, r, fail(CodeNoIssuer, http.StatusNotImplemented, "", "this host names no OpenID provider (ROWCALL_OIDC_ISSUER), so a person created here could never sign in",
			"the operator sets ROWCALL_OIDC_ISSUER to the provider's issuer; finding, updating and deactivating people works without it"))
		return
	}
	b, err := body(r)
	if err != nil {
		s.Fail(w, r, err)
		return
	}
	u, err := parseUser(b)
	if err == nil && !u.HasExternalID {
		err = fail(CodeNoExternalID, http.StatusBadRequest, TypeInvalidValue,
			"externalId is required: a person is bound to their provider's issuer and subject, never to an email or a userName alone, and externalId is that subject",
			"map externalId to the user's identifier that the provider's ID tokens carry as sub (Okta: the user's id)")
	}
	if err == nil {
		err = s.unique(r.Context(), u.UserName, "")
	}
	if err != nil {
		s.Fail(w, r, err)
		return
	}
	now := s.now()
	p := rowcall.Person{Issuer: s.Issuer, Subject: u.ExternalID, Email: u.Email, Name: u.Name, UserName: u.UserName,
		RoleFrom: rowcall.RoleFromGroups, CreatedAt: now}
	if u.Active != nil && !*u.Active {
		p.DisabledAt = now
	}
	p, err = s.People.CreatePerson(r.Context(), p)
	if e := errorOf(err); e != nil && e.Code == rowcall.EConflict {
		err = fail(rowcall.EConflict, http.StatusConflict, TypeUniqueness, "a person bound to this provider with the externalId (subject) "+u.ExternalID+" exists already",
			`find them with GET `+Path+`/Users?filter=userName eq "…", or list `+Path+"/Users")
	}
	if err == nil {
		w.Header().Set("Location", s.Base(r)+Path+"/Users/"+p.ID)
	}
	s.answer(w, r, http.StatusCreated, p, err)
}

// unique refuses userName when a person other than self has it already.
func (s *Service) unique(ctx context.Context, userName, self string) error {
	p, err := s.People.PersonByUserName(ctx, userName)
	switch e := errorOf(err); {
	case e != nil && e.Code == rowcall.ENotFound:
		return nil
	case err != nil:
		return err
	case p.ID != self && strings.EqualFold(p.UserName, userName):
		return fail(CodeUserNameExists, http.StatusConflict, TypeUniqueness, "another person ("+p.ID+") has the userName "+userName,
			"userName is unique: find that person with a filter userName eq, or send another userName")
	}
	return nil
}

// replace handles PUT /scim/v2/Users/{id}: the person's user name, name and
// email become the body's; active, when sent, is applied (false ends their
// access).
func (s *Service) replace(w http.ResponseWriter, r *http.Request) {
	s.update(w, r, func(b []byte) (change, error) {
		u, err := parseUser(b)
		c := change{UserName: &u.UserName, Name: &u.Name, Email: &u.Email, Active: u.Active}
		if u.HasExternalID {
			c.ExternalID = &u.ExternalID
		}
		return c, err
	})
}

// patch handles PATCH /scim/v2/Users/{id} (parsePatch).
func (s *Service) patch(w http.ResponseWriter, r *http.Request) { s.update(w, r, parsePatch) }

// update applies the change read reads of the request's body to the person
// the path names, and answers them as they are now.
func (s *Service) update(w http.ResponseWriter, r *http.Request, read func([]byte) (change, error)) {
	p, err := s.person(r.Context(), r.PathValue("id"))
	var b []byte
	if err == nil {
		b, err = body(r)
	}
	var c change
	if err == nil {
		c, err = read(b)
	}
	if err == nil {
		p, err = s.apply(r.Context(), p, c)
	}
	s.answer(w, r, http.StatusOK, p, err)
}

// apply makes c of p and returns the person as they are now. Everything
// that can refuse is checked before anything is written. A person
// deactivated is disabled first, so everything of theirs has stopped
// before the rest is stored; one activated again is enabled last (what was
// revoked stays revoked).
func (s *Service) apply(ctx context.Context, p rowcall.Person, c change) (rowcall.Person, error) {
	if c.ExternalID != nil && *c.ExternalID != p.Subject {
		return p, fail(CodeMutability, http.StatusBadRequest, TypeMutability, "externalId is the person's subject at their provider ("+p.Subject+") and cannot change",
			"a different subject is a different person: create them with POST "+Path+"/Users; nothing was changed")
	}
	next := p
	if c.UserName != nil {
		if *c.UserName == "" {
			return p, fail(CodeInvalidValue, http.StatusBadRequest, TypeInvalidValue, "userName cannot be empty", "nothing was changed")
		}
		next.UserName = *c.UserName
	}
	if c.Email != nil {
		next.Email = *c.Email
	}
	if c.Name != nil {
		next.Name = *c.Name
	} else {
		next.Name, _ = c.names.name(p.Name)
	}
	if len(next.Name) > maxValue {
		return p, tooLong()
	}
	if !strings.EqualFold(next.UserName, p.UserName) {
		if err := s.unique(ctx, next.UserName, p.ID); err != nil {
			return p, err
		}
	}
	if c.Active != nil && !*c.Active && p.Active() {
		if err := s.People.DisablePerson(ctx, p.ID, s.now()); err != nil {
			return p, err
		}
	}
	if next.UserName != p.UserName || next.Email != p.Email || next.Name != p.Name {
		if _, err := s.People.SetPerson(ctx, next); err != nil {
			return p, err
		}
	}
	if c.Active != nil && *c.Active && !p.Active() {
		if err := s.People.EnablePerson(ctx, p.ID); err != nil {
			return p, err
		}
	}
	return s.person(ctx, p.ID)
}

// delete handles DELETE /scim/v2/Users/{id}: the person is disabled (all of
// theirs stops), then removed; their receipts stay, naming their issuer and
// subject.
func (s *Service) delete(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	_, err := s.person(r.Context(), id)
	if err == nil {
		err = s.People.DeletePerson(r.Context(), id, s.now())
	}
	if err != nil {
		s.Fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
