package watchdog

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/shardjob/shardjob/admin/calendar"
	"github.com/shardjob/shardjob/admin/jobrules"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/schedule"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/workflowrun"
)

// The incremental gap audit. Each job (and each workflow with a schedule)
// has a cursor in the store: the next expected instant not audited yet. A
// pass reads the cursors that came due (before now - Grace), oldest first,
// a batch at a time; for each job it enumerates the instants from its
// cursor (or from its last change, if later) up to now - Grace, counts the
// job's run rows there (one query for the batch), and moves the cursor to
// the next expected instant, raising the gap alarm in the same transaction
// — only if the cursor still holds the value read, so that replicas
// auditing at once check each instant once. The work of a pass is the
// instants that came due, not the number of jobs; a pass that stops (its
// time is up, the replica dies) leaves the cursors where it got to, and
// the next pass goes on from there: no instant is skipped, only audited
// late, and CheckBehind says so when that lateness passes BehindLag.

// recheckAfter is when a cursor that cannot be evaluated now comes due
// again: a job on a calendar that is gone or does not load, or a job whose
// pause should have ended but that the leader has not resumed yet.
const recheckAfter = time.Minute

// span is what the audit of one job's (or workflow's) instants found.
type span struct {
	from, until time.Time // the instants audited: [from, until)
	expected    int       // expected instants in [from, until)
	next        time.Time // the first expected instant at or after until; zero: none
}

// AuditResult is what one call of AuditJobsDue or AuditWorkflowsDue did.
type AuditResult struct {
	// Audited is the number of cursors this replica moved on (the jobs or
	// workflows whose due instants it checked).
	Audited int
	// Gaps is the number of gap alarms it recorded.
	Gaps int
	// Done is set when no cursor was left due: the audit has caught up.
	Done bool
}

func (r *AuditResult) add(o AuditResult) {
	r.Audited += o.Audited
	r.Gaps += o.Gaps
	r.Done = o.Done
}

// auditEnd is the end of what may be audited now: instants before it are
// Grace old.
func (w *Watchdog) auditEnd() time.Time {
	return w.cfg.Clock.Now().Add(-w.cfg.Grace)
}

// AuditJobsDue audits the due instants of jobs, up to maxBatches batches
// of AuditBatch jobs (0: until none is due), and returns what it did.
func (w *Watchdog) AuditJobsDue(ctx context.Context, maxBatches int) (AuditResult, error) {
	return w.auditDue(ctx, maxBatches, w.auditJobBatch)
}

// AuditWorkflowsDue is AuditJobsDue for workflows with a schedule.
func (w *Watchdog) AuditWorkflowsDue(ctx context.Context, maxBatches int) (AuditResult, error) {
	return w.auditDue(ctx, maxBatches, w.auditWorkflowBatch)
}

func (w *Watchdog) auditDue(ctx context.Context, maxBatches int, batch func(context.Context, time.Time, map[int64]*store.Calendar) (AuditResult, error)) (AuditResult, error) {
	var total AuditResult
	end := w.auditEnd()
	cals := map[int64]*store.Calendar{} // read once per call
	for i := 0; maxBatches <= 0 || i < maxBatches; i++ {
		r, err := batch(ctx, end, cals)
		total.add(r)
		if err != nil || r.Done {
			return total, err
		}
	}
	return total, nil
}

// auditJobBatch audits one batch of the jobs whose cursor is before end.
func (w *Watchdog) auditJobBatch(ctx context.Context, end time.Time, cals map[int64]*store.Calendar) (AuditResult, error) {
	due, err := w.st.JobAuditsDue(ctx, end.UnixMilli()-1, w.cfg.AuditBatch)
	if err != nil {
		return AuditResult{}, err
	}
	spans := make([]span, len(due))
	ranges := make([]store.AuditRange, 0, len(due))
	for i, d := range due {
		spans[i] = w.jobSpan(ctx, cals, d.Job, time.UnixMilli(d.AuditNextAt), end)
		ranges = append(ranges, store.AuditRange{ID: d.ID, FromMS: spans[i].from.UnixMilli(), ToMS: spans[i].until.UnixMilli()})
	}
	have, err := w.st.CronRunCountsOf(ctx, store.AuditJobs, ranges)
	if err != nil {
		return AuditResult{}, err
	}
	steps := make([]store.AuditStep, len(due))
	gaps := map[int64]string{}
	for i, d := range due {
		sp := spans[i]
		steps[i] = store.AuditStep{ID: d.ID, Was: d.AuditNextAt, Next: cursor(sp.next)}
		if missing := sp.expected - have[d.ID]; missing > 0 {
			text := msg.New(msg.AlarmMissedFirings, "app", d.App, "job", d.Name, "missing", missing, "expected", sp.expected,
				"from", sp.from.UTC().Format(time.RFC3339), "to", sp.until.UTC().Format(time.RFC3339))
			steps[i].Alarms = []store.Alarm{{
				Kind: store.AlarmMissedFire, Severity: "critical", App: d.App,
				JobID:    sql.NullInt64{Int64: d.ID, Valid: true},
				DedupKey: fmt.Sprintf("missed_fire:gap:%d:%d", d.ID, sp.from.UnixMilli()),
				Msg:      text,
				RaisedBy: w.cfg.ID,
			}}
			gaps[d.ID] = d.App + "/" + d.Name
		}
	}
	return w.advance(ctx, store.AuditJobs, steps, gaps, len(due))
}

