package schedule

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestDeadlineAt(t *testing.T) {
	t.Parallel()
	utc := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		require.NoError(t, err)
		return v
	}
	for _, tc := range []struct {
		name, zone, deadline, scheduled, want string
	}{
		// Durations count real time, whatever the clocks do.
		{"duration across spring forward", "America/New_York", "2h", "2026-03-08T06:30:00Z", "2026-03-08T08:30:00Z"},
		{"duration across fall back", "Europe/Berlin", "30m", "2026-10-25T00:45:00Z", "2026-10-25T01:15:00Z"},
		// Wall-clock times: the first such local time after the scheduled time.
		{"next morning, after spring forward", "America/New_York", "06:00", "2026-03-07T23:00:00Z", "2026-03-08T10:00:00Z"},
		{"same day, before fall back", "America/New_York", "06:00", "2026-10-31T12:00:00Z", "2026-11-01T11:00:00Z"},
		{"scheduled at the deadline's time: the next day", "America/New_York", "06:00", "2026-01-15T11:00:00Z", "2026-01-16T11:00:00Z"},
		{"skipped time: the transition instant (NY)", "America/New_York", "02:30", "2026-03-08T05:00:00Z", "2026-03-08T07:00:00Z"},
		{"repeated time: the first occurrence (NY)", "America/New_York", "01:30", "2026-11-01T04:00:00Z", "2026-11-01T05:30:00Z"},
		{"scheduled between the two 01:30s: the next day's", "America/New_York", "01:30", "2026-11-01T05:45:00Z", "2026-11-02T06:30:00Z"},
		{"next morning, after spring forward (Berlin)", "Europe/Berlin", "06:00", "2026-03-28T22:00:00Z", "2026-03-29T04:00:00Z"},
		{"skipped time: the transition instant (Berlin)", "Europe/Berlin", "02:30", "2026-03-28T23:30:00Z", "2026-03-29T01:00:00Z"},
		{"repeated time: the first occurrence (Berlin)", "Europe/Berlin", "02:30", "2026-10-24T22:30:00Z", "2026-10-25T00:30:00Z"},
		{"after fall back, winter time (Berlin)", "Europe/Berlin", "06:00", "2026-10-25T01:30:00Z", "2026-10-25T05:00:00Z"},
		{"new year in UTC", "UTC", "00:00", "2026-12-31T23:59:59Z", "2027-01-01T00:00:00Z"},
		// No clock changes: a fixed offset, a whole or a half hour.
		{"Shanghai, the same morning", "Asia/Shanghai", "06:00", "2026-02-16T20:00:00Z", "2026-02-16T22:00:00Z"},
		{"Shanghai, scheduled after 06:00: the next day's", "Asia/Shanghai", "06:00", "2026-02-16T23:00:00Z", "2026-02-17T22:00:00Z"},
		{"Kolkata, half-hour offset", "Asia/Kolkata", "06:00", "2026-06-01T00:00:00Z", "2026-06-01T00:30:00Z"},
		{"Kolkata, duration", "Asia/Kolkata", "90m", "2026-06-01T00:00:00Z", "2026-06-01T01:30:00Z"},
		// Lord Howe moves its clocks by 30 minutes: 02:00 → 02:30 in October,
		// 02:00 → 01:30 in April.
		{"skipped time: the transition instant (Lord_Howe)", "Australia/Lord_Howe", "02:15", "2026-10-03T14:00:00Z", "2026-10-03T15:30:00Z"},
		{"repeated time: the first occurrence (Lord_Howe)", "Australia/Lord_Howe", "01:45", "2026-04-04T13:00:00Z", "2026-04-04T14:45:00Z"},
		{"duration across the 30-minute change", "Australia/Lord_Howe", "1h", "2026-10-03T15:00:00Z", "2026-10-03T16:00:00Z"},
	} {
		loc, err := ValidateZone(tc.zone)
		require.NoError(t, err)
		d, err := ParseFinishDeadline(tc.deadline)
		require.NoError(t, err, tc.name)
		require.Equal(t, utc(tc.want), d.At(utc(tc.scheduled), loc).UTC(), tc.name)
		if d.Clock {
			require.Equal(t, tc.deadline, d.String(), tc.name)
		}
	}
	require.True(t, Deadline{}.At(utc("2026-01-01T00:00:00Z"), time.UTC).IsZero(), "no deadline")
}

func TestParseDeadlines(t *testing.T) {
	t.Parallel()
	d, err := ParseStartDeadline("")
	require.NoError(t, err)
	require.True(t, d.IsZero())
	d, err = ParseStartDeadline("1h30m")
	require.NoError(t, err)
	require.Equal(t, 90*time.Minute, d.After)
	_, err = ParseStartDeadline("168h")
	require.NoError(t, err, "the largest")
	for in, want := range map[string]string{
		"-5m":   "is negative",
		"169h":  "is longer than 168h",
		"500ms": "is shorter than 1s",
		"0s":    "is shorter than 1s",
		"soon":  "is not a duration",
		"06:00": "is not a duration", // a start deadline has no wall-clock form
	} {
		_, err := ParseStartDeadline(in)
		require.ErrorIs(t, err, ErrInvalid, in)
		require.ErrorContains(t, err, want, in)
	}
	for in, want := range map[string]string{
		"24:00": "is not a time of day",
		"6:00":  "is not a time of day",
		"06:60": "is not a time of day",
		"ab:cd": "is not a time of day",
		"-1h":   "is negative",
		"200h":  "is longer than 168h",
		"later": "or a local time of day HH:MM",
	} {
		_, err := ParseFinishDeadline(in)
		require.ErrorIs(t, err, ErrInvalid, in)
		require.ErrorContains(t, err, want, in)
	}
}

// FuzzFinishDeadline: parsing never panics, and an accepted deadline falls
// after the scheduled time, within its duration or about a day and a few
// hours for a time of day.
func FuzzFinishDeadline(f *testing.F) {
	for _, s := range []string{"06:00", "02:30", "2h", "1h30m", "-5m", "24:00", "00:00", "168h", "9:5", ""} {
		f.Add(s, int64(1_772_949_600)) // 2026-03-08T06:00:00Z
	}
	zones := []string{"America/New_York", "Europe/Berlin", "Australia/Lord_Howe", "Asia/Kolkata", "UTC"}
	f.Fuzz(func(t *testing.T, s string, unix int64) {
		d, err := ParseFinishDeadline(s)
		if err != nil || d.IsZero() || unix < 0 || unix > 4_102_444_800 { // up to 2100
			return
		}
		scheduled := time.Unix(unix, 0).UTC()
		for _, z := range zones {
			loc, err := ValidateZone(z)
			require.NoError(t, err)
			at := d.At(scheduled, loc)
			require.True(t, at.After(scheduled), "%s in %s after %s: %s", s, z, scheduled, at)
			limit := MaxDeadline
			if d.Clock {
				limit = 27 * time.Hour // a day, plus a clock change
			}
			require.LessOrEqual(t, at.Sub(scheduled), limit, "%s in %s after %s: %s", s, z, scheduled, at)
		}
	})
}
