package auth

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestPasswords(t *testing.T) {
	t.Parallel()
	h, err := HashPassword("correct horse")
	require.NoError(t, err)
	require.True(t, CheckPassword(h, "correct horse"))
	require.False(t, CheckPassword(h, "wrong horse"))
	_, err = HashPassword("short")
	require.ErrorContains(t, err, "at least 8")
}

func TestRoles(t *testing.T) {
	t.Parallel()
	require.True(t, Allows(RoleAdmin, RoleOperator))
	require.True(t, Allows(RoleOperator, RoleViewer))
	require.False(t, Allows(RoleViewer, RoleOperator))
	require.False(t, Allows("root", RoleViewer))
	require.True(t, ValidRole(RoleViewer))
	require.False(t, ValidRole(""))
}

func TestTokens(t *testing.T) {
	t.Parallel()
	a, b := NewToken(), NewToken()
	require.NotEqual(t, a, b)
	require.Len(t, HashToken(a), 64)
	require.Equal(t, HashToken(a), HashToken(a))
}

type fakeUsers struct {
	n       int
	created []string
}

func (f *fakeUsers) CountUsers(context.Context) (int, error) { return f.n, nil }
func (f *fakeUsers) CreateUser(_ context.Context, u, h, r string) (int64, error) {
	f.created = append(f.created, u+":"+r)
	f.n++
	return 1, nil
}

var _ UserStore = (*fakeUsers)(nil)

func TestBootstrapOnlyOnce(t *testing.T) {
	t.Parallel()
	f := &fakeUsers{}
	pw, err := Bootstrap(context.Background(), f)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(pw), 16)
	require.Equal(t, []string{"admin:admin"}, f.created)
	pw, err = Bootstrap(context.Background(), f)
	require.NoError(t, err)
	require.Empty(t, pw)
}

func TestThrottle(t *testing.T) {
	t.Parallel()
	now := time.Unix(1000, 0)
	th := NewThrottle(3, time.Minute)
	th.Now = func() time.Time { return now }
	for range 3 {
		ok, _ := th.Allowed("u")
		require.True(t, ok)
		th.Fail("u")
	}
	ok, wait := th.Allowed("u")
	require.False(t, ok)
	require.Equal(t, time.Minute, wait)
	ok, _ = th.Allowed("other")
	require.True(t, ok)
	now = now.Add(61 * time.Second)
	ok, _ = th.Allowed("u")
	require.True(t, ok)
	th.Fail("u")
	th.Reset("u")
	ok, _ = th.Allowed("u")
	require.True(t, ok)
}

type racingUsers struct{ fakeUsers }

// CreateUser loses the race: another replica created the user first.
func (r *racingUsers) CreateUser(context.Context, string, string, string) (int64, error) {
	r.n = 1
	return 0, errors.New("duplicate")
}

func TestBootstrapLosingTheRaceIsNotAnError(t *testing.T) {
	t.Parallel()
	pw, err := Bootstrap(context.Background(), &racingUsers{})
	require.NoError(t, err)
	require.Empty(t, pw)
}
