package jobdef

import (
	"errors"
	"strconv"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/schedule"
	"github.com/shardjob/shardjob/admin/store"
)

// validateDeadlines checks a job's deadlines into errs: start_deadline a
// duration, finish_deadline a duration or a local time HH:MM (limits in
// admin/schedule: schedule.MinDeadline, MaxDeadline), deadline_action alarm
// or cancel.
func validateDeadlines(s apitypes.JobDef, errs FieldMsgs) {
	if _, err := schedule.ParseStartDeadline(s.StartDeadline); err != nil {
		errs["start_deadline"] = deadlineMsg(err)
	}
	if _, err := schedule.ParseFinishDeadline(s.FinishDeadline); err != nil {
		errs["finish_deadline"] = deadlineMsg(err)
	}
	switch s.DeadlineAction {
	case store.DeadlineAlarm, store.DeadlineCancel:
	default:
		errs["deadline_action"] = msg.New(msg.DeadlineActionBad, "value", strconv.Quote(s.DeadlineAction))
	}
}

// deadlineMsg is a deadline error without the field prefix (the field
// error names the field).
func deadlineMsg(err error) msg.Msg {
	var ve *schedule.ValidationError
	if errors.As(err, &ve) {
		return ve.Reason
	}
	return msg.Of(err)
}
