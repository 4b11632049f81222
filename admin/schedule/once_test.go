package schedule

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/msg"
)

// TestAtFiresOnce: "@at" fires once at its local time in the job's zone,
// by the rule of fixed times when a clock change hides or repeats it.
func TestAtFiresOnce(t *testing.T) {
	t.Parallel()
	cases := []struct {
		expr, zone string
		want       string   // the one firing, UTC
		note       msg.Code // the preview's note, "" for none
	}{
		{"@at 2026-12-24T18:00", "Asia/Shanghai", "2026-12-24T10:00:00Z", ""},
		{"@at 2026-12-24T18:00", "Asia/Kolkata", "2026-12-24T12:30:00Z", ""},
		{"@at 2026-12-24T18:00", "America/New_York", "2026-12-24T23:00:00Z", ""},
		{"@at 2026-07-01T09:00:30", "Europe/Berlin", "2026-07-01T07:00:30Z", ""},
		{"@at 2026-12-24T18:00", "UTC", "2026-12-24T18:00:00Z", ""},
		// An explicit offset is the instant; the zone does not change it.
		{"@at 2026-12-24T18:00+08:00", "America/New_York", "2026-12-24T10:00:00Z", ""},
		{"@at 2026-12-24T18:00:05Z", "Asia/Kolkata", "2026-12-24T18:00:05Z", ""},
		// Spring forward: the time does not exist, it fires once when the
		// clocks jump.
		{"@at 2026-03-08T02:30", "America/New_York", "2026-03-08T07:00:00Z", msg.DSTGapFiredOne},
		{"@at 2026-03-29T02:30", "Europe/Berlin", "2026-03-29T01:00:00Z", msg.DSTGapFiredOne},
		{"@at 2026-10-04T02:15", "Australia/Lord_Howe", "2026-10-03T15:30:00Z", msg.DSTGapFiredOne}, // 02:00 → 02:30
		// Fall back: the time happens twice, it fires at the first.
		{"@at 2026-11-01T01:30", "America/New_York", "2026-11-01T05:30:00Z", msg.DSTOverlapFirstOnly},
		{"@at 2026-10-25T02:30", "Europe/Berlin", "2026-10-25T00:30:00Z", msg.DSTOverlapFirstOnly},
		{"@at 2026-04-05T01:45", "Australia/Lord_Howe", "2026-04-04T14:45:00Z", msg.DSTOverlapFirstOnly}, // 02:00 → 01:30
		// Just outside a change: nothing to note.
		{"@at 2026-03-08T03:00", "America/New_York", "2026-03-08T07:00:00Z", ""},
		{"@at 2026-11-01T02:00", "America/New_York", "2026-11-01T07:00:00Z", ""},
	}
	for _, c := range cases {
		s := mustParse(t, Spec{Expr: c.expr, Zone: c.zone, JobKey: "a/b"})
		want, err := time.Parse(time.RFC3339, c.want)
		require.NoError(t, err)
		require.True(t, s.Once(), c.expr)
		require.Equal(t, want, s.Next(want.Add(-24*time.Hour)), "%s in %s", c.expr, c.zone)
		require.Equal(t, want, s.Next(want.Add(-time.Second)), "%s in %s", c.expr, c.zone)
		require.True(t, s.Next(want).IsZero(), "%s in %s fires once", c.expr, c.zone)
		p := s.Preview(want.Add(-time.Hour), 10)
		require.Len(t, p, 1, c.expr)
		require.Equal(t, want, p[0].At, c.expr)
		if c.note == "" {
			require.Empty(t, p[0].Notes, "%s in %s", c.expr, c.zone)
		} else {
			require.Len(t, p[0].Notes, 1, "%s in %s", c.expr, c.zone)
			require.Equal(t, c.note, p[0].Notes[0].Code, "%s in %s: %s", c.expr, c.zone, p[0].Note)
		}
		// The resolved form parses to the same firing.
		again := mustParse(t, Spec{Expr: s.Resolved(), Zone: c.zone})
		require.Equal(t, want, again.Next(want.Add(-time.Second)), s.Resolved())
		// Misfire planning sees exactly one firing.
		require.Equal(t, int64(1), s.countBetween(want.Unix()-100, want.Unix()+100))
		require.Equal(t, int64(0), s.countBetween(want.Unix(), want.Unix()+100))
	}
	require.Equal(t, "2026-03-08T07:00:00Z", mustParse(t, Spec{Expr: "@at 2026-03-08T02:30", Zone: "America/New_York"}).Preview(time.Time{}, 1)[0].At.Format(time.RFC3339))
}

func TestAtRefusals(t *testing.T) {
	t.Parallel()
	for expr, code := range map[string]msg.Code{
		"@at":                        msg.CronAtArgs,
		"@at 2026-12-24 18:00":       msg.CronAtArgs,
		"@at 2026-12-24":             msg.CronAtBad,
		"@at 2026-02-30T18:00":       msg.CronAtBad,
		"@at 24/12/2026":             msg.CronAtBad,
		"@at 2026-12-24T25:00":       msg.CronAtBad,
		"@at 1969-12-31T23:59":       msg.CronAtYears,
		"@at 3000-01-01T00:00+01:00": msg.CronAtYears,
	} {
		_, err := Parse(Spec{Expr: expr, Zone: "Europe/Berlin"})
		var ve *ValidationError
		require.ErrorAs(t, err, &ve, expr)
		require.ErrorIs(t, err, ErrInvalid, expr)
		require.Equal(t, code, ve.Reason.Code, "%s: %s", expr, err)
	}
}

// TestAtMisfire: a one-time firing that is late is planned by the misfire
// policy like any other, and nothing follows it.
func TestAtMisfire(t *testing.T) {
	t.Parallel()
	s := mustParse(t, Spec{Expr: "@at 2026-12-24T18:00", Zone: "Asia/Shanghai"})
	due := time.Date(2026, 12, 24, 10, 0, 0, 0, time.UTC)
	d := Plan(s, due, due.Add(time.Second), MisfireConfig{Policy: MisfireRunOnce, Threshold: time.Minute, MaxCatchUp: 10})
	require.Equal(t, []time.Time{due}, d.Fire)
	require.True(t, d.Next.IsZero())
	late := Plan(s, due, due.Add(time.Hour), MisfireConfig{Policy: MisfireSkip, Threshold: time.Minute, MaxCatchUp: 10})
	require.Empty(t, late.Fire)
	require.Equal(t, []time.Time{due}, late.Skipped)
	require.True(t, late.Next.IsZero())
}
