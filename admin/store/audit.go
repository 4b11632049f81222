package store

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

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
	var out []JobAudit
	if err := s.db.SelectContext(ctx, &out, s.q.get(qJobAuditDue), untilMS, limit); err != nil {
		return nil, fmt.Errorf("jobs due for the gap audit: %w", err)
	}
	return out, nil
}

// WorkflowAuditsDue is JobAuditsDue for workflows (without definitions).
func (s *Store) WorkflowAuditsDue(ctx context.Context, untilMS int64, limit int) ([]WorkflowAudit, error) {
	var out []WorkflowAudit
	if err := s.db.SelectContext(ctx, &out, s.q.get(qWorkflowAuditDue), untilMS, limit); err != nil {
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
// each range's job scheduled in its range, in one query that reads only
// those runs (a range of the run key per job). Empty ranges are left out.
func (s *Store) CronRunCountsOf(ctx context.Context, t AuditTarget, ranges []AuditRange) (map[int64]int, error) {
	q, cond := qRunCountsOfRanges, "(job_id = ? AND scheduled_at >= ? AND scheduled_at < ?)"
	if t == AuditWorkflows {
		q, cond = qWorkflowRunCountsOfRanges, "(workflow_id = ? AND scheduled_at >= ? AND scheduled_at < ?)"
	}
	out := map[int64]int{}
	var args []any
	for _, r := range ranges {
		if r.FromMS < r.ToMS {
			args = append(args, r.ID, r.FromMS, r.ToMS)
		}
	}
	if len(args) == 0 {
		return out, nil
	}
	text := s.q.get(q)
	text = strings.Replace(text, cond, strings.Repeat(cond+" OR ", len(args)/3-1)+cond, 1)
	var rows []struct {
		ID int64 `db:"id"`
		N  int   `db:"n"`
	}
	if err := s.db.SelectContext(ctx, &rows, text, args...); err != nil {
		return nil, fmt.Errorf("run counts of %d %s: %w", len(args)/3, t, err)
	}
	for _, r := range rows {
		out[r.ID] = r.N
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

// AdvanceAudits applies steps in one transaction: each cursor moves on only
// if it still holds the value the audit read (another replica auditing the
// same instants, or an edit of the job, moved it first: that step is
// dropped with its alarms), and the alarms of the steps that moved are
// raised with them, so that an instant is audited once and its gap alarmed
// once however many replicas audit. It returns the ids whose cursor moved
// and how many alarms were recorded.
func (s *Store) AdvanceAudits(ctx context.Context, t AuditTarget, steps []AuditStep) (moved []int64, raised int, err error) {
	q := qJobAuditAdvance
	if t == AuditWorkflows {
		q = qWorkflowAuditAdvance
	}
	sorted := slices.Clone(steps) // one lock order for every replica
	slices.SortFunc(sorted, func(a, b AuditStep) int { return cmp.Compare(a.ID, b.ID) })
	err = s.inTx(ctx, func(tx *sqlx.Tx) error {
		moved, raised = nil, 0
		var alarms []Alarm
		for _, st := range sorted {
			if st.Next.Valid && st.Next.Int64 == st.Was {
				moved = append(moved, st.ID) // unchanged (an update would match no changed row on MySQL)
				alarms = append(alarms, st.Alarms...)
				continue
			}
			res, err := tx.ExecContext(ctx, s.q.get(q), st.Next, st.ID, st.Was)
			if err != nil {
				return fmt.Errorf("move the audit cursor of %s %d: %w", t, st.ID, err)
			}
			if n, _ := res.RowsAffected(); n == 1 {
				moved = append(moved, st.ID)
				alarms = append(alarms, st.Alarms...)
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
	qo, qc := qJobAuditOldest, qJobAuditBehindCount
	if t == AuditWorkflows {
		qo, qc = qWorkflowAuditOldest, qWorkflowAuditBehindCount
	}
	var lag AuditLag
	if err := s.db.GetContext(ctx, &lag.Oldest, s.q.get(qo)); err != nil {
		return lag, fmt.Errorf("oldest audit cursor of %s: %w", t, err)
	}
	if !lag.Oldest.Valid || lag.Oldest.Int64 >= beforeMS {
		return lag, nil
	}
	if err := s.db.GetContext(ctx, &lag.Behind, s.q.get(qc), beforeMS, limit); err != nil {
		return lag, fmt.Errorf("audit cursors of %s behind: %w", t, err)
	}
	return lag, nil
}

// BehindAlarmOpen reports whether an open watchdog_behind alarm whose dedup
// key starts with prefix exists.
func (s *Store) BehindAlarmOpen(ctx context.Context, prefix string) (bool, error) {
	var n int
	if err := s.db.GetContext(ctx, &n, s.q.get(qAlarmBehindOpen), prefix+"%"); err != nil {
		return false, fmt.Errorf("open watchdog_behind alarms: %w", err)
	}
	return n > 0, nil
}

// ResolveBehind resolves the open watchdog_behind alarms whose dedup key
// starts with prefix, in the admin's name with the reason why; it returns
// how many.
func (s *Store) ResolveBehind(ctx context.Context, prefix string, why msg.Msg) (int64, error) {
	res, err := s.exec(ctx, s.q.get(qAlarmResolveBehind), why, prefix+"%")
	if err != nil {
		return 0, fmt.Errorf("resolve watchdog_behind alarms: %w", err)
	}
	n, _ := res.RowsAffected()
	return n, nil
}

// auditFrom sets the audit cursor of job (or workflow) id to now, in the
// transaction of its creation or change.
func (s *Store) auditFrom(ctx context.Context, ex sqlx.ExecerContext, t AuditTarget, id int64) error {
	q := qJobAuditFrom
	if t == AuditWorkflows {
		q = qWorkflowAuditFrom
	}
	if _, err := ex.ExecContext(ctx, s.q.get(q), id); err != nil {
		return fmt.Errorf("audit cursor of %s %d: %w", t, id, err)
	}
	return nil
}
