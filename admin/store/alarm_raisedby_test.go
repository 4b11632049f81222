package store_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/store/storetest"
)

// TestAlarmsNameTheReplicaThatRaisedThem: an alarm raised without naming
// who raised it (the run state machine's in a result's transaction, the
// workflow engine's) is raised by the store's replica (Config.Replica),
// as the leader's and the watchdog's name it: one replica, one name.
func TestAlarmsNameTheReplicaThatRaisedThem(t *testing.T) {
	t.Parallel()
	storetest.EachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		st := s.AsReplica("standalone")
		_, err := st.RaiseAlarm(ctx, store.Alarm{Kind: store.AlarmLeaderChange, Severity: "info", DedupKey: "a", Message: "by the leader", RaisedBy: "standalone"})
		require.NoError(t, err)
		require.NoError(t, st.Tx(ctx, func(tx *store.Tx) error {
			return tx.RaiseAlarms(ctx, store.Alarm{Kind: store.AlarmRunFailed, Severity: "critical", DedupKey: "b", Message: "in a result's transaction"})
		}))
		_, err = st.RaiseAlarm(ctx, store.Alarm{Kind: store.AlarmRunFailed, Severity: "critical", DedupKey: "c", Message: "no one named"})
		require.NoError(t, err)
		alarms, err := s.Alarms(ctx, 0, 10)
		require.NoError(t, err)
		require.Len(t, alarms, 3)
		for _, a := range alarms {
			require.Equal(t, "standalone", a.RaisedBy, a.Message)
		}
	})
}
