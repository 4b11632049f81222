package auth

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/bcrypt"

	"github.com/shardjob/shardjob/admin/internal/clock"
)

func TestPasswords(t *testing.T) {
	t.Parallel()
	h, err := HashPassword("correct horse in the stable")
	require.NoError(t, err)
	require.True(t, CheckPassword(h, "correct horse in the stable"))
	require.False(t, CheckPassword(h, "wrong horse in the stable"))
	require.False(t, CheckPassword("", "correct horse in the stable"), "no user: never a match")
	_, err = HashPassword("short")
	var pe *PasswordError
	require.ErrorAs(t, err, &pe)
	require.ErrorContains(t, err, "use at least 12")
}

// TestPasswordPolicy: at least 12 characters of any script, spaces allowed;
// the most common passwords (also with digits or symbols around them),
// repeated patterns and runs are refused with a message that says why and
// what to do instead.
func TestPasswordPolicy(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ pw, refusal string }{
		{"short", "5 characters long; use at least 12"},
		{"elevenchars", "11 characters long; use at least 12"},
		{"密码密码密码密码密码", "10 characters long"}, // 30 bytes, but 10 characters
		{strings.Repeat("long words ", 7), "77 bytes long; at most 72"},
		{strings.Repeat("ü", 40), "80 bytes long"},
		{"password1234", "most common passwords"},
		{"Password123!", "most common passwords"},
		{"!!Summer2024!!", "most common passwords"},
		{"Correct Horse Battery Staple", "most common passwords"},
		{"qwertyuiop12", "most common passwords"},
		{"1q2w3e4r5t6y", "most common passwords"},
		{"Trustno1!!!!", "most common passwords"},
		{"aaaaaaaaaaaa", "repeats a short pattern"},
		{"abcabcabcabc", "repeats a short pattern"},
		{"hunter2hunter2", "repeats a short pattern"},
		{"abcdefghijklm", "run of consecutive characters"},
		{"987654321098", ""}, // 9→8…→0→9 is no run
		{"password-ops", ""}, // a common word inside a longer password is fine
		{"new-password-1", ""},
		{"correct horse in the stable", ""},
		{"мой пароль на зиму", ""},
		{"我的密码是一句很长的话吧", ""},
		{"tabs	and spaces ok", ""},
	} {
		err := ValidatePassword(tc.pw)
		if tc.refusal == "" {
			require.NoError(t, err, "%q", tc.pw)
			continue
		}
		var pe *PasswordError
		require.ErrorAs(t, err, &pe, "%q", tc.pw)
		require.Contains(t, pe.Error(), tc.refusal, "%q", tc.pw)
	}
	for range 200 {
		require.NoError(t, ValidatePassword(NewPassword()), "the generated first-start password passes the policy")
	}
}

// TestUnknownUserCostsABcrypt: CheckPassword without a hash (no such user)
// compares against a dummy hash of the stored hashes' cost.
func TestUnknownUserCostsABcrypt(t *testing.T) {
	t.Parallel()
	cost, err := bcrypt.Cost([]byte(dummyHash))
	require.NoError(t, err)
	require.Equal(t, PasswordCost, cost)
	h, err := HashPassword("correct horse in the stable")
	require.NoError(t, err)
	cost, err = bcrypt.Cost([]byte(h))
	require.NoError(t, err)
	require.Equal(t, PasswordCost, cost)
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
	now := clock.NewManual(time.Unix(1000, 0))
	th := NewThrottle(3, time.Minute, now)
	for range 3 {
		ok, _ := th.Take("u")
		require.True(t, ok)
	}
	ok, wait := th.Take("u")
	require.False(t, ok)
	require.Equal(t, time.Minute, wait)
	ok, _ = th.Take("other")
	require.True(t, ok)
	now.Advance(30 * time.Second)
	ok, wait = th.Take("u")
	require.False(t, ok, "a refused attempt does not count, but the window has not passed")
	require.Equal(t, 30*time.Second, wait)
	now.Advance(31 * time.Second)
	ok, _ = th.Take("u")
	require.True(t, ok)
	th.Reset("u")
	for range 3 {
		ok, _ = th.Take("u")
		require.True(t, ok, "Reset forgets the attempts")
	}
}

// TestThrottleTakeIsAtomic: of many parallel attempts on one key exactly
// Max go ahead (the check and the count are one step).
func TestThrottleTakeIsAtomic(t *testing.T) {
	t.Parallel()
	th := NewThrottle(5, time.Minute, clock.System)
	var wg sync.WaitGroup
	var allowed atomic.Int32
	for range 50 {
		wg.Go(func() {
			if ok, _ := th.Take("u"); ok {
				allowed.Add(1)
			}
		})
	}
	wg.Wait()
	require.Equal(t, int32(5), allowed.Load())
}

// TestThrottleSprayEvictsOnlyTheOldest: spraying new keys past MaxKeys
// forgets the keys touched longest ago, one by one; a key that is still
// being tried stays throttled, and memory stays bounded. (Clearing the
// whole table when it was full let a spray free every throttled key.)
func TestThrottleSprayEvictsOnlyTheOldest(t *testing.T) {
	t.Parallel()
	now := clock.NewManual(time.Unix(1000, 0))
	th := NewThrottle(3, time.Minute, now)
	th.MaxKeys = 1000
	for range 3 {
		th.Take("victim")
	}
	for i := range 20 * th.MaxKeys {
		th.Take("spray-" + strconv.Itoa(i))
		require.LessOrEqual(t, th.Len(), th.MaxKeys)
		if i%(th.MaxKeys/2) == 0 {
			ok, _ := th.Take("victim")
			require.False(t, ok, "the victim is still throttled after %d sprayed keys", i+1)
		}
	}
	require.Equal(t, th.MaxKeys, th.Len())
	ok, _ := th.Take("spray-0")
	require.True(t, ok, "the oldest sprayed key was evicted, so it starts afresh")
	ok, _ = th.Take("spray-" + strconv.Itoa(20*th.MaxKeys-1))
	require.True(t, ok, "the newest sprayed key is kept (its second attempt of 3)")

	// A key not touched for a whole window is dropped without any spray.
	now.Advance(time.Minute)
	th.Take("late")
	require.Equal(t, 1, th.Len())
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
