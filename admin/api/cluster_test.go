package api_test

import (
	"context"
	"database/sql"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/auth"
	"github.com/shardjob/shardjob/admin/partition"
	"github.com/shardjob/shardjob/admin/store"
)

// TestClusterShowsEachPartitionsFiringLag: GET /api/v1/cluster gives each
// claimed partition its owner, epoch and firing lag — how long its
// earliest due job has waited to fire — and the largest lag; a partition
// whose jobs are due later has no lag.
func TestClusterShowsEachPartitionsFiringLag(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		e.user("watcher", auth.RoleViewer)
		tok := e.token("watcher")
		now := time.Now().UnixMilli()
		late, err := e.st.CreateJob(ctx, store.Job{App: "a", Name: "late", Handler: "h", CronExpr: "* * * * *", TimeZone: "UTC",
			MisfirePolicy: "run_once", OverlapPolicy: "allow", SlotCount: 1, Params: "{}", Enabled: true,
			NextFireAt: sql.NullInt64{Int64: now - 60_000, Valid: true}})
		require.NoError(t, err)
		onTime, err := e.st.CreateJob(ctx, store.Job{App: "a", Name: "later", Handler: "h", CronExpr: "* * * * *", TimeZone: "UTC",
			MisfirePolicy: "run_once", OverlapPolicy: "allow", SlotCount: 1, Params: "{}", Enabled: true,
			NextFireAt: sql.NullInt64{Int64: now + 3_600_000, Valid: true}})
		require.NoError(t, err)
		pLate, pOnTime := partition.Of(late, e.st.PartitionCount()), partition.Of(onTime, e.st.PartitionCount())
		require.NotEqual(t, pLate, pOnTime)
		_, err = e.st.ClaimPartitions(ctx, "admin-1", []store.PartitionClaim{{Partition: pLate, Epoch: 5}, {Partition: pOnTime, Epoch: 5}})
		require.NoError(t, err)

		var out struct {
			Partitions struct {
				MaxLagMS int64 `json:"max_lag_ms"`
				Records  []struct {
					Partition int    `json:"partition"`
					Holder    string `json:"holder"`
					LagMS     int64  `json:"lag_ms"`
					NextDueAt string `json:"next_due_at"`
				} `json:"records"`
			} `json:"partitions"`
		}
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/cluster", tok, nil, &out))
		require.Len(t, out.Partitions.Records, 2)
		lags := map[int]int64{}
		for _, r := range out.Partitions.Records {
			require.Equal(t, "admin-1", r.Holder)
			require.NotEmpty(t, r.NextDueAt)
			lags[r.Partition] = r.LagMS
		}
		require.GreaterOrEqual(t, lags[pLate], int64(60_000), "the late job has waited a minute and more")
		require.Less(t, lags[pLate], int64(120_000))
		require.Zero(t, lags[pOnTime], "due in an hour: no lag")
		require.Equal(t, lags[pLate], out.Partitions.MaxLagMS)
	})
}
