package connect

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"testing"
)

func key() string {
	k := make([]byte, 32)
	rand.Read(k)
	return base64.StdEncoding.EncodeToString(k)
}

// Rotation: a keyring that lists the new key first seals with it and still
// opens what the old key sealed; a ciphertext opens only for the holder and
// provider it was sealed for; a keyring without the old key cannot open it.
func TestKeyringRotation(t *testing.T) {
	k1, k2 := key(), key()
	old, err := ParseKeys("k1:" + k1)
	if err != nil {
		t.Fatal(err)
	}
	plain := []byte(`{"access_token":"at-1","refresh_token":"rt-1"}`)
	id, sealed := old.Seal(plain, "connection\x00tok_a\x00idp")
	if id != "k1" || bytes.Contains(sealed, []byte("at-1")) {
		t.Fatalf("sealed under %s: %q", id, sealed)
	}
	both, _ := ParseKeys("k2:" + k2 + ", k1:" + k1)
	if got, err := both.Open(id, sealed, "connection\x00tok_a\x00idp"); err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("the rotated keyring does not open the old ciphertext: %v", err)
	}
	if _, err := both.Open(id, sealed, "connection\x00tok_b\x00idp"); err == nil {
		t.Fatal("a ciphertext opened for another holder")
	}
	if id, _ := both.Seal(plain, "x"); id != "k2" {
		t.Fatalf("the rotated keyring seals with %s, want k2", id)
	}
	if _, err := (must(ParseKeys("k2:" + k2))).Open("k1", sealed, "connection\x00tok_a\x00idp"); err == nil {
		t.Fatal("opened without the key")
	}
	for _, bad := range []string{"", "k1", "k1:short", "k1:" + k1 + ",k1:" + k2} {
		if _, err := ParseKeys(bad); err == nil {
			t.Errorf("ParseKeys(%q) accepted", bad)
		}
	}
}

func must(k *Keyring, err error) *Keyring {
	if err != nil {
		panic(err)
	}
	return k
}
