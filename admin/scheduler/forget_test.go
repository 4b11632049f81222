package scheduler_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/internal/clock"
	"github.com/shardjob/shardjob/admin/scheduler"
	"github.com/shardjob/shardjob/admin/store"
)

// TestRecoverLostForgetsExecutorsLostPastTheHorizon: the leader's loss
// detection marks gone the executors lost for longer than ForgetLostAfter,
// of every protocol, and leaves those lost for less.
func TestRecoverLostForgetsExecutorsLostPastTheHorizon(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		c := clock.NewManual(t0)
		s, err := scheduler.New(scheduler.Config{ID: "test", Clock: c, ForgetLostAfter: 10 * time.Minute}, st, &fakePusher{})
		require.NoError(t, err)
		claim(t, st, 1)
		sj := online(t, st, store.ExecutorInfo{InstanceID: "sj", App: "app", Address: "http://127.0.0.1:1", Capacity: 1})
		xxl, err := st.RegisterXXLExecutor(ctx, store.ExecutorInfo{InstanceID: "xxljob:app@http://127.0.0.1:2/", App: "app", Address: "http://127.0.0.1:2/", Capacity: 4})
		require.NoError(t, err)
		state := func(id int64) string {
			e, err := st.Executor(ctx, id)
			require.NoError(t, err)
			return e.State
		}
		age := func(ms int64) {
			_, err := st.DB().Exec(st.DB().Rebind(`UPDATE executor SET last_heartbeat = last_heartbeat - ?`), ms)
			require.NoError(t, err)
		}

		age(5 * 60_000) // silent 5 minutes: lost, within the horizon
		require.NoError(t, s.RecoverLost(ctx, 1))
		require.Equal(t, store.ExecutorLost, state(sj.ID))
		require.Equal(t, store.ExecutorLost, state(xxl.ID))

		age(6 * 60_000) // 11 minutes
		require.NoError(t, s.RecoverLost(ctx, 1))
		require.Equal(t, store.ExecutorGone, state(sj.ID))
		require.Equal(t, store.ExecutorGone, state(xxl.ID))
	})
}
