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

// BenchmarkAppendRunLogs stores the log requests of an executor running 250
// one-slot runs on MariaDB: 500 lines per request, two per run, and a drop
// count for every tenth run. Reported: lines/s.
func BenchmarkAppendRunLogs(b *testing.B) {
	ctx := context.Background()
	st := storetest.Open(b, sqlfiles.MySQL)
	_, err := st.ClaimEpoch(ctx, 1, "bench")
	require.NoError(b, err)
	ex, err := st.Heartbeat(ctx, store.ExecutorInfo{InstanceID: "ex", App: "a", Address: "http://127.0.0.1:1", Capacity: 250})
	require.NoError(b, err)
	j := newJob("a", "logs", 0)
	j.SlotCount = 1
	jobID, err := st.CreateJob(ctx, j)
	require.NoError(b, err)
	var tokens []int64
	for i := range 250 {
		_, atts := startRunAt(b, st, 1, jobID, int64(i+1), ex.ID)
		tokens = append(tokens, atts[0].ID)
	}
	batch := make([]store.LogLine, 0, 500)
	var drops []store.LogDrop
	for k := range 2 {
		for i, tok := range tokens {
			batch = append(batch, store.LogLine{Token: tok, At: int64(1000 + k), Message: fmt.Sprintf("slot line %d of run %d", k, i), Attrs: `{"k":1}`})
		}
	}
	for i := 0; i < len(tokens); i += 10 {
		drops = append(drops, store.LogDrop{Token: tokens[i], Lines: 1})
	}
	lim := store.RunLogLimits{MaxLines: 1 << 40, MaxBytes: 1 << 50}
	stored := 0
	b.ResetTimer()
	for range b.N {
		res, err := st.AppendRunLogs(ctx, ex.ID, batch, drops, lim)
		require.NoError(b, err)
		require.Equal(b, len(batch), res.Stored)
		stored += res.Stored
	}
	b.ReportMetric(float64(stored)/b.Elapsed().Seconds(), "lines/s")
}
