package ops

import (
	"context"
	"database/sql"
	"strconv"
	"time"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/jobdef"
	"github.com/shardjob/shardjob/admin/jobrules"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/sdk/protocol"
)

// EnableJob lets job id fire again (if not paused), from its first firing
// after now.
func (s *Service) EnableJob(ctx context.Context, a Actor, id int64) (apitypes.Job, error) {
	return s.switchJob(ctx, a, id, "job.enable", yes, isPaused, s.st.SetJobEnabled, true)
}

// DisableJob stops job id from firing.
func (s *Service) DisableJob(ctx context.Context, a Actor, id int64) (apitypes.Job, error) {
	return s.switchJob(ctx, a, id, "job.disable", no, isPaused, s.st.SetJobEnabled, false)
}

// PauseJob pauses job id until it is resumed.
func (s *Service) PauseJob(ctx context.Context, a Actor, id int64) (apitypes.Job, error) {
	return s.switchJob(ctx, a, id, "job.pause", isEnabled, yes, s.st.SetJobPaused, true)
}

// ResumeJob ends the pause of job id: it fires again (if enabled) from its
// first firing after now.
func (s *Service) ResumeJob(ctx context.Context, a Actor, id int64) (apitypes.Job, error) {
	return s.switchJob(ctx, a, id, "job.resume", isEnabled, no, s.st.SetJobPaused, false)
}

func isEnabled(j store.Job) bool { return j.Enabled }
func isPaused(j store.Job) bool  { return j.Paused }
func yes(store.Job) bool         { return true }
func no(store.Job) bool          { return false }

// switchJob flips the enabled or the paused flag of a job (save, to on).
// A job fires only when enabled and not paused; enabled and paused say
// what the job is after the switch. When it starts firing again, its next
// firing is the first one after now (what fell in between is intentional,
// not a misfire); a schedule that no longer gives one is an ErrConflict.
func (s *Service) switchJob(ctx context.Context, a Actor, id int64, action string, enabled, paused func(store.Job) bool,
	save func(ctx context.Context, id int64, on bool, next sql.NullInt64) error, on bool) (apitypes.Job, error) {
	j, err := s.OwnJob(ctx, a, id)
	if err != nil {
		return apitypes.Job{}, err
	}
	next, why := sql.NullInt64{}, msg.Msg{}
	if enabled(j) && !paused(j) {
		if next, why, err = s.nextInWindow(ctx, j, s.cfg.Clock.Now()); err != nil {
			return apitypes.Job{}, refuse(ErrConflict, "job schedule no longer valid: "+err.Error(), nil)
		}
	}
	if err := save(ctx, j.ID, on, next); err != nil {
		return apitypes.Job{}, err
	}
	if !why.IsZero() { // e.g. enabled again after its end_at: completed now
		if err := s.st.CompleteJob(ctx, j.ID, why); err != nil {
			return apitypes.Job{}, err
		}
	}
	before := j
	s.wake()
	j, _ = s.st.Job(ctx, j.ID)
	s.audit(ctx, a, before.App, action, jobObject(before.ID), map[string]any{
		"before": map[string]bool{"enabled": before.Enabled, "paused": before.Paused},
		"after":  map[string]bool{"enabled": j.Enabled, "paused": j.Paused}})
	return jobdef.View(j), nil
}

// PauseJobUntil pauses job id until an instant after now (ErrInvalid
// naming until otherwise): the leader resumes it by itself then, and the
// misfire policy decides the firings the pause missed (docs/schedules.md,
// "Pausing until an instant").
func (s *Service) PauseJobUntil(ctx context.Context, a Actor, id int64, until time.Time) (apitypes.Job, error) {
	now := s.cfg.Clock.Now()
	if err := pauseUntilValid(until, now); err != nil {
		return apitypes.Job{}, err
	}
	j, err := s.OwnJob(ctx, a, id)
	if err != nil {
		return apitypes.Job{}, err
	}
	// The next firing as if the job were not paused (after the current
	// one if a pause until is already running): what the leader decides
	// by the misfire policy when the pause ends.
	next := j.NextFireAt
	if !j.Paused || !next.Valid {
		if next, err = s.NextFire(ctx, j, now); err != nil {
			return apitypes.Job{}, refuse(ErrConflict, "job schedule no longer valid: "+err.Error(), nil)
		}
	}
	if !j.Enabled {
		next = sql.NullInt64{}
	}
	if err := s.st.PauseJobUntil(ctx, j.ID, until.UnixMilli(), next); err != nil {
		return apitypes.Job{}, err
	}
	s.wake()
	after, err := s.st.Job(ctx, j.ID)
	if err != nil {
		return apitypes.Job{}, err
	}
	s.audit(ctx, a, j.App, "job.pause", jobObject(j.ID), map[string]any{
		"before": map[string]bool{"enabled": j.Enabled, "paused": j.Paused},
		"after":  map[string]any{"enabled": after.Enabled, "paused": after.Paused, "until": until.UTC()}})
	return jobdef.View(after), nil
}

