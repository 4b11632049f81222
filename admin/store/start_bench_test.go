package store_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/store/storetest"
	sqlfiles "github.com/shardjob/shardjob/sql"
)

// BenchmarkStartRuns starts 2000 pending one-slot runs per iteration on
// MariaDB, side by side: one transaction per run (StartRun, the per-run
// path) and batches of 500 and 2000 runs (StartRuns); batch-500 again with
// job_run's and slot_attempt's indexes as they were before migrations 0050
// and 0051 (legacyRunIndexes: five of them with the status in them).
// Reported: runs/s.
func BenchmarkStartRuns(b *testing.B) {
	for _, mode := range []struct {
		batch  int
		legacy bool
	}{{1, false}, {500, false}, {500, true}, {2000, false}} {
		batch := mode.batch
		name := fmt.Sprintf("batch-%d", batch)
		if mode.legacy {
			name += "-with-the-indexes-before-0050-0051"
		}
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			st := storetest.Open(b, sqlfiles.MySQL)
			if mode.legacy {
				legacyRunIndexes(b, st)
			}
			_, err := st.ClaimEpoch(ctx, 1, "bench")
			require.NoError(b, err)
			ex, err := st.Heartbeat(ctx, store.ExecutorInfo{InstanceID: "ex", App: "a", Address: "http://127.0.0.1:1", Capacity: 1024})
			require.NoError(b, err)
			jobID, err := st.CreateJob(ctx, newJob("a", "j", 0))
			require.NoError(b, err)
			const perIter = 2000
			at, started := int64(0), 0
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				runs := make([]store.NewRun, perIter)
				for i := range runs {
					at++
					runs[i] = store.NewRun{JobID: jobID, ScheduledAt: at, TriggerKind: store.TriggerCron, Status: store.RunPending, SlotCount: 1}
				}
				require.NoError(b, st.Tx(ctx, func(tx *store.Tx) error {
					_, err := tx.InsertRuns(ctx, 1, runs)
					return err
				}))
				var ids []int64
				require.NoError(b, st.DB().Select(&ids, `SELECT id FROM job_run WHERE status = 'pending' ORDER BY id`))
				b.StartTimer()
				for s := 0; s < len(ids); s += batch {
					var rs []store.RunStart
					for _, id := range ids[s:min(s+batch, len(ids))] {
						rs = append(rs, store.RunStart{RunID: id, Attempts: []store.NewAttempt{{Slot: 0, Attempt: 1, ExecutorID: ex.ID}}})
					}
					got, err := st.StartRuns(ctx, 1, 0, rs)
					require.NoError(b, err)
					started += len(got)
				}
			}
			b.ReportMetric(float64(started)/b.Elapsed().Seconds(), "runs/s")
		})
	}
}

// legacyRunIndexes puts back the indexes of job_run and slot_attempt as
// they were before migrations 0050 and 0051 (idx_run_start_after,
// idx_run_held_until, idx_run_backfill, idx_attempt_executor and
// idx_attempt_status with the status in them, so that every status change
// rewrote them), for a side-by-side measure of what they cost each start
// and settle.
func legacyRunIndexes(b *testing.B, st *store.Store) {
	b.Helper()
	for _, stmt := range []string{
		`ALTER TABLE job_run DROP INDEX idx_run_start_after, DROP INDEX idx_run_held_until, DROP INDEX idx_run_backfill,
		ADD INDEX idx_run_start_after (status, start_after), ADD INDEX idx_run_held_until (status, held_until), ADD INDEX idx_run_backfill (backfill_id, status)`,
		`ALTER TABLE slot_attempt DROP INDEX idx_attempt_executor, DROP INDEX idx_attempt_unacked,
		ADD INDEX idx_attempt_executor (executor_id, status), ADD INDEX idx_attempt_status (status, id)`,
	} {
		_, err := st.DB().Exec(stmt)
		require.NoError(b, err)
	}
}
