package scheduler

import (
	"context"
	"database/sql"
	"sync"
	"time"

	"github.com/shardjob/shardjob/admin/jobrules"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/partition"
	"github.com/shardjob/shardjob/admin/schedule"
	"github.com/shardjob/shardjob/admin/store"
)

// fireScope is what a firing claims and how its writes are fenced: every
// job under the leader epoch (parts nil), or the jobs of the partitions
// parts (sorted), each under its epoch in owned. all is true when parts
// are every partition (one admin): the claims and wake-ups then read
// idx_job_due as the leader's do, without a range per partition.
type fireScope struct {
	epoch int64
	parts []int
	owned map[int]int64
	all   bool
}

// global reports whether the scope's jobs are all the jobs.
func (sc fireScope) global() bool { return sc.parts == nil || sc.all }

// leaderScope is the scope of the leader loop when there are no partitions.
func leaderScope(epoch int64) fireScope { return fireScope{epoch: epoch} }

// fireAll fires batches until fewer than a full batch is due or the
// TickBudget is spent; more is true when it stopped at the budget with a full batch
// last. When the first batch is full there is a backlog, and FireWorkers
// transactions drain it in parallel.
func (s *Scheduler) fireAll(ctx context.Context, scope fireScope) (more bool, err error) {
	start := s.cfg.Clock.Now()
	deadline := start.Add(s.cfg.TickBudget)
	window := s.preRead(ctx, scope, start)
	n, err := s.fireDue(ctx, scope, window, true)
	if err != nil || n < s.cfg.BatchSize {
		return false, err
	}
	fired := int64(n)
	var mu sync.Mutex
	defer func() {
		if d := s.cfg.Clock.Now().Sub(start).Seconds(); d > 0.2 {
			s.rate = 0.7*s.rate + 0.3*float64(fired)/d
		}
	}()
	workers := s.cfg.FireWorkers
	if s.store.Dialect() == "sqlite" {
		workers = 1
	}
	errs := make(chan error, workers)
	for range workers {
		go func() {
			for {
				n, err := s.fireDue(ctx, scope, window, false)
				mu.Lock()
				fired += int64(n)
				stop := err != nil || n < s.cfg.BatchSize
				if !stop && s.cfg.Clock.Now().After(deadline) {
					more, stop = true, true
				}
				mu.Unlock()
				if stop {
					errs <- err
					return
				}
			}
		}()
	}
	for range workers {
		if werr := <-errs; werr != nil && err == nil {
			err = werr
		}
	}
	if err != nil {
		return false, err
	}
	return more, nil
}

// FireAll fires everything due now, with FireWorkers transactions in
// parallel when there is a backlog: the leader loop's firing (one
// TickBudget per tick), repeated until nothing due is left.
func (s *Scheduler) FireAll(ctx context.Context, epoch int64) error {
	for {
		more, err := s.fireAll(ctx, leaderScope(epoch))
		if err != nil || !more {
			return err
		}
	}
}

// FireDue claims one batch of due jobs (due now or within PreRead) and
// creates their runs, in one transaction fenced by epoch, after resuming
// the jobs paused until now. It returns how many jobs it claimed.
func (s *Scheduler) FireDue(ctx context.Context, epoch int64) (int, error) {
	return s.fireDue(ctx, leaderScope(epoch), s.cfg.PreRead, true)
}

