package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/runstate"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/store/storetest"
	"github.com/shardjob/shardjob/sdk/protocol"
	sqlfiles "github.com/shardjob/shardjob/sql"
)

// BenchmarkFinishResults applies 1024 results per iteration on MariaDB, side
// by side: the 1024 slots of one run, one transaction per result
// (FinishAttempt, as the results endpoint did) and batched (FinishAttempts
// with the results of one request, 128 per request as executors send them);
// and the herd case, 1024 one-slot runs whose results come in batches of 256
// (each result settles its own run), again with job_run's and
// slot_attempt's indexes as they were before migrations 0050 and 0051
// (legacyRunIndexes). Reported: results/s.
func BenchmarkFinishResults(b *testing.B) {
	modes := []struct {
		name        string
		slotsPerRun int // 1024 results = 1024/slotsPerRun runs
		batch       int // results per FinishAttempts call; 0: FinishAttempt each
	}{
		{"one-tx-per-result", 1024, 0},
		{"batched-128", 1024, 128},
		{"1-slot-runs-batched-256", 1, 256},
		{"1-slot-runs-batched-256-with-the-indexes-before-0050-0051", 1, 256},
	}
	for _, mode := range modes {
		b.Run(mode.name, func(b *testing.B) {
			ctx := context.Background()
			st, exID, jobID := benchStore(b, 1024, mode.slotsPerRun)
			if strings.HasSuffix(mode.name, "-with-the-indexes-before-0050-0051") {
				legacyRunIndexes(b, st)
			}
			on := make([]int64, mode.slotsPerRun) // every slot on the executor
			for s := range on {
				on[s] = exID
			}
			results, key := 0, int64(0)
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				var runs []int64
				var outs []store.SlotOutcome
				for range 1024 / mode.slotsPerRun {
					key++
					run, rows := startRunAt(b, st, 1, jobID, key, on...)
					for _, a := range rows {
						// Times and counters differ from slot to slot, as they do.
						k := int64(len(outs))
						outs = append(outs, store.SlotOutcome{SlotResult: protocol.SlotResult{Token: a.Token, Status: store.AttemptSucceeded, StartedAt: 1000 + k, FinishedAt: 2000 + 3*k, Processed: 10 + k%7}, ExecutorID: exID})
					}
					runs = append(runs, run.ID)
				}
				b.StartTimer()
				if mode.batch == 0 {
					for _, o := range outs {
						ok, err := runstate.New(st).FinishAttempt(ctx, o)
						require.NoError(b, err)
						require.True(b, ok)
					}
				} else {
					for start := 0; start < len(outs); start += mode.batch {
						acc, err := runstate.New(st).FinishAttempts(ctx, outs[start:min(start+mode.batch, len(outs))])
						require.NoError(b, err)
						for _, ok := range acc {
							require.True(b, ok)
						}
					}
				}
				results += len(outs)
				b.StopTimer()
				for _, id := range runs {
					r, err := st.Run(ctx, id)
					require.NoError(b, err)
					require.Equal(b, store.RunSucceeded, r.Status, fmt.Sprintf("run %d", id))
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(results)/b.Elapsed().Seconds(), "results/s")
		})
	}
}

// benchStore opens a MariaDB store for a benchmark, claims epoch 1 and
// registers an executor of app "a" with capacity and a job of slots slots.
func benchStore(b *testing.B, capacity, slots int) (st *store.Store, executorID, jobID int64) {
	b.Helper()
	ctx := context.Background()
	st = storetest.Open(b, sqlfiles.MySQL)
	_, err := st.ClaimEpoch(ctx, 1, "bench")
	require.NoError(b, err)
	ex, err := st.Heartbeat(ctx, store.ExecutorInfo{InstanceID: "ex", App: "a", Address: "http://127.0.0.1:1", Capacity: capacity})
	require.NoError(b, err)
	j := newJob("a", "bench", 0)
	j.SlotCount = slots
	jobID, err = st.CreateJob(ctx, j)
	require.NoError(b, err)
	return st, ex.ID, jobID
}
