// Package watchdog is the missed-fire checker. It runs on every admin
// replica — not only the leader — because its purpose is to notice when
// the leader is stalled, absent or fenced off: "the report did not happen".
//
// Three checks, each raising de-duplicated alarm events (store.RaiseAlarm):
//
//   - overdue: an enabled, unpaused job whose next_fire_at is older than
//     Grace by the database clock: nobody is firing it;
//   - gap audit (audit.go): every due instant of every enabled job must
//     get a run row — fired, or recorded as skipped by the misfire or
//     overlap policy, or, for a job on a business calendar, by the calendar
//     (a moved firing at its new instant). An instant with neither is a
//     gap. The audit is incremental: a cursor per job holds the next
//     instant not audited yet, each pass checks the instants that came due
//     since (Grace ago at the latest) and moves the cursors on, so an
//     instant is checked exactly once, whichever replica gets to it;
//   - behind: the gap audit's oldest cursor is more than BehindLag older
//     than it should be (watchdog_behind): instants are audited late, and
//     the alarm says how many jobs and by how long; it resolves itself
//     when the audit catches up.
//
// The overdue check and the gap audit cover workflows with a schedule too
// (workflows.go, alarm workflow_missed_fire): an enabled workflow whose
// next firing is late, and a firing with no workflow run (fired, or
// skipped by its misfire rule).
package watchdog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/shardjob/shardjob/admin/internal/clock"
	"github.com/shardjob/shardjob/admin/jobrules"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/store"
)

// Config of the watchdog.
type Config struct {
	// ID of the replica, recorded in the alarms it raises. Required.
	ID string
	// Interval between overdue checks. Default 5s.
	Interval time.Duration
	// Grace is how late a firing may be before it counts as missed.
	// Default 30s (a leader failover takes about the ZooKeeper session
	// timeout plus a poll).
	Grace time.Duration
	// AuditBatch is how many jobs (or workflows) the gap audit reads, checks
	// and moves on in one batch (one query for their cursors, one for their
	// run rows, one transaction for the new cursors and the alarms). Each
	// Interval the audit runs batches until no cursor is due or Interval
	// has passed. Default 500.
	AuditBatch int
	// BehindLag is how far the gap audit may fall behind (its oldest cursor
	// older than now - Grace - BehindLag) before a watchdog_behind alarm.
	// Default 2m.
	BehindLag time.Duration
	// MaxFiringsPerJob caps the firings enumerated per job and batch; the
	// rest are audited by the next batch. Default 1000.
	MaxFiringsPerJob int
	// ArchiveMaxAge is how long an enabled dedup-archive job (handler
	// "dedup-archive", docs/retention.md) may go without a succeeded run
	// before an archive_behind alarm: the dedup table then grows past its
	// horizon. Default 48h.
	ArchiveMaxAge time.Duration
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// Clock is the clock of the gap audit and the archive check. Default
	// clock.System.
	Clock clock.Clock
}