// fireDue fires one batch; with resume, it first resumes the jobs whose
// pause_until has come (docs/schedules.md, "Pausing until an instant"):
// their next_fire_at is the first firing after the pause began, so the
// batch decides what the pause missed by the misfire policy.
//
// In a partition scope the transaction first reads the epochs of the
// scope's partitions with a shared lock (store.Tx.CheckPartitionEpochs),
// claims only their jobs, and each run records the epoch of its job's
// partition.
func (s *Scheduler) fireDue(ctx context.Context, scope fireScope, window time.Duration, resume bool) (int, error) {
	now := s.cfg.Clock.Now()
	var claimed, fired, skipped, dup int64
	err := s.store.Tx(ctx, func(tx *store.Tx) error {
		claimed, fired, skipped, dup = 0, 0, 0, 0
		jobs, err := s.claimDue(ctx, tx, scope, now, window, resume)
		if err != nil || len(jobs) == 0 {
			return err
		}
		claimed = int64(len(jobs))
		var guarded []int64
		for _, j := range jobs {
			if j.OverlapPolicy != string(schedule.OverlapAllow) {
				guarded = append(guarded, j.ID)
			}
		}
		active, err := tx.ActiveJobs(ctx, guarded)
		if err != nil {
			return err
		}
		cals, err := s.calendarsOf(ctx, tx, jobs) // nil (no query) without calendar jobs
		if err != nil {
			return err
		}
		counts, err := tx.RunCountsForMaxRuns(ctx, maxRunsJobs(jobs)) // nil (no query) without max_runs
		if err != nil {
			return err
		}
		runs := make([]store.NewRun, 0, len(jobs))
		next := make(map[int64]sql.NullInt64, len(jobs))
		var completed []store.JobCompletion
		for _, j := range jobs {
			due := time.UnixMilli(j.NextFireAt.Int64)
			var jr []store.NewRun
			if j.HasCalendar() {
				out := s.fireCalendarJob(j, cals, due, later(now, due), active[j.ID])
				if jr, next[j.ID] = out.runs, out.next; out.broken {
					continue
				}
			} else {
				sc, err := s.scheduleOf(j)
				if err != nil {
					// A stored schedule that no longer parses (e.g. zone data
					// changed): stop firing it and say why, rather than loop.
					s.log.Error("job schedule is invalid; disabling its firing", "job_id", j.ID, "job", j.App+"/"+j.Name, "err", err)
					next[j.ID] = sql.NullInt64{}
					continue
				}
				jr, next[j.ID] = s.planJob(j, sc, due, later(now, due), active[j.ID])
			}
			// The job's window: no firing outside it, none past max_runs;
			// a job that will not fire again is completed.
			var why msg.Msg
			jr, next[j.ID], why = windowed(j, counts[j.ID], jr, next[j.ID])
			if !why.IsZero() {
				completed = append(completed, store.JobCompletion{ID: j.ID, Why: why})
			}
			for i := range jr {
				jr[i].Epoch = scope.epochOf(j.ID, s.store.PartitionCount())
			}
			for _, r := range jr {
				if r.Status == store.RunSkipped {
					skipped++
				} else {
					fired++
				}
			}
			runs = append(runs, jr...)
		}
		n, err := tx.InsertRuns(ctx, scope.epoch, runs)
		if err != nil {
			return err
		}
		dup = int64(len(runs)) - n
		if err := tx.SetNextFire(ctx, next); err != nil {
			return err
		}
		return tx.CompleteJobs(ctx, completed)
	})
	if err != nil {
		return 0, err
	}
	if dup > 0 {
		s.log.Warn("run key already existed: duplicate firings dropped by the unique key", "count", dup)
	}
	s.count(func(st *Stats) { st.Fired += fired; st.Skipped += skipped; st.DuplicateFirings += dup })
	return int(claimed), nil
}

// claimDue fences the transaction for scope, resumes (with resume) the
// jobs of the scope paused until now, and claims a batch of its due jobs.
func (s *Scheduler) claimDue(ctx context.Context, tx *store.Tx, scope fireScope, now time.Time, window time.Duration, resume bool) ([]store.Job, error) {
	horizon := now.Add(window).UnixMilli()
	if scope.parts == nil {
		if err := tx.CheckEpoch(ctx, scope.epoch); err != nil {
			return nil, err
		}
		if resume {
			if _, err := tx.ResumeDue(ctx, now.UnixMilli()); err != nil {
				return nil, err
			}
		}
		return tx.ClaimDue(ctx, horizon, s.cfg.BatchSize)
	}
	if err := tx.CheckPartitionEpochs(ctx, scope.parts, scope.owned); err != nil {
		return nil, err
	}
	var jobs []store.Job
	var err error
	if scope.all {
		if resume {
			if _, err := tx.ResumeDue(ctx, now.UnixMilli()); err != nil {
				return nil, err
			}
		}
		jobs, err = tx.ClaimDue(ctx, horizon, s.cfg.BatchSize)
	} else {
		if resume {
			if _, err := tx.ResumeDueIn(ctx, scope.parts, now.UnixMilli()); err != nil {
				return nil, err
			}
		}
		jobs, err = tx.ClaimDueIn(ctx, scope.parts, horizon, s.cfg.BatchSize)
	}
	if err != nil {
		return nil, err
	}
	// A job whose stored partition disagrees with the partition count
	// (changed without the offline procedure of docs/operations.md) is
	// left alone: its partition's owner is not known for sure.
	kept := jobs[:0]
	for _, j := range jobs {
		if _, ok := scope.owned[partition.Of(j.ID, s.store.PartitionCount())]; ok {
			kept = append(kept, j)
			continue
		}
		s.log.Error("job's stored partition is not the one its id hashes to: not fired; the partition count changed without the offline procedure", "job_id", j.ID, "count", s.store.PartitionCount())
	}
	return kept, nil
}

