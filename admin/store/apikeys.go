package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
)

// Errors of API key authentication, besides ErrNotFound for a key that
// does not exist. They wrap a message that names the key and the instant.
var (
	ErrAPIKeyRevoked = errors.New("API key revoked")
	ErrAPIKeyExpired = errors.New("API key expired")
)

// MaxActiveAPIKeys bounds the usable (not revoked, not expired) API keys of
// one user.
const MaxActiveAPIKeys = 50

// APIKey is a personal API key, without its secret (only the hash is
// stored, and it is never read back).
type APIKey struct {
	ID         int64         `db:"id"`
	UserID     int64         `db:"user_id"`
	Username   string        `db:"username"`
	Name       string        `db:"name"`
	Prefix     string        `db:"prefix"`   // start of the secret, for display
	RoleCap    string        `db:"role_cap"` // "" or a role the key is limited to
	CreatedAt  int64         `db:"created_at"`
	LastUsedAt sql.NullInt64 `db:"last_used_at"`
	ExpiresAt  sql.NullInt64 `db:"expires_at"`
	RevokedAt  sql.NullInt64 `db:"revoked_at"`
	// ParentID is the key whose holder created this one (not valid: it
	// was created from a console session). Revoking the parent revokes it.
	ParentID sql.NullInt64 `db:"parent_id"`
}

// NewAPIKey is what CreateAPIKey stores.
type NewAPIKey struct {
	UserID    int64
	Name      string
	Prefix    string
	Hash      string    // SHA-256 of the secret, hex (auth.HashToken)
	RoleCap   string    // "" for none
	ExpiresAt time.Time // zero: never expires
	// ParentID is the key the request that creates this one was
	// authenticated with; 0 for a console session. The caller caps the
	// expiry and the role by the parent's.
	ParentID int64
}

// CreateAPIKey stores a key and returns it as read back. A key with
// a parent is stored only while the parent is not revoked, checked under
// the parent's row lock (a revocation running at the same time either sees
// the new key and revokes it too, or is seen here): ErrAPIKeyRevoked
// otherwise, and ErrNotFound when the parent does not exist.
func (s *Store) CreateAPIKey(ctx context.Context, t NewAPIKey) (APIKey, error) {
	parent := sql.NullInt64{Int64: t.ParentID, Valid: t.ParentID > 0}
	var id int64
	err := s.inTx(ctx, func(tx *sqlx.Tx) error {
		if parent.Valid {
			revoked, err := s.q.APIKeyLockParent(ctx, tx, t.ParentID)
			if err != nil {
				return notFound(err, fmt.Sprintf("API key %d", t.ParentID))
			}
			if revoked.Valid {
				return fmt.Errorf("API key %d, which creates this one, was revoked at %s: %w", t.ParentID, tokenTime(revoked.Int64), ErrAPIKeyRevoked)
			}
		}
		var err error
		id, err = s.q.APIKeyInsert(ctx, tx, apiKeyInsertParams{
			UserID: t.UserID, Name: t.Name, Prefix: t.Prefix, Hash: t.Hash, RoleCap: t.RoleCap,
			ExpiresAt: nullMS(t.ExpiresAt), ParentID: parent,
		})
		if isDuplicate(err) {
			return conflictf("an API key with the prefix %s exists already: create the key again", t.Prefix)
		}
		if err != nil {
			return fmt.Errorf("create API key for user %d: %w", t.UserID, err)
		}
		return nil
	})
	if err != nil {
		return APIKey{}, err
	}
	return s.APIKey(ctx, id)
}

// APIKey returns a key by id, or ErrNotFound (also when its user was
// deleted).
func (s *Store) APIKey(ctx context.Context, id int64) (APIKey, error) {
	t, err := s.q.APIKeyByID(ctx, s.db, id)
	if err != nil {
		return t, notFound(err, fmt.Sprintf("API key %d", id))
	}
	return t, nil
}

