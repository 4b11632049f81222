package api_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/auth"
)

func TestJobDeadlinesAndRunView(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		e.user("ops", auth.RoleOperator)
		tok := e.token("ops")
		body := with("time_zone", "America/New_York")
		body["start_deadline"], body["finish_deadline"], body["deadline_action"] = "15m", "06:00", "cancel"
		var job apitypes.Job
		require.Equal(t, http.StatusCreated, e.call("POST", "/api/v1/jobs", tok, body, &job))
		require.Equal(t, "15m", job.StartDeadline)
		require.Equal(t, "06:00", job.FinishDeadline)
		require.Equal(t, "cancel", job.DeadlineAction)

		// A run scheduled at 23:00 EST on 7 March 2026: its finish deadline
		// is 06:00 EDT the next morning (after the clocks went forward).
		at := time.Date(2026, 3, 8, 4, 0, 0, 0, time.UTC)
		var trig struct{ Run apitypes.Run }
		require.Equal(t, http.StatusCreated, e.call("POST", "/api/v1/jobs/"+itoa(job.ID)+"/trigger", tok, map[string]any{"scheduled_at": at}, &trig))
		var got struct{ Run apitypes.Run }
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/runs/"+itoa(trig.Run.ID), tok, nil, &got))
		for _, r := range []apitypes.Run{trig.Run, got.Run} {
			require.NotNil(t, r.StartDeadlineAt)
			require.Equal(t, at.Add(15*time.Minute), r.StartDeadlineAt.UTC())
			require.NotNil(t, r.FinishDeadlineAt)
			require.Equal(t, time.Date(2026, 3, 8, 10, 0, 0, 0, time.UTC), r.FinishDeadlineAt.UTC())
			require.Equal(t, "cancel", r.DeadlineAction)
		}

		// A job without deadlines: the action defaults, runs have none.
		var plain apitypes.Job
		require.Equal(t, http.StatusCreated, e.call("POST", "/api/v1/jobs", tok, with("name", "plain"), &plain))
		require.Equal(t, "alarm", plain.DeadlineAction)
		require.Empty(t, plain.StartDeadline)
		var plainRun struct{ Run apitypes.Run }
		require.Equal(t, http.StatusCreated, e.call("POST", "/api/v1/jobs/"+itoa(plain.ID)+"/trigger", tok, nil, &plainRun))
		require.Nil(t, plainRun.Run.StartDeadlineAt)
		require.Nil(t, plainRun.Run.FinishDeadlineAt)
		require.Empty(t, plainRun.Run.DeadlineAction)
	})
}
