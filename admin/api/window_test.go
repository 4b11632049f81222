package api_test

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/auth"
	"github.com/shardjob/shardjob/admin/internal/clock"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/store/storetest"
)

// windowEnv serves the API at 2026-12-01T00:00Z with an operator's token.
func windowEnv(t *testing.T, st *store.Store) (*env, string) {
	t.Helper()
	e := newEnvWithClock(t, st, clock.NewManual(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)))
	e.user("ops", auth.RoleOperator)
	return e, e.token("ops")
}

// TestJobWindowAPI: start_at, end_at and max_runs round-trip; the preview
// and the first firing start at start_at and stop at end_at; a one-time
// @at schedule previews one firing; a job whose end_at is past is answered
// completed with the reason (a code too), resuming it does not plan it,
// and an edit of end_at takes it out of completed.
func TestJobWindowAPI(t *testing.T) {
	t.Parallel()
	storetest.EachDialect(t, func(t *testing.T, st *store.Store) {
		e, ops := windowEnv(t, st)

		// Daily at 18:00 in Shanghai (10:00Z), from 24 Dec to the end of 26 Dec.
		body := withAll(map[string]any{"name": "xmas", "cron": "0 18 * * *", "start_at": "2026-12-24T00:00:00+08:00",
			"end_at": "2026-12-26T23:59:59+08:00", "max_runs": 5})
		var preview struct {
			Next []struct{ At time.Time } `json:"next"`
		}
		require.Equal(t, http.StatusOK, e.call("POST", "/api/v1/jobs/validate", ops, body, &preview))
		var got []time.Time
		for _, p := range preview.Next {
			got = append(got, p.At.UTC())
		}
		require.Equal(t, []time.Time{
			time.Date(2026, 12, 24, 10, 0, 0, 0, time.UTC),
			time.Date(2026, 12, 25, 10, 0, 0, 0, time.UTC),
			time.Date(2026, 12, 26, 10, 0, 0, 0, time.UTC),
		}, got, "the preview keeps to the window")

		var j apitypes.Job
		require.Equal(t, http.StatusCreated, e.call("POST", "/api/v1/jobs", ops, body, &j))
		require.Equal(t, time.Date(2026, 12, 23, 16, 0, 0, 0, time.UTC), j.StartAt.UTC())
		require.Equal(t, time.Date(2026, 12, 26, 15, 59, 59, 0, time.UTC), j.EndAt.UTC())
		require.Equal(t, 5, j.MaxRuns)
		require.Equal(t, apitypes.JobScheduled, j.State)
		require.Nil(t, j.CompletedAt)
		require.Equal(t, time.Date(2026, 12, 24, 10, 0, 0, 0, time.UTC), j.NextFireAt.UTC())

		// One-time: one firing in the preview, at 18:00 in Kolkata.
		once := withAll(map[string]any{"name": "once", "cron": "@at 2026-12-24T18:00", "time_zone": "Asia/Kolkata"})
		require.Equal(t, http.StatusOK, e.call("POST", "/api/v1/jobs/validate", ops, once, &preview))
		require.Len(t, preview.Next, 1)
		require.Equal(t, time.Date(2026, 12, 24, 12, 30, 0, 0, time.UTC), preview.Next[0].At.UTC())

		// An end_at already past: created completed, with the reason.
		var past apitypes.Job
		require.Equal(t, http.StatusCreated, e.call("POST", "/api/v1/jobs", ops,
			withAll(map[string]any{"name": "past", "end_at": "2026-11-30T00:00:00Z"}), &past))
		require.Equal(t, apitypes.JobCompleted, past.State)
		require.Nil(t, past.NextFireAt)
		require.NotNil(t, past.CompletedAt)
		require.Equal(t, "past its end_at (2026-11-30T00:00:00Z): no firing after it", past.CompletedReason)
		require.Equal(t, string(msg.JobCompletedEndAt), past.CompletedReasonCode.Code)
		path := "/api/v1/jobs/" + strconv.FormatInt(past.ID, 10)
		require.Equal(t, http.StatusOK, e.call("POST", path+"/pause", ops, nil, &past))
		require.Equal(t, http.StatusOK, e.call("POST", path+"/resume", ops, nil, &past))
		require.Equal(t, apitypes.JobCompleted, past.State, "resuming does not plan a completed job")
		require.Nil(t, past.NextFireAt)

		// Editing end_at plans it again.
		edit := withAll(map[string]any{"name": "past", "end_at": "2027-01-31T00:00:00Z", "version": past.Version})
		var edited apitypes.Job
		require.Equal(t, http.StatusOK, e.call("PUT", path, ops, edit, &edited))
		require.Equal(t, apitypes.JobScheduled, edited.State)
		require.Nil(t, edited.CompletedAt)
		require.Empty(t, edited.CompletedReason)
		require.Nil(t, edited.CompletedReasonCode)
		require.Equal(t, time.Date(2026, 12, 1, 19, 0, 0, 0, time.UTC), edited.NextFireAt.UTC(), "03:00 in Shanghai")

		// Disabled, then an end_at already past: enabling it completes it
		// (it has no firing left), it does not leave it scheduled with none.
		var off apitypes.Job
		require.Equal(t, http.StatusOK, e.call("POST", path+"/disable", ops, nil, &off))
		require.Equal(t, apitypes.JobDisabled, off.State)
		edit = withAll(map[string]any{"name": "past", "end_at": "2026-11-30T00:00:00Z", "enabled": false, "version": off.Version})
		require.Equal(t, http.StatusOK, e.call("PUT", path, ops, edit, &off))
		var on apitypes.Job
		require.Equal(t, http.StatusOK, e.call("POST", path+"/enable", ops, nil, &on))
		require.Equal(t, apitypes.JobCompleted, on.State)
		require.Nil(t, on.NextFireAt)
		require.Equal(t, string(msg.JobCompletedEndAt), on.CompletedReasonCode.Code)
	})
}