// advance moves the cursors of a batch on and logs the gaps of those this
// replica moved (gaps: the name of each job or workflow with a gap).
func (w *Watchdog) advance(ctx context.Context, t store.AuditTarget, steps []store.AuditStep, gaps map[int64]string, n int) (AuditResult, error) {
	res := AuditResult{Done: n < w.cfg.AuditBatch}
	if n == 0 {
		return res, nil
	}
	moved, raised, err := w.st.AdvanceAudits(ctx, t, steps)
	if err != nil {
		return res, err
	}
	res.Audited, res.Gaps = len(moved), raised
	if len(gaps) == 0 {
		return res, nil
	}
	text := make(map[int64]string, len(gaps))
	for _, st := range steps {
		if len(st.Alarms) > 0 {
			text[st.ID] = st.Alarms[0].Msg.String()
		}
	}
	for _, id := range moved {
		if name, ok := gaps[id]; ok {
			w.log.Error("missed firings: gap in run history", "target", t.String(), "id", id, "name", name, "alarm", text[id])
		}
	}
	return res, nil
}

// cursor is the stored form of the next instant to audit: NULL for none.
func cursor(next time.Time) sql.NullInt64 {
	if next.IsZero() {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: next.UnixMilli(), Valid: true}
}

// jobSpan audits job j's instants from its cursor at up to end: none of a
// job that is disabled, completed, an inline node of a workflow or paused
// (its cursor waits for the change that enables or resumes it; a pause
// with an end comes due again then). The instants before its last change
// (and its calendar's) are not expected: the change starts its audit anew.
func (w *Watchdog) jobSpan(ctx context.Context, cals map[int64]*store.Calendar, j store.Job, at, end time.Time) span {
	idle := span{from: at, until: at}
	switch {
	case !j.Enabled || j.Completed() || j.WorkflowID.Valid:
		return idle
	case j.Paused && j.PauseUntil.Valid:
		idle.next = time.UnixMilli(j.PauseUntil.Int64)
		if !idle.next.After(end) {
			idle.next = end.Add(recheckAfter) // the leader resumes it late: look again
		}
		return idle
	case j.Paused:
		return idle
	}
	from := at
	if changed := time.UnixMilli(j.UpdatedAt); changed.After(from) {
		from = changed
	}
	if j.StartAt.Valid && time.UnixMilli(j.StartAt.Int64).After(from) {
		from = time.UnixMilli(j.StartAt.Int64)
	}
	if !from.Before(end) {
		return span{from: from, until: from, next: from}
	}
	sc, err := jobrules.ScheduleOf(j)
	if err != nil {
		return idle // the leader stops firing it too; an edit sets the cursor again
	}
	var sp span
	if j.HasCalendar() {
		var ok bool
		if sp, ok = w.calendarSpan(ctx, cals, j, sc.Primary(), from, end); !ok {
			idle.next = end.Add(recheckAfter)
			return idle
		}
	} else {
		sp = w.cronSpan(sc.Next, from, end)
	}
	if j.EndAt.Valid && !sp.next.IsZero() && sp.next.UnixMilli() > j.EndAt.Int64 {
		sp.next = time.Time{} // no firing after its end: done
	}
	return sp
}

// cronSpan enumerates the instants of next in [from, to), at most
// MaxFiringsPerJob: when there are more, the span ends before the first
// one left, which the next batch audits.
func (w *Watchdog) cronSpan(next func(time.Time) time.Time, from, to time.Time) span {
	sp := span{from: from, until: to}
	t := next(from.Add(-time.Millisecond))
	for ; !t.IsZero() && t.Before(to); t = next(t) {
		if sp.expected == w.cfg.MaxFiringsPerJob {
			sp.until = t
			break
		}
		sp.expected++
	}
	sp.next = t
	return sp
}

