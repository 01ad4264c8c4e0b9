package api

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/api/scim"
	"github.com/rowcall/rowcall/internal/directory"
	"github.com/rowcall/rowcall/internal/testenv"
	"github.com/rowcall/rowcall/sqlstore"
)

const scimToken = "scim-test-token-0123456789abcdefghij"

// scimHost is the API with SCIM on, over a real store.
type scimHost struct {
	t     *testing.T
	h     http.Handler
	store *sqlstore.Store
}

func newSCIMHost(t *testing.T, token, issuer string) *scimHost {
	store := testenv.Store(t)
	h := New(Config{OwnerKeys: func() []string { return []string{"rk_owner_test"} }, People: store, SCIMToken: token, SCIMIssuer: issuer},
		directory.New(store, ""), store, testenv.Dispatcher(t, nil))
	return &scimHost{t: t, h: h, store: store}
}

// scimAnswer is one answer: its status, headers and JSON body.
type scimAnswer struct {
	Status int
	Header http.Header
	Body   map[string]any
	Raw    string
}

// do sends method path with body and the Authorization header auth ("" for
// none).
func (s *scimHost) do(method, path, body, auth string) scimAnswer {
	s.t.Helper()
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	if body != "" {
		r.Header.Set("Content-Type", scim.ContentType)
	}
	if auth != "" {
		r.Header.Set("Authorization", auth)
	}
	w := httptest.NewRecorder()
	s.h.ServeHTTP(w, r)
	a := scimAnswer{Status: w.Code, Header: w.Header(), Raw: w.Body.String()}
	json.Unmarshal(w.Body.Bytes(), &a.Body)
	return a
}

func (s *scimHost) scim(method, path, body string) scimAnswer {
	s.t.Helper()
	return s.do(method, scim.Path+path, body, "Bearer "+scimToken)
}

// isError checks a SCIM Error: the status, the content type, the Error
// schema, the status as a string, scimType, and a detail that says how to
// fix it.
func isError(t *testing.T, a scimAnswer, status int, scimType string) {
	t.Helper()
	if a.Status != status || a.Header.Get("Content-Type") != scim.ContentType {
		t.Fatalf("%d %s %s, want %d %s", a.Status, a.Header.Get("Content-Type"), a.Raw, status, scim.ContentType)
	}
	schemas, _ := a.Body["schemas"].([]any)
	detail, _ := a.Body["detail"].(string)
	got, _ := a.Body["scimType"].(string)
	if len(schemas) != 1 || schemas[0] != scim.SchemaError || a.Body["status"] != itoa(status) ||
		got != scimType || !strings.Contains(detail, " — ") || len(a.Body) != 3+min(len(scimType), 1) {
		t.Fatalf("SCIM error %s, want status %q and scimType %q with a detail", a.Raw, itoa(status), scimType)
	}
}

func itoaF(s string) float64 { var f float64; json.Unmarshal([]byte(s), &f); return f }

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func user(userName, externalID string, extra string) string {
	body := `{"schemas":["` + scim.SchemaUser + `"],"userName":"` + userName + `"`
	if externalID != "" {
		body += `,"externalId":"` + externalID + `"`
	}
	return body + extra + "}"
}

func deactivate(value string) string {
	return `{"schemas":["` + scim.SchemaPatchOp + `"],"Operations":[{"op":"replace","path":"active","value":` + value + `}]}`
}

