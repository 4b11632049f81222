package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/store"
)

func newToken(t *testing.T, s *store.Store, userID int64, name, hash string, expires time.Time) store.APIKey {
	t.Helper()
	tok, err := s.CreateAPIKey(context.Background(), store.NewAPIKey{
		UserID: userID, Name: name, Prefix: "sjt_" + hash[:8], Hash: hash, RoleCap: "", ExpiresAt: expires,
	})
	require.NoError(t, err)
	return tok
}

func hashOf(c byte) string {
	b := make([]byte, 64)
	for i := range b {
		b[i] = c
	}
	return string(b)
}

func TestAPIKeyLifecycle(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		alice, err := s.CreateUser(ctx, "alice", "x", store.RoleOperator)
		require.NoError(t, err)
		bob, err := s.CreateUser(ctx, "bob", "x", store.RoleViewer)
		require.NoError(t, err)

		tok, err := s.CreateAPIKey(ctx, store.NewAPIKey{UserID: alice, Name: "ci", Prefix: "sjt_aaaaaaaa", Hash: hashOf('a'), RoleCap: store.RoleViewer})
		require.NoError(t, err)
		require.Equal(t, "alice", tok.Username)
		require.Equal(t, "ci", tok.Name)
		require.Equal(t, store.RoleViewer, tok.RoleCap)
		require.False(t, tok.ExpiresAt.Valid)
		require.False(t, tok.RevokedAt.Valid)
		require.False(t, tok.LastUsedAt.Valid)
		require.Positive(t, tok.CreatedAt)

		_, err = s.CreateAPIKey(ctx, store.NewAPIKey{UserID: bob, Name: "dup", Prefix: "sjt_aaaaaaaa", Hash: hashOf('a')})
		require.ErrorIs(t, err, store.ErrConflict, "a hash is unique")
		newToken(t, s, bob, "bob's", hashOf('b'), time.Time{})

		// Authentication returns the token and its user and records the use.
		got, u, err := s.AuthenticateAPIKey(ctx, hashOf('a'))
		require.NoError(t, err)
		require.Equal(t, tok.ID, got.ID)
		require.Equal(t, "alice", u.Username)
		require.Equal(t, store.RoleOperator, u.Role)
		tok, err = s.APIKey(ctx, tok.ID)
		require.NoError(t, err)
		require.True(t, tok.LastUsedAt.Valid, "use recorded")

		_, _, err = s.AuthenticateAPIKey(ctx, hashOf('z'))
		require.ErrorIs(t, err, store.ErrNotFound)

		// Listing: own tokens, or everyone's with user 0, newest first.
		mine, err := s.APIKeys(ctx, alice, 100)
		require.NoError(t, err)
		require.Len(t, mine, 1)
		all, err := s.APIKeys(ctx, 0, 100)
		require.NoError(t, err)
		require.Len(t, all, 2)
		require.Greater(t, all[0].ID, all[1].ID)
		n, err := s.CountActiveAPIKeys(ctx, alice)
		require.NoError(t, err)
		require.Equal(t, 1, n)

		// Revoking: once, then no-op; the token is refused with a clear error.
		revoked, _, err := s.RevokeAPIKey(ctx, tok.ID)
		require.NoError(t, err)
		require.True(t, revoked)
		revoked, _, err = s.RevokeAPIKey(ctx, tok.ID)
		require.NoError(t, err)
		require.False(t, revoked)
		_, _, err = s.RevokeAPIKey(ctx, 999999)
		require.ErrorIs(t, err, store.ErrNotFound)
		_, _, err = s.AuthenticateAPIKey(ctx, hashOf('a'))
		require.ErrorIs(t, err, store.ErrAPIKeyRevoked)
		require.ErrorContains(t, err, "sjt_aaaaaaaa")
		require.ErrorContains(t, err, "was revoked at")
		n, err = s.CountActiveAPIKeys(ctx, alice)
		require.NoError(t, err)
		require.Zero(t, n)
	})
}

func TestAPIKeyExpiryUsesTheDatabaseClock(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		id, err := s.CreateUser(ctx, "carol", "x", store.RoleAdmin)
		require.NoError(t, err)
		now, err := s.Now(ctx)
		require.NoError(t, err)
		newToken(t, s, id, "old", hashOf('c'), now.Add(-time.Minute))
		newToken(t, s, id, "fresh", hashOf('d'), now.Add(time.Hour))

		_, _, err = s.AuthenticateAPIKey(ctx, hashOf('c'))
		require.ErrorIs(t, err, store.ErrAPIKeyExpired)
		require.ErrorContains(t, err, "expired at")
		_, u, err := s.AuthenticateAPIKey(ctx, hashOf('d'))
		require.NoError(t, err)
		require.Equal(t, "carol", u.Username)
		n, err := s.CountActiveAPIKeys(ctx, id)
		require.NoError(t, err)
		require.Equal(t, 1, n, "the expired token does not count")
	})
}

func TestAPIKeyOfDeletedUserIsUnknown(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		id, err := s.CreateUser(ctx, "dave", "x", store.RoleOperator)
		require.NoError(t, err)
		tok := newToken(t, s, id, "gone", hashOf('e'), time.Time{})
		require.NoError(t, s.DeleteUser(ctx, id))

		_, _, err = s.AuthenticateAPIKey(ctx, hashOf('e'))
		require.ErrorIs(t, err, store.ErrNotFound)
		_, err = s.APIKey(ctx, tok.ID)
		require.ErrorIs(t, err, store.ErrNotFound)
	})
}
