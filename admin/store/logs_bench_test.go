package store_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/store"
)

// BenchmarkAppendRunLogs stores the log requests of an executor running 250
// one-slot runs on MariaDB: 500 lines per request, two per run, and a drop
// count for every tenth run. Reported: lines/s.
func BenchmarkAppendRunLogs(b *testing.B) {
	ctx := context.Background()
	st, exID, jobID := benchStore(b, 250, 1)
	var tokens []int64
	for i := range 250 {
		_, atts := startRunAt(b, st, 1, jobID, int64(i+1), exID)
		tokens = append(tokens, atts[0].Token)
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
		res, err := st.AppendRunLogs(ctx, exID, batch, drops, lim)
		require.NoError(b, err)
		require.Equal(b, len(batch), res.Stored)
		stored += res.Stored
	}
	b.ReportMetric(float64(stored)/b.Elapsed().Seconds(), "lines/s")
}
