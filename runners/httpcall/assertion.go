package httpcall

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// ClientAssertionType is the client_assertion_type of a token request whose
// client authenticates with a signed JWT (RFC 7523 §2.2).
const ClientAssertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

// assertionLife is how long a client assertion is valid: it is signed for
// one token request, sent at once.
const assertionLife = time.Minute

// assertion signs the client assertion of one token request (RFC 7523 §3):
// iss and sub the client_id, aud the authorization server (assertion_audience,
// else its issuer when discovered, else the token endpoint), a fresh jti, and
// a lifetime of assertionLife. keyVar names the variable the key came from;
// errors name it and never quote the key.
func assertion(c *oauthClient, keyVar string, now time.Time) (string, error) {
	key, err := parsePrivateKey(c.PrivateKey)
	if err != nil {
		return "", errors.New("the private key in $" + keyVar + " " + err.Error())
	}
	alg := c.Alg
	if alg == "" {
		alg = algFor(key)
	}
	_, rsaKey := key.(*rsa.PrivateKey)
	fits := alg == algFor(key) || rsaKey && (strings.HasPrefix(alg, "RS") || strings.HasPrefix(alg, "PS"))
	method := jwt.GetSigningMethod(alg)
	if method == nil || !fits {
		return "", errors.New("alg " + alg + " does not fit the private key in $" + keyVar + " (" + describeKey(key) + ")")
	}
	aud := c.AssertionAudience
	if aud == "" {
		aud = c.issuer
	}
	if aud == "" {
		aud = c.TokenURL
	}
	jti := make([]byte, 16)
	rand.Read(jti)
	t := jwt.NewWithClaims(method, jwt.RegisteredClaims{
		Issuer: c.ClientID, Subject: c.ClientID, Audience: jwt.ClaimStrings{aud},
		ID:       base64.RawURLEncoding.EncodeToString(jti),
		IssuedAt: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(now.Add(assertionLife)),
	})
	if c.KeyID != "" {
		t.Header["kid"] = c.KeyID
	}
	signed, err := t.SignedString(key)
	if err != nil {
		return "", errors.New("alg " + alg + " does not fit the private key in $" + keyVar + " (" + describeKey(key) + ")")
	}
	return signed, nil
}

// parsePrivateKey reads a PEM private key: PKCS#8 ("PRIVATE KEY"), SEC 1
// ("EC PRIVATE KEY") or PKCS#1 ("RSA PRIVATE KEY"). A value written on one
// line with literal \n sequences, as environment files often hold it, is
// read too. Its errors never quote the key.
func parsePrivateKey(s string) (crypto.Signer, error) {
	if !strings.Contains(s, "\n") {
		s = strings.ReplaceAll(s, `\n`, "\n")
	}
	block, _ := pem.Decode([]byte(s))
	if block == nil {
		return nil, errors.New("is not PEM (want -----BEGIN PRIVATE KEY-----)")
	}
	var key any
	var err error
	switch block.Type {
	case "PRIVATE KEY":
		key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(block.Bytes)
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(block.Bytes)
	default:
		return nil, errors.New("is a PEM " + block.Type + ", not a private key (want PRIVATE KEY, EC PRIVATE KEY or RSA PRIVATE KEY)")
	}
	if err != nil {
		return nil, errors.New("does not parse as a " + block.Type)
	}
	switch k := key.(type) {
	case *ecdsa.PrivateKey, *rsa.PrivateKey, ed25519.PrivateKey:
		return k.(crypto.Signer), nil
	}
	return nil, errors.New("is neither an EC, RSA nor Ed25519 key")
}

// algFor is the algorithm a key signs with when the column names none: ES256,
// ES384 or ES512 by an EC key's curve, RS256 for RSA, EdDSA for Ed25519.
func algFor(key crypto.Signer) string {
	switch k := key.(type) {
	case *ecdsa.PrivateKey:
		return map[string]string{"P-256": "ES256", "P-384": "ES384", "P-521": "ES512"}[k.Curve.Params().Name]
	case *rsa.PrivateKey:
		return "RS256"
	case ed25519.PrivateKey:
		return "EdDSA"
	}
	return ""
}

// describeKey names a key's kind for a message.
func describeKey(key crypto.Signer) string {
	switch k := key.(type) {
	case *ecdsa.PrivateKey:
		return "an EC " + k.Curve.Params().Name + " key"
	case *rsa.PrivateKey:
		return "an RSA key"
	}
	return "an Ed25519 key"
}
