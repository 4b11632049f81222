package store

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"

	"github.com/jmoiron/sqlx"
	"github.com/shardjob/shardjob/admin/msg"
)

// The watchdog's incremental gap audit (admin/watchdog): one cursor per job
// (job_audit) and per workflow (workflow_audit) holding the next expected
// instant that is not audited yet, NULL when there is nothing to audit (a
// disabled, paused or completed job, a schedule that does not parse). The
// store sets a cursor to the change when a job or workflow is created or
// changed (JobAuditFrom in the transaction of the change); the watchdog
// moves it on as it audits (AdvanceAudits).

// AuditTarget says which cursors an audit call is about.
type AuditTarget int

// The two kinds of cursors.
const (
	AuditJobs AuditTarget = iota
	AuditWorkflows
)

// String names the target in errors and alarm keys.
func (t AuditTarget) String() string {
	if t == AuditWorkflows {
		return "workflows"
	}
	return "jobs"
}

// JobAudit is a job whose audit cursor came due, with the cursor.
type JobAudit struct {
	AuditNextAt int64 `db:"audit_next_at"`
	Job
}

// WorkflowAudit is a workflow whose audit cursor came due, with the cursor.
type WorkflowAudit struct {
	AuditNextAt int64 `db:"audit_next_at"`
	Workflow
}

// JobAuditsDue returns up to limit jobs whose audit cursor is at or before
// untilMS, oldest cursor first.
func (s *Store) JobAuditsDue(ctx context.Context, untilMS int64, limit int) ([]JobAudit, error) {
	out, err := s.q.JobAuditDue(ctx, s.db, jobAuditDueParams{AuditNextAt: untilMS, Limit: limit})
	if err != nil {
		return nil, fmt.Errorf("jobs due for the gap audit: %w", err)
	}
	return out, nil
}

// WorkflowAuditsDue is JobAuditsDue for workflows (without definitions).
func (s *Store) WorkflowAuditsDue(ctx context.Context, untilMS int64, limit int) ([]WorkflowAudit, error) {
	out, err := s.q.WorkflowAuditDue(ctx, s.db, workflowAuditDueParams{AuditNextAt: untilMS, Limit: limit})
	if err != nil {
		return nil, fmt.Errorf("workflows due for the gap audit: %w", err)
	}
	return out, nil
}

// AuditRange is the range [FromMS, ToMS) of one job's (or workflow's)
// instants whose runs an audit counts.
type AuditRange struct {
	ID     int64
	FromMS int64
	ToMS   int64
}