// PauseUntilValid refuses an end of a pause that is not after now
// (ErrInvalid naming until), as PauseJobUntil does before it reads the job.
func (s *Service) PauseUntilValid(until time.Time) error {
	return pauseUntilValid(until, s.cfg.Clock.Now())
}

func pauseUntilValid(until, now time.Time) error {
	if until.After(now) {
		return nil
	}
	return fieldErrors(jobdef.FieldMsgs{"until": msg.New(msg.JobPauseUntilPast,
		"until", until.UTC().Format(time.RFC3339), "now", now.UTC().Format(time.RFC3339))})
}

// runPriority is the priority a trigger or backfill asks for its runs of
// job j (name "": the job's): NULL when it is the job's, the lower level
// otherwise; a name that does not parse, or a priority above the job's, is
// the refusal's message.
func runPriority(j store.Job, name string) (sql.NullInt64, msg.Msg) {
	if name == "" {
		return sql.NullInt64{}, msg.Msg{}
	}
	p, err := protocol.ParsePriority(name)
	if err != nil {
		return sql.NullInt64{}, msg.New(msg.JobPriorityUnknown, "value", strconv.Quote(name))
	}
	own := protocol.Priority(j.Priority)
	switch {
	case p > own:
		return sql.NullInt64{}, msg.New(msg.RunPriorityAboveJob, "priority", own.String())
	case p == own:
		return sql.NullInt64{}, msg.Msg{}
	}
	return sql.NullInt64{Int64: int64(p), Valid: true}, msg.Msg{}
}

// TriggerJob creates a run of job id now (trigger manual), or of the
// firing at req.ScheduledAt (trigger api: the run key makes a repeat of
// the same request idempotent), with req.Params instead of the job's when
// given. created is false when that firing's run existed already (it is
// returned).
func (s *Service) TriggerJob(ctx context.Context, a Actor, id int64, req apitypes.TriggerRequest) (run store.Run, created bool, err error) {
	j, err := s.OwnJob(ctx, a, id)
	if err != nil {
		return store.Run{}, false, err
	}
	reach, err := s.jobActing(ctx, a, j)
	if err != nil {
		return store.Run{}, false, err
	}
	params := j.Params
	if req.Params != nil {
		if len(*req.Params) > jobdef.MaxParamsBytes {
			return store.Run{}, false, refuse(ErrInvalid, "params too large",
				map[string]msg.Msg{"params": msg.New(msg.ValueMaxBytes, "max", jobdef.MaxParamsBytes)})
		}
		params = *req.Params
	}
	prio, m := runPriority(j, req.Priority)
	if !m.IsZero() {
		return store.Run{}, false, refuseField(ErrInvalid, "priority", m)
	}
	at := s.cfg.Clock.Now()
	kind := store.TriggerManual
	if req.ScheduledAt != nil {
		at = *req.ScheduledAt
		kind = store.TriggerAPI
	}
	rec, err := s.st.Leader(ctx)
	if err != nil {
		return store.Run{}, false, err
	}
	nr := jobrules.NewRun(j, at.UnixMilli(), kind, store.RunPending)
	nr.Params = params
	nr.Priority = prio
	run, created, err = s.st.InsertRun(ctx, rec.Epoch, nr)
	if err != nil {
		return store.Run{}, false, err
	}
	if created {
		detail := map[string]any{"run_id": run.ID, "scheduled_at": time.UnixMilli(run.ScheduledAt).UTC()}
		s.audit(ctx, a, j.App, "job.trigger", jobObject(j.ID), detail)
		s.auditReach(ctx, a, reach, "job.trigger", jobObject(j.ID), detail)
		s.wake()
	}
	return run, created, nil
}
