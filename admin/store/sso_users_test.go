package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/store/storetest"
)

// TestSSOUsers: a directory user is created at first sign-in and found by
// source and subject, a later answer renames and remaps them, one request
// of two claims a recheck, a refusal ends their sessions and forgets the
// refresh token, and a name a local user holds is a conflict.
func TestSSOUsers(t *testing.T) {
	t.Parallel()
	storetest.EachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		_, err := s.CreateUser(ctx, "root", "x", "admin")
		require.NoError(t, err)
		in := store.SSOUser{Source: "ldap", Subject: "uid=ann,ou=people,dc=example,dc=org", Username: "ann", Email: "ann@example.org",
			Role: "operator", Apps: []string{"billing", "search"}, CheckedAt: 1000, RefreshToken: "sealed-1"}
		id, err := s.CreateSSOUser(ctx, in)
		require.NoError(t, err)
		u, err := s.UserBySubject(ctx, "ldap", in.Subject)
		require.NoError(t, err)
		require.Equal(t, store.User{ID: id, Username: "ann", Role: "operator", Apps: "billing,search", CreatedAt: u.CreatedAt,
			Source: "ldap", Subject: in.Subject, Email: "ann@example.org", CheckedAt: 1000}, u)
		_, err = s.UserBySubject(ctx, "oidc", in.Subject)
		require.ErrorIs(t, err, store.ErrNotFound)
		tok, err := s.UserRefreshToken(ctx, id)
		require.NoError(t, err)
		require.Equal(t, "sealed-1", tok)

		// A local user's name is not taken over.
		_, err = s.CreateSSOUser(ctx, store.SSOUser{Source: "oidc", Subject: "s-2", Username: "ROOT", Role: "viewer"})
		require.ErrorIs(t, err, store.ErrConflict)

		// One of two requests that read the same row claims the recheck.
		won, err := s.ClaimRecheck(ctx, u, time.UnixMilli(2000))
		require.NoError(t, err)
		require.True(t, won)
		won, err = s.ClaimRecheck(ctx, u, time.UnixMilli(2001))
		require.NoError(t, err)
		require.False(t, won, "the second claim read the row before the first moved it")

		// A later answer: renamed, fewer apps, the refresh token kept when none came.
		require.NoError(t, s.ApplySSOUser(ctx, id, store.SSOUser{Username: "ann.lee", Email: "", Role: "viewer", Apps: nil, CheckedAt: 3000}))
		u, err = s.User(ctx, id)
		require.NoError(t, err)
		require.Equal(t, []any{"ann.lee", "viewer", "", int64(3000), int64(2000)}, []any{u.Username, u.Role, u.Apps, u.CheckedAt, u.RecheckAt})
		tok, err = s.UserRefreshToken(ctx, id)
		require.NoError(t, err)
		require.Equal(t, "sealed-1", tok)
		require.ErrorIs(t, s.ApplySSOUser(ctx, id, store.SSOUser{Username: "root", Role: "viewer"}), store.ErrConflict)

		// Refused: sessions end, the refresh token is forgotten; a sign-in clears it.
		require.NoError(t, s.CreateSession(ctx, "h1", id, time.Hour))
		require.NoError(t, s.RefuseUser(ctx, id, "no mapped group"))
		_, err = s.SessionUser(ctx, "h1")
		require.ErrorIs(t, err, store.ErrNotFound)
		u, err = s.User(ctx, id)
		require.NoError(t, err)
		require.Equal(t, "no mapped group", u.Refused)
		tok, err = s.UserRefreshToken(ctx, id)
		require.NoError(t, err)
		require.Empty(t, tok)
		require.NoError(t, s.ApplySSOUser(ctx, id, store.SSOUser{Username: "ann", Role: "viewer", CheckedAt: 4000, RefreshToken: "sealed-2"}))
		u, err = s.User(ctx, id)
		require.NoError(t, err)
		require.Empty(t, u.Refused)
	})
}

// TestPendingSignIns: a pending OIDC sign-in serves once, and expired ones
// are not served and are purged.
func TestPendingSignIns(t *testing.T) {
	t.Parallel()
	storetest.EachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		p := store.PendingSignIn{Nonce: "n", Verifier: "v", ReturnTo: "/#/jobs"}
		require.NoError(t, s.SavePendingSignIn(ctx, "state-1", p, time.Minute))
		require.NoError(t, s.SavePendingSignIn(ctx, "state-old", p, -time.Second))
		got, err := s.TakePendingSignIn(ctx, "state-1")
		require.NoError(t, err)
		require.Equal(t, p, got)
		_, err = s.TakePendingSignIn(ctx, "state-1")
		require.ErrorIs(t, err, store.ErrNotFound, "a state serves once")
		_, err = s.TakePendingSignIn(ctx, "state-old")
		require.ErrorIs(t, err, store.ErrNotFound, "an expired state is not served")
		n, err := s.PurgePendingSignIns(ctx)
		require.NoError(t, err)
		require.Equal(t, int64(1), n)
	})
}
