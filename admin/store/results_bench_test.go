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

// BenchmarkFinishResults applies the 1024 results of a 1024-slot run on
// MariaDB, side by side: one transaction per result (FinishAttempt, as the
// results endpoint did) and batched (FinishAttempts with the results of one
// request, 128 per request as executors send them). Reported: results/s.
func BenchmarkFinishResults(b *testing.B) {
	for _, mode := range []string{"one-tx-per-result", "batched-128"} {
		b.Run(mode, func(b *testing.B) {
			ctx := context.Background()
			st := storetest.Open(b, sqlfiles.MySQL)
			_, err := st.ClaimEpoch(ctx, 1, "bench")
			require.NoError(b, err)
			ex, err := st.Heartbeat(ctx, store.ExecutorInfo{InstanceID: "ex", App: "a", Address: "http://127.0.0.1:1", Capacity: 1024})
			require.NoError(b, err)
			j := newJob("a", "big", 0)
			j.SlotCount = 1024
			jobID, err := st.CreateJob(ctx, j)
			require.NoError(b, err)
			results := 0
			b.ResetTimer()
			for i := range b.N {
				b.StopTimer()
				run, _, err := st.InsertRun(ctx, 1, store.NewRun{JobID: jobID, ScheduledAt: int64(i + 1), TriggerKind: store.TriggerManual, Status: store.RunPending, SlotCount: 1024})
				require.NoError(b, err)
				atts := make([]store.NewAttempt, 1024)
				for s := range atts {
					atts[s] = store.NewAttempt{Slot: s, Attempt: 1, ExecutorID: ex.ID}
				}
				_, err = st.StartRun(ctx, 1, run.ID, 0, atts)
				require.NoError(b, err)
				rows, err := st.Attempts(ctx, run.ID)
				require.NoError(b, err)
				outs := make([]store.SlotOutcome, len(rows))
				for k, a := range rows {
					outs[k] = store.SlotOutcome{Token: a.ID, ExecutorID: ex.ID, Status: store.AttemptSucceeded, StartedAt: 1, FinishedAt: 2, Processed: 10}
				}
				b.StartTimer()
				if mode == "one-tx-per-result" {
					for _, o := range outs {
						ok, err := st.FinishAttempt(ctx, o)
						require.NoError(b, err)
						require.True(b, ok)
					}
				} else {
					for start := 0; start < len(outs); start += 128 {
						acc, err := st.FinishAttempts(ctx, outs[start:start+128])
						require.NoError(b, err)
						for _, ok := range acc {
							require.True(b, ok)
						}
					}
				}
				results += len(outs)
				b.StopTimer()
				r, err := st.Run(ctx, run.ID)
				require.NoError(b, err)
				require.Equal(b, store.RunSucceeded, r.Status, fmt.Sprintf("run %d", run.ID))
				b.StartTimer()
			}
			b.ReportMetric(float64(results)/b.Elapsed().Seconds(), "results/s")
		})
	}
}