// calendarSpan is cronSpan for a job on a business calendar, whose rows are
// its firings (keyed by the instant they fire at, a shifted one by the
// moved instant) and the candidates the calendar removed (keyed by their
// own scheduled time), as the leader records them (scheduler,
// planCalendarJob). The span starts after the calendar's last edit too.
// False when the calendar is gone or does not load (the leader logs it and
// stops firing the job).
func (w *Watchdog) calendarSpan(ctx context.Context, cals map[int64]*store.Calendar, j store.Job, sc *schedule.Schedule, from, to time.Time) (span, bool) {
	row, ok := cals[j.CalendarID]
	if !ok {
		r, err := w.st.Calendar(ctx, j.CalendarID)
		if err != nil {
			r = store.Calendar{} // gone: ID 0 marks it
		}
		row = &r
		cals[j.CalendarID] = row
	}
	if row.ID == 0 {
		return span{}, false
	}
	if changed := time.UnixMilli(row.UpdatedAt); changed.After(from) {
		from = changed
	}
	if !from.Before(to) {
		return span{from: from, until: from, next: from}, true
	}
	cal, err := row.Build()
	if err != nil {
		return span{}, false
	}
	cs, err := schedule.WithCalendar(sc, cal, jobrules.CalendarPolicy(j.JobCalendar))
	if err != nil {
		return span{}, false
	}
	sp := span{from: from, until: to}
	start := from
	if cs.Policy().Rule == calendar.RuleShift {
		// A firing moved into the span may come from a candidate before
		// it (a long holiday): look back. Shift jobs fire at most
		// schedule.MaxShiftPerDay times a day, so this stays small.
		start = from.Add(-ShiftLookBack)
	}
	for t := start.Add(-time.Millisecond); ; {
		f, err := cs.Next(t)
		if err != nil {
			return sp, true // no firing left: sp.next stays zero
		}
		// The instants of this firing: its skipped candidates and itself.
		first, n := time.Time{}, 0
		for _, d := range f.Skipped {
			if !d.Scheduled.Before(from) {
				if first.IsZero() || d.Scheduled.Before(first) {
					first = d.Scheduled
				}
				if d.Scheduled.Before(to) {
					n++
				}
			}
		}
		if !f.At.Before(from) && (first.IsZero() || f.At.Before(first)) {
			first = f.At
		}
		if !f.At.Before(to) {
			sp.expected += n // candidates before to, moved past it
			sp.next = f.At
			for _, d := range f.Skipped {
				if !d.Scheduled.Before(to) && d.Scheduled.Before(sp.next) {
					sp.next = d.Scheduled
				}
			}
			return sp, true
		}
		if !f.At.Before(from) {
			n++
		}
		if n > 0 && sp.expected+n > w.cfg.MaxFiringsPerJob {
			sp.until, sp.next = first, first
			return sp, true
		}
		sp.expected += n
		t = f.At
	}
}

// auditWorkflowBatch is auditJobBatch for workflows.
func (w *Watchdog) auditWorkflowBatch(ctx context.Context, end time.Time, _ map[int64]*store.Calendar) (AuditResult, error) {
	due, err := w.st.WorkflowAuditsDue(ctx, end.UnixMilli()-1, w.cfg.AuditBatch)
	if err != nil {
		return AuditResult{}, err
	}
	spans := make([]span, len(due))
	ranges := make([]store.AuditRange, 0, len(due))
	for i, d := range due {
		spans[i] = w.workflowSpan(d.Workflow, time.UnixMilli(d.AuditNextAt), end)
		ranges = append(ranges, store.AuditRange{ID: d.ID, FromMS: spans[i].from.UnixMilli(), ToMS: spans[i].until.UnixMilli()})
	}
	have, err := w.st.CronRunCountsOf(ctx, store.AuditWorkflows, ranges)
	if err != nil {
		return AuditResult{}, err
	}
	steps := make([]store.AuditStep, len(due))
	gaps := map[int64]string{}
	for i, d := range due {
		sp := spans[i]
		steps[i] = store.AuditStep{ID: d.ID, Was: d.AuditNextAt, Next: cursor(sp.next)}
		if missing := sp.expected - have[d.ID]; missing > 0 {
			steps[i].Alarms = []store.Alarm{{
				Kind: store.AlarmWorkflowMissed, Severity: "critical", App: d.App,
				DedupKey: fmt.Sprintf("workflow_missed_fire:gap:%d:%d", d.ID, sp.from.UnixMilli()),
				Msg: msg.New(msg.AlarmWorkflowGaps, "app", d.App, "workflow", d.Name, "missing", missing, "expected", sp.expected,
					"from", sp.from.UTC().Format(time.RFC3339), "to", sp.until.UTC().Format(time.RFC3339)),
				RaisedBy: w.cfg.ID,
			}}
			gaps[d.ID] = d.App + "/" + d.Name
		}
	}
	return w.advance(ctx, store.AuditWorkflows, steps, gaps, len(due))
}

