package scheduler_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/internal/clock"
	"github.com/shardjob/shardjob/admin/store"
)

// zoneRun is a run as the tables of these tests spell it: its scheduled
// time, the zone of its firing and its finish deadline (UTC).
type zoneRun struct{ at, zone, finish string }

func zoneRuns(t *testing.T, st *store.Store, id int64) []zoneRun {
	t.Helper()
	var out []zoneRun
	runs := runsOf(t, st, id)
	for i := len(runs) - 1; i >= 0; i-- { // oldest first
		r := runs[i]
		zr := zoneRun{at: time.UnixMilli(r.ScheduledAt).UTC().Format(time.RFC3339), zone: r.TimeZone}
		if r.FinishDeadlineAt.Valid {
			zr.finish = time.UnixMilli(r.FinishDeadlineAt.Int64).UTC().Format(time.RFC3339)
		}
		out = append(out, zr)
	}
	return out
}

// "09:00 in Shanghai, Singapore and London" with a finish deadline at
// 12:00 local, fired hour by hour across London's spring forward
// (2026-03-29 01:00Z): one run per instant — Shanghai and Singapore
// coincide at 01:00Z and fire once, tagged Shanghai — each with the zone of
// its firing and the deadline read in that zone (12:00 GMT is 12:00Z, 12:00
// BST 11:00Z). A second job whose leader was away the whole time catches
// up the same instants with the same zones.
func TestSeveralZonesFireOneRunPerInstantWithItsZone(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		start := time.Date(2026, 3, 27, 23, 0, 0, 0, time.UTC)
		c := clock.NewManual(start)
		s := leading(t, st, c, &fakePusher{}, 3)
		def := apitypes.JobDef{App: "a", Name: "open", Handler: "h", Cron: "0 9 * * *", FinishDeadline: "12:00",
			TimeZones: []string{"Asia/Shanghai", "Asia/Singapore", "Europe/London"}}
		j := createJob(t, st, apitypes.JobSpec{JobDef: def}, start)
		require.Equal(t, "Asia/Shanghai,Asia/Singapore,Europe/London", j.TimeZones)
		require.Equal(t, time.Date(2026, 3, 28, 1, 0, 0, 0, time.UTC).UnixMilli(), j.NextFireAt.Int64)
		want := []zoneRun{
			{"2026-03-28T01:00:00Z", "Asia/Shanghai", "2026-03-28T04:00:00Z"},
			{"2026-03-28T09:00:00Z", "Europe/London", "2026-03-28T12:00:00Z"},
			{"2026-03-29T01:00:00Z", "Asia/Shanghai", "2026-03-29T04:00:00Z"},
			{"2026-03-29T08:00:00Z", "Europe/London", "2026-03-29T11:00:00Z"},
			{"2026-03-30T01:00:00Z", "Asia/Shanghai", "2026-03-30T04:00:00Z"},
			{"2026-03-30T08:00:00Z", "Europe/London", "2026-03-30T11:00:00Z"},
		}
		end := time.Date(2026, 3, 30, 12, 0, 0, 0, time.UTC)
		for at := start; !at.After(end); at = at.Add(time.Hour) {
			c.Set(at.Add(300 * time.Millisecond))
			require.NoError(t, s.FireAll(ctx, 3))
			require.NoError(t, s.FireAll(ctx, 3)) // a second round creates nothing more
		}
		require.Equal(t, want, zoneRuns(t, st, j.ID))
		for _, r := range runsOf(t, st, j.ID) {
			require.Equal(t, store.TriggerCron, r.TriggerKind)
		}
		require.Equal(t, time.Date(2026, 3, 31, 1, 0, 0, 0, time.UTC).UnixMilli(), jobRow(t, st, j.ID).NextFireAt.Int64)

		late := def
		late.Name, late.MisfirePolicy, late.MaxCatchUp = "late", "catch_up", 50
		k := createJob(t, st, apitypes.JobSpec{JobDef: late}, start)
		require.NoError(t, s.FireAll(ctx, 3))
		got := zoneRuns(t, st, k.ID)
		require.Len(t, got, len(want))
		for i := range want { // catch-up runs get no deadline: compare the keys and zones
			require.Equal(t, want[i].at, got[i].at)
			require.Equal(t, want[i].zone, got[i].zone)
		}
		for _, r := range runsOf(t, st, k.ID) {
			require.Equal(t, store.TriggerCatchUp, r.TriggerKind)
		}
	})
}

// A job with one zone keeps firing as before, each run in the job's zone.
func TestOneZoneRunsKeepTheJobsZone(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		start := time.Date(2026, 3, 28, 0, 0, 0, 0, time.UTC)
		c := clock.NewManual(start)
		s := leading(t, st, c, &fakePusher{}, 3)
		j := createJob(t, st, apitypes.JobSpec{JobDef: apitypes.JobDef{App: "a", Name: "one", Handler: "h", Cron: "0 9 * * *",
			TimeZones: []string{"Europe/London"}}}, start)
		require.Empty(t, j.TimeZones)
		require.Equal(t, "Europe/London", j.TimeZone)
		c.Set(time.Date(2026, 3, 28, 9, 0, 1, 0, time.UTC))
		require.NoError(t, s.FireAll(ctx, 3))
		require.Equal(t, []zoneRun{{"2026-03-28T09:00:00Z", "Europe/London", ""}}, zoneRuns(t, st, j.ID))
	})
}
