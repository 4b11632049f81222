package jobdef

import (
	"database/sql"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/waits"
)

// validateWaits checks a job's waits (docs/workflows.md, "Waits of a plain
// job") into errs with the rules of a workflow node's (admin/waits.Check):
// wait_for[i] names one job or one workflow by a valid name, none twice,
// not the job itself, at most waits.Max; wait_timeout from 1ms to 168h and
// on_timeout fail or skip, only with wait_for. d has its defaults.
func validateWaits(d apitypes.JobDef, errs FieldMsgs) {
	self := func(app, name string, isWorkflow bool) (msg.Msg, bool) {
		if !isWorkflow && app == d.App && name == d.Name {
			return msg.New(msg.WaitSelfJob, "job", app+"/"+name), true
		}
		return msg.Msg{}, false
	}
	waits.Check(jobWaits(d), d.App, self, func(field string, m msg.Msg) { errs[field] = m })
}

// jobWaits are the waits of d.
func jobWaits(d apitypes.JobDef) waits.Waits {
	return waits.Waits{For: waits.FromWire(d.WaitFor), Timeout: d.WaitTimeout, OnTimeout: waits.OnTimeout(d.OnTimeout)}
}

// waitsRow is the waits of d as the job's row keeps them: wait_for as JSON
// (NULL for none).
func waitsRow(d apitypes.JobDef) store.JobWaits {
	w := jobWaits(d)
	f := waits.Format(w.For)
	return store.JobWaits{WaitFor: sql.NullString{String: f, Valid: f != ""}, WaitTimeout: w.Timeout, OnTimeout: string(w.OnTimeout)}
}

// waitsView is the wait_for of job j on the wire (nil for none, and for a
// stored value that does not parse, which no validated job has).
func waitsView(j store.Job) []apitypes.WorkflowWait {
	refs, err := waits.Parse(j.WaitFor.String)
	if err != nil {
		return nil
	}
	return waits.ToWire(refs)
}