// CronRunCountsOf counts the cron and catch-up runs (fired or skipped) of
// each range's job scheduled in its range, in one query over the union of
// the ranges (a range of the run key per job: the rows read are the runs
// of these jobs from the earliest range's start on). Empty ranges are left
// out.
func (s *Store) CronRunCountsOf(ctx context.Context, t AuditTarget, ranges []AuditRange) (map[int64]int, error) {
	out := map[int64]int{}
	own := map[int64]AuditRange{}
	var ids []int64
	var from, to int64
	for _, r := range ranges {
		if r.FromMS >= r.ToMS {
			continue
		}
		if len(ids) == 0 || r.FromMS < from {
			from = r.FromMS
		}
		if len(ids) == 0 || r.ToMS > to {
			to = r.ToMS
		}
		ids = append(ids, r.ID)
		own[r.ID] = r
	}
	if len(ids) == 0 {
		return out, nil
	}
	count := func(id, scheduledAt int64) {
		if rg := own[id]; scheduledAt >= rg.FromMS && scheduledAt < rg.ToMS {
			out[id]++
		}
	}
	var err error
	if t == AuditWorkflows {
		var rows []workflowRunsOfRangesRow
		rows, err = s.q.WorkflowRunsOfRanges(ctx, s.db, workflowRunsOfRangesParams{WorkflowIDs: ids, FromMS: from, ToMS: to})
		for _, r := range rows {
			count(r.ID, r.ScheduledAt)
		}
	} else {
		var rows []runsOfRangesRow
		rows, err = s.q.RunsOfRanges(ctx, s.db, runsOfRangesParams{JobIDs: ids, FromMS: from, ToMS: to})
		for _, r := range rows {
			count(r.ID, r.ScheduledAt)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("runs of %d %s: %w", len(ids), t, err)
	}
	return out, nil
}

// AuditStep moves one cursor on: from Was (the value the audit read) to
// Next (NULL: nothing more to audit until a change), raising Alarms (the
// gaps found in the instants between) only if the cursor still was Was.
type AuditStep struct {
	ID     int64
	Was    int64
	Next   sql.NullInt64
	Alarms []Alarm
}

// AdvanceAudits applies steps in one transaction: it locks the cursors of
// the steps, moves on those that still hold the value the audit read
// (another replica auditing the same instants, or an edit of the job, moved
// the others first: their steps are dropped with their alarms), in one
// statement, and raises the alarms of the steps that moved with them, so
// that an instant is audited once and its gap alarmed once however many
// replicas audit. It returns the ids whose cursor moved and how many alarms
// were recorded.
func (s *Store) AdvanceAudits(ctx context.Context, t AuditTarget, steps []AuditStep) (moved []int64, raised int, err error) {
	advance, key := qJobAuditAdvance, "job_id"
	if t == AuditWorkflows {
		advance, key = qWorkflowAuditAdvance, "workflow_id"
	}
	if len(steps) == 0 {
		return nil, 0, nil
	}
	sorted := slices.Clone(steps) // one lock order for every replica
	slices.SortFunc(sorted, func(a, b AuditStep) int { return cmp.Compare(a.ID, b.ID) })
	ids := make([]int64, len(sorted))
	for i, st := range sorted {
		ids[i] = st.ID
	}
	err = s.inTx(ctx, func(tx *sqlx.Tx) error {
		moved, raised = nil, 0
		now, err := s.lockAudits(ctx, tx, t, ids)
		if err != nil {
			return fmt.Errorf("lock the audit cursors of %d %s: %w", len(ids), t, err)
		}
		var keys []int64
		var vals []any
		var alarms []Alarm
		for _, st := range sorted {
			if c, ok := now[st.ID]; !ok || !c.Valid || c.Int64 != st.Was {
				continue // moved by another replica or an edit, or deleted
			}
			moved = append(moved, st.ID)
			alarms = append(alarms, st.Alarms...)
			keys = append(keys, st.ID)
			vals = append(vals, st.Next)
		}
		if len(keys) > 0 {
			if _, err := s.execByKey(ctx, tx, advance, key, keys, vals); err != nil {
				return fmt.Errorf("move the audit cursors of %d %s: %w", len(keys), t, err)
			}
		}
		if len(alarms) == 0 {
			return nil
		}
		n, err := s.raise(ctx, tx, alarms)
		raised = int(n)
		return err
	})
	return moved, raised, err
}

// lockAudits locks the audit cursors of ids (sorted) of t and returns
// their values by id.
func (s *Store) lockAudits(ctx context.Context, tx *sqlx.Tx, t AuditTarget, ids []int64) (map[int64]sql.NullInt64, error) {
	now := make(map[int64]sql.NullInt64, len(ids))
	if t == AuditWorkflows {
		cur, err := s.q.WorkflowAuditLock(ctx, tx, ids)
		for _, c := range cur {
			now[c.ID] = c.AuditNextAt
		}
		return now, err
	}
	cur, err := s.q.JobAuditLock(ctx, tx, ids)
	for _, c := range cur {
		now[c.ID] = c.AuditNextAt
	}
	return now, err
}

// AuditLag is how far the gap audit is behind: the oldest cursor (not
// valid when there is none) and how many cursors are older than a bound.
type AuditLag struct {
	Oldest sql.NullInt64
	Behind int
}

// AuditBehind returns the oldest cursor of t and how many cursors are
// older than beforeMS, counted up to limit (the count reads that many
// index entries at most).
func (s *Store) AuditBehind(ctx context.Context, t AuditTarget, beforeMS int64, limit int) (AuditLag, error) {
	oldest := s.q.JobAuditOldest
	if t == AuditWorkflows {
		oldest = s.q.WorkflowAuditOldest
	}
	var lag AuditLag
	var err error
	if lag.Oldest, err = oldest(ctx, s.db); err != nil {
		return lag, fmt.Errorf("oldest audit cursor of %s: %w", t, err)
	}
	if !lag.Oldest.Valid || lag.Oldest.Int64 >= beforeMS {
		return lag, nil
	}
	if t == AuditWorkflows {
		lag.Behind, err = s.q.WorkflowAuditBehindCount(ctx, s.db, workflowAuditBehindCountParams{AuditNextAt: beforeMS, Limit: limit})
	} else {
		lag.Behind, err = s.q.JobAuditBehindCount(ctx, s.db, jobAuditBehindCountParams{AuditNextAt: beforeMS, Limit: limit})
	}
	if err != nil {
		return lag, fmt.Errorf("audit cursors of %s behind: %w", t, err)
	}
	return lag, nil
}

// BehindAlarmOpen reports whether an open watchdog_behind alarm whose dedup
// key starts with prefix exists.
func (s *Store) BehindAlarmOpen(ctx context.Context, prefix string) (bool, error) {
	n, err := s.q.AlarmBehindOpen(ctx, s.db, prefix+"%")
	if err != nil {
		return false, fmt.Errorf("open watchdog_behind alarms: %w", err)
	}
	return n > 0, nil
}

// ResolveBehind resolves the open watchdog_behind alarms whose dedup key
// starts with prefix, in the admin's name with the reason why; it returns
// how many.
func (s *Store) ResolveBehind(ctx context.Context, prefix string, why msg.Msg) (int64, error) {
	return resolveByAdmin(ctx, "watchdog_behind alarms", func() (int64, error) {
		return s.q.AlarmResolveBehind(ctx, s.db, alarmResolveBehindParams{ResolvedMsg: why, DedupKey: prefix + "%"})
	})
}

// auditFrom sets the audit cursor of job (or workflow) id to now, in the
// transaction of its creation or change.
func (s *Store) auditFrom(ctx context.Context, db sqlx.ExtContext, t AuditTarget, id int64) error {
	from := s.q.JobAuditFrom
	if t == AuditWorkflows {
		from = s.q.WorkflowAuditFrom
	}
	if _, err := from(ctx, db, id); err != nil {
		return fmt.Errorf("audit cursor of %s %d: %w", t, id, err)
	}
	return nil
}
