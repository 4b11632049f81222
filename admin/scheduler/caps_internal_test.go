package scheduler

import (
	"context"
	"database/sql"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/dispatch"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/store/storetest"
)

// TestCountInTheMiddleOfARoundKeepsItsOwnPlacements: a count read from the
// database in the middle of a round adds what the round placed so far
// (some of it in start transactions that may not have committed), so it
// never falls below the truth; an app's bound is dropped while it has no
// cap, and counted afresh when it has one again.
func TestCountInTheMiddleOfARoundKeepsItsOwnPlacements(t *testing.T) {
	t.Parallel()
	storetest.EachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		s, err := New(Config{ID: "test"}, st, noPush{})
		require.NoError(t, err)
		require.NoError(t, st.EnsureApp(ctx, "a"))
		setCap := func(n int64) {
			app, err := st.App(ctx, "a")
			require.NoError(t, err)
			app.MaxRunningSlots = sql.NullInt64{Int64: n, Valid: n > 0}
			require.NoError(t, st.UpdateApp(ctx, app))
		}
		setCap(20)
		c, err := s.newCapRound(ctx)
		require.NoError(t, err)
		require.Equal(t, int64(0), c.appUsed["a"], "nothing placed in the database")
		c.take("a", 1, 15) // handed to a start transaction, not committed
		c.appRecounted["a"] = false
		require.NoError(t, c.countApps(ctx, []string{"a"}))
		require.Equal(t, int64(15), c.appUsed["a"], "the round's own placements count though the database has none yet")
		room, _, err := c.room(ctx, "a", 1, "j", 0, 10)
		require.NoError(t, err)
		require.Equal(t, int64(5), room)

		setCap(0)
		_, err = s.newCapRound(ctx)
		require.NoError(t, err)
		s.capBounds.mu.Lock()
		_, kept := s.capBounds.apps["a"]
		s.capBounds.mu.Unlock()
		require.False(t, kept, "no cap: no bound (its placements are not tracked)")
		setCap(20)
		c, err = s.newCapRound(ctx)
		require.NoError(t, err)
		require.True(t, c.appRecounted["a"], "a cap again: counted afresh")
	})
}

// noPush is a Pusher the round never calls (no slot is pushed here).
type noPush struct{ dispatch.Pusher }
