package ops_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/auth"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/ops"
	"github.com/shardjob/shardjob/admin/store"
)

// newUser stores a user of role (apps: their limit, "" for none) and
// returns them as an actor.
func newUser(t *testing.T, ctx context.Context, st *store.Store, name, role string) ops.Actor {
	t.Helper()
	hash, err := auth.HashPassword("password-" + name + "-long")
	require.NoError(t, err)
	id, err := st.CreateUser(ctx, name, hash, role)
	require.NoError(t, err)
	u, err := st.User(ctx, id)
	require.NoError(t, err)
	return ops.Actor{User: u}
}

func TestUserRules(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, ctx context.Context, st *store.Store, svc *ops.Service) {
		root := newUser(t, ctx, st, "root", auth.RoleAdmin)
		viewer := newUser(t, ctx, st, "vera", auth.RoleViewer)
		req := apitypes.UserRequest{Username: "eve", Password: "password-eve-long", Role: auth.RoleViewer}

		// Only admins manage users.
		_, err := svc.CreateUser(ctx, viewer, req)
		refused(t, err, ops.ErrForbidden, "", "")
		_, err = svc.Users(ctx, viewer)
		refused(t, err, ops.ErrForbidden, "", "")
		require.ErrorIs(t, svc.DeleteUser(ctx, viewer, root.User.ID), ops.ErrForbidden)

		// The fields of a user.
		bad := req
		bad.Role = "god"
		_, err = svc.CreateUser(ctx, root, bad)
		refused(t, err, ops.ErrInvalid, "role", msg.RoleOneOf)
		bad = req
		bad.Apps = []string{"billing", "billing"}
		_, err = svc.CreateUser(ctx, root, bad)
		refused(t, err, ops.ErrInvalid, "apps", msg.UserAppsInvalid)
		bad = req
		bad.Password = "short"
		_, err = svc.CreateUser(ctx, root, bad)
		refused(t, err, ops.ErrInvalid, "password", msg.PasswordTooShort)

		eve, err := svc.CreateUser(ctx, root, req)
		require.NoError(t, err)
		// User names are case-insensitive.
		again := req
		again.Username = "EVE"
		_, err = svc.CreateUser(ctx, root, again)
		refused(t, err, ops.ErrConflict, "username", msg.UserNameTaken)

		// An admin keeps their own admin role and account.
		demote := auth.RoleOperator
		_, err = svc.UpdateUser(ctx, root, root.User.ID, apitypes.UserUpdate{Role: &demote})
		refused(t, err, ops.ErrConflict, "", "")
		require.ErrorIs(t, svc.DeleteUser(ctx, root, root.User.ID), ops.ErrConflict)

		// A refused update changes nothing.
		badApps := []string{"no such app!"}
		_, err = svc.UpdateUser(ctx, root, eve.ID, apitypes.UserUpdate{Role: &demote, Apps: &badApps})
		refused(t, err, ops.ErrInvalid, "apps", msg.UserAppsInvalid)
		u, err := st.User(ctx, eve.ID)
		require.NoError(t, err)
		require.Equal(t, auth.RoleViewer, u.Role)

		_, err = svc.UpdateUser(ctx, root, eve.ID+100, apitypes.UserUpdate{Role: &demote})
		require.Equal(t, "user", refusal(t, err, ops.ErrNotFound, "", "").Object)
		require.NoError(t, svc.DeleteUser(ctx, root, eve.ID))
	})
}

func TestChangeOwnPassword(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, ctx context.Context, st *store.Store, svc *ops.Service) {
		vera := newUser(t, ctx, st, "vera", auth.RoleViewer)
		err := svc.ChangeOwnPassword(ctx, vera, apitypes.PasswordChange{Old: "wrong", New: "a-new-password-1"})
		refused(t, err, ops.ErrInvalid, ops.WrongPasswordField, msg.PasswordWrongOld)
		err = svc.ChangeOwnPassword(ctx, vera, apitypes.PasswordChange{Old: "password-vera-long", New: "short"})
		refused(t, err, ops.ErrInvalid, "new", msg.PasswordTooShort)
		require.NoError(t, svc.ChangeOwnPassword(ctx, vera, apitypes.PasswordChange{Old: "password-vera-long", New: "a-new-password-1"}))
		u, err := st.User(ctx, vera.User.ID)
		require.NoError(t, err)
		require.True(t, auth.CheckPassword(u.PasswordHash, "a-new-password-1"))
	})
}