// APIKeys lists the keys of a user (userID 0: of every user), newest
// first, at most limit.
func (s *Store) APIKeys(ctx context.Context, userID int64, limit int) ([]APIKey, error) {
	out, err := s.q.APIKeyList(ctx, s.db, apiKeyListParams{UserID: userID, Limit: limit})
	if err != nil {
		return nil, fmt.Errorf("list API keys: %w", err)
	}
	return out, nil
}

// CountActiveAPIKeys counts the keys of a user that are neither revoked
// nor expired (by the database clock).
func (s *Store) CountActiveAPIKeys(ctx context.Context, userID int64) (int, error) {
	n, err := s.q.APIKeyCountActive(ctx, s.db, userID)
	if err != nil {
		return 0, fmt.Errorf("count API keys of user %d: %w", userID, err)
	}
	return n, nil
}

// RevokeAPIKey revokes a key and, in the same transaction, every key
// created with it, transitively (api_token.parent_id). It reports whether
// this call revoked the key itself (false: it was already revoked) and
// the ids of the descendants it revoked, in tree order; a missing key is
// ErrNotFound.
func (s *Store) RevokeAPIKey(ctx context.Context, id int64) (bool, []int64, error) {
	var revoked bool
	var descendants []int64
	err := s.inTx(ctx, func(tx *sqlx.Tx) error {
		revoked, descendants = false, nil
		n, err := s.q.APIKeyRevoke(ctx, tx, id)
		if err != nil {
			return fmt.Errorf("revoke API key %d: %w", id, err)
		}
		if n == 1 {
			revoked = true
		} else {
			if _, err := s.q.APIKeyByID(ctx, tx, id); err != nil {
				return notFound(err, fmt.Sprintf("API key %d", id))
			}
		}
		for level := []int64{id}; len(level) > 0; {
			children, err := s.q.APIKeyChildren(ctx, tx, level)
			if err != nil {
				return fmt.Errorf("keys created by API key %d: %w", id, err)
			}
			level = level[:0]
			for _, c := range children {
				level = append(level, c.ID)
				if !c.Revoked {
					descendants = append(descendants, c.ID)
				}
			}
		}
		if len(descendants) == 0 {
			return nil
		}
		if _, err := s.q.APIKeysRevoke(ctx, tx, descendants); err != nil {
			return fmt.Errorf("revoke %d key(s) created by API key %d: %w", len(descendants), id, err)
		}
		return nil
	})
	return revoked, descendants, err
}

type apiKeyAuthRow struct {
	APIKey
	DBNow int64 `db:"db_now"`
}

// AuthenticateAPIKey returns the key with the given hash and its user.
// Expiry is judged by the database clock, the same for every replica. A
// key that does not exist, or whose user was deleted, is ErrNotFound; a
// revoked one ErrAPIKeyRevoked and an expired one ErrAPIKeyExpired, each
// wrapped in a message that says since when. Success records the use
// (last_used_at, at most once a minute).
func (s *Store) AuthenticateAPIKey(ctx context.Context, hash string) (APIKey, User, error) {
	row, err := s.q.APIKeyAuth(ctx, s.db, hash)
	if err != nil {
		return APIKey{}, User{}, notFound(err, "API key")
	}
	t := row.APIKey
	if t.RevokedAt.Valid {
		return t, User{}, fmt.Errorf("API key %s… (%q) was revoked at %s: %w", t.Prefix, t.Name, tokenTime(t.RevokedAt.Int64), ErrAPIKeyRevoked)
	}
	if t.ExpiresAt.Valid && t.ExpiresAt.Int64 <= row.DBNow {
		return t, User{}, fmt.Errorf("API key %s… (%q) expired at %s: %w", t.Prefix, t.Name, tokenTime(t.ExpiresAt.Int64), ErrAPIKeyExpired)
	}
	u, err := s.User(ctx, t.UserID)
	if err != nil {
		return t, User{}, err
	}
	if _, err := s.q.APIKeyTouch(ctx, s.db, t.ID); err != nil {
		return t, User{}, fmt.Errorf("record use of API key %d: %w", t.ID, err)
	}
	return t, u, nil
}

func tokenTime(msec int64) string { return time.UnixMilli(msec).UTC().Format(time.RFC3339) }
