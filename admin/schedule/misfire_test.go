package schedule

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParsePolicies(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]MisfirePolicy{"": MisfireRunOnce, "run_once": MisfireRunOnce, " Skip ": MisfireSkip, "catch-up": MisfireCatchUp, "CATCH_UP": MisfireCatchUp} { //nolint:gocritic // mapKey: " Skip " checks that spaces are trimmed
		got, err := ParseMisfirePolicy(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	_, err := ParseMisfirePolicy("fire_now")
	require.ErrorIs(t, err, ErrInvalid)
	require.EqualError(t, err, `misfire policy: "fire_now" is not a misfire policy; use run_once, skip or catch_up`)

	for in, want := range map[string]OverlapPolicy{"": OverlapAllow, "allow": OverlapAllow, "skip": OverlapSkip, "Queue": OverlapQueue, "replace": OverlapReplace} {
		got, err := ParseOverlapPolicy(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	_, err = ParseOverlapPolicy("serial")
	require.ErrorIs(t, err, ErrInvalid)
	require.EqualError(t, err, `overlap policy: "serial" is not an overlap policy; use allow, skip, queue or replace`)
}

func TestDecideOverlap(t *testing.T) {
	t.Parallel()
	tests := []struct {
		policy OverlapPolicy
		active bool
		want   OverlapAction
	}{
		{OverlapAllow, false, ActionStart},
		{OverlapSkip, false, ActionStart},
		{OverlapQueue, false, ActionStart},
		{OverlapReplace, false, ActionStart},
		{OverlapAllow, true, ActionStart},
		{OverlapSkip, true, ActionSkip},
		{OverlapQueue, true, ActionQueue},
		{OverlapReplace, true, ActionCancelPreviousAndStart},
		{"", true, ActionStart},
	}
	for _, tc := range tests {
		require.Equal(t, tc.want, DecideOverlap(tc.policy, tc.active), "%s active=%v", tc.policy, tc.active)
	}
}

func TestMisfireConfig(t *testing.T) {
	t.Parallel()
	c := MisfireConfig{}.WithDefaults()
	require.Equal(t, MisfireConfig{Policy: MisfireRunOnce, Threshold: time.Minute, MaxCatchUp: 10}, c)
	require.NoError(t, c.Validate())
	require.ErrorIs(t, MisfireConfig{Policy: "x"}.WithDefaults().Validate(), ErrInvalid)
	require.NoError(t, MisfireConfig{Threshold: 7 * 24 * time.Hour}.WithDefaults().Validate())
	require.EqualError(t, MisfireConfig{Threshold: 200 * time.Hour}.WithDefaults().Validate(), "misfire threshold: 200h0m0s is outside 0s-168h0m0s")
	require.EqualError(t, MisfireConfig{MaxCatchUp: 5000}.WithDefaults().Validate(), "max catch-up: 5000 is outside 0-1000")
}

func TestPlan(t *testing.T) {
	t.Parallel()
	hourly := "0 * * * *"
	tests := []struct {
		name         string
		expr, zone   string
		next, now    string
		cfg          MisfireConfig
		fire         []string
		skipped      []string
		skippedCount int
		wantNext     string
		misfired     bool
	}{
		{name: "on time", expr: hourly, next: "2026-06-01T10:00:00Z", now: "2026-06-01T10:00:30Z",
			fire: []string{"2026-06-01T10:00:00Z"}, wantNext: "2026-06-01T11:00:00Z"},
		{name: "exactly at the threshold is on time", expr: hourly, next: "2026-06-01T10:00:00Z", now: "2026-06-01T10:01:00Z",
			fire: []string{"2026-06-01T10:00:00Z"}, wantNext: "2026-06-01T11:00:00Z"},
		{name: "not due yet", expr: hourly, next: "2026-06-01T11:00:00Z", now: "2026-06-01T10:30:00Z",
			wantNext: "2026-06-01T11:00:00Z"},
		{name: "several on time fire", expr: "* * * * *", next: "2026-06-01T10:00:00Z", now: "2026-06-01T10:02:10Z",
			cfg:  MisfireConfig{Threshold: 5 * time.Minute},
			fire: []string{"2026-06-01T10:00:00Z", "2026-06-01T10:01:00Z", "2026-06-01T10:02:00Z"}, wantNext: "2026-06-01T10:03:00Z"},
		{name: "run_once late: the most recent", expr: hourly, next: "2026-06-01T07:00:00Z", now: "2026-06-01T10:05:00Z",
			cfg:  MisfireConfig{Policy: MisfireRunOnce},
			fire: []string{"2026-06-01T10:00:00Z"}, skipped: []string{"2026-06-01T07:00:00Z", "2026-06-01T08:00:00Z", "2026-06-01T09:00:00Z"},
			skippedCount: 3, wantNext: "2026-06-01T11:00:00Z", misfired: true},
		{name: "run_once late with an on-time firing: that one is the run", expr: hourly, next: "2026-06-01T07:00:00Z", now: "2026-06-01T10:00:20Z",
			fire: []string{"2026-06-01T10:00:00Z"}, skipped: []string{"2026-06-01T07:00:00Z", "2026-06-01T08:00:00Z", "2026-06-01T09:00:00Z"},
			skippedCount: 3, wantNext: "2026-06-01T11:00:00Z", misfired: true},
		{name: "skip", expr: hourly, next: "2026-06-01T07:00:00Z", now: "2026-06-01T10:05:00Z",
			cfg:          MisfireConfig{Policy: MisfireSkip},
			skipped:      []string{"2026-06-01T07:00:00Z", "2026-06-01T08:00:00Z", "2026-06-01T09:00:00Z", "2026-06-01T10:00:00Z"},
			skippedCount: 4, wantNext: "2026-06-01T11:00:00Z", misfired: true},
		{name: "skip keeps on-time", expr: hourly, next: "2026-06-01T08:00:00Z", now: "2026-06-01T10:00:20Z",
			cfg:  MisfireConfig{Policy: MisfireSkip},
			fire: []string{"2026-06-01T10:00:00Z"}, skipped: []string{"2026-06-01T08:00:00Z", "2026-06-01T09:00:00Z"},
			skippedCount: 2, wantNext: "2026-06-01T11:00:00Z", misfired: true},
		{name: "catch_up capped, oldest first", expr: hourly, next: "2026-06-01T05:00:00Z", now: "2026-06-01T10:05:00Z",
			cfg:          MisfireConfig{Policy: MisfireCatchUp, MaxCatchUp: 2},
			fire:         []string{"2026-06-01T05:00:00Z", "2026-06-01T06:00:00Z"},
			skipped:      []string{"2026-06-01T07:00:00Z", "2026-06-01T08:00:00Z", "2026-06-01T09:00:00Z", "2026-06-01T10:00:00Z"},
			skippedCount: 4, wantNext: "2026-06-01T11:00:00Z", misfired: true},
		{name: "catch_up all plus on-time", expr: hourly, next: "2026-06-01T08:00:00Z", now: "2026-06-01T10:00:20Z",
			cfg:  MisfireConfig{Policy: MisfireCatchUp},
			fire: []string{"2026-06-01T08:00:00Z", "2026-06-01T09:00:00Z", "2026-06-01T10:00:00Z"}, wantNext: "2026-06-01T11:00:00Z", misfired: true},
		{name: "stored next_fire_at off the schedule still counts", expr: hourly, next: "2026-06-01T09:17:00Z", now: "2026-06-01T10:05:00Z",
			cfg:  MisfireConfig{Policy: MisfireCatchUp},
			fire: []string{"2026-06-01T09:17:00Z", "2026-06-01T10:00:00Z"}, wantNext: "2026-06-01T11:00:00Z", misfired: true},
		{name: "DST skip in New York", expr: "30 2 * * *", zone: "America/New_York", next: "2026-03-07T07:30:00Z", now: "2026-03-10T12:00:00Z",
			cfg:          MisfireConfig{Policy: MisfireSkip},
			skipped:      []string{"2026-03-07T07:30:00Z", "2026-03-08T07:00:00Z", "2026-03-09T06:30:00Z", "2026-03-10T06:30:00Z"},
			skippedCount: 4, wantNext: "2026-03-11T06:30:00Z", misfired: true},
		{name: "DST skip, non-fixed: the nonexistent times are no firings", expr: "*/30 2 * * *", zone: "America/New_York", next: "2026-03-07T07:00:00Z", now: "2026-03-09T12:00:00Z",
			cfg:          MisfireConfig{Policy: MisfireSkip},
			skipped:      []string{"2026-03-07T07:00:00Z", "2026-03-07T07:30:00Z", "2026-03-09T06:00:00Z", "2026-03-09T06:30:00Z"},
			skippedCount: 4, wantNext: "2026-03-10T06:00:00Z", misfired: true},
		{name: "DST catch_up over fall back", expr: "0 * * * *", zone: "America/New_York", next: "2026-11-01T04:00:00Z", now: "2026-11-01T07:30:00Z",
			cfg:  MisfireConfig{Policy: MisfireCatchUp},
			fire: []string{"2026-11-01T04:00:00Z", "2026-11-01T05:00:00Z", "2026-11-01T06:00:00Z", "2026-11-01T07:00:00Z"}, wantNext: "2026-11-01T08:00:00Z", misfired: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := mustParse(t, Spec{Expr: tc.expr, Zone: tc.zone})
			d := Plan(s, utc(t, tc.next), utc(t, tc.now), tc.cfg)
			require.Equal(t, tc.fire, nilIfEmpty(formatAll(d.Fire)), "fire")
			require.Equal(t, tc.skipped, nilIfEmpty(formatAll(d.Skipped)), "skipped")
			require.Equal(t, tc.skippedCount, d.SkippedCount)
			require.Equal(t, tc.wantNext, d.Next.Format(time.RFC3339))
			require.Equal(t, tc.misfired, d.Misfired)
		})
	}
}

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

// A job whose next_fire_at is a year old, firing every second: Plan must not
// walk 31.5 million firings, and must still account for every one of them.
func TestPlanHugeBacklog(t *testing.T) {
	t.Parallel()
	now := utc(t, "2026-06-01T12:00:00Z")
	next := now.AddDate(-1, 0, 0)
	backlog := int(now.Sub(next) / time.Second) // firings in [next, now)
	s := mustParse(t, Spec{Expr: "* * * * * *", Zone: "America/New_York"})

	// run_once: on-time firings (the last 60s and now) fire; every late one is skipped.
	d := Plan(s, next, now, MisfireConfig{})
	require.Len(t, d.Fire, 61)
	require.Equal(t, now.Add(-60*time.Second), d.Fire[0])
	require.Equal(t, now, d.Fire[60])
	require.Equal(t, backlog-60, d.SkippedCount)
	require.Len(t, d.Skipped, MaxSkippedListed)
	require.Equal(t, next, d.Skipped[0])
	require.Equal(t, next.Add(999*time.Second), d.Skipped[999])
	require.True(t, d.Misfired)
	require.Equal(t, now.Add(time.Second), d.Next)

	// catch_up: the 10 oldest fire, the rest are counted.
	d = Plan(s, next, now, MisfireConfig{Policy: MisfireCatchUp})
	require.Len(t, d.Fire, 10+61)
	require.Equal(t, next, d.Fire[0])
	require.Equal(t, next.Add(9*time.Second), d.Fire[9])
	require.Equal(t, now.Add(-60*time.Second), d.Fire[10])
	require.Equal(t, backlog-60-10, d.SkippedCount)
	require.Equal(t, next.Add(10*time.Second), d.Skipped[0])

	// skip.
	d = Plan(s, next, now, MisfireConfig{Policy: MisfireSkip})
	require.Len(t, d.Fire, 61)
	require.Equal(t, backlog-60, d.SkippedCount)

	// run_once with no on-time firing: the most recent late time runs.
	m := mustParse(t, Spec{Expr: "* * * * *", Zone: "Europe/Berlin"})
	mNext := utc(t, "2025-06-01T12:00:00Z")
	d = Plan(m, mNext, utc(t, "2026-06-01T12:00:45Z"), MisfireConfig{Threshold: 10 * time.Second})
	require.Equal(t, []time.Time{utc(t, "2026-06-01T12:00:00Z")}, d.Fire)
	require.Equal(t, 365*1440, d.SkippedCount) // 365*1440+1 late, one of them fired
	require.Equal(t, mNext, d.Skipped[0])
	require.Equal(t, utc(t, "2026-06-01T12:01:00Z"), d.Next)
}

// A long threshold with a dense schedule: only the newest MaxOnTimeFire
// on-time firings fire, the older ones are handled as late.
func TestPlanCapsOnTimeFirings(t *testing.T) {
	t.Parallel()
	s := mustParse(t, Spec{Expr: "* * * * * *", Zone: "Europe/Berlin"})
	now := utc(t, "2026-10-25T01:30:00Z") // inside Berlin's repeated hour
	next := now.Add(-2 * time.Hour)
	d := Plan(s, next, now, MisfireConfig{Threshold: time.Hour})
	require.Len(t, d.Fire, MaxOnTimeFire)
	require.Equal(t, now.Add(-(MaxOnTimeFire-1)*time.Second), d.Fire[0])
	require.Equal(t, now, d.Fire[MaxOnTimeFire-1])
	require.Equal(t, 7201-MaxOnTimeFire, d.SkippedCount)
	require.True(t, d.Misfired)

	d = Plan(s, next, now, MisfireConfig{Threshold: 7 * 24 * time.Hour, Policy: MisfireCatchUp, MaxCatchUp: 5})
	require.Len(t, d.Fire, 5+MaxOnTimeFire)
	require.Equal(t, next, d.Fire[0])
	require.Equal(t, 7201-MaxOnTimeFire-5, d.SkippedCount)

	// A threshold that covers the whole backlog of an hourly job: all on time.
	h := mustParse(t, Spec{Expr: "0 * * * *"})
	d = Plan(h, utc(t, "2026-06-01T00:00:00Z"), utc(t, "2026-06-03T00:30:00Z"), MisfireConfig{Threshold: 7 * 24 * time.Hour})
	require.Len(t, d.Fire, 49)
	require.False(t, d.Misfired)
}

func TestPlanEvery(t *testing.T) {
	t.Parallel()
	anchor := utc(t, "2026-01-01T00:00:05Z")
	s := mustParse(t, Spec{Expr: "@every 10s", Anchor: anchor})
	now := utc(t, "2026-01-02T00:00:00Z")
	d := Plan(s, anchor.Add(10*time.Second), now, MisfireConfig{})
	// Late: anchor+10s .. firings < now-60s; on time: 23:59:05 .. 23:59:55.
	require.Equal(t, formatAll(utcs(t, "2026-01-01T23:59:05Z", "2026-01-01T23:59:15Z", "2026-01-01T23:59:25Z", "2026-01-01T23:59:35Z", "2026-01-01T23:59:45Z", "2026-01-01T23:59:55Z")), formatAll(d.Fire))
	require.Equal(t, 8639-6, d.SkippedCount) // anchor+10s*k for k = 1..8639 are due, six fired
	require.Equal(t, utc(t, "2026-01-02T00:00:05Z"), d.Next)
}

func TestPlanZeroNextFireAt(t *testing.T) {
	t.Parallel()
	s := mustParse(t, Spec{Expr: "0 * * * *"})
	d := Plan(s, time.Time{}, utc(t, "2026-06-01T10:30:00Z"), MisfireConfig{})
	require.Equal(t, Decision{Next: utc(t, "2026-06-01T11:00:00Z")}, d)
}
