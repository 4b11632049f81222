package ops

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/jobdef"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/schedule"
	"github.com/shardjob/shardjob/admin/store"
)

// jobObject is job id as the audit log names it.
func jobObject(id int64) string { return "job/" + strconv.FormatInt(id, 10) }

// StoredJob reads job id for a: ErrNotFound when it does not exist or is
// of an app a may not see (an object of another app does not exist for
// them).
func (s *Service) StoredJob(ctx context.Context, a Actor, id int64) (store.Job, error) {
	j, err := s.st.Job(ctx, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && !a.User.AppAllowed(j.App)) {
		return j, notFound("job", id)
	}
	return j, err
}

// OwnJob is StoredJob for a change of the job: the job of a workflow's
// inline node changes with its workflow only (ErrConflict naming id).
func (s *Service) OwnJob(ctx context.Context, a Actor, id int64) (store.Job, error) {
	j, err := s.StoredJob(ctx, a, id)
	if err == nil && j.WorkflowID.Valid {
		return j, refuseField(ErrConflict, "id", msg.New(msg.JobWorkflowOwned, "job", j.ID, "workflow", j.WorkflowID.Int64))
	}
	return j, err
}

// Job returns job id as the API shows it, with its warnings.
func (s *Service) Job(ctx context.Context, a Actor, id int64) (apitypes.Job, error) {
	j, err := s.StoredJob(ctx, a, id)
	if err != nil {
		return apitypes.Job{}, err
	}
	return s.withBreaker(ctx, s.WithWarnings(ctx, a, jobdef.View(j)))
}

// CreateJob validates spec and stores it as a new job of an app a may
// manage (ErrForbidden otherwise). It returns the job as stored, with its
// warnings; a taken name is an ErrConflict naming name.
func (s *Service) CreateJob(ctx context.Context, a Actor, spec apitypes.JobSpec) (apitypes.Job, error) {
	if err := mayManageJobsOf(a, spec.App); err != nil {
		return apitypes.Job{}, err
	}
	v, err := jobdef.Validate(spec, s.cfg.Clock.Now())
	if err != nil {
		return apitypes.Job{}, fieldErrors(err)
	}
	if err := s.checkJobQuotas(ctx, v.Job.App, v.Job.SlotCount, true); err != nil {
		return apitypes.Job{}, err
	}
	if v, _, err = s.withCalendar(ctx, v); err != nil {
		return apitypes.Job{}, err
	}
	if err := s.checkChildren(ctx, a, 0, spec.ChildJobIDs); err != nil {
		return apitypes.Job{}, err
	}
	if err := checkWaitApps(a, spec.App, spec.WaitFor); err != nil {
		return apitypes.Job{}, err
	}
	j, err := s.insertJob(ctx, v.Job)
	if err != nil {
		return apitypes.Job{}, err
	}
	s.audit(ctx, a, j.App, "job.create", jobObject(j.ID), jobdef.View(j))
	s.wake()
	return s.WithWarnings(ctx, a, jobdef.View(j)), nil
}

// UpdateJob replaces the definition of job id with spec, guarded by the
// version spec says it read (ErrConflict when the job changed since). The
// app and name stay; a job paused until resumed stays paused (pausedNext).
func (s *Service) UpdateJob(ctx context.Context, a Actor, id int64, spec apitypes.JobSpec) (apitypes.Job, error) {
	old, err := s.OwnJob(ctx, a, id)
	if err != nil {
		return apitypes.Job{}, err
	}
	if err := KeepIdentity("a job and cannot change; clone the job instead", &spec.App, &spec.Name, old.App, old.Name); err != nil {
		return apitypes.Job{}, err
	}
	if err := VersionGiven(spec.Version, old.Version); err != nil {
		return apitypes.Job{}, err
	}
	v, err := jobdef.ValidateUpdate(spec, s.cfg.Clock.Now(), time.UnixMilli(old.CreatedAt))
	if err != nil {
		return apitypes.Job{}, fieldErrors(err)
	}
	if err := s.checkJobQuotas(ctx, old.App, v.Job.SlotCount, false); err != nil {
		return apitypes.Job{}, err
	}
	if v, _, err = s.withCalendar(ctx, v); err != nil {
		return apitypes.Job{}, err
	}
	if err := checkWaitApps(a, old.App, spec.WaitFor); err != nil {
		return apitypes.Job{}, err
	}
	if err := s.checkChildren(ctx, a, old.ID, spec.ChildJobIDs); err != nil {
		return apitypes.Job{}, err
	}
	v.Job.ID = old.ID
	v.Job.Version = spec.Version
	v.Job.NextFireAt = pausedNext(old, v.Job.NextFireAt)
	err = s.st.UpdateJob(ctx, v.Job)
	if errors.Is(err, store.ErrConflict) {
		return apitypes.Job{}, refuse(ErrConflict, err.Error(), nil)
	}
	if err != nil {
		return apitypes.Job{}, err
	}
	j, err := s.st.Job(ctx, old.ID)
	if err != nil {
		return apitypes.Job{}, err
	}
	s.audit(ctx, a, j.App, "job.update", jobObject(j.ID), map[string]any{"before": jobdef.View(old), "after": jobdef.View(j)})
	s.wake()
	return s.WithWarnings(ctx, a, jobdef.View(j)), nil
}