// The SCIM surface as an identity provider sees it: only the SCIM token
// opens it; every answer is application/scim+json, every refusal a SCIM
// Error (the API's own 401, 404 and 413 too); Users are created bound to the
// issuer and externalId, found by userName, paged, replaced, patched and
// deleted; a malformed PatchOp changes nothing.
func TestSCIMSurface(t *testing.T) {
	const issuer = "https://idp.example.test"
	s := newSCIMHost(t, scimToken, issuer)
	ctx := context.Background()

	t.Run("only the SCIM token", func(t *testing.T) {
		for _, auth := range []string{"", "Bearer rk_owner_test", "Bearer " + scimToken + "x", "Basic " + scimToken, "Bearer"} {
			a := s.do("GET", scim.Path+"/Users", "", auth)
			isError(t, a, 401, "")
			if !strings.HasPrefix(a.Header.Get("WWW-Authenticate"), "Bearer ") {
				t.Fatalf("%q: no challenge", auth)
			}
		}
		r := httptest.NewRequest("GET", scim.Path+"/Users", nil)
		r.Header.Set("X-Terminal-Key", "rk_owner_test")
		w := httptest.NewRecorder()
		s.h.ServeHTTP(w, r)
		if w.Code != 401 {
			t.Fatalf("the owner key opened SCIM: %d", w.Code)
		}
		// The SCIM token is no credential anywhere else.
		if a := s.do("GET", "/api/people", "", "Bearer "+scimToken); a.Status != 401 {
			t.Fatalf("the SCIM token read /api/people: %d %s", a.Status, a.Raw)
		}
	})

	t.Run("discovery", func(t *testing.T) {
		for path, schema := range map[string]string{"/ServiceProviderConfig": scim.SchemaConfig, "/ResourceTypes": scim.SchemaListResponse,
			"/Schemas": scim.SchemaListResponse, "/ResourceTypes/User": scim.SchemaResourceType, "/Schemas/" + scim.SchemaUser: scim.SchemaSchema} {
			a := s.scim("GET", path, "")
			if a.Status != 200 || a.Header.Get("Content-Type") != scim.ContentType || !strings.Contains(a.Raw, `"schemas":["`+schema+`"]`) {
				t.Fatalf("%s: %d %s", path, a.Status, a.Raw)
			}
		}
		if a := s.scim("GET", "/ServiceProviderConfig", ""); !strings.Contains(a.Raw, `"patch":{"supported":true}`) || !strings.Contains(a.Raw, `"bulk":{"maxOperations":0,"maxPayloadSize":0,"supported":false}`) {
			t.Fatalf("ServiceProviderConfig: %s", a.Raw)
		}
		isError(t, s.scim("GET", "/Schemas/urn:other", ""), 404, "")
		isError(t, s.scim("GET", "/Groups", ""), 404, "")
		isError(t, s.scim("POST", "/Users/per_x", "{}"), 404, "")
	})

	var ada map[string]any
	t.Run("create", func(t *testing.T) {
		a := s.scim("POST", "/Users", user("ada@example.com", "00u-ada", `,"name":{"givenName":"Ada","familyName":"Lovelace"},"emails":[{"value":"ada@example.com","type":"work","primary":true}],"active":true`))
		ada = a.Body
		id, _ := a.Body["id"].(string)
		meta, _ := a.Body["meta"].(map[string]any)
		if a.Status != 201 || a.Header.Get("Content-Type") != scim.ContentType || !strings.HasPrefix(id, "per_") ||
			a.Header.Get("Location") != "http://example.com"+scim.Path+"/Users/"+id || meta["location"] != a.Header.Get("Location") ||
			meta["resourceType"] != "User" || meta["created"] == "" || meta["lastModified"] == "" ||
			a.Body["externalId"] != "00u-ada" || a.Body["userName"] != "ada@example.com" || a.Body["active"] != true || a.Body["displayName"] != "Ada Lovelace" ||
			!strings.Contains(a.Raw, `"schemas":["`+scim.SchemaUser+`"]`) || !strings.Contains(a.Raw, `"emails":[{"value":"ada@example.com","type":"work","primary":true}]`) {
			t.Fatalf("create: %d %v %s", a.Status, a.Header, a.Raw)
		}
		p, err := s.store.Person(ctx, id)
		if err != nil || p.Issuer != issuer || p.Subject != "00u-ada" || p.Role != "" || p.RoleFrom != rowcall.RoleFromGroups || !p.Active() {
			t.Fatalf("stored %+v %v: want bound to %s and 00u-ada, no role yet", p, err, issuer)
		}
	})

	t.Run("create refused", func(t *testing.T) {
		a := s.scim("POST", "/Users", user("bob@example.com", "", ""))
		isError(t, a, 400, scim.TypeInvalidValue)
		if d := a.Body["detail"].(string); !strings.Contains(d, "externalId is required") || !strings.Contains(d, "issuer and subject") {
			t.Fatalf("no externalId: %s", d)
		}
		isError(t, s.scim("POST", "/Users", user("ADA@example.com", "00u-other", "")), 409, scim.TypeUniqueness)
		isError(t, s.scim("POST", "/Users", user("ada2@example.com", "00u-ada", "")), 409, scim.TypeUniqueness)
		isError(t, s.scim("POST", "/Users", `{"userName":"x"`), 400, scim.TypeInvalidSyntax)
		isError(t, s.scim("POST", "/Users", strings.Repeat(" ", scim.MaxBody+1)), 413, "")
		r := httptest.NewRequest("POST", scim.Path+"/Users", strings.NewReader(user("c@example.com", "c", "")))
		r.Header.Set("Authorization", "Bearer "+scimToken)
		r.Header.Set("Content-Type", "text/plain")
		w := httptest.NewRecorder()
		s.h.ServeHTTP(w, r)
		if w.Code != 415 || w.Header().Get("Content-Type") != scim.ContentType {
			t.Fatalf("text/plain: %d %s", w.Code, w.Body)
		}
		if list, _ := s.store.PeopleList(ctx); len(list) != 1 {
			t.Fatalf("refused creations stored people: %v", list)
		}
	})

	t.Run("find and page", func(t *testing.T) {
		for _, f := range []string{`userName eq "ada@example.com"`, `userName eq "Ada@Example.com"`, `USERNAME Eq "ada@example.com"`} {
			a := s.scim("GET", "/Users?filter="+urlQuery(f), "")
			res, _ := a.Body["Resources"].([]any)
			if a.Status != 200 || a.Body["totalResults"] != 1.0 || len(res) != 1 || res[0].(map[string]any)["id"] != ada["id"] ||
				!strings.Contains(a.Raw, `"schemas":["`+scim.SchemaListResponse+`"]`) {
				t.Fatalf("filter %s: %s", f, a.Raw)
			}
		}
		a := s.scim("GET", "/Users?filter="+urlQuery(`userName eq "nobody@example.com"`), "")
		if a.Status != 200 || a.Body["totalResults"] != 0.0 || !strings.Contains(a.Raw, `"Resources":[]`) {
			t.Fatalf("no match: %s", a.Raw)
		}
		isError(t, s.scim("GET", "/Users?filter="+urlQuery(`emails co "ada"`), ""), 400, scim.TypeInvalidFilter)
		isError(t, s.scim("GET", "/Users?count=many", ""), 400, scim.TypeInvalidValue)
		for _, n := range []string{"b", "c", "d"} {
			if a := s.scim("POST", "/Users", user(n+"@example.com", "00u-"+n, "")); a.Status != 201 {
				t.Fatal(a.Raw)
			}
		}
		seen := map[any]bool{}
		for _, start := range []string{"1", "3"} {
			a = s.scim("GET", "/Users?startIndex="+start+"&count=2", "")
			res, _ := a.Body["Resources"].([]any)
			if a.Body["totalResults"] != 4.0 || a.Body["startIndex"] != itoaF(start) || a.Body["itemsPerPage"] != 2.0 || len(res) != 2 {
				t.Fatalf("page at %s: %s", start, a.Raw)
			}
			for _, u := range res {
				seen[u.(map[string]any)["id"]] = true
			}
		}
		if len(seen) != 4 {
			t.Fatalf("two pages of two held %d people, want 4", len(seen))
		}
		if a := s.scim("GET", "/Users?startIndex=9", ""); a.Body["totalResults"] != 4.0 || a.Body["itemsPerPage"] != 0.0 {
			t.Fatalf("past the end: %s", a.Raw)
		}
	})

	id := ada["id"].(string)
	t.Run("malformed PatchOp changes nothing", func(t *testing.T) {
		for _, body := range []string{
			`{"schemas":["` + scim.SchemaPatchOp + `"],"Operations":[{"op":"replace","path":"active","value":false},{"op":"explode","path":"userName","value":"x"}]}`,
			`{"Operations":[{"op":"replace","path":"active","value":false}]}`,
			`{"schemas":["` + scim.SchemaPatchOp + `"],"Operations":[{"op":"replace","path":"active","value":false},`,
		} {
			isError(t, s.scim("PATCH", "/Users/"+id, body), 400, scim.TypeInvalidSyntax)
		}
		if p, _ := s.store.Person(ctx, id); !p.Active() || p.Name != "Ada Lovelace" {
			t.Fatalf("a refused PatchOp changed %+v", p)
		}
	})

	t.Run("replace", func(t *testing.T) {
		a := s.scim("PUT", "/Users/"+id, user("ada@example.com", "00u-ada", `,"displayName":"Ada King","emails":[{"value":"ada.king@example.com"}],"active":true`))
		if a.Status != 200 || a.Body["displayName"] != "Ada King" || a.Body["active"] != true {
			t.Fatalf("PUT: %s", a.Raw)
		}
		isError(t, s.scim("PUT", "/Users/"+id, user("ada@example.com", "00u-someone-else", "")), 400, scim.TypeMutability)
		isError(t, s.scim("PUT", "/Users/"+id, user("b@example.com", "", "")), 409, scim.TypeUniqueness)
		if p, _ := s.store.Person(ctx, id); p.Subject != "00u-ada" || p.UserName != "ada@example.com" || p.Email != "ada.king@example.com" {
			t.Fatalf("after PUT: %+v", p)
		}
	})

	t.Run("deactivate and activate", func(t *testing.T) {
		a := s.scim("PATCH", "/Users/"+id, deactivate("false"))
		if a.Status != 200 || a.Body["active"] != false {
			t.Fatalf("deactivate: %s", a.Raw)
		}
		if p, _ := s.store.Person(ctx, id); p.Active() {
			t.Fatalf("still active: %+v", p)
		}
		a = s.scim("PATCH", "/Users/"+id, `{"schemas":["`+scim.SchemaPatchOp+`"],"Operations":[{"op":"Replace","path":"active","value":"True"}]}`)
		if a.Status != 200 || a.Body["active"] != true {
			t.Fatalf("activate (Entra's form): %s", a.Raw)
		}
		a = s.scim("PATCH", "/Users/"+id, `{"schemas":["`+scim.SchemaPatchOp+`"],"Operations":[{"op":"replace","value":{"active":false}}]}`)
		if a.Status != 200 || a.Body["active"] != false {
			t.Fatalf("deactivate (Okta's form): %s", a.Raw)
		}
		isError(t, s.scim("PATCH", "/Users/per_0000000000000000", deactivate("false")), 404, "")
	})

	t.Run("delete", func(t *testing.T) {
		a := s.scim("DELETE", "/Users/"+id, "")
		if a.Status != 204 || a.Raw != "" {
			t.Fatalf("DELETE: %d %s", a.Status, a.Raw)
		}
		isError(t, s.scim("GET", "/Users/"+id, ""), 404, "")
		isError(t, s.scim("DELETE", "/Users/"+id, ""), 404, "")
	})
}

