package runstate

import (
	"database/sql"
	"fmt"
	"slices"

	"github.com/shardjob/shardjob/admin/jobrules"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/sdk/protocol"
)

// The decisions of the run state machine, as pure functions of what the
// store read under its locks: no I/O, table-tested in decide_test.go.

// active reports whether an attempt status is unfinished.
func active(status string) bool {
	return status == store.AttemptAssigned || status == store.AttemptRunning
}

// accept decides on a batch of outcomes against their locked attempts
// (cur, by token): accepted[i] reports whether outcomes[i] is accepted, and
// applied lists the outcomes to write, one per token (a later outcome of
// the same token in the batch replaces an earlier one that was applied).
//
// An outcome is applied when its attempt is current, unfinished and placed
// on the reporting executor. A result delivered again because its
// acknowledgement was lost is accepted again without being applied: same
// token, same executor, same outcome. Anything else (unknown, superseded,
// another executor's, another outcome) is stale.
func accept(outcomes []store.SlotOutcome, cur map[int64]store.AttemptState) (accepted []bool, applied []store.SlotOutcome) {
	accepted = make([]bool, len(outcomes))
	state := make(map[int64]store.AttemptState, len(cur)) // as the batch leaves them
	appliedAt := map[int64]int{}                          // token → index in applied
	for i, o := range outcomes {
		a, ok := state[o.Token]
		if !ok {
			a, ok = cur[o.Token]
		}
		switch {
		case !ok: // unknown token
		case a.Current && active(a.Status) && a.ExecutorID.Valid && a.ExecutorID.Int64 == o.ExecutorID:
			accepted[i] = true
			if k, ok := appliedAt[o.Token]; ok { // applied before in this batch, as an active status
				applied[k] = o
			} else {
				appliedAt[o.Token] = len(applied)
				applied = append(applied, o)
			}
			a.Status = o.Status
			state[o.Token] = a
		default:
			accepted[i] = a.Current && a.Status == o.Status && a.ExecutorID.Int64 == o.ExecutorID
		}
	}
	return accepted, applied
}

// slotAlarms are the alarms applied outcomes raise: slot_dead for a failure
// on the slot's last allowed attempt or a permanent one (error class: no
// retry left), records_uncertain for skipped
// uncertain records. info holds every applied token.
func slotAlarms(applied []store.SlotOutcome, info map[int64]store.AttemptInfo) []store.Alarm {
	var out []store.Alarm
	for _, o := range applied {
		a := info[o.Token]
		job := sql.NullInt64{Int64: a.JobID, Valid: a.JobID > 0}
		run := sql.NullInt64{Int64: a.RunID, Valid: true}
		switch {
		case !dead(o, a):
		case o.Class() == protocol.ClassPermanent:
			out = append(out, store.Alarm{
				Kind: store.AlarmSlotDead, Severity: "critical", JobID: job, RunID: run, App: a.App,
				DedupKey: fmt.Sprintf("slot_dead:%d", o.Token),
				Msg:      msg.New(msg.AlarmSlotDeadPermanent, "job", a.JobName, "run", a.RunID, "slot", a.Slot, "error", errorArg(o)),
			})
		default: // retries used up
			out = append(out, store.Alarm{
				Kind: store.AlarmSlotDead, Severity: "critical", JobID: job, RunID: run, App: a.App,
				DedupKey: fmt.Sprintf("slot_dead:%d", o.Token),
				Msg: msg.New(msg.AlarmSlotDead, "job", a.JobName, "run", a.RunID, "slot", a.Slot,
					"failures", a.Failures+1, "retry_max", a.RetryMax, "error", errorArg(o)),
			})
		}
		if o.Uncertain > 0 {
			out = append(out, store.Alarm{
				Kind: store.AlarmRecordsUncertain, Severity: "critical", JobID: job, RunID: run, App: a.App,
				DedupKey: fmt.Sprintf("records_uncertain:%d", o.Token),
				Msg:      msg.New(msg.AlarmRecordsUncertain, "job", a.JobName, "run", a.RunID, "slot", a.Slot, "records", o.Uncertain),
			})
		}
	}
	return out
}

// dead reports whether applied outcome o of attempt a ends its slot for
// good: a failure that is permanent (error class) or on the slot's last
// allowed attempt. The slot_dead alarm and the dead letter follow.
func dead(o store.SlotOutcome, a store.AttemptInfo) bool {
	return o.Status == store.AttemptFailed && (o.Class() == protocol.ClassPermanent || a.Failures >= a.RetryMax)
}

