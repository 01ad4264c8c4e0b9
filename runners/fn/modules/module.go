package modules

import (
	"encoding/hex"
	"strings"

	"github.com/rowcall/rowcall"
)

// Module is one registered module's metadata.
type Module struct {
	Name      string `json:"name"`
	Digest    string `json:"digest"` // SHA-256 of the bytes, lowercase hex (64 digits)
	Size      int64  `json:"size"`   // bytes
	Version   int64  `json:"version"`
	CreatedAt string `json:"created_at"`
	UpdatedAt string `json:"updated_at"`
}

// Ref is the module's pinned target, name@sha256:<digest>.
func (m Module) Ref() string { return m.Name + "@sha256:" + m.Digest }

// MaxSize is the largest module the registry accepts: 8 MiB, which holds a Go
// wasip1 command (about 2–3 MB) with room to spare and stays cheap to compile.
const MaxSize = 8 << 20

// NameRule is the module name rule. Names are simpler than row keys: they are
// lowercase so "NOW" (the row) and "now" (its module) read apart, and '@' is
// excluded because it starts a pin.
const NameRule = "1-64 characters: lowercase letters, digits, '_', '-' or '.', starting with a letter or digit (e.g. now, last_reply_of)"

// ValidName reports whether name follows NameRule: ^[a-z0-9][a-z0-9_.-]{0,63}$,
// written out (that regexp's 64 repetitions were most of the package's init).
func ValidName(name string) bool {
	if len(name) == 0 || len(name) > 64 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || i > 0 && (c == '_' || c == '.' || c == '-')) {
			return false
		}
	}
	return true
}

// The registry's error codes, stable for programs to branch on. Not-found,
// too-large and version conflicts use rowcall's own codes.
const (
	CodeBadName         rowcall.Code = "module_bad_name"
	CodeBadTarget       rowcall.Code = "module_bad_target"
	CodeNotWasm         rowcall.Code = "module_not_wasm"
	CodeInvalid         rowcall.Code = "module_invalid"
	CodeNotCommand      rowcall.Code = "module_not_command"
	CodeForbiddenImport rowcall.Code = "module_forbidden_import"
	CodeInUse           rowcall.Code = "module_in_use"
	CodeDigestMismatch  rowcall.Code = "module_digest_mismatch"
	CodeBlobMissing     rowcall.Code = "module_blob_missing"
)

const pinPrefix = "sha256:"

// ParseTarget splits an fn row's target into a module name and an optional
// pinned digest: "now" gives ("now", ""), "now@sha256:<hex>" gives ("now",
// "<hex>"). The digest is 64 hex digits; it comes back lowercase.
func ParseTarget(target string) (name, digest string, err error) {
	target = strings.TrimSpace(target)
	name, pin, pinned := strings.Cut(target, "@")
	if pinned {
		digest = strings.ToLower(strings.TrimPrefix(pin, pinPrefix))
		if !strings.HasPrefix(pin, pinPrefix) || !validDigest(digest) {
			return "", "", badTarget(target)
		}
	}
	if !ValidName(name) {
		return "", "", badTarget(target)
	}
	return name, digest, nil
}

func badTarget(target string) error {
	return &rowcall.Error{
		Code:     CodeBadTarget,
		Message:  "fn target " + quote(target) + " is not a module reference",
		HowToFix: "write a module name (" + NameRule + "), or pin it as name@sha256:<64 hex digits>",
	}
}

// validDigest reports whether d is 64 lowercase hex digits.
func validDigest(d string) bool {
	if len(d) != 64 || strings.ToLower(d) != d {
		return false
	}
	_, err := hex.DecodeString(d)
	return err == nil
}

func quote(s string) string {
	const max = 80
	if len(s) > max {
		s = s[:max] + "…"
	}
	return `"` + s + `"`
}

func notFound(name string) error {
	return &rowcall.Error{
		Code:     rowcall.ENotFound,
		Message:  "no module named " + quote(name),
		HowToFix: "register it with PUT /api/modules/" + name + " (the body is the .wasm bytes); GET /api/modules lists the registered modules",
		Extra:    map[string]any{"module": name},
	}
}
