package api_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/auth"
	"github.com/shardjob/shardjob/admin/internal/clock"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/store/storetest"
)

// TestValidatePreviewDSTNotes: the firing preview of POST /jobs/validate
// follows the DST rule of docs/schedules.md on New York's spring-forward day
// (2026-03-08, 02:00 EST -> 03:00 EDT at 07:00Z). A fixed 02:30 fires once at
// 03:00 EDT and says so; a job every 15 minutes of hour 2 has no firing that
// day, and its first firing says which times were skipped.
func TestValidatePreviewDSTNotes(t *testing.T) {
	t.Parallel()
	storetest.EachDialect(t, func(t *testing.T, st *store.Store) {
		e := newEnvWithClock(t, st, clock.NewManual(time.Date(2026, 3, 7, 12, 0, 0, 0, time.UTC)))
		e.user("viewer", auth.RoleViewer)
		tok := e.token("viewer")

		type firing struct {
			At    time.Time `json:"at"`
			Local string    `json:"local"`
			Note  *string   `json:"note"` // nil when left out
		}
		preview := func(cron string) []firing {
			t.Helper()
			job := with("cron", cron)
			job["time_zone"] = "America/New_York"
			var out struct {
				Valid bool
				Next  []firing
			}
			require.Equal(t, http.StatusOK, e.call("POST", "/api/v1/jobs/validate", tok, job, &out))
			require.True(t, out.Valid)
			require.Len(t, out.Next, 10)
			return out.Next
		}
		note := func(s string) *string { return &s }

		fixed := preview("30 2 * * *")
		require.Equal(t, []firing{
			{At: time.Date(2026, 3, 8, 7, 0, 0, 0, time.UTC), Local: "2026-03-08 03:00:00 EDT", Note: note("DST gap: 02:30 does not exist, fired at 03:00 EDT")},
			{At: time.Date(2026, 3, 9, 6, 30, 0, 0, time.UTC), Local: "2026-03-09 02:30:00 EDT"},
		}, fixed[:2])

		steps := preview("*/15 2 * * *")
		require.Equal(t, []firing{
			{At: time.Date(2026, 3, 9, 6, 0, 0, 0, time.UTC), Local: "2026-03-09 02:00:00 EDT",
				Note: note("DST gap: 4 scheduled times from 02:00 to 02:45 on 2026-03-08 do not exist and are skipped")},
			{At: time.Date(2026, 3, 9, 6, 15, 0, 0, time.UTC), Local: "2026-03-09 02:15:00 EDT"},
		}, steps[:2])
		for _, f := range steps[1:] {
			require.Nil(t, f.Note, "only the first firing after the gap has a note: %+v", f)
		}
	})
}