// epochOf is the epoch a run of job id records: its partition's in a
// partition scope, else the leader's.
func (sc fireScope) epochOf(id int64, count int) int64 {
	if sc.parts == nil {
		return sc.epoch
	}
	return sc.owned[partition.Of(id, count)]
}

// planJob decides due job j (not on a calendar) with its schedule sc: the
// runs of its due firings (misfire and overlap policies) and its next
// firing. now is the instant planned for (later of the clock and due).
//
// A job with several zones plans the union of its zones' firings, and each
// run records the zone of its firing (the first of the job's zones that
// fires then), whose deadlines it gets (docs/schedules.md, "Several
// zones").
func (s *Scheduler) planJob(j store.Job, sc *schedule.MultiZone, due, now time.Time, busy bool) ([]store.NewRun, sql.NullInt64) {
	// A firing inside the pre-read window is planned as if it were due
	// now: on time, fired ahead, dispatched at its time.
	d := schedule.PlanZones(sc, due, now, schedule.MisfireConfig{
		Policy:     schedule.MisfirePolicy(j.MisfirePolicy),
		Threshold:  time.Duration(j.MisfireMS) * time.Millisecond,
		MaxCatchUp: j.MaxCatchUp,
	})
	next := sql.NullInt64{}
	if !d.Next.IsZero() {
		next = sql.NullInt64{Int64: d.Next.UnixMilli(), Valid: true}
	}
	kind := store.TriggerCron
	if d.Misfired && j.MisfirePolicy == string(schedule.MisfireCatchUp) {
		kind = store.TriggerCatchUp
	}
	runs := make([]store.NewRun, 0, len(d.Fire)+len(d.Skipped))
	multi := j.TimeZones != ""
	for _, at := range d.Fire {
		r := jobrules.NewRun(j, at.UnixMilli(), kind, store.RunPending)
		if multi {
			inZone(&r, j, sc, at)
		}
		if schedule.DecideOverlap(schedule.OverlapPolicy(j.OverlapPolicy), busy) == schedule.ActionSkip {
			r.Status, r.Reason = store.RunSkipped, msg.New(msg.RunSkippedOverlap)
		}
		// start, queue and replace all create a pending run; the assigner
		// applies queue and replace when it starts runs.
		busy = busy || r.Status == store.RunPending
		runs = append(runs, r)
	}
	for _, at := range d.Skipped {
		r := jobrules.NewRun(j, at.UnixMilli(), kind, store.RunSkipped)
		if multi {
			inZone(&r, j, sc, at)
		}
		r.Reason = msg.New(msg.RunSkippedMisfire, "policy", j.MisfirePolicy, "threshold_ms", j.MisfireMS)
		runs = append(runs, r)
	}
	if extra := d.SkippedCount - len(d.Skipped); extra > 0 {
		s.log.Warn("misfire: more skipped firings than are recorded one by one", "job_id", j.ID, "unrecorded", extra)
	}
	return runs, next
}

// inZone gives run r of multi-zone job j, scheduled at at, the zone of
// its firing, and a pending run the deadlines of that zone (a finish
// deadline at a local time of day is read there; duration deadlines count
// from its start_after).
func inZone(r *store.NewRun, j store.Job, sc *schedule.MultiZone, at time.Time) {
	zone, ok := sc.ZoneOf(at)
	if !ok {
		return // not a firing of the schedule: keeps the job's zone
	}
	r.TimeZone = zone
	if r.Status != store.RunSkipped {
		// Duration deadlines count from the run's start_after (a jitter
		// window), as jobrules.NewRun counted them in the job's first zone.
		r.Deadlines = jobrules.RunDeadlinesStartingAt(j.JobDeadlines, zone, at.UnixMilli(), max(r.StartAfter, at.UnixMilli()))
	}
}

