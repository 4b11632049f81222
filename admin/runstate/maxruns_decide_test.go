package runstate

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/store"
)

func TestMaxRunsCandidates(t *testing.T) {
	t.Parallel()
	runs := []store.LockedRun{{ID: 1, JobID: 10}, {ID: 2, JobID: 10}, {ID: 3, JobID: 20}, {ID: 4, JobID: 30}, {ID: 5, JobID: 40}, {ID: 6, JobID: 50}, {ID: 7, JobID: 5}}
	rows := []store.RunSettlement{
		{ID: 1, To: store.RunSucceeded}, // job 10 (twice: once in the answer)
		{ID: 2, To: store.RunSucceeded},
		{ID: 3, To: store.RunFailed},    // failed: no
		{ID: 4, To: store.RunSucceeded}, // manual: no
		{ID: 5, To: store.RunSucceeded}, // no max_runs: no
		{ID: 6},                         // not settled: no
		{ID: 7, To: store.RunSucceeded}, // catch-up: yes
	}
	counts := map[int64]store.SlotCounts{
		1: {MaxRuns: 3, TriggerKind: store.TriggerCron}, 2: {MaxRuns: 3, TriggerKind: store.TriggerCron},
		3: {MaxRuns: 3, TriggerKind: store.TriggerCron}, 4: {MaxRuns: 3, TriggerKind: store.TriggerManual},
		5: {TriggerKind: store.TriggerCron}, 6: {MaxRuns: 3, TriggerKind: store.TriggerCron},
		7: {MaxRuns: 1, TriggerKind: store.TriggerCatchUp},
	}
	require.Equal(t, []int64{5, 10}, maxRunsCandidates(rows, runs, counts))
	require.Empty(t, maxRunsCandidates(nil, nil, nil))
}
