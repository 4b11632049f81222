package jobrules

import (
	"database/sql"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/schedule"
	"github.com/shardjob/shardjob/admin/store"
)

// TestNewRun: a run copies what it keeps of its job; a skipped firing has
// no deadlines; a scheduled run of a job with a jitter window starts after
// its offset and counts its duration deadlines from then, a run triggered
// by hand is not jittered.
func TestNewRun(t *testing.T) {
	t.Parallel()
	j := store.Job{ID: 7, App: "a", Name: "jittered", Params: "p", SlotCount: 4, TimeZone: "Europe/Berlin", JitterWindow: "10m",
		RecordsPolicy: store.RecordsPolicy{DedupScope: "settle:{date}", UncertainPolicy: "skip", RecordMaxAttempts: 3},
		JobDeadlines:  store.JobDeadlines{StartDeadline: "1m", FinishDeadline: "06:00", DeadlineAction: store.DeadlineCancel}}
	at := time.Date(2026, 12, 24, 18, 0, 0, 0, time.UTC)
	offset := schedule.JitterOffset("a/jittered", at, 10*time.Minute)
	require.Positive(t, offset, "this firing's offset is not 0 (else the test proves nothing)")
	finish := time.Date(2026, 12, 25, 5, 0, 0, 0, time.UTC).UnixMilli() // 06:00 in Berlin (CET)

	r := NewRun(j, at.UnixMilli(), store.TriggerCron, store.RunPending)
	require.Equal(t, store.NewRun{JobID: 7, App: "a", JobName: "jittered", ScheduledAt: at.UnixMilli(), TriggerKind: store.TriggerCron, Status: store.RunPending,
		Params: "p", SlotCount: 4, TimeZone: "Europe/Berlin", RecordsPolicy: j.RecordsPolicy, StartAfter: at.Add(offset).UnixMilli(),
		Deadlines: DeadlinesAt(at.Add(offset+time.Minute).UnixMilli(), finish, store.DeadlineCancel)}, r)
	require.Equal(t, r.StartAfter, NewRun(j, at.UnixMilli(), store.TriggerCatchUp, store.RunPending).StartAfter, "a catch-up run is jittered too")

	manual := NewRun(j, at.UnixMilli(), store.TriggerManual, store.RunPending)
	require.Zero(t, manual.StartAfter, "a run triggered by hand is not jittered")
	require.Equal(t, DeadlinesAt(at.Add(time.Minute).UnixMilli(), finish, store.DeadlineCancel), manual.Deadlines)

	skipped := NewRun(j, at.UnixMilli(), store.TriggerCron, store.RunSkipped)
	require.Zero(t, skipped.StartAfter)
	require.Equal(t, store.RunDeadlines{}, skipped.Deadlines, "a skipped firing has no deadlines")
	require.Equal(t, j.RecordsPolicy, skipped.RecordsPolicy)
}

// TestRunDeadlines: a local time is read in the job's zone across a DST
// change; a zone that does not load reads as UTC; no action is alarm.
func TestRunDeadlines(t *testing.T) {
	t.Parallel()
	d := store.JobDeadlines{StartDeadline: "10m", FinishDeadline: "06:00", DeadlineAction: store.DeadlineCancel}
	// 23:00 CET on 28 March 2026; the clocks go forward that night.
	at := time.Date(2026, 3, 28, 22, 0, 0, 0, time.UTC)
	got := RunDeadlines(d, "Europe/Berlin", at.UnixMilli())
	require.Equal(t, DeadlinesAt(at.Add(10*time.Minute).UnixMilli(), time.Date(2026, 3, 29, 4, 0, 0, 0, time.UTC).UnixMilli(), store.DeadlineCancel), got, "06:00 CEST")
	require.Equal(t, time.Date(2026, 3, 29, 6, 0, 0, 0, time.UTC).UnixMilli(), RunDeadlines(d, "No/Such_Zone", at.UnixMilli()).FinishDeadlineAt.Int64)
	require.Equal(t, store.DeadlineAlarm, RunDeadlines(store.JobDeadlines{StartDeadline: "10m"}, "UTC", at.UnixMilli()).DeadlineAction)
	require.Equal(t, store.RunDeadlines{}, RunDeadlines(store.JobDeadlines{DeadlineAction: store.DeadlineCancel}, "UTC", at.UnixMilli()), "none")

	start := at.Add(5 * time.Minute).UnixMilli()
	late := RunDeadlinesStartingAt(store.JobDeadlines{StartDeadline: "10m", FinishDeadline: "1h"}, "UTC", at.UnixMilli(), start)
	require.Equal(t, start+(10*time.Minute).Milliseconds(), late.StartDeadlineAt.Int64, "durations count from the start")
	require.Equal(t, start+time.Hour.Milliseconds(), late.FinishDeadlineAt.Int64)
}

func TestDeadlinesAt(t *testing.T) {
	t.Parallel()
	v := func(ms int64) sql.NullInt64 { return sql.NullInt64{Int64: ms, Valid: true} }
	require.Equal(t, store.RunDeadlines{}, DeadlinesAt(0, 0, store.DeadlineAlarm), "none")
	require.Equal(t, v(5), DeadlinesAt(5, 9, store.DeadlineAlarm).DeadlineCheckAt, "the earlier first")
	require.Equal(t, v(5), DeadlinesAt(9, 5, store.DeadlineAlarm).DeadlineCheckAt, "a finish before the start deadline")
	require.Equal(t, v(9), DeadlinesAt(0, 9, store.DeadlineCancel).DeadlineCheckAt)
	require.Equal(t, v(5), DeadlinesAt(5, 0, store.DeadlineAlarm).DeadlineCheckAt)
}