// TestPauseUntilAPI: POST /pause with {"until": ...} pauses until then
// (paused_until answered, the next firing kept for the misfire policy);
// an until in the past or not an instant is a 400 naming until; a plain
// resume ends the pause at once and clears paused_until; a pause without a
// body is unchanged.
func TestPauseUntilAPI(t *testing.T) {
	t.Parallel()
	storetest.EachDialect(t, func(t *testing.T, st *store.Store) {
		e, ops := windowEnv(t, st)
		var j apitypes.Job
		require.Equal(t, http.StatusCreated, e.call("POST", "/api/v1/jobs", ops, with("name", "pausable"), &j))
		path := "/api/v1/jobs/" + strconv.FormatInt(j.ID, 10) + "/pause"
		for _, bad := range []any{
			map[string]any{"until": "2026-11-30T00:00:00Z"},
			map[string]any{"until": "2026-12-01T00:00:00Z"},
			map[string]any{"until": "next week"},
			map[string]any{"until": 12},
		} {
			var out errorAnswer
			require.Equal(t, http.StatusBadRequest, e.call("POST", path, ops, bad, &out), "%v", bad)
			require.NotEmpty(t, out.Fields["until"], "%v: %+v", bad, out)
			require.NotEmpty(t, out.FieldCodes["until"].Code)
		}
		var out errorAnswer
		require.Equal(t, http.StatusBadRequest, e.call("POST", path, ops, map[string]any{"resume_at": "2026-12-02T00:00:00Z"}, &out), "an unknown field")

		var paused apitypes.Job
		require.Equal(t, http.StatusOK, e.call("POST", path, ops, map[string]any{"until": "2026-12-03T08:00:00+08:00"}, &paused))
		require.True(t, paused.Paused)
		require.Equal(t, apitypes.JobPaused, paused.State)
		require.Equal(t, time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC), paused.PausedUntil.UTC())
		require.Equal(t, time.Date(2026, 12, 1, 19, 0, 0, 0, time.UTC), paused.NextFireAt.UTC(), "kept: the misfire policy decides it when the pause ends")

		var resumed apitypes.Job
		require.Equal(t, http.StatusOK, e.call("POST", "/api/v1/jobs/"+strconv.FormatInt(j.ID, 10)+"/resume", ops, nil, &resumed))
		require.False(t, resumed.Paused)
		require.Nil(t, resumed.PausedUntil)

		var plain apitypes.Job
		require.Equal(t, http.StatusOK, e.call("POST", path, ops, nil, &plain))
		require.True(t, plain.Paused)
		require.Nil(t, plain.PausedUntil)
		require.Nil(t, plain.NextFireAt)
	})
}