// workflowSpan audits workflow wf's instants from its cursor at up to end:
// none of a disabled workflow, one without a schedule or one on a calendar
// with the rule shift (a shifted firing is created at its moved instant
// and two moved onto one instant are one run: counting the cron's firings
// would find gaps that are not). After a change only the firings strictly
// after it are expected (the engine plans from the change on).
func (w *Watchdog) workflowSpan(wf store.Workflow, at, end time.Time) span {
	idle := span{from: at, until: at}
	if !wf.Enabled || wf.CronExpr == "" || (wf.Calendar != "" && calendar.Rule(wf.CalendarRule) == calendar.RuleShift) {
		return idle
	}
	from := at
	if changed := time.UnixMilli(wf.UpdatedAt); !changed.Before(from) {
		from = changed.Add(time.Millisecond)
	}
	if !from.Before(end) {
		return span{from: from, until: from, next: from}
	}
	sc, err := workflowrun.ScheduleOf(wf)
	if err != nil {
		return idle // the engine logs a schedule that does not parse and stops firing it
	}
	return w.cronSpan(sc.Next, from, end)
}

// auditPass audits the due instants of jobs, then of workflows, for at
// most budget of real time, then checks how far behind the audit is.
func (w *Watchdog) auditPass(ctx context.Context, budget time.Duration) {
	deadline := time.Now().Add(budget)
	for _, audit := range []func(context.Context, int) (AuditResult, error){w.AuditJobsDue, w.AuditWorkflowsDue} {
		for ctx.Err() == nil {
			r, err := audit(ctx, 1)
			if err != nil {
				if ctx.Err() == nil {
					w.log.Error("gap audit failed", "err", err)
				}
				break
			}
			if r.Done || !time.Now().Before(deadline) {
				break
			}
		}
	}
	if _, err := w.CheckBehind(ctx); err != nil && ctx.Err() == nil {
		w.log.Error("gap audit lag check failed", "err", err)
	}
}

// behindCountLimit caps the count of cursors behind that CheckBehind
// reads: the alarm then says "at least".
const behindCountLimit = 100_000

// CheckBehind raises a watchdog_behind alarm (warning) when the oldest
// audit cursor of jobs or of workflows is more than BehindLag older than
// now - Grace, saying how many are behind and by how long, once until the
// audit catches up; then it resolves that alarm. It returns how many
// alarms it newly recorded.
func (w *Watchdog) CheckBehind(ctx context.Context) (int, error) {
	end := w.auditEnd()
	raised := 0
	for _, t := range []store.AuditTarget{store.AuditJobs, store.AuditWorkflows} {
		prefix := fmt.Sprintf("%s:%s:", store.AlarmWatchdogBehind, t)
		lag, err := w.st.AuditBehind(ctx, t, end.Add(-w.cfg.BehindLag).UnixMilli(), behindCountLimit)
		if err != nil {
			return raised, err
		}
		if lag.Behind == 0 {
			n, err := w.st.ResolveBehind(ctx, prefix, msg.New(msg.AlarmResolvedCaughtUp))
			if err != nil {
				return raised, err
			}
			if n > 0 {
				w.log.Info("gap audit caught up", "target", t.String())
			}
			continue
		}
		open, err := w.st.BehindAlarmOpen(ctx, prefix)
		if err != nil {
			return raised, err
		}
		if open {
			continue // said already: once until caught up
		}
		oldest := time.UnixMilli(lag.Oldest.Int64)
		behind := end.Sub(oldest).Truncate(time.Second)
		count := fmt.Sprint(lag.Behind)
		if lag.Behind >= behindCountLimit {
			count += "+"
		}
		text := msg.New(msg.AlarmWatchdogBehind, "what", t.String(), "count", count, "lag", w.cfg.BehindLag,
			"oldest", oldest.UTC().Format(time.RFC3339), "behind", behind)
		ok, err := w.st.RaiseAlarm(ctx, store.Alarm{
			Kind: store.AlarmWatchdogBehind, Severity: "warning",
			DedupKey: prefix + fmt.Sprint(lag.Oldest.Int64),
			Msg:      text,
			RaisedBy: w.cfg.ID,
		})
		if err != nil {
			return raised, err
		}
		if ok {
			raised++
			w.log.Warn("gap audit is behind", "target", t.String(), "behind_count", count, "oldest", oldest, "behind", behind)
		}
	}
	return raised, nil
}
