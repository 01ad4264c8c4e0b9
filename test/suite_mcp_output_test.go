package test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// suiteMCPOutput: a row that declares its output (output_schema) is listed
// with it as the tool's outputSchema, and a call answers the result parsed as
// JSON as structuredContent, on both protocols (2025-11-25 and the
// per-request 2026-07-28); a result that does not conform is an error result
// that says where. A row's call template completes its arguments from the
// row's enums and examples, bounded and by prefix, for the rows the caller
// may call and no others.
func suiteMCPOutput(t *testing.T, tg *target, up *upstream) {
	h := tg.host
	ctx := context.Background()
	input := `{"type":"object","properties":{"latitude":{"type":"number"},"longitude":{"type":"number"},` +
		`"unit":{"type":"string","enum":["celsius","fahrenheit"]}},"required":["latitude","longitude"]}`
	createRow(t, h, map[string]any{"key": "S_OUT_TEMP", "type": "http", "category": "s_out",
		"target":       "GET " + up.URL + "/v1/forecast?latitude=$1&longitude=$2&temperature_unit=$3",
		"content":      "# WHAT: Current temperature at a place, structured.\n# EX: [S_OUT_TEMP]48.85|2.35|celsius[/S_OUT_TEMP]",
		"examples":     `["37.77|-122.42|celsius","51.51|-0.13|fahrenheit"]`,
		"input_schema": input,
		"output_schema": `{"type":"object","properties":{"current":{"type":"object","properties":{"temperature_2m":{"type":"number"}},` +
			`"required":["temperature_2m"]}},"required":["current","latitude"]}`})
	createRow(t, h, map[string]any{"key": "S_OUT_WRONG", "type": "http", "category": "s_out",
		"target": "GET " + up.URL + "/v1/forecast?latitude=$1&longitude=$2", "content": "# WHAT: Declares a humidity it never answers.",
		"input_schema": input, "output_schema": `{"type":"object","required":["humidity"]}`})
	many := make([]string, 150)
	for i := range many {
		many[i] = fmt.Sprintf(`"v%03d"`, i)
	}
	createRow(t, h, map[string]any{"key": "S_OUT_MANY", "type": "http", "category": "s_out_many", "target": "GET " + up.URL + "/v1/forecast?q=$1",
		"content": "# WHAT: An argument of 150 choices.", "input_schema": `{"type":"object","properties":{"pick":{"type":"string","enum":[` + strings.Join(many, ",") + `]}}}`})

	for _, version := range []string{"2025-11-25", ""} { // "": the Go SDK client's newest, the per-request protocol
		s := connectMCPAt(t, h, "x-terminal-key", h.Key, version)
		tool := s.tools(t)["S_OUT_TEMP"]
		if sc := structured(t, tool.OutputSchema); sc["type"] != "object" || sc["properties"] == nil {
			t.Fatalf("%q: S_OUT_TEMP's outputSchema %v", version, tool.OutputSchema)
		}
		res := s.call(t, "S_OUT_TEMP", map[string]any{"latitude": 37.77, "longitude": -122.42, "unit": "celsius"})
		out := structured(t, res.StructuredContent)
		tx := texts(res)
		if res.IsError || out["current"].(map[string]any)["temperature_2m"] != 15.7 || len(tx) != 2 {
			t.Fatalf("%q: structured call: isError %v, structuredContent %v, text %q", version, res.IsError, res.StructuredContent, tx)
		}
		var fromText map[string]any // the serialized JSON, for a client that reads text only
		if err := json.Unmarshal([]byte(tx[0]), &fromText); err != nil || fromText["latitude"] != 37.77 {
			t.Fatalf("%q: the text block is not the result's JSON: %q", version, tx[0])
		}
		call := structured(t, res.Meta["rowcall/call"]) // the receipt's fields, beside the declared output
		confirmed(t, h, call["invocation_id"].(string), "PROVEN_MATERIAL_RESULT")

		bad := s.call(t, "S_OUT_WRONG", map[string]any{"latitude": 1, "longitude": 2})
		if tx := texts(bad); !bad.IsError || bad.StructuredContent != nil || len(tx) != 2 ||
			!strings.HasPrefix(tx[0], "ERR:invalid_output: the result does not conform to output_schema: at /: required: missing properties: [\"humidity\"]") {
			t.Fatalf("%q: a result that does not conform: isError %v, structuredContent %v, %q", version, bad.IsError, bad.StructuredContent, tx)
		}
		if m := structured(t, bad.Meta["rowcall/call"]); m["error"] != "invalid_output" || m["ran"] != true {
			t.Fatalf("%q: invalid output's call fields %v", version, m)
		}
	}

	owner := connectMCP(t, h, "x-terminal-key", h.Key)
	tmpls, err := owner.cs.ListResourceTemplates(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, tm := range tmpls.ResourceTemplates {
		uris = append(uris, tm.URITemplate)
	}
	const temp = "rowcall://call/S_OUT_TEMP{?latitude,longitude,unit}"
	if !slices.Contains(uris, temp) || uris[0] != "rowcall://contract/{key}" {
		t.Fatalf("resource templates %v", uris)
	}
	complete := func(s *mcpSession, uri, name, typed string) *sdk.CompleteResult {
		t.Helper()
		res, err := s.cs.Complete(ctx, &sdk.CompleteParams{Ref: &sdk.CompleteReference{Type: "ref/resource", URI: uri},
			Argument: sdk.CompleteParamsArgument{Name: name, Value: typed}})
		if err != nil {
			t.Fatalf("complete %s %s=%q: %v", uri, name, typed, err)
		}
		return res
	}
	for _, c := range []struct {
		name, typed string
		want        []string
	}{
		{"unit", "", []string{"celsius", "fahrenheit"}}, // the enum; the examples' units are the same values, once each
		{"unit", "F", []string{"fahrenheit"}},
		{"latitude", "", []string{"37.77", "51.51", "48.85"}}, // examples, then the # EX line
		{"longitude", "-", []string{"-122.42", "-0.13"}},
		{"nope", "", []string{}},
	} {
		if got := complete(owner, temp, c.name, c.typed).Completion.Values; !slices.Equal(got, c.want) {
			t.Fatalf("complete %s=%q: %v, want %v", c.name, c.typed, got, c.want)
		}
	}
	if got := complete(owner, "rowcall://call/S_OUT_MANY{?pick}", "pick", "v").Completion; len(got.Values) != 100 || !got.HasMore || got.Total != 150 || got.Values[0] != "v000" {
		t.Fatalf("150 choices: %d values, hasMore %v, total %d", len(got.Values), got.HasMore, got.Total)
	}
	if got := complete(owner, "rowcall://call/S_OUT_MANY{?pick}", "pick", "v14").Completion; len(got.Values) != 10 || got.HasMore {
		t.Fatalf("v14: %v, hasMore %v", got.Values, got.HasMore)
	}

	// A token that cannot see S_OUT_TEMP gets none of its values; its own
	// row completes.
	secret, _, _ := mint(t, h, map[string]any{"categories": []string{"s_out_many"}})
	scoped := connectMCP(t, h, "Authorization", "Bearer "+secret)
	if got := complete(scoped, temp, "unit", "").Completion; len(got.Values) != 0 || got.Total != 0 {
		t.Fatalf("a token completed a row outside its scope: %v", got.Values)
	}
	if got := complete(scoped, "rowcall://call/S_OUT_MANY{?pick}", "pick", "v149").Completion.Values; !slices.Equal(got, []string{"v149"}) {
		t.Fatalf("a token's own row: %v", got)
	}

	// Reading a call resource prepares and checks the call; nothing runs.
	read, err := owner.cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "rowcall://call/S_OUT_TEMP?latitude=1&longitude=2&unit=kelvin"})
	if err != nil {
		t.Fatal(err)
	}
	var prep map[string]any
	json.Unmarshal([]byte(read.Contents[0].Text), &prep)
	if prep["args"] != "1|2|kelvin" || prep["valid"] != false || !strings.Contains(prep["error"].(string), "at /unit: enum") {
		t.Fatalf("prepared call %s", read.Contents[0].Text)
	}
}