func urlQuery(s string) string {
	r := httptest.NewRequest("GET", "/?x=1", nil)
	q := r.URL.Query()
	q.Set("f", s)
	return strings.TrimPrefix(q.Encode(), "f=")
}

// Without ROWCALL_SCIM_TOKEN nothing is served under /scim/v2; without
// ROWCALL_OIDC_ISSUER nobody can be created (they could never sign in), and
// the rest works.
func TestSCIMOffAndWithoutIssuer(t *testing.T) {
	off := newSCIMHost(t, "", "https://idp.example.test")
	for _, auth := range []string{"", "Bearer "} {
		if a := off.do("GET", scim.Path+"/Users", "", auth); a.Status != 404 {
			t.Fatalf("SCIM off: %d %s", a.Status, a.Raw)
		}
	}
	s := newSCIMHost(t, scimToken, "")
	a := s.scim("POST", "/Users", user("ada@example.com", "00u-ada", ""))
	isError(t, a, 501, "")
	if !strings.Contains(a.Body["detail"].(string), "ROWCALL_OIDC_ISSUER") {
		t.Fatalf("no issuer: %s", a.Raw)
	}
	if a := s.scim("GET", "/Users", ""); a.Status != 200 || a.Body["totalResults"] != 0.0 {
		t.Fatalf("list without an issuer: %s", a.Raw)
	}
}
