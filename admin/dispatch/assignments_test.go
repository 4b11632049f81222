package dispatch

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/sdk/protocol"
)

// BuildAssignments carries the job's records policy, with the scope's
// placeholders resolved in the job's time zone, and none for a job that
// leaves the policy to its handler.
func TestBuildAssignmentsCarryRecordsPolicy(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 30, 20, 0, 0, 0, time.UTC).UnixMilli() // 1 December in Shanghai
	ds := []store.DispatchSlot{
		{Token: 1, RunID: 10, Slot: 0, JobID: 1, SlotCount: 2, ScheduledAt: at, TimeZone: "Asia/Shanghai",
			RecordsPolicy: store.RecordsPolicy{DedupScope: "settle:{date}", UncertainPolicy: "skip", RecordMaxAttempts: 5}},
		{Token: 2, RunID: 10, Slot: 1, JobID: 1, SlotCount: 2, ScheduledAt: at, TimeZone: "Asia/Shanghai",
			RecordsPolicy: store.RecordsPolicy{DedupScope: "settle:{date}", UncertainPolicy: "skip", RecordMaxAttempts: 5}},
		{Token: 3, RunID: 11, Slot: 0, JobID: 2, SlotCount: 1, ScheduledAt: at, TimeZone: "UTC"},
		{Token: 4, RunID: 12, Slot: 0, JobID: 3, SlotCount: 1, ScheduledAt: at, TimeZone: "UTC", RecordsPolicy: store.RecordsPolicy{DedupScope: "job"}},
	}
	out := BuildAssignments(ds)
	require.Len(t, out, 3)
	require.Len(t, out[0].Attempts, 2)
	require.Equal(t, &protocol.RecordsPolicy{Scope: "settle:2026-12-01", Uncertain: "skip", MaxAttempts: 5}, out[0].Records)
	require.Nil(t, out[1].Records, "a job without a policy sends none")
	require.Equal(t, &protocol.RecordsPolicy{Scope: "job"}, out[2].Records)
}
