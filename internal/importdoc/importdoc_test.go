package importdoc

import (
	"testing"

	"github.com/rowcall/rowcall"
)

func TestKey(t *testing.T) {
	for id, want := range map[string]string{
		"addPet": "ADD_PET", "add-pet": "ADD_PET", "issues/list-for-repo": "ISSUES_LIST_FOR_REPO",
		"GET_/pets/{id}": "GET_PETS_ID", "DIR_GET": "DIR_GET", "getHTTPStatus": "GET_HTTPSTATUS",
		"create_issue": "CREATE_ISSUE", "get-structured-content": "GET_STRUCTURED_CONTENT",
	} {
		if got := Key(id); got != want || !rowcall.ValidKey(got) {
			t.Errorf("Key(%q) = %q, want %q", id, got, want)
		}
	}
}

func TestSample(t *testing.T) {
	for _, c := range []struct {
		schema map[string]any
		want   string
	}{
		{map[string]any{"type": "string"}, "x"},
		{map[string]any{}, "x"},
		{map[string]any{"type": "integer"}, "1"},
		{map[string]any{"type": []any{"number", "null"}}, "1"},
		{map[string]any{"type": "boolean"}, "true"},
		{map[string]any{"type": "object"}, "{}"},
		{map[string]any{"type": "array"}, "[]"},
		{map[string]any{"type": "array", "items": map[string]any{"type": "integer"}}, "[1]"},
		{map[string]any{"type": "array", "items": map[string]any{"type": "string"}}, `["x"]`},
		{map[string]any{"type": "string", "enum": []any{"open", "closed"}}, "open"},
		{map[string]any{"type": "integer", "default": 20.0}, "20"},
	} {
		if got := Sample(c.schema); got != c.want {
			t.Errorf("Sample(%v) = %q, want %q", c.schema, got, c.want)
		}
	}
}
