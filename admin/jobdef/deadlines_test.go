package jobdef

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
)

func TestValidateDeadlines(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	spec := func(start, finish, action string) apitypes.JobSpec {
		return apitypes.JobSpec{JobDef: apitypes.JobDef{App: "a", Name: "n", Handler: "h", Cron: "0 3 * * *",
			StartDeadline: start, FinishDeadline: finish, DeadlineAction: action}}
	}
	for _, ok := range []apitypes.JobSpec{
		spec("", "", ""), spec("15m", "2h", "alarm"), spec("1s", "06:00", "cancel"), spec("168h", "00:00", ""), spec("", "23:59", "cancel"),
	} {
		v, err := Validate(ok, now)
		require.NoError(t, err, ok.JobDef)
		back := View(v.Job).JobDef
		require.Equal(t, ok.StartDeadline, back.StartDeadline)
		require.Equal(t, ok.FinishDeadline, back.FinishDeadline)
		require.Equal(t, ok.WithDefaults().DeadlineAction, back.DeadlineAction, "omitted means alarm")
	}
	for _, tc := range []struct {
		spec         apitypes.JobSpec
		field, words string
	}{
		{spec("-1m", "", ""), "start_deadline", "is negative"},
		{spec("200h", "", ""), "start_deadline", "longer than 168h"},
		{spec("0s", "", ""), "start_deadline", "shorter than 1s"},
		{spec("06:00", "", ""), "start_deadline", "not a duration"},
		{spec("", "-2h", ""), "finish_deadline", "is negative"},
		{spec("", "8d", ""), "finish_deadline", "or a local time of day HH:MM"},
		{spec("", "24:00", ""), "finish_deadline", "not a time of day"},
		{spec("", "6:30", ""), "finish_deadline", "not a time of day"},
		{spec("", "", "kill"), "deadline_action", `"alarm"`},
	} {
		_, err := Validate(tc.spec, now)
		var fe FieldErrors
		require.ErrorAs(t, err, &fe, tc.field)
		require.Contains(t, fe[tc.field], tc.words, tc.field)
		require.NotContains(t, fe[tc.field], "deadline: ", "the field error does not repeat the field")
	}
}
