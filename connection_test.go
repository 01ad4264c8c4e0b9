package rowcall

import "testing"

// A row's auth names a caller's connection as bearer:connection:NAME, which
// reads no variable; any other spelling is a bad spec, never a variable name.
func TestParseAuthConnection(t *testing.T) {
	a, err := ParseAuth(" bearer: connection:github ")
	if err != nil || a.Kind != "bearer" || a.Connection != "github" || a.Env != "" || len(a.Vars) != 0 {
		t.Fatalf("bearer:connection:github = %+v, %v", a, err)
	}
	for _, bad := range []string{"bearer:connection:", "bearer:connection:Git Hub", "bearer:connection:$ROWCALL_OWNER_KEY", "basic:connection:github", "query:connection:github"} {
		if a, err := ParseAuth(bad); err == nil || a.Connection != "" {
			t.Errorf("%q parsed: %+v", bad, a)
		}
	}
}