// maxRunsJobs are the ids of the jobs with max_runs.
func maxRunsJobs(jobs []store.Job) []int64 {
	var ids []int64
	for _, j := range jobs {
		if j.MaxRuns > 0 {
			ids = append(ids, j.ID)
		}
	}
	return ids
}

// windowed applies job j's window (docs/schedules.md, "Windows and
// one-offs") to the runs planned for it and its next firing: runs outside
// start_at..end_at are dropped (they are not firings of the job), a
// pending run that the scheduled runs succeeded or still active (c) could
// push past max_runs is skipped with the reason, and no next firing after
// end_at. The message says why the job is completed (zero when it is
// not): max_runs reached (then nothing fires), past its end_at, or no
// firing left in its schedule.
func windowed(j store.Job, c store.RunCounts, runs []store.NewRun, next sql.NullInt64) ([]store.NewRun, sql.NullInt64, msg.Msg) {
	if why := jobrules.MaxRunsReached(j, c); !why.IsZero() {
		return nil, sql.NullInt64{}, why
	}
	kept := runs[:0]
	room := j.MaxRuns - c.Succeeded - c.Active
	for _, r := range runs {
		if !jobrules.InWindow(j.JobWindow, r.ScheduledAt) {
			continue
		}
		if j.MaxRuns > 0 && r.Status == store.RunPending {
			if room <= 0 {
				r.Status, r.Reason, r.Deadlines = store.RunSkipped, msg.New(msg.RunSkippedMaxRuns, "max", j.MaxRuns, "succeeded", c.Succeeded, "active", c.Active), store.RunDeadlines{}
			} else {
				room--
			}
		}
		kept = append(kept, r)
	}
	next, why := jobrules.BoundNext(j.JobWindow, j.CronExpr, next)
	return kept, next, why
}

// preRead returns the pre-read window: PreRead, widened up to MaxPreRead
// when a herd is coming that would take longer than PreRead to fire at the
// measured rate. It is recomputed at most once a second.
func (s *Scheduler) preRead(ctx context.Context, scope fireScope, now time.Time) time.Duration {
	if s.cfg.MaxPreRead <= s.cfg.PreRead || now.Sub(s.windowAt) < time.Second && now.After(s.windowAt) {
		return s.window
	}
	s.windowAt = now
	// need reaches MaxPreRead at this many jobs: counting further would
	// change nothing.
	enough := int(s.rate*s.cfg.MaxPreRead.Seconds()/1.5) + 1
	var n int
	var err error
	ctx, cancel := context.WithTimeout(ctx, s.cfg.HintTimeout)
	defer cancel()
	if scope.global() {
		n, err = s.store.CountDue(ctx, now.Add(s.cfg.MaxPreRead).UnixMilli(), enough)
	} else {
		n, err = s.store.CountDueIn(ctx, scope.parts, now.Add(s.cfg.MaxPreRead).UnixMilli(), enough)
	}
	if err != nil {
		return s.window
	}
	need := time.Duration(float64(n) / s.rate * 1.5 * float64(time.Second))
	w := min(max(need, s.cfg.PreRead), s.cfg.MaxPreRead)
	if w != s.window && (w > s.cfg.PreRead || s.window > s.cfg.PreRead) {
		s.log.Info("pre-read window adjusted for a herd of due jobs", "window", w.Round(time.Millisecond), "due_within_max", n, "rate_per_s", int(s.rate))
	}
	s.window = w
	return w
}

type cachedSchedule struct {
	version int64
	s       *schedule.MultiZone
}

func (s *Scheduler) scheduleOf(j store.Job) (*schedule.MultiZone, error) {
	c, ok := s.scheds.Get(j.ID)
	if ok && c.version == j.Version {
		return c.s, nil
	}
	sc, err := jobrules.ScheduleOf(j)
	if err != nil {
		return nil, err
	}
	s.scheds.Add(j.ID, cachedSchedule{version: j.Version, s: sc})
	return sc, nil
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
