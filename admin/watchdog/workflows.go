package watchdog

import (
	"context"
	"fmt"
	"time"

	"github.com/shardjob/shardjob/admin/calendar"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/workflowrun"
)

// The same two checks for workflows with a schedule: their firings are
// made by the leader's workflow engine (admin/workflowrun), which records
// every cron firing as a workflow run — run, or skipped by its misfire
// rule.

// CheckWorkflowsOverdue raises a workflow_missed_fire alarm for each
// enabled workflow whose next firing is more than Grace late by the
// database clock, once per workflow and firing, and returns how many
// alarms it newly recorded.
func (w *Watchdog) CheckWorkflowsOverdue(ctx context.Context) (int, error) {
	late, err := w.st.OverdueWorkflows(ctx, w.cfg.Grace.Milliseconds(), 1000)
	if err != nil {
		return 0, err
	}
	raised := 0
	for _, wf := range late {
		due := time.UnixMilli(wf.NextFireAt).UTC()
		ok, err := w.st.RaiseAlarm(ctx, store.Alarm{
			Kind: store.AlarmWorkflowMissed, Severity: "critical", App: wf.App,
			DedupKey: fmt.Sprintf("workflow_missed_fire:overdue:%d:%d", wf.ID, wf.NextFireAt),
			Msg:      msg.New(msg.AlarmWorkflowOverdue, "app", wf.App, "workflow", wf.Name, "due", due.Format(time.RFC3339), "grace", w.cfg.Grace),
			RaisedBy: w.cfg.ID,
		})
		if err != nil {
			return raised, err
		}
		if ok {
			raised++
			w.log.Error("missed firing: workflow is overdue", "workflow_id", wf.ID, "workflow", wf.App+"/"+wf.Name, "due", due)
		}
	}
	return raised, nil
}

// AuditWorkflowGaps checks that every firing of every enabled workflow
// scheduled in [from, to) — after the workflow's last change — has a
// workflow run (cron or catch-up, fired or skipped), and raises a
// workflow_missed_fire alarm per workflow with gaps, once per workflow and
// window. It returns the number of workflows with gaps.
func (w *Watchdog) AuditWorkflowGaps(ctx context.Context, from, to time.Time) (int, error) {
	counts, err := w.st.WorkflowCronRunCounts(ctx, from.UnixMilli(), to.UnixMilli())
	if err != nil {
		return 0, err
	}
	gaps := 0
	var after int64
	for {
		page, err := w.st.ScheduledWorkflows(ctx, after, 1000)
		if err != nil || len(page) == 0 {
			return gaps, err
		}
		after = page[len(page)-1].ID
		for _, wf := range page {
			missing, expected := w.missingWorkflow(wf, from, to, counts[wf.ID])
			if missing <= 0 {
				continue
			}
			gaps++
			ok, err := w.st.RaiseAlarm(ctx, store.Alarm{
				Kind: store.AlarmWorkflowMissed, Severity: "critical", App: wf.App,
				DedupKey: fmt.Sprintf("workflow_missed_fire:gap:%d:%d", wf.ID, from.UnixMilli()),
				Msg: msg.New(msg.AlarmWorkflowGaps, "app", wf.App, "workflow", wf.Name, "missing", missing, "expected", expected,
					"from", from.UTC().Format(time.RFC3339), "to", to.UTC().Format(time.RFC3339)),
				RaisedBy: w.cfg.ID,
			})
			if err != nil {
				return gaps, err
			}
			if ok {
				w.log.Error("missed firings: gap in workflow run history", "workflow_id", wf.ID, "workflow", wf.App+"/"+wf.Name,
					"missing", missing, "from", from, "to", to)
			}
		}
	}
}

// missingWorkflow returns how many firings of wf in [from, to) have no
// workflow run, given the count of its cron rows there. Only the part of
// the window after its last change counts (a change replans it).
func (w *Watchdog) missingWorkflow(wf store.Workflow, from, to time.Time, have int) (missing, expected int) {
	// A firing at from is expected; after a change, only the firings
	// strictly after it (the engine plans from the change on).
	first := from.Add(-time.Millisecond)
	if changed := time.UnixMilli(wf.UpdatedAt); !changed.Before(from) {
		first = changed
	}
	if wf.Calendar != "" && calendar.Rule(wf.CalendarRule) == calendar.RuleShift {
		// A shifted firing is created at its moved instant, possibly in
		// another window, and two moved onto one instant are one run:
		// counting the cron's firings would find gaps that are not.
		return 0, 0
	}
	sc, err := workflowrun.ScheduleOf(wf)
	if err != nil {
		return 0, 0 // the engine logs a schedule that does not parse and stops firing it
	}
	for t := sc.Next(first); !t.IsZero() && t.Before(to) && expected < w.cfg.MaxFiringsPerJob; t = sc.Next(t) {
		expected++
	}
	return expected - have, expected
}
