package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
)

// Roles, weakest first.
const (
	RoleViewer   = "viewer"
	RoleOperator = "operator"
	RoleAdmin    = "admin"
)

var roleRank = map[string]int{RoleViewer: 1, RoleOperator: 2, RoleAdmin: 3}

// ValidRole reports whether r is a known role.
func ValidRole(r string) bool { return roleRank[r] > 0 }

// Allows reports whether role has at least the rights of need.
func Allows(role, need string) bool { return roleRank[role] > 0 && roleRank[role] >= roleRank[need] }

// NewToken returns a random URL-safe token (256 bits).
func NewToken() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("crypto/rand failed: %v", err))
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// NewPassword returns a random password for the bootstrap user: 20
// characters (120 bits) that pass ValidatePassword.
func NewPassword() string {
	for {
		b := make([]byte, 15)
		if _, err := rand.Read(b); err != nil {
			panic(fmt.Sprintf("crypto/rand failed: %v", err))
		}
		if pw := base64.RawURLEncoding.EncodeToString(b); ValidatePassword(pw) == nil {
			return pw // the policy refuses next to none of them (a run like "aaaa…")
		}
	}
}

// HashToken is how tokens are stored: SHA-256, hex.
func HashToken(token string) string {
	s := sha256.Sum256([]byte(token))
	return hex.EncodeToString(s[:])
}

// UserStore is what Bootstrap needs from the platform database.
type UserStore interface {
	CountUsers(ctx context.Context) (int, error)
	CreateUser(ctx context.Context, username, passwordHash, role string) (int64, error)
}

// BootstrapUser is the name of the user Bootstrap creates.
const BootstrapUser = "admin"

// Bootstrap creates the user "admin" with a generated password when there is
// no user at all, and returns the password (empty if users exist). The
// caller prints it once.
func Bootstrap(ctx context.Context, users UserStore) (string, error) {
	n, err := users.CountUsers(ctx)
	if err != nil {
		return "", err
	}
	if n > 0 {
		return "", nil
	}
	pw := NewPassword()
	h, err := HashPassword(pw)
	if err != nil {
		return "", err
	}
	if _, err := users.CreateUser(ctx, BootstrapUser, h, RoleAdmin); err != nil {
		if n, cerr := users.CountUsers(ctx); cerr == nil && n > 0 {
			return "", nil // another replica starting at the same time won
		}
		return "", fmt.Errorf("create first admin user: %w", err)
	}
	return pw, nil
}
