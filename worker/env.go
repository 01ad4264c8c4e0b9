//go:build js && wasm

package main

import (
	"encoding/json"
	"strings"

	"github.com/syumai/workers/cloudflare"
)

// workerEnv reads credentials from the Worker's environment: its secrets and
// string vars. Bindings (D1, R2, …) are not strings and are never returned.
type workerEnv struct{}

func (workerEnv) Lookup(name string) (string, bool) {
	if name == "" {
		return "", false
	}
	v := cloudflare.GetBinding(name)
	if v.Type().String() != "string" {
		return "", false
	}
	return v.String(), true
}

func envString(name string) string {
	s, _ := workerEnv{}.Lookup(name)
	return s
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
