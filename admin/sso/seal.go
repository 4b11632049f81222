package sso

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// Sealer encrypts the OIDC refresh tokens the platform database keeps to
// recheck users (AES-256-GCM), with a key derived from a secret the
// database does not hold (the executor secret): a copy of the database
// alone does not give them away. Changing the secret makes the stored
// tokens unreadable; their users are asked to sign in again.
type Sealer struct{ aead cipher.AEAD }

const sealPrefix = "v1."

// NewSealer derives the key from secret (at least 16 bytes).
func NewSealer(secret []byte) (*Sealer, error) {
	if len(secret) < 16 {
		return nil, errors.New("sealing key: the secret is shorter than 16 bytes")
	}
	key, err := hkdf.Key(sha256.New, secret, nil, "shardjob sso refresh token", 32)
	if err != nil {
		return nil, fmt.Errorf("sealing key: %w", err)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("sealing key: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("sealing key: %w", err)
	}
	return &Sealer{aead: aead}, nil
}

// Seal encrypts plain ("" stays "").
func (s *Sealer) Seal(plain string) string {
	if plain == "" {
		return ""
	}
	nonce := make([]byte, s.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		panic(fmt.Sprintf("crypto/rand failed: %v", err))
	}
	return sealPrefix + base64.RawURLEncoding.EncodeToString(s.aead.Seal(nonce, nonce, []byte(plain), nil))
}

// ErrUnsealable is returned by Open for a value sealed with another secret
// or damaged.
var ErrUnsealable = errors.New("the stored token cannot be read (sealed with another secret?)")

// Open decrypts what Seal returned.
func (s *Sealer) Open(sealed string) (string, error) {
	if sealed == "" {
		return "", nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(sealed, sealPrefix))
	if err != nil || !strings.HasPrefix(sealed, sealPrefix) || len(raw) < s.aead.NonceSize() {
		return "", ErrUnsealable
	}
	n := s.aead.NonceSize()
	plain, err := s.aead.Open(nil, raw[:n], raw[n:], nil)
	if err != nil {
		return "", ErrUnsealable
	}
	return string(plain), nil
}