// deadTokens are the tokens of the applied outcomes that are dead (see
// dead), in the order applied.
func deadTokens(applied []store.SlotOutcome, info map[int64]store.AttemptInfo) []int64 {
	var out []int64
	for _, o := range applied {
		if dead(o, info[o.Token]) {
			out = append(out, o.Token)
		}
	}
	return out
}

// deadLetters are the letters of dead attempts as read back (sources):
// each with its slot's param as dispatch sends it (the job's slot params).
func deadLetters(sources []store.DeadSource) []store.NewDeadLetter {
	out := make([]store.NewDeadLetter, len(sources))
	for i, src := range sources {
		params, _ := jobrules.ParseSlotParams(src.SlotParams, src.SlotCount)
		out[i] = store.NewDeadLetter{DeadSource: src, SlotParam: params[src.Slot]}
	}
	return out
}

// errorArg is an outcome's error as a message argument: the admin's reason
// (translated by the console) or the handler's own text.
func errorArg(o store.SlotOutcome) any {
	if !o.Reason.IsZero() {
		return o.Reason
	}
	return o.Error
}

// outcome is how a run with no active slot ends: succeeded when no slot
// failed, failed when none succeeded, partially_failed otherwise, with the
// reason the run records.
func outcome(c store.SlotCounts) (status string, reason msg.Msg) {
	switch {
	case c.Failed == 1 && c.Succeeded == 0:
		return store.RunFailed, msg.New(msg.RunSlotFailed)
	case c.Failed > 0 && c.Succeeded == 0:
		return store.RunFailed, msg.New(msg.RunSlotsFailed, "failed", c.Failed)
	case c.Failed > 0:
		// total is at least 2 (one failed, one succeeded): "slots"
		return store.RunPartiallyFailed, msg.New(msg.RunSlotsPartlyFailed, "failed", c.Failed, "total", c.Failed+c.Succeeded)
	}
	return store.RunSucceeded, msg.Msg{}
}

// parent is a run that succeeded and the child jobs of its job.
type parent struct {
	RunID    int64
	Epoch    int64
	Children []int64
}

// settle decides, for the locked runs of a batch and their slot counts
// (absent: the run has no current attempt), what each run records: its
// counters always; a running run with no active slot also ends (see
// outcome) at the database clock of the lock. A run that ends failed or
// partially failed raises run_failed; one that succeeds triggers the child
// jobs of its job (parents).
func settle(runs []store.LockedRun, counts map[int64]store.SlotCounts) (rows []store.RunSettlement, alarms []store.Alarm, parents []parent) {
	if len(runs) == 0 {
		return nil, nil, nil
	}
	now := runs[0].Now
	rows = make([]store.RunSettlement, len(runs))
	for r, run := range runs {
		c := counts[run.ID]
		rows[r] = store.RunSettlement{ID: run.ID, Succeeded: c.Succeeded, Failed: c.Failed}
		if c.Active > 0 || run.Status != store.RunRunning {
			continue
		}
		to, reason := outcome(c)
		rows[r].To, rows[r].Reason, rows[r].FinishedAt = to, reason, now
		switch {
		case to != store.RunSucceeded:
			code := msg.AlarmRunFailed
			if to == store.RunPartiallyFailed {
				code = msg.AlarmRunPartlyFailed
			}
			alarms = append(alarms, store.Alarm{
				Kind: store.AlarmRunFailed, Severity: "critical", JobID: sql.NullInt64{Int64: run.JobID, Valid: true}, RunID: sql.NullInt64{Int64: run.ID, Valid: true}, App: run.App,
				DedupKey: fmt.Sprintf("run_failed:%d:%d", run.ID, now),
				Msg:      msg.New(code, "run", run.ID, "reason", reason),
			})
		case c.Children != "":
			parents = append(parents, parent{RunID: run.ID, Epoch: run.Epoch, Children: store.ParseIDList(c.Children)})
		}
	}
	return rows, alarms, parents
}

// maxRunsCandidates are the jobs (sorted, once each) of the runs that
// settle succeeded in rows and are scheduled runs (cron, catch-up) of a
// job with max_runs: the jobs this batch may complete (docs/schedules.md,
// "Windows and one-offs").
func maxRunsCandidates(rows []store.RunSettlement, runs []store.LockedRun, counts map[int64]store.SlotCounts) []int64 {
	var jobs []int64
	for i, row := range rows {
		c := counts[row.ID]
		if row.To == store.RunSucceeded && c.MaxRuns > 0 && (c.TriggerKind == store.TriggerCron || c.TriggerKind == store.TriggerCatchUp) {
			jobs = append(jobs, runs[i].JobID)
		}
	}
	slices.Sort(jobs)
	return slices.Compact(jobs)
}

