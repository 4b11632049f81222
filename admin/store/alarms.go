package store

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"

	"github.com/jmoiron/sqlx"
	"github.com/shardjob/shardjob/admin/msg"
)

// Alarm kinds.
const (
	AlarmMissedFire   = "missed_fire"   // a due firing did not happen
	AlarmRunFailed    = "run_failed"    // a run ended failed or partially failed
	AlarmExecutorLost = "executor_lost" // an executor stopped heartbeating

	AlarmSlotDead            = "slot_dead"             // a slot failed on every attempt it was allowed
	AlarmRecordsUncertain    = "records_uncertain"     // records left pending by a crashed attempt were skipped
	AlarmLeaderChange        = "leader_change"         // another admin replica became the leader
	AlarmArchiveBehind       = "archive_behind"        // archiving of old runs and records is falling behind
	AlarmRunUnplaceable      = "run_unplaceable"       // runs wait for an executor with their handler, or failed for want of one
	AlarmRunLateStart        = "run_late_start"        // no slot of a run had started by its start deadline
	AlarmRunDeadlineMissed   = "run_deadline_missed"   // a run had not finished by its finish deadline (and was cancelled, by deadline_action cancel)
	AlarmWorkflowRunFailed   = "workflow_run_failed"   // a workflow run ended failed or partially failed
	AlarmWorkflowMissed      = "workflow_missed_fire"  // a workflow's firing is late, or a past firing has no run
	AlarmWorkflowWaitTimeout = "workflow_wait_timeout" // a workflow node waited for other runs of its business date until its timeout
	AlarmRunWaitTimeout      = "run_wait_timeout"      // a run of a job with waits waited for other runs of its business date until its timeout
	AlarmWatchdogBehind      = "watchdog_behind"       // the watchdog's gap audit is further behind than its BehindLag
	AlarmBreakerOpen         = "breaker_open"          // a job's circuit breaker opened after consecutive failures (resolved when it closes)
	AlarmBreakerClosed       = "breaker_closed"        // a job's circuit breaker closed: its probe succeeded, an operator closed it, or the job lost its breaker (info)
)

// Alarm is an event that needs an operator's attention.
type Alarm struct {
	ID       int64         `db:"id"`
	At       int64         `db:"at"`
	Kind     string        `db:"kind"`
	Severity string        `db:"severity"`
	JobID    sql.NullInt64 `db:"job_id"`
	RunID    sql.NullInt64 `db:"run_id"`
	DedupKey string        `db:"dedup_key"`
	Message  string        `db:"message"` // in English; written from Msg when that is set
	Msg      msg.Msg       `db:"message_msg"`
	RaisedBy string        `db:"raised_by"`
	// App is the app of the job, run or executor the alarm is about: the
	// users limited to that app see it. "" for alarms about the platform
	// (leader_change), which only users without an app limit see. Every
	// raiser sets it; one that forgets hides the alarm from app-limited
	// users rather than showing it to the wrong ones.
	App string `db:"app"`
	// JobName is the name of job JobID when read by AlarmList ("" when the
	// job is gone); never written.
	JobName string `db:"job_name"`
	// Acknowledged (someone is on it) and resolved (dealt with), by whom:
	// read by AlarmList and Alarm, written by AckAlarm and ResolveAlarm.
	AckedAt    sql.NullInt64 `db:"acked_at"`
	AckedBy    string        `db:"acked_by"`
	ResolvedAt sql.NullInt64 `db:"resolved_at"`
	ResolvedBy string        `db:"resolved_by"`
	// ResolvedMsg says why the admin resolved the alarm by itself (by
	// "shardjob"): an info alarm when raised, an executor_lost alarm when
	// its executor heartbeats again, a waiting run_unplaceable alarm when its
	// run is placed (ResolveRunsPlaced). A raiser may set it to resolve the
	// alarm at once; info alarms get msg.AlarmResolvedInfo.
	ResolvedMsg msg.Msg `db:"resolved_msg"`
	// GroupID is the alarm's group (alarm_event_group), set when raised:
	// the alarms of one run, else of one job within an hour, else of one
	// kind and app within an hour (groupKey).
	GroupID sql.NullInt64 `db:"group_id"`
	// ExecutorID is the executor an executor_lost alarm is about; its alarm
	// resolves itself when it heartbeats again (ResolveExecutorsBack).
	ExecutorID sql.NullInt64 `db:"executor_id"`
}

// ResolvedByAdmin is who resolved an alarm that the admin resolved by
// itself (Alarm.ResolvedMsg says why).
const ResolvedByAdmin = "shardjob"

// Alarm returns one alarm (ErrNotFound when there is none).
func (s *Store) Alarm(ctx context.Context, id int64) (Alarm, error) {
	a, err := s.q.AlarmByID(ctx, s.db, id)
	if err != nil {
		return a, notFound(err, fmt.Sprintf("alarm %d", id))
	}
	return a, nil
}

// AckAlarm acknowledges an open alarm in by's name; false when it was
// acknowledged or resolved already (or does not exist).
func (s *Store) AckAlarm(ctx context.Context, id int64, by string) (bool, error) {
	n, err := s.q.AlarmAck(ctx, s.db, alarmAckParams{AckedBy: by, ID: id})
	if err != nil {
		return false, fmt.Errorf("acknowledge alarm %d: %w", id, err)
	}
	return n == 1, nil
}

