package hostmain

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/ledger"
)

// keyRing holds the owner keys: $ROWCALL_OWNER_KEY, or DATA/owner.key plus,
// during a rotation, DATA/owner.key.previous until its expiry. It re-reads the
// files when they change (checked at most once a second), so `rowcall key
// rotate` takes effect on a running host without a restart.
type keyRing struct {
	dir  string
	env  string
	name string // the key's file under dir: owner.key (the operator's: operator.key)

	mu      sync.Mutex
	checked time.Time
	stamp   string
	keys    []string
}

// newKeyRing reads the keys under dir, unless envKey ($ROWCALL_OWNER_KEY) is
// set.
func newKeyRing(dir, envKey string) *keyRing {
	return &keyRing{dir: dir, env: strings.TrimSpace(envKey), name: "owner.key"}
}

// Keys returns the owner keys valid now: the current one first.
func (k *keyRing) Keys() []string {
	if k.env != "" {
		return []string{k.env}
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if time.Since(k.checked) > time.Second {
		k.checked = time.Now()
		if s := k.fileStamp(); s != k.stamp {
			k.stamp = s
			k.keys = k.load()
		}
	}
	var valid []string
	for i, key := range k.keys {
		if i == 0 {
			valid = append(valid, key)
			continue
		}
		if parts := strings.SplitN(key, "\n", 2); len(parts) == 2 {
			if until, err := time.Parse(time.RFC3339, parts[1]); err == nil && time.Now().Before(until) {
				valid = append(valid, parts[0])
			}
		}
	}
	return valid
}

// Current is the current owner key.
func (k *keyRing) Current() string {
	if ks := k.Keys(); len(ks) > 0 {
		return ks[0]
	}
	return ""
}

func (k *keyRing) fileStamp() string {
	var s strings.Builder
	for _, name := range []string{k.name, k.name + ".previous"} {
		if st, err := os.Stat(filepath.Join(k.dir, name)); err == nil {
			fmt.Fprintf(&s, "%s:%d:%d;", name, st.ModTime().UnixNano(), st.Size())
		}
	}
	return s.String()
}

// load reads owner.key and, when present, owner.key.previous as "key\nexpiry".
func (k *keyRing) load() []string {
	cur, err := os.ReadFile(filepath.Join(k.dir, k.name))
	if err != nil {
		return k.keys
	}
	keys := []string{strings.TrimSpace(string(cur))}
	if prev, err := os.ReadFile(filepath.Join(k.dir, k.name+".previous")); err == nil {
		lines := strings.Fields(string(prev))
		if len(lines) == 2 {
			keys = append(keys, lines[0]+"\n"+lines[1])
		}
	}
	return keys
}

// ensureOwnerKey makes sure an owner key exists: envKey ($ROWCALL_OWNER_KEY),
// or DATA/owner.key, else a new key written there with mode 0600 (created says
// so).
func ensureOwnerKey(dir, envKey string) (created bool, err error) {
	return ensureKey(filepath.Join(dir, "owner.key"), envKey)
}

// ensureKey makes sure a key exists: envKey, or the file at path, else a new
// key written there with mode 0600 (created says so).
func ensureKey(path, envKey string) (created bool, err error) {
	if strings.TrimSpace(envKey) != "" {
		return false, nil
	}
	b, err := os.ReadFile(path)
	if err == nil {
		if strings.TrimSpace(string(b)) == "" {
			return false, fmt.Errorf("%s is empty; delete it to have a new key generated, or set its variable (ROWCALL_OWNER_KEY, ROWCALL_OPERATOR_KEY)", path)
		}
		return false, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	return true, writeSecret(path, newOwnerKey())
}

func newOwnerKey() string {
	raw := make([]byte, 32)
	rand.Read(raw)
	return "rk_" + base64.RawURLEncoding.EncodeToString(raw)
}

func writeSecret(path, value string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(value+"\n"), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// RotateOwnerKey makes a new owner key current in dir (`rowcall key rotate`):
// the old one stays valid for window, until the time returned (RFC 3339), and
// a running host picks both up within a second.
func RotateOwnerKey(dir string, window time.Duration) (until string, err error) {
	old, err := os.ReadFile(filepath.Join(dir, "owner.key"))
	if err != nil {
		return "", fmt.Errorf("no owner key to rotate in %s: %w", dir, err)
	}
	until = time.Now().Add(window).UTC().Format(time.RFC3339)
	if err := writeSecret(filepath.Join(dir, "owner.key.previous"), strings.TrimSpace(string(old))+"\n"+until); err != nil {
		return "", err
	}
	return until, writeSecret(filepath.Join(dir, "owner.key"), newOwnerKey())
}

// receiptSigner loads the receipt signing key: envKey ($ROWCALL_RECEIPT_KEY,
// a base64 seed), or DATA/receipt.key, created with mode 0600 on first use.
func receiptSigner(dir, envKey string) (*ledger.Signer, error) {
	enc := strings.TrimSpace(envKey)
	if enc == "" {
		path := filepath.Join(dir, "receipt.key")
		b, err := os.ReadFile(path)
		switch {
		case err == nil:
			enc = strings.TrimSpace(string(b))
		case errors.Is(err, fs.ErrNotExist):
			seed := make([]byte, 32)
			rand.Read(seed)
			enc = base64.StdEncoding.EncodeToString(seed)
			if err := writeSecret(path, enc); err != nil {
				return nil, err
			}
		default:
			return nil, err
		}
	}
	seed, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		return nil, fmt.Errorf("the receipt signing key is not base64: %w", err)
	}
	return ledger.NewSigner(seed)
}

// hostEnv is where rows' credentials come from: the environment (lookup), plus
// ROWCALL_OWNER_KEY (the owner key, so example rows can call this host's own
// API, as the seed's DIR_PATCH does). app.New lets rows see it through
// rowcall.SecretsEnv: none of rowcall's own variables, and with a prefix only
// that namespace.
func hostEnv(keys *keyRing, lookup func(string) (string, bool)) rowcall.Env {
	return rowcall.EnvFunc(func(name string) (string, bool) {
		if name == rowcall.OwnerEnv {
			return keys.Current(), true
		}
		return lookup(name)
	})
}
