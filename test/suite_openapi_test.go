package test

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// suiteOpenAPI: `rowcall import openapi` (which converts on the caller's
// machine, so it works against every host), the exported OpenAPI document
// and tool list, and typed calls through POST /api/dispatch/{key} reaching
// the upstream (an array query parameter as status=a&status=b); POST /api/import/openapi converts on the local host and
// answers 501 on the worker, which leaves the parser out.
func suiteOpenAPI(t *testing.T, tg *target, up *upstream) {
	h := tg.host
	cmd := exec.Command(binary, "import", "openapi", "../internal/openapi/testdata/petstore.yaml", "--prefix", "S_PET_", "--category", "s-pets",
		"--server", up.URL, "--url", h.URL)
	cmd.Env = append(os.Environ(), "ROWCALL_OWNER_KEY="+h.Key)
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "created 20, updated 0, unchanged 0") {
		t.Fatalf("rowcall import openapi: %v\n%s", err, out)
	}
	doc, _ := os.ReadFile("../internal/openapi/testdata/petstore.yaml")
	got := h.do(t, req{Method: "POST", Path: "/api/import/openapi?prefix=S_PET_&category=s-pets&server=" + up.URL, Body: doc})
	if tg.Name == "worker" {
		expect(t, got, 501, map[string]any{"error": "invalid_request"})
	} else {
		expect(t, got, 200, map[string]any{"ok": true, "created": []string{}, "unchanged": 20, "state_changed": false})
	}

	export := h.do(t, req{Method: "GET", Path: "/api/openapi.json?category=s-pets"})
	expect(t, export, 200, map[string]any{"openapi": "3.1.0"})
	if paths := export.JSON["paths"].(map[string]any); len(paths) != 20 || paths["/api/dispatch/S_PET_GET_ORDER_BY_ID"] == nil {
		t.Fatalf("%d paths: %s", len(paths), export.Raw)
	}
	n := len(up.requests())
	call := h.do(t, req{Method: "POST", Path: "/api/dispatch/S_PET_GET_ORDER_BY_ID", Body: map[string]any{"orderId": 3}})
	expect(t, call, 200, map[string]any{"ok": true, "ran": true, "result": `HTTP 200:{"path":"/store/order/3","q":""}`})
	if seen := up.requests()[n:]; len(seen) != 1 || seen[0].Method != "GET" {
		t.Fatalf("upstream saw %+v", seen)
	}
	// An array query parameter (form, exploded) repeats its name.
	n = len(up.requests())
	call = h.do(t, req{Method: "POST", Path: "/api/dispatch/S_PET_FIND_PETS_BY_STATUS", Body: map[string]any{"status": []string{"available", "sold"}}})
	expect(t, call, 200, map[string]any{"ok": true, "ran": true})
	if seen := up.requests()[n:]; len(seen) != 1 || seen[0].Path != "/pet/findByStatus" || seen[0].Query != "status=available&status=sold" {
		t.Fatalf("upstream saw %+v", seen)
	}
	tools := h.do(t, req{Method: "GET", Path: "/api/openapi.json?format=anthropic-tools&keys=S_PET_GET_ORDER_BY_ID"})
	var list []map[string]any
	if json.Unmarshal(tools.Raw, &list); tools.Status != 200 || len(list) != 1 || list[0]["name"] != "S_PET_GET_ORDER_BY_ID" || list[0]["input_schema"] == nil {
		t.Fatalf("HTTP %d %s", tools.Status, tools.Raw)
	}
}
