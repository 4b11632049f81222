package e2e

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/deploy/dev/testenv"
)

// TestCalendarEditReachesTheLeader: a real admin process on MariaDB fires a
// job every 2 s on the working days of a calendar. Today is a working day,
// so runs are created with the calendar's first version. Then today (and
// tomorrow, in case the test crosses midnight UTC) become holidays through
// the API: the leader picks the new version up, and the firings it creates
// from then on are skipped runs naming the holiday, with the new version.
// Every firing of the window exists exactly once, and no run of the old
// version comes after one of the new.
func TestCalendarEditReachesTheLeader(t *testing.T) {
	t.Parallel()
	c, password := startLoneAdmin(t)
	require.NoError(t, c.Login(context.Background(), "admin", password))

	var cal apitypes.Calendar
	code, err := c.Call(context.Background(), http.MethodPost, "/api/v1/calendars", apitypes.CalendarSpec{App: "e2e", Name: "office", Week: "SUN-SAT"}, &cal)
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, code)
	var job apitypes.Job
	code, err = c.Call(context.Background(), http.MethodPost, "/api/v1/jobs", map[string]any{"app": "e2e", "name": "every-2s", "handler": "nobody.offers.it",
		"cron": "*/2 * * * * *", "overlap_policy": "allow", "calendar_id": cal.ID, "calendar_rule": "business_days_only"}, &job)
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, code)

	runsOf := func() []apitypes.Run {
		var out struct{ Runs []apitypes.Run }
		require.NoError(t, c.Do(context.Background(), http.MethodGet, fmt.Sprintf("/api/v1/runs?job_id=%d&limit=500", job.ID), nil, &out))
		slices.SortFunc(out.Runs, func(a, b apitypes.Run) int { return a.ScheduledAt.Compare(b.ScheduledAt) })
		return out.Runs
	}
	testenv.WaitFor(t, 60*time.Second, func() (bool, error) {
		return len(runsOf()) >= 2, nil
	}, "two firings on a working day")

	// Today and tomorrow become holidays.
	today := time.Now().UTC()
	spec := apitypes.CalendarSpec{App: "e2e", Name: "office", Week: "SUN-SAT", Revision: cal.Revision, Days: []apitypes.CalendarDay{
		{Date: today.Format(time.DateOnly), Kind: "holiday", Name: "e2e day off"},
		{Date: today.AddDate(0, 0, 1).Format(time.DateOnly), Kind: "holiday", Name: "e2e day off"},
	}}
	var edited apitypes.Calendar
	code, err = c.Call(context.Background(), http.MethodPut, fmt.Sprintf("/api/v1/calendars/%d", cal.ID), spec, &edited)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, code)
	require.NotEqual(t, cal.Version, edited.Version)

	testenv.WaitFor(t, 60*time.Second, func() (bool, error) {
		n := 0
		for _, r := range runsOf() {
			if r.CalendarVersion == edited.Version {
				n++
			}
		}
		return n >= 3, nil
	}, "three firings on the new holiday")

	runs := runsOf()
	seenNew, before := false, 0
	for i, r := range runs {
		require.Equal(t, cal.ID, r.CalendarID, "run %d", r.ID)
		switch r.CalendarVersion {
		case cal.Version:
			require.False(t, seenNew, "run %d (%s) has the old version after a run of the new one", r.ID, r.ScheduledAt)
			require.NotEqual(t, "skipped", r.Status, "run %d: a working day's firing", r.ID)
			before++
		case edited.Version:
			seenNew = true
			require.Equal(t, "skipped", r.Status, "run %d: a holiday's firing", r.ID)
			require.Equal(t, string(msg.RunSkippedHolidayName), r.ErrorCode, "run %d: %s", r.ID, r.Error)
			require.Contains(t, r.Error, "e2e day off")
		default:
			t.Fatalf("run %d has calendar version %q, neither %q nor %q", r.ID, r.CalendarVersion, cal.Version, edited.Version)
		}
		if i > 0 {
			require.Equal(t, 2*time.Second, r.ScheduledAt.Sub(runs[i-1].ScheduledAt), "firings %s and %s: none lost, none doubled", runs[i-1].ScheduledAt, r.ScheduledAt)
		}
	}
	require.True(t, seenNew)
	t.Logf("%d firings: %d before the edit, %d skipped after it, none lost or doubled", len(runs), before, len(runs)-before)
}
