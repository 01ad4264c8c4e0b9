package scim

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// parseFilter reads the one filter this service answers, userName eq "…"
// (RFC 7644 section 3.4.2.2: the attribute and the operator in any case,
// the attribute optionally prefixed by the User schema's URN, the value a
// JSON string), and returns its value. It is the filter Okta and Microsoft
// Entra ID send to find a person before they create one.
func parseFilter(f string) (string, error) {
	attr, rest, _ := strings.Cut(strings.TrimSpace(f), " ")
	op, value, _ := strings.Cut(strings.TrimSpace(rest), " ")
	if n := len(SchemaUser) + 1; len(attr) > n && strings.EqualFold(attr[:n], SchemaUser+":") {
		attr = attr[n:]
	}
	var name string
	if !strings.EqualFold(attr, "userName") || !strings.EqualFold(op, "eq") || json.Unmarshal([]byte(strings.TrimSpace(value)), &name) != nil {
		return "", fail(CodeInvalidFilter, http.StatusBadRequest, TypeInvalidFilter, "filter "+strconv.Quote(f)+" is not one this host answers",
			`filter Users by userName eq "…" (the only filter this host supports), or list them without a filter`)
	}
	return name, nil
}

// paging reads startIndex (1-based; less than 1 is 1) and count (0 to
// MaxResults; more is MaxResults, less than 0 is 0, none is MaxResults)
// (RFC 7644 section 3.4.2.4).
func paging(q url.Values) (start, count int, err error) {
	start, count = 1, MaxResults
	for _, p := range []struct {
		name string
		to   *int
	}{{"startIndex", &start}, {"count", &count}} {
		v := q.Get(p.name)
		if v == "" {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			return 0, 0, fail(CodeInvalidValue, http.StatusBadRequest, TypeInvalidValue, p.name+" "+strconv.Quote(v)+" is not a whole number", "send startIndex from 1 and count from 0")
		}
		*p.to = n
	}
	return max(start, 1), min(max(count, 0), MaxResults), nil
}
