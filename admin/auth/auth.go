package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"golang.org/x/crypto/bcrypt"
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

// HashPassword returns a bcrypt hash.
func HashPassword(pw string) (string, error) {
	if len(pw) < 8 {
		return "", errors.New("password must be at least 8 characters")
	}
	if len(pw) > 72 {
		return "", errors.New("password must be at most 72 bytes (bcrypt limit)")
	}
	h, err := bcrypt.GenerateFromPassword([]byte(pw), bcrypt.DefaultCost)
	if err != nil {
		return "", fmt.Errorf("hash password: %w", err)
	}
	return string(h), nil
}

// CheckPassword reports whether pw matches the bcrypt hash.
func CheckPassword(hash, pw string) bool {
	return bcrypt.CompareHashAndPassword([]byte(hash), []byte(pw)) == nil
}

// NewToken returns a random URL-safe token (256 bits).
func NewToken() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("crypto/rand failed: %v", err))
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// NewPassword returns a random password for the bootstrap user.
func NewPassword() string {
	b := make([]byte, 15)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("crypto/rand failed: %v", err))
	}
	return base64.RawURLEncoding.EncodeToString(b)
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
	if _, err := users.CreateUser(ctx, "admin", h, RoleAdmin); err != nil {
		if n, cerr := users.CountUsers(ctx); cerr == nil && n > 0 {
			return "", nil // another replica starting at the same time won
		}
		return "", fmt.Errorf("create first admin user: %w", err)
	}
	return pw, nil
}

// Throttle limits failed logins per key (user name and client address):
// after Max failures within Window further attempts are refused until the
// window passes. It is safe for concurrent use.
type Throttle struct {
	Max    int
	Window time.Duration
	Now    func() time.Time

	mu    sync.Mutex
	fails map[string][]time.Time
}

// NewThrottle returns a Throttle allowing max failures per window.
func NewThrottle(max int, window time.Duration) *Throttle {
	return &Throttle{Max: max, Window: window, Now: time.Now, fails: map[string][]time.Time{}}
}

func (t *Throttle) prune(key string, now time.Time) []time.Time {
	kept := t.fails[key][:0]
	for _, at := range t.fails[key] {
		if now.Sub(at) < t.Window {
			kept = append(kept, at)
		}
	}
	if len(kept) == 0 {
		delete(t.fails, key)
		return nil
	}
	t.fails[key] = kept
	return kept
}

// Allowed reports whether key may try again, and if not, for how long to wait.
func (t *Throttle) Allowed(key string) (bool, time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.Now()
	f := t.prune(key, now)
	if len(f) < t.Max {
		return true, 0
	}
	return false, t.Window - now.Sub(f[0])
}

// Fail records a failed attempt.
func (t *Throttle) Fail(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.fails) > 100_000 { // bound memory under a spray of keys
		t.fails = map[string][]time.Time{}
	}
	t.fails[key] = append(t.prune(key, t.Now()), t.Now())
}

// Reset forgets the failures of key (after a successful login).
func (t *Throttle) Reset(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.fails, key)
}