func TestAPIKeyRules(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, ctx context.Context, st *store.Store, svc *ops.Service) {
		root := newUser(t, ctx, st, "root", auth.RoleAdmin)
		olga := newUser(t, ctx, st, "olga", auth.RoleOperator)
		vera := newUser(t, ctx, st, "vera", auth.RoleViewer)

		// A key never has more rights than its creator.
		_, err := svc.CreateAPIKey(ctx, vera, apitypes.APIKeyRequest{Name: "up", Role: auth.RoleOperator})
		refused(t, err, ops.ErrForbidden, "", "")
		_, err = svc.CreateAPIKey(ctx, vera, apitypes.APIKeyRequest{Name: " padded", Role: "god"})
		refused(t, err, ops.ErrInvalid, "name", msg.APIKeyNameRule)
		refused(t, err, ops.ErrInvalid, "role", msg.APIKeyRoleOneOf)

		days := 10
		k, err := svc.CreateAPIKey(ctx, olga, apitypes.APIKeyRequest{Name: "ci", ExpiresInDays: &days})
		require.NoError(t, err)
		require.True(t, strings.HasPrefix(k.Secret, ops.APIKeyPrefix) && ops.WellFormedAPIKey(k.Secret), k.Secret)
		require.Equal(t, "active", k.Key.State)

		// A key created with a key is capped by it: its role, its expiry.
		viaKey := olga
		viaKey.APIKeyID = k.Key.ID
		longer := 11
		_, err = svc.CreateAPIKey(ctx, viaKey, apitypes.APIKeyRequest{Name: "longer", ExpiresInDays: &longer})
		refused(t, err, ops.ErrInvalid, "expires_in_days", msg.APIKeyOutliveMost)
		child, err := svc.CreateAPIKey(ctx, viaKey, apitypes.APIKeyRequest{Name: "child"})
		require.NoError(t, err)
		require.Equal(t, auth.RoleOperator, child.Key.RoleCap, "a key made with a key is never uncapped")
		require.Equal(t, k.Key.ExpiresAt, child.Key.ExpiresAt, "it expires with its parent")
		require.Equal(t, &k.Key.ID, child.Key.ParentID)

		// Another user's key does not exist for a non-admin.
		_, err = svc.RevokeAPIKey(ctx, vera, k.Key.ID)
		require.Equal(t, "API key", refusal(t, err, ops.ErrNotFound, "", "").Object)
		list, err := svc.APIKeys(ctx, vera, false)
		require.NoError(t, err)
		require.Empty(t, list.Keys)
		_, err = svc.APIKeys(ctx, vera, true)
		refused(t, err, ops.ErrForbidden, "", "")

		// An admin revokes anyone's, and the keys made with it go too.
		r, err := svc.RevokeAPIKey(ctx, root, k.Key.ID)
		require.NoError(t, err)
		require.True(t, r.Revoked)
		require.Equal(t, []int64{child.Key.ID}, r.AlsoRevoked)
		require.Equal(t, "revoked", r.Key.State)
		r, err = svc.RevokeAPIKey(ctx, olga, k.Key.ID)
		require.NoError(t, err)
		require.False(t, r.Revoked, "revoked already")

		// A request whose own key was revoked meanwhile is refused as such.
		_, err = svc.CreateAPIKey(ctx, viaKey, apitypes.APIKeyRequest{Name: "late"})
		refused(t, err, ops.ErrCredential, "", "")

		all, err := svc.APIKeys(ctx, root, true)
		require.NoError(t, err)
		require.Len(t, all.Keys, 2)
	})
}

func TestOperatorReadsAndChannels(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, ctx context.Context, st *store.Store, svc *ops.Service) {
		olga := newUser(t, ctx, st, "olga", auth.RoleOperator)
		root := newUser(t, ctx, st, "root", auth.RoleAdmin)

		_, err := svc.Dashboard(ctx, olga, "2h", "", false)
		refused(t, err, ops.ErrInvalid, "window", msg.DashboardWindowInvalid)
		_, err = svc.Dashboard(ctx, olga, "1h", "not an app!", true)
		refused(t, err, ops.ErrInvalid, "", "")
		d, err := svc.Dashboard(ctx, olga, "1h", "", false)
		require.NoError(t, err)
		require.Len(t, d.Buckets, 60)

		_, err = svc.Utilization(ctx, olga, 1000, 1000+8*24*3600*1000, "", false)
		refused(t, err, ops.ErrInvalid, "", "")

		_, err = svc.AuditLog(ctx, olga, apitypes.AuditQuery{Actor: strings.Repeat("a", 256)})
		refused(t, err, ops.ErrInvalid, "", "")

		_, err = svc.AlarmGroups(ctx, olga, apitypes.AlarmGroupQuery{Filter: apitypes.AlarmFilterBody{Severity: "loud"}})
		refused(t, err, ops.ErrInvalid, "severity", msg.AlarmsSeverityInvalid)
		_, err = svc.BulkAlarms(ctx, olga, apitypes.AlarmBulkRequest{Action: "ack"})
		refused(t, err, ops.ErrInvalid, "ids", msg.AlarmsSelectionNeeded)

		_, err = svc.SetDrain(ctx, olga, 12345, true)
		require.Equal(t, "executor", refusal(t, err, ops.ErrNotFound, "", "").Object)

		// Channels: admins only; none configured here.
		_, err = svc.TestAlarmChannel(ctx, olga, "ops-mail")
		refused(t, err, ops.ErrForbidden, "", "")
		_, err = svc.TestAlarmChannel(ctx, root, "ops-mail")
		refused(t, err, ops.ErrNotFound, "", "")

		require.ErrorIs(t, svc.XXLJobEnabled(), ops.ErrNotFound)
	})
}