// DeleteJob deletes job id; a job with running runs stays (ErrConflict
// naming id: cancel them or let them finish first).
func (s *Service) DeleteJob(ctx context.Context, a Actor, id int64) error {
	j, err := s.OwnJob(ctx, a, id)
	if err != nil {
		return err
	}
	var running *store.RunningRunsError
	if err := s.st.DeleteJob(ctx, j.ID); errors.As(err, &running) {
		return refuseField(ErrConflict, "id", msg.New(msg.JobDeleteRunning, "job", j.App+"/"+j.Name, "runs", running.Running))
	} else if err != nil {
		return err
	}
	s.audit(ctx, a, j.App, "job.delete", jobObject(j.ID), jobdef.View(j))
	return nil
}

// CloneJob copies the definition of job id under a new name (and
// optionally into another app a may manage). The copy starts disabled
// unless req says otherwise; child jobs are not copied (a child triggered
// by two parents is rarely what a copy means).
func (s *Service) CloneJob(ctx context.Context, a Actor, id int64, req apitypes.CloneRequest) (apitypes.Job, error) {
	j, err := s.OwnJob(ctx, a, id)
	if err != nil {
		return apitypes.Job{}, err
	}
	if req.App == "" {
		req.App = j.App
	}
	if !a.User.AppAllowed(req.App) {
		return apitypes.Job{}, refuse(ErrForbidden, "you may not manage jobs of app "+req.App,
			map[string]msg.Msg{"app": msg.New(msg.NotYourAppShort)})
	}
	enabled := false
	if req.Enabled != nil {
		enabled = *req.Enabled
	}
	spec := apitypes.JobSpec{JobDef: jobdef.View(j).JobDef}
	spec.App, spec.Name, spec.Enabled = req.App, req.Name, &enabled
	v, err := jobdef.Validate(spec, s.cfg.Clock.Now())
	if err != nil {
		return apitypes.Job{}, fieldErrors(err)
	}
	if err := checkWaitApps(a, spec.App, spec.WaitFor); err != nil {
		return apitypes.Job{}, err
	}
	if err := s.checkJobQuotas(ctx, v.Job.App, v.Job.SlotCount, true); err != nil {
		return apitypes.Job{}, err
	}
	// A calendar of the original's app is not one the copy may use in
	// another app: ErrInvalid naming calendar_id.
	if v, _, err = s.withCalendar(ctx, v); err != nil {
		return apitypes.Job{}, err
	}
	copied, err := s.insertJob(ctx, v.Job)
	if err != nil {
		return apitypes.Job{}, err
	}
	s.audit(ctx, a, copied.App, "job.clone", jobObject(copied.ID), map[string]any{"from": j.ID, "after": jobdef.View(copied)})
	s.wake()
	return s.WithWarnings(ctx, a, jobdef.View(copied)), nil
}

// ValidateJob checks spec as CreateJob would, without storing it or
// checking its child jobs: the valid job with its schedule, and for a job
// on a business calendar the schedule on it. A job of an app a may not
// manage is refused first (ErrForbidden), so that the answer tells nothing
// of that app's calendars and executors.
func (s *Service) ValidateJob(ctx context.Context, a Actor, spec apitypes.JobSpec) (jobdef.Validated, *schedule.CalendarSchedule, error) {
	if err := mayManageJobsOf(a, spec.App); err != nil { // the calendars and executors of others' apps are theirs
		return jobdef.Validated{}, nil, err
	}
	v, err := jobdef.Validate(spec, s.cfg.Clock.Now())
	if err != nil {
		return v, nil, fieldErrors(err)
	}
	return s.withCalendar(ctx, v)
}

// mayManageJobsOf refuses (ErrForbidden) a job of an app a may not
// manage; an empty app is left to validation (required).
func mayManageJobsOf(a Actor, app string) error {
	if app != "" && !a.User.AppAllowed(app) {
		return refuse(ErrForbidden, "you may not manage jobs of app "+app,
			map[string]msg.Msg{"app": msg.New(msg.NotYourApp, "apps", a.User.Apps)})
	}
	return nil
}

// insertJob stores a new, validated job and returns it as stored; a taken
// name is an ErrConflict naming name.
func (s *Service) insertJob(ctx context.Context, job store.Job) (store.Job, error) {
	id, err := s.st.CreateJob(ctx, job)
	if errors.Is(err, store.ErrConflict) {
		return store.Job{}, refuse(ErrConflict, err.Error(), map[string]msg.Msg{"name": msg.New(msg.JobNameTaken, "app", job.App)})
	}
	if err != nil {
		return store.Job{}, err
	}
	return s.st.Job(ctx, id)
}