// WithDefaults fills zero fields.
func (c Config) WithDefaults() Config {
	if c.Interval <= 0 {
		c.Interval = 5 * time.Second
	}
	if c.Grace <= 0 {
		c.Grace = 30 * time.Second
	}
	if c.AuditBatch <= 0 {
		c.AuditBatch = 500
	}
	if c.BehindLag <= 0 {
		c.BehindLag = 2 * time.Minute
	}
	if c.MaxFiringsPerJob <= 0 {
		c.MaxFiringsPerJob = 1000
	}
	if c.ArchiveMaxAge <= 0 {
		c.ArchiveMaxAge = 48 * time.Hour
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Clock == nil {
		c.Clock = clock.System
	}
	return c
}

// Watchdog checks that firings happen.
type Watchdog struct {
	cfg         Config
	st          *store.Store
	log         *slog.Logger
	lastArchive time.Time // when CheckArchive last ran
}

// ArchiveHandler is the built-in handler that archives dedup rows
// (executor/builtin).
const ArchiveHandler = "dedup-archive"

// CheckArchive raises an archive_behind alarm for each enabled, unpaused
// dedup-archive job that has not succeeded for ArchiveMaxAge (nor since it
// was created or changed), and returns how many alarms it newly recorded.
// One alarm per job and day at most.
func (w *Watchdog) CheckArchive(ctx context.Context) (int, error) {
	now := w.cfg.Clock.Now()
	raised := 0
	var after int64
	for {
		jobs, err := w.st.JobsOfHandler(ctx, ArchiveHandler, after, 1000)
		if err != nil || len(jobs) == 0 {
			return raised, err
		}
		after = jobs[len(jobs)-1].ID
		for _, j := range jobs {
			if !j.Enabled || j.Paused || now.Sub(time.UnixMilli(j.UpdatedAt)) < w.cfg.ArchiveMaxAge {
				continue
			}
			last, err := w.st.LastSucceeded(ctx, j.ID)
			if err != nil {
				return raised, err
			}
			if last.Valid && now.Sub(time.UnixMilli(last.Int64)) < w.cfg.ArchiveMaxAge {
				continue
			}
			text := msg.New(msg.AlarmArchiveNever, "app", j.App, "job", j.Name, "max_age", w.cfg.ArchiveMaxAge)
			if last.Valid {
				text = msg.New(msg.AlarmArchiveBehind, "app", j.App, "job", j.Name, "max_age", w.cfg.ArchiveMaxAge,
					"last", time.UnixMilli(last.Int64).UTC().Format(time.RFC3339))
			}
			ok, err := w.st.RaiseAlarm(ctx, store.Alarm{
				Kind: store.AlarmArchiveBehind, Severity: "warning", App: j.App,
				JobID:    sql.NullInt64{Int64: j.ID, Valid: true},
				DedupKey: fmt.Sprintf("archive_behind:%d:%s", j.ID, now.UTC().Format("2006-01-02")),
				Msg:      text,
				RaisedBy: w.cfg.ID,
			})
			if err != nil {
				return raised, err
			}
			if ok {
				raised++
				w.log.Warn("dedup archive behind", "job_id", j.ID, "job", j.App+"/"+j.Name, "alarm", text.String())
			}
		}
	}
}

// New returns a Watchdog.
func New(cfg Config, st *store.Store) (*Watchdog, error) {
	cfg = cfg.WithDefaults()
	if cfg.ID == "" || st == nil {
		return nil, errors.New("watchdog: Config.ID and a store are required")
	}
	return &Watchdog{cfg: cfg, st: st, log: cfg.Logger.With("component", "watchdog")}, nil
}

// Run checks every Interval until ctx ends.
func (w *Watchdog) Run(ctx context.Context) {
	t := time.NewTicker(w.cfg.Interval)
	defer t.Stop()
	for {
		if _, err := w.CheckOverdue(ctx); err != nil && ctx.Err() == nil {
			w.log.Error("overdue check failed", "err", err)
		}
		if _, err := w.CheckWorkflowsOverdue(ctx); err != nil && ctx.Err() == nil {
			w.log.Error("workflow overdue check failed", "err", err)
		}
		if w.cfg.Clock.Now().Sub(w.lastArchive) >= time.Hour {
			if _, err := w.CheckArchive(ctx); err != nil && ctx.Err() == nil {
				w.log.Error("archive check failed", "err", err)
			} else {
				w.lastArchive = w.cfg.Clock.Now()
			}
		}
		w.auditPass(ctx, w.cfg.Interval)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// CheckOverdue raises an alarm for each overdue job and returns how many
// alarms it newly recorded.
func (w *Watchdog) CheckOverdue(ctx context.Context) (int, error) {
	jobs, err := w.st.OverdueJobs(ctx, w.cfg.Grace.Milliseconds(), 1000)
	if err != nil {
		return 0, err
	}
	raised := 0
	for _, j := range jobs {
		due := time.UnixMilli(j.NextFireAt).UTC()
		ok, err := w.st.RaiseAlarm(ctx, store.Alarm{
			Kind: store.AlarmMissedFire, Severity: "critical", App: j.App,
			JobID:    sql.NullInt64{Int64: j.ID, Valid: true},
			DedupKey: fmt.Sprintf("missed_fire:overdue:%d:%d", j.ID, j.NextFireAt),
			Msg:      msg.New(msg.AlarmMissedFire, "app", j.App, "job", j.Name, "due", due.Format(time.RFC3339), "grace", w.cfg.Grace),
			RaisedBy: w.cfg.ID,
		})
		if err != nil {
			return raised, err
		}
		if ok {
			raised++
			w.log.Error("missed firing: job is overdue", "job_id", j.ID, "job", j.App+"/"+j.Name, "due", due)
		}
	}
	return raised, nil
}

// AuditGaps checks that every cron firing scheduled in [from, to) has a run
// row and raises an alarm per job with gaps. It returns the number of jobs
// with gaps. It reads every job: an audit of a given range on demand (and
// of tests); Run audits incrementally (AuditJobsDue).
func (w *Watchdog) AuditGaps(ctx context.Context, from, to time.Time) (int, error) {
	counts, err := w.st.CronRunCounts(ctx, from.UnixMilli(), to.UnixMilli())
	if err != nil {
		return 0, err
	}
	gaps := 0
	cals := map[int64]*store.Calendar{} // read once per audit
	var after int64
	for {
		jobs, err := w.st.Jobs(ctx, after, 1000)
		if err != nil {
			return gaps, err
		}
		if len(jobs) == 0 {
			return gaps, nil
		}
		after = jobs[len(jobs)-1].ID
		for _, j := range jobs {
			missing, expected := w.missing(ctx, cals, j, from, to, counts[j.ID])
			if missing <= 0 {
				continue
			}
			gaps++
			ok, err := w.st.RaiseAlarm(ctx, store.Alarm{
				Kind: store.AlarmMissedFire, Severity: "critical", App: j.App,
				JobID:    sql.NullInt64{Int64: j.ID, Valid: true},
				DedupKey: fmt.Sprintf("missed_fire:gap:%d:%d", j.ID, from.UnixMilli()),
				Msg: msg.New(msg.AlarmMissedFirings, "app", j.App, "job", j.Name, "missing", missing, "expected", expected,
					"from", from.UTC().Format(time.RFC3339), "to", to.UTC().Format(time.RFC3339)),
				RaisedBy: w.cfg.ID,
			})
			if err != nil {
				return gaps, err
			}
			if ok {
				w.log.Error("missed firings: gap in run history", "job_id", j.ID, "job", j.App+"/"+j.Name, "missing", missing, "from", from, "to", to)
			}
		}
	}
}

// missing returns how many expected firings of j in [from, to) have no run
// row, given the count of its cron rows there. Only the part of the window
// in which the job (and its calendar) was enabled, unpaused and unchanged
// counts.
func (w *Watchdog) missing(ctx context.Context, cals map[int64]*store.Calendar, j store.Job, from, to time.Time, have int) (missing, expected int) {
	if !j.Enabled || j.Paused {
		return 0, 0
	}
	if changed := time.UnixMilli(j.UpdatedAt); changed.After(from) {
		from = changed
	}
	sc, err := jobrules.ScheduleOf(j)
	if err != nil {
		return 0, 0
	}
	if !j.HasCalendar() {
		if !from.Before(to) {
			return 0, 0
		}
		sp := w.cronSpan(sc.Next, from, to)
		return sp.expected - have, sp.expected
	}
	sp, ok := w.calendarSpan(ctx, cals, j, sc.Primary(), from, to)
	if !ok {
		return 0, 0
	}
	return sp.expected - have, sp.expected
}

// ShiftLookBack is how far before its window the gap audit looks for
// candidates a calendar's rule shift moved into the window. A firing moved
// farther (a calendar without a working day for over a month) is not
// expected, and its run then hides a gap of the same job in that window.
const ShiftLookBack = 31 * 24 * time.Hour