// ResolveAlarm resolves an alarm in by's name (acknowledging it too if
// nobody had); false when it was resolved already (or does not exist).
func (s *Store) ResolveAlarm(ctx context.Context, id int64, by string) (bool, error) {
	n, err := s.q.AlarmResolve(ctx, s.db, alarmResolveParams{ResolvedBy: by, AckedBy: by, ID: id})
	if err != nil {
		return false, fmt.Errorf("resolve alarm %d: %w", id, err)
	}
	return n == 1, nil
}

// text is the alarm's English text: Msg's when set, else Message.
func (a Alarm) text() string {
	if !a.Msg.IsZero() {
		return a.Msg.String()
	}
	return a.Message
}

// RaiseAlarm records an alarm unless one with the same dedup key exists
// (several replicas may detect the same problem). It reports whether this
// call recorded it.
func (s *Store) RaiseAlarm(ctx context.Context, a Alarm) (bool, error) {
	var n int64
	err := s.inTx(ctx, func(tx *sqlx.Tx) error {
		var err error
		n, err = s.raise(ctx, tx, []Alarm{a})
		return err
	})
	return n == 1, err
}

// raiseInTx records alarms inside tx (with the change that causes them),
// in one statement, except those whose dedup key exists.
func (s *Store) raiseInTx(ctx context.Context, tx *sqlx.Tx, alarms ...Alarm) error {
	_, err := s.raise(ctx, tx, alarms)
	return err
}

// raise puts each alarm in its group (creating the groups that do not
// exist yet), resolves at once those that need nobody (info alarms), and
// inserts them in one statement except those whose dedup key exists. It
// returns how many it inserted.
func (s *Store) raise(ctx context.Context, tx *sqlx.Tx, alarms []Alarm) (int64, error) {
	if len(alarms) == 0 {
		return 0, nil
	}
	groups, err := s.alarmGroups(ctx, tx, alarms)
	if err != nil {
		return 0, err
	}
	rows := make([]alarmInsertParams, len(alarms))
	for i, a := range alarms {
		a.RaisedBy = cmp.Or(a.RaisedBy, s.replica)
		if a.Severity == "info" && a.ResolvedMsg.IsZero() {
			a.ResolvedMsg = msg.New(msg.AlarmResolvedInfo)
		}
		auto, by := !a.ResolvedMsg.IsZero(), ""
		if auto {
			by = ResolvedByAdmin
		}
		rows[i] = alarmInsertParams{Kind: a.Kind, Severity: a.Severity, JobID: a.JobID, RunID: a.RunID, DedupKey: truncate(a.DedupKey, 191),
			Message: truncate(a.text(), 2000), MessageMsg: a.Msg, RaisedBy: a.RaisedBy, App: a.App, GroupID: groups[i], ExecutorID: a.ExecutorID,
			Resolved: auto, ResolvedBy: by, ResolvedMsg: a.ResolvedMsg}
	}
	n, err := s.q.AlarmInsert(ctx, tx, rows)
	if err != nil {
		return 0, fmt.Errorf("raise %d alarm(s), first %s: %w", len(alarms), alarms[0].DedupKey, err)
	}
	return n, nil
}

// Alarms lists alarms newest first with id < beforeID (0: from the newest).
func (s *Store) Alarms(ctx context.Context, beforeID int64, limit int) ([]Alarm, error) {
	return s.AlarmsOfApps(ctx, beforeID, limit, nil)
}

// AlarmsOfApps is Alarms for a user limited to apps (nil: every app, and
// the platform's alarms): only the alarms of those apps.
func (s *Store) AlarmsOfApps(ctx context.Context, beforeID int64, limit int, apps []string) ([]Alarm, error) {
	if beforeID <= 0 {
		beforeID = 1<<63 - 1
	}
	out, err := s.q.AlarmList(ctx, s.db, alarmListParams{ID: beforeID, NoAppLimit: apps == nil, Apps: orNone(apps), Limit: limit})
	if err != nil {
		return nil, fmt.Errorf("list alarms: %w", err)
	}
	return out, nil
}

// LastSucceeded returns when the job's latest succeeded run finished (not
// valid if it never succeeded).
func (s *Store) LastSucceeded(ctx context.Context, jobID int64) (sql.NullInt64, error) {
	at, err := s.q.RunLastSucceeded(ctx, s.db, jobID)
	if err != nil {
		return at, fmt.Errorf("last succeeded run of job %d: %w", jobID, err)
	}
	return at, nil
}

// OverdueJob is a job whose next firing is late.
type OverdueJob struct {
	ID         int64  `db:"id"`
	App        string `db:"app"`
	Name       string `db:"name"`
	NextFireAt int64  `db:"next_fire_at"`
}

// OverdueJobs returns enabled, unpaused jobs whose next_fire_at is older
// than graceMS by the database clock.
func (s *Store) OverdueJobs(ctx context.Context, graceMS int64, limit int) ([]OverdueJob, error) {
	out, err := s.q.JobsOverdue(ctx, s.db, jobsOverdueParams{GraceMS: graceMS, Limit: limit})
	if err != nil {
		return nil, fmt.Errorf("overdue jobs: %w", err)
	}
	return out, nil
}

// CronRunCounts counts cron and catch-up runs (fired or skipped) per job
// scheduled in [fromMS, toMS).
func (s *Store) CronRunCounts(ctx context.Context, fromMS, toMS int64) (map[int64]int, error) {
	rows, err := s.q.RunCountsInWindow(ctx, s.db, runCountsInWindowParams{FromMS: fromMS, ToMS: toMS})
	if err != nil {
		return nil, fmt.Errorf("run counts: %w", err)
	}
	out := make(map[int64]int, len(rows))
	for _, r := range rows {
		out[r.JobID] = r.N
	}
	return out, nil
}
