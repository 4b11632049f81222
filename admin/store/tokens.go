package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Errors of API token authentication, besides ErrNotFound for a token that
// does not exist. They wrap a message that names the token and the instant.
var (
	ErrTokenRevoked = errors.New("API token revoked")
	ErrTokenExpired = errors.New("API token expired")
)

// MaxActiveTokens bounds the usable (not revoked, not expired) API tokens of
// one user.
const MaxActiveTokens = 50

// APIToken is a personal API token, without its secret (only the hash is
// stored, and it is never read back).
type APIToken struct {
	ID         int64         `db:"id"`
	UserID     int64         `db:"user_id"`
	Username   string        `db:"username"`
	Name       string        `db:"name"`
	Prefix     string        `db:"prefix"`   // start of the secret, for display
	RoleCap    string        `db:"role_cap"` // "" or a role the token is limited to
	CreatedAt  int64         `db:"created_at"`
	LastUsedAt sql.NullInt64 `db:"last_used_at"`
	ExpiresAt  sql.NullInt64 `db:"expires_at"`
	RevokedAt  sql.NullInt64 `db:"revoked_at"`
}

// NewAPIToken is what CreateAPIToken stores.
type NewAPIToken struct {
	UserID    int64
	Name      string
	Prefix    string
	Hash      string    // SHA-256 of the secret, hex (auth.HashToken)
	RoleCap   string    // "" for none
	ExpiresAt time.Time // zero: never expires
}

// CreateAPIToken stores a token and returns it as read back.
func (s *Store) CreateAPIToken(ctx context.Context, t NewAPIToken) (APIToken, error) {
	res, err := s.db.ExecContext(ctx, s.q.get("APITokenInsert"), t.UserID, t.Name, t.Prefix, t.Hash, t.RoleCap, nullMS(t.ExpiresAt))
	if isDuplicate(err) {
		return APIToken{}, fmt.Errorf("API token %s: %w", t.Prefix, ErrConflict)
	}
	if err != nil {
		return APIToken{}, fmt.Errorf("create API token for user %d: %w", t.UserID, err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return APIToken{}, fmt.Errorf("create API token: %w", err)
	}
	return s.APIToken(ctx, id)
}

// APIToken returns a token by id, or ErrNotFound (also when its user was
// deleted).
func (s *Store) APIToken(ctx context.Context, id int64) (APIToken, error) {
	var t APIToken
	if err := s.db.GetContext(ctx, &t, s.q.get("APITokenByID"), id); err != nil {
		return t, notFound(err, fmt.Sprintf("API token %d", id))
	}
	return t, nil
}

// APITokens lists the tokens of a user (userID 0: of every user), newest
// first, at most limit.
func (s *Store) APITokens(ctx context.Context, userID int64, limit int) ([]APIToken, error) {
	out := []APIToken{}
	if err := s.db.SelectContext(ctx, &out, s.q.get("APITokenList"), userID, userID, limit); err != nil {
		return nil, fmt.Errorf("list API tokens: %w", err)
	}
	return out, nil
}

// CountActiveAPITokens counts the tokens of a user that are neither revoked
// nor expired (by the database clock).
func (s *Store) CountActiveAPITokens(ctx context.Context, userID int64) (int, error) {
	var n int
	if err := s.db.GetContext(ctx, &n, s.q.get("APITokenCountActive"), userID); err != nil {
		return 0, fmt.Errorf("count API tokens of user %d: %w", userID, err)
	}
	return n, nil
}

// RevokeAPIToken revokes a token. It reports whether this call revoked it
// (false: it was already revoked); a missing token is ErrNotFound.
func (s *Store) RevokeAPIToken(ctx context.Context, id int64) (bool, error) {
	res, err := s.db.ExecContext(ctx, s.q.get("APITokenRevoke"), id)
	if err != nil {
		return false, fmt.Errorf("revoke API token %d: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 1 {
		return true, nil
	}
	if _, err := s.APIToken(ctx, id); err != nil {
		return false, err
	}
	return false, nil
}

type tokenAuthRow struct {
	APIToken
	DBNow int64 `db:"db_now"`
}

// AuthenticateAPIToken returns the token with the given hash and its user.
// Expiry is judged by the database clock, the same for every replica. A
// token that does not exist, or whose user was deleted, is ErrNotFound; a
// revoked one ErrTokenRevoked and an expired one ErrTokenExpired, each
// wrapped in a message that says since when. Success records the use
// (last_used_at, at most once a minute).
func (s *Store) AuthenticateAPIToken(ctx context.Context, hash string) (APIToken, User, error) {
	var row tokenAuthRow
	if err := s.db.GetContext(ctx, &row, s.q.get("APITokenAuth"), hash); err != nil {
		return APIToken{}, User{}, notFound(err, "API token")
	}
	t := row.APIToken
	if t.RevokedAt.Valid {
		return t, User{}, fmt.Errorf("API token %s… (%q) was revoked at %s: %w", t.Prefix, t.Name, tokenTime(t.RevokedAt.Int64), ErrTokenRevoked)
	}
	if t.ExpiresAt.Valid && t.ExpiresAt.Int64 <= row.DBNow {
		return t, User{}, fmt.Errorf("API token %s… (%q) expired at %s: %w", t.Prefix, t.Name, tokenTime(t.ExpiresAt.Int64), ErrTokenExpired)
	}
	u, err := s.UserByID(ctx, t.UserID)
	if err != nil {
		return t, User{}, err
	}
	if _, err := s.db.ExecContext(ctx, s.q.get("APITokenTouch"), t.ID); err != nil {
		return t, User{}, fmt.Errorf("record use of API token %d: %w", t.ID, err)
	}
	return t, u, nil
}

func tokenTime(msec int64) string { return time.UnixMilli(msec).UTC().Format(time.RFC3339) }