// childRun is the run a succeeded parent creates of a child job, scheduled
// at the parent's settle time atMS; false for a disabled child (nothing
// to trigger).
func childRun(p parent, job store.ChildJob, atMS int64) (store.NewRun, bool) {
	if !job.Enabled {
		return store.NewRun{}, false
	}
	return store.NewRun{
		JobID: job.ID, App: job.App, JobName: job.Name, ScheduledAt: atMS, TriggerKind: store.TriggerChild, Status: store.RunPending, Params: job.Params,
		SlotCount: job.SlotCount, ParentRunID: p.RunID, TimeZone: job.TimeZone, RecordsPolicy: job.RecordsPolicy,
		Deadlines: jobrules.RunDeadlines(job.JobDeadlines, job.TimeZone, atMS),
	}, true
}

// transition returns the guarded change that moves run id from → to at
// atMS, with the timestamps of the target state: a start time when it
// starts running, a finish time when it ends.
func transition(id int64, from, to string, atMS int64, reason msg.Msg) store.RunTransition {
	t := store.RunTransition{ID: id, From: from, To: to, Reason: reason}
	switch to {
	case store.RunSucceeded, store.RunFailed, store.RunPartiallyFailed, store.RunCancelled, store.RunSkipped:
		t.FinishedAt = sql.NullInt64{Int64: atMS, Valid: true}
	case store.RunRunning:
		t.StartedAt = sql.NullInt64{Int64: atMS, Valid: true}
	}
	return t
}

// reopenable are the statuses a retry by hand moves a run back to running
// from: it ended with slots that did not succeed. A succeeded, skipped or
// still active run is not retried.
var reopenable = []string{store.RunFailed, store.RunPartiallyFailed, store.RunCancelled}

// breakerCounts are what applied outcomes say of their jobs' circuit
// breakers (docs/failures.md), by job in id order: a success starts the
// count again; a retryable or timeout failure counts one; a permanent
// failure (the target answered: not its outage), a cancel and any other
// outcome count nothing. Only jobs with a breaker (threshold above 0).
func breakerCounts(applied []store.SlotOutcome, info map[int64]store.AttemptInfo) []store.BreakerCount {
	byJob := map[int64]*store.BreakerCount{}
	var jobs []int64
	for _, o := range applied {
		a := info[o.Token]
		if a.BreakerThreshold <= 0 || a.JobID <= 0 {
			continue
		}
		c := byJob[a.JobID]
		if c == nil {
			c = &store.BreakerCount{JobID: a.JobID, App: a.App}
			byJob[a.JobID] = c
			jobs = append(jobs, a.JobID)
		}
		switch {
		case o.Status == store.AttemptSucceeded:
			c.Reset, c.Failures, c.LastError = true, 0, ""
		case o.Status == store.AttemptFailed && (o.Class() == protocol.ClassRetryable || o.Class() == protocol.ClassTimeout || o.Class() == protocol.ClassLost):
			c.Failures++
			c.LastError = o.Class() + ": " + errorText(o)
		}
	}
	slices.Sort(jobs)
	out := make([]store.BreakerCount, 0, len(jobs))
	for _, id := range jobs {
		if c := byJob[id]; c.Reset || c.Failures > 0 {
			out = append(out, *c)
		}
	}
	return out
}

// errorText is an outcome's error for a person, in English.
func errorText(o store.SlotOutcome) string {
	if !o.Reason.IsZero() {
		return o.Reason.String()
	}
	return o.Error
}

// budgetAlarm is the slot_dead alarm of a failed slot a that its job's
// retry budget does not let retry (reason: msg.AttemptBudgetSpent).
func budgetAlarm(a store.AttemptInfo, reason msg.Msg) store.Alarm {
	return store.Alarm{
		Kind: store.AlarmSlotDead, Severity: "critical", App: a.App,
		JobID: sql.NullInt64{Int64: a.JobID, Valid: a.JobID > 0}, RunID: sql.NullInt64{Int64: a.RunID, Valid: true},
		DedupKey: fmt.Sprintf("slot_dead:%d", a.Token),
		Msg:      msg.New(msg.AlarmSlotDeadBudget, "job", a.JobName, "run", a.RunID, "slot", a.Slot, "reason", reason),
	}
}
