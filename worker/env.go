//go:build js && wasm

package main

import (
	"encoding/json"
	"strings"

	"github.com/syumai/workers/cloudflare"
)

// workerEnv reads credentials from the Worker's environment: its secrets and
// string vars. Bindings (D1, R2, …) are not strings and are never returned,
// and neither is the receipt signing key (no row may send it anywhere). The
// owner key is, as on the host, so rows can call this API (the seed's
// DIR_PATCH).
type workerEnv struct{}

// unlisted names no row may read.
var unlisted = map[string]bool{"ROWCALL_RECEIPT_KEY": true, "ROWCALL_OWNER_KEY_PREVIOUS": true}

func (workerEnv) Lookup(name string) (string, bool) {
	if name == "" || unlisted[name] {
		return "", false
	}
	v := cloudflare.GetBinding(name)
	if v.Type().String() != "string" {
		return "", false
	}
	return v.String(), true
}

// envString reads a setting (any string var or secret).
func envString(name string) string {
	if v := cloudflare.GetBinding(name); v.Type().String() == "string" {
		return v.String()
	}
	return ""
}

func envBool(name string) bool {
	switch strings.ToLower(strings.TrimSpace(envString(name))) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

// jsonObject encodes alternating keys and string values as one JSON object,
// in order.
func jsonObject(kv ...string) []byte {
	var b strings.Builder
	b.WriteByte('{')
	for i := 0; i+1 < len(kv); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(kv[i])
		v, _ := json.Marshal(kv[i+1])
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteString("}\n")
	return []byte(b.String())
}
