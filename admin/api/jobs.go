package api

import (
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/jobdef"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/schedule"
	"github.com/shardjob/shardjob/admin/store"
)

func msTime(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

func idParam(c *gin.Context) (int64, bool) {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil || id <= 0 {
		fail(c, http.StatusBadRequest, "id must be a positive integer, got "+strconv.Quote(c.Param("id")))
		return 0, false
	}
	return id, true
}

func (s *Server) validationFailed(c *gin.Context, err error) bool {
	var fe jobdef.FieldMsgs
	if errors.As(err, &fe) {
		c.AbortWithStatusJSON(http.StatusBadRequest, errorBody{Error: fe.Error(), Fields: fe})
		return true
	}
	return false
}

// decodeJob is decode for a job spec, except that an instant of the spec
// (start_at, end_at) that is not RFC 3339 is a field error naming it
// rather than a bare "invalid JSON body".
func decodeJob(c *gin.Context, spec *apitypes.JobSpec) bool {
	body, readErr := io.ReadAll(c.Request.Body)
	if readErr == nil {
		var instants struct {
			StartAt json.RawMessage `json:"start_at"`
			EndAt   json.RawMessage `json:"end_at"`
		}
		if json.Unmarshal(body, &instants) == nil {
			fields := map[string]msg.Msg{}
			for name, raw := range map[string]json.RawMessage{"start_at": instants.StartAt, "end_at": instants.EndAt} {
				var t *time.Time
				if len(raw) > 0 && json.Unmarshal(raw, &t) != nil {
					fields[name] = msg.New(msg.JobInstantBad, "value", string(raw))
				}
			}
			if len(fields) > 0 {
				c.AbortWithStatusJSON(http.StatusBadRequest, errorBody{Error: jobdef.FieldMsgs(fields).Error(), Fields: fields})
				return false
			}
		}
	}
	// decode answers what went wrong reading the body, if anything did.
	c.Request.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), errReader{readErr}))
	return decode(c, spec)
}

// errReader returns err, or io.EOF when err is nil.
type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	return 0, io.EOF
}

func (s *Server) createJob(c *gin.Context) {
	var spec apitypes.JobSpec
	if !decodeJob(c, &spec) {
		return
	}
	if spec.App != "" && !currentUser(c).AppAllowed(spec.App) {
		c.AbortWithStatusJSON(http.StatusForbidden, errorBody{Error: "you may not manage jobs of app " + spec.App,
			Fields: map[string]msg.Msg{"app": msg.New(msg.NotYourApp, "apps", currentUser(c).Apps)}})
		return
	}
	v, err := jobdef.Validate(spec, s.cfg.Clock.Now())
	if err != nil {
		if !s.validationFailed(c, err) {
			s.internal(c, err)
		}
		return
	}
	v, _, _, ok := s.withCalendar(c, v)
	if !ok || !s.checkChildren(c, 0, spec.ChildJobIDs) {
		return
	}
	j, ok := s.insertJob(c, v.Job)
	if !ok {
		return
	}
	s.audit(c, j.App, "job.create", "job/"+strconv.FormatInt(j.ID, 10), jobdef.View(j))
	s.wake()
	c.JSON(http.StatusCreated, s.withWarnings(c, jobdef.View(j)))
}

// withWarnings adds to v what a person saving the job should know but that
// does not make it invalid (handlerWarnings).
func (s *Server) withWarnings(c *gin.Context, v apitypes.Job) apitypes.Job {
	for _, w := range append(s.handlerWarnings(c, v.App, v.Handler), s.waitWarnings(c, v.App, v.WaitFor)...) {
		v.Warnings = append(v.Warnings, w.String())
		v.WarningCodes = append(v.WarningCodes, apitypes.Message{Code: string(w.Code), Args: w.Args})
	}
	return v
}

// waitWarnings names the runs a job waits for (wait_for) whose job or
// workflow does not exist, or is in an app the user may not manage (the
// same words for both): the job's runs would wait for them until their
// wait timeout. A warning, not a refusal, unlike a workflow node's waits: a
// jobs file may create the awaited job after the one that waits for it.
func (s *Server) waitWarnings(c *gin.Context, app string, waitFor []apitypes.WorkflowWait) []msg.Msg {
	if len(waitFor) == 0 {
		return nil
	}
	ctx := c.Request.Context()
	u := currentUser(c)
	var byName []store.JobKey
	for _, w := range waitFor {
		if w.Job != nil {
			byName = append(byName, store.JobKey{App: cmp.Or(w.Job.App, app), Name: w.Job.Name})
		}
	}
	jobs := map[[2]string]bool{}
	if len(byName) > 0 {
		found, err := s.st.JobKeys(ctx, nil, byName)
		if err != nil {
			s.log.Warn("cannot read the awaited jobs for the job's warnings", "err", err)
			return nil
		}
		for _, k := range found {
			jobs[[2]string{k.App, k.Name}] = u.AppAllowed(k.App)
		}
	}
	var out []msg.Msg
	for _, w := range waitFor {
		switch {
		case w.Job != nil:
			a := cmp.Or(w.Job.App, app)
			if !jobs[[2]string{a, w.Job.Name}] {
				out = append(out, msg.New(msg.JobWaitTargetMissing, "target", a+"/"+w.Job.Name))
			}
		case w.Workflow != nil:
			a := cmp.Or(w.Workflow.App, app)
			_, err := s.st.WorkflowByName(ctx, a, w.Workflow.Name)
			switch {
			case errors.Is(err, store.ErrNotFound) || (err == nil && !u.AppAllowed(a)):
				out = append(out, msg.New(msg.JobWaitTargetMissing, "target", "workflow "+a+"/"+w.Workflow.Name))
			case err != nil:
				s.log.Warn("cannot read an awaited workflow for the job's warnings", "err", err)
			}
		}
	}
	return out
}

// handlerWarnings says when no executor of app has shown handler yet: the
// job's runs will wait, then fail after the leader's unplaceable timeout,
// unless one comes. Answered on save and on validation (the console's form
// shows it while the user types).
func (s *Server) handlerWarnings(c *gin.Context, app, handler string) []msg.Msg {
	execs, err := s.st.Executors(c.Request.Context())
	if err != nil {
		s.log.Warn("cannot read executors for the job's warnings", "err", err)
		return nil
	}
	seen, registered := false, false
	for _, e := range execs {
		if e.App != app || e.State == store.ExecutorGone {
			continue
		}
		registered = true
		if e.Handlers == "" || slices.Contains(strings.Split(e.Handlers, ","), handler) {
			seen = true
			break
		}
	}
	switch {
	case !registered:
		return []msg.Msg{msg.New(msg.JobNoExecutor, "app", app, "handler", handler)}
	case !seen:
		return []msg.Msg{msg.New(msg.JobHandlerNotSeen, "app", app, "handler", handler)}
	}
	return nil
}

// insertJob stores a new, validated job and returns it as stored; on
// failure it has answered the request (409 for a taken name).
func (s *Server) insertJob(c *gin.Context, job store.Job) (store.Job, bool) {
	id, err := s.st.CreateJob(c.Request.Context(), job)
	if errors.Is(err, store.ErrConflict) {
		c.AbortWithStatusJSON(http.StatusConflict, errorBody{Error: err.Error(), Fields: map[string]msg.Msg{"name": msg.New(msg.JobNameTaken, "app", job.App)}})
		return store.Job{}, false
	}
	if err != nil {
		s.internal(c, err)
		return store.Job{}, false
	}
	j, err := s.st.Job(c.Request.Context(), id)
	if err != nil {
		s.internal(c, err)
		return store.Job{}, false
	}
	return j, true
}

// checkChildren verifies that child jobs exist and that giving job id (0 for
// a new job) these children creates no cycle.
func (s *Server) checkChildren(c *gin.Context, id int64, children []int64) bool {
	if len(children) == 0 {
		return true
	}
	for _, child := range children {
		if j, err := s.st.Job(c.Request.Context(), child); errors.Is(err, store.ErrNotFound) || (err == nil && !currentUser(c).AppAllowed(j.App)) {
			c.AbortWithStatusJSON(http.StatusBadRequest, errorBody{Error: "child job does not exist", Fields: map[string]msg.Msg{"child_job_ids": msg.New(msg.JobChildMissing, "id", child)}})
			return false
		} else if err != nil {
			s.internal(c, err)
			return false
		}
	}
	if id == 0 {
		return true // a new job has no parents yet: no cycle possible
	}
	graph, err := s.st.ChildGraphFrom(c.Request.Context(), children)
	if err != nil {
		s.internal(c, err)
		return false
	}
	if cycle := jobdef.FindCycle(graph, id, children); cycle != nil {
		parts := make([]string, len(cycle))
		for i, n := range cycle {
			parts[i] = strconv.FormatInt(n, 10)
		}
		c.AbortWithStatusJSON(http.StatusBadRequest, errorBody{Error: "child jobs would form a cycle",
			Fields: map[string]msg.Msg{"child_job_ids": msg.New(msg.JobChildCycle, "path", strings.Join(parts, " → "))}})
		return false
	}
	return true
}

func (s *Server) updateJob(c *gin.Context) {
	old, ok := s.loadOwnJob(c)
	if !ok {
		return
	}
	var spec apitypes.JobSpec
	if !decodeJob(c, &spec) {
		return
	}
	if !identityKept(c, "a job and cannot change; clone the job instead", &spec.App, &spec.Name, old.App, old.Name) ||
		!versionGiven(c, spec.Version, old.Version) {
		return
	}
	v, err := jobdef.ValidateUpdate(spec, s.cfg.Clock.Now(), time.UnixMilli(old.CreatedAt))
	if err != nil {
		if !s.validationFailed(c, err) {
			s.internal(c, err)
		}
		return
	}
	v, _, _, ok = s.withCalendar(c, v)
	if !ok || !s.checkChildren(c, old.ID, spec.ChildJobIDs) {
		return
	}
	v.Job.ID = old.ID
	v.Job.Version = spec.Version
	if old.Paused && !old.PauseUntil.Valid {
		v.Job.NextFireAt.Valid = false // stays paused; resume computes the next firing
	}
	// Paused until an instant: the new definition's next firing after now
	// waits for the pause to end (the leader resumes it).
	err = s.st.UpdateJob(c.Request.Context(), v.Job)
	if errors.Is(err, store.ErrConflict) {
		fail(c, http.StatusConflict, err.Error())
		return
	}
	if err != nil {
		s.internal(c, err)
		return
	}
	j, err := s.st.Job(c.Request.Context(), old.ID)
	if err != nil {
		s.internal(c, err)
		return
	}
	s.audit(c, j.App, "job.update", "job/"+strconv.FormatInt(j.ID, 10), map[string]any{"before": jobdef.View(old), "after": jobdef.View(j)})
	s.wake()
	c.JSON(http.StatusOK, s.withWarnings(c, jobdef.View(j)))
}

const previewLayout = "2006-01-02 15:04:05 MST"

func (s *Server) validateJob(c *gin.Context) {
	var spec apitypes.JobSpec
	if !decodeJob(c, &spec) {
		return
	}
	v, err := jobdef.Validate(spec, s.cfg.Clock.Now())
	if err != nil {
		if !s.validationFailed(c, err) {
			s.internal(c, err)
		}
		return
	}
	v, cs, _, ok := s.withCalendar(c, v)
	if !ok {
		return
	}
	var out []apitypes.Preview
	from := jobdef.FiringsFrom(v.Job.JobWindow, s.cfg.Clock.Now()) // no firing before start_at
	if cs != nil {
		out = calendarPreview(cs, from, 10)
	}
	for _, f := range v.Zones.Preview(from, 10) {
		if cs != nil {
			break
		}
		p := apitypes.Preview{At: f.At.UTC(), Local: f.Local.Format(previewLayout), Note: f.Note, Zone: f.Zone, AlsoZones: f.AlsoZones}
		for _, n := range f.Notes {
			p.NoteCodes = append(p.NoteCodes, apitypes.Message{Code: string(n.Code), Args: n.Args})
		}
		out = append(out, p)
	}
	for i, p := range out { // nor after end_at
		if !jobdef.InWindow(v.Job.JobWindow, p.At.UnixMilli()) {
			out = out[:i]
			break
		}
	}
	if w, _ := schedule.ParseJitterWindow(v.Job.JitterWindow); w > 0 { // validated
		for i, p := range out {
			if !p.Skipped {
				at := p.At.Add(schedule.JitterOffset(v.Job.App+"/"+v.Job.Name, p.At, w))
				out[i].StartAfter = &at
			}
		}
	}
	w := s.withWarnings(c, jobdef.View(v.Job))
	c.JSON(http.StatusOK, gin.H{"valid": true, "resolved": v.Schedule.Resolved(), "next": out, "warnings": w.Warnings, "warning_codes": w.WarningCodes})
}

func (s *Server) loadJob(c *gin.Context) (store.Job, bool) {
	id, ok := idParam(c)
	if !ok {
		return store.Job{}, false
	}
	j, err := s.st.Job(c.Request.Context(), id)
	return j, s.visible(c, "job", err, err == nil && currentUser(c).AppAllowed(j.App))
}

// loadOwnJob is loadJob for a change of the job: the job of a workflow's
// inline node changes with its workflow only (409 job.workflow_owned).
func (s *Server) loadOwnJob(c *gin.Context) (store.Job, bool) {
	j, ok := s.loadJob(c)
	if ok && j.WorkflowID.Valid {
		c.AbortWithStatusJSON(http.StatusConflict, errorBody{Error: msg.New(msg.JobWorkflowOwned, "job", j.ID, "workflow", j.WorkflowID.Int64).String(),
			Fields: map[string]msg.Msg{"id": msg.New(msg.JobWorkflowOwned, "job", j.ID, "workflow", j.WorkflowID.Int64)}})
		return j, false
	}
	return j, ok
}

// visible answers the read of one object by the id parameter when the
// caller cannot go on: 404 when it does not exist or the user may not see
// it (an object of another app does not exist for them), 500 on another
// error. seen says whether the user may see the object read.
func (s *Server) visible(c *gin.Context, what string, err error, seen bool) bool {
	if errors.Is(err, store.ErrNotFound) || (err == nil && !seen) {
		fail(c, http.StatusNotFound, what+" "+c.Param("id")+" does not exist")
		return false
	}
	if err != nil {
		s.internal(c, err)
		return false
	}
	return true
}

func (s *Server) getJob(c *gin.Context) {
	if j, ok := s.loadJob(c); ok {
		c.JSON(http.StatusOK, s.withWarnings(c, jobdef.View(j)))
	}
}

func (s *Server) deleteJob(c *gin.Context) {
	j, ok := s.loadOwnJob(c)
	if !ok {
		return
	}
	var running *store.RunningRunsError
	if err := s.st.DeleteJob(c.Request.Context(), j.ID); errors.As(err, &running) {
		m := msg.New(msg.JobDeleteRunning, "job", j.App+"/"+j.Name, "runs", running.Running)
		c.AbortWithStatusJSON(http.StatusConflict, errorBody{Error: m.String(), Fields: map[string]msg.Msg{"id": m}})
		return
	} else if err != nil {
		s.internal(c, err)
		return
	}
	s.audit(c, j.App, "job.delete", "job/"+strconv.FormatInt(j.ID, 10), jobdef.View(j))
	c.JSON(http.StatusOK, gin.H{"deleted": j.ID})
}

// switchJob flips the enabled or the paused flag of a job. A job fires only
// when enabled and not paused; when it starts firing again, its next firing
// is the first one after now (what fell in between is intentional, not a
// misfire).
func (s *Server) switchJob(c *gin.Context, action string, enabled, paused func(store.Job) bool,
	save func(ctx context.Context, id int64, on bool, next sql.NullInt64) error, on bool) {
	j, ok := s.loadOwnJob(c)
	if !ok {
		return
	}
	next, why := sql.NullInt64{}, msg.Msg{}
	if enabled(j) && !paused(j) {
		var err error
		if next, why, err = s.nextInWindow(c.Request.Context(), j, s.cfg.Clock.Now()); err != nil {
			fail(c, http.StatusConflict, "job schedule no longer valid: "+err.Error())
			return
		}
	}
	if err := save(c.Request.Context(), j.ID, on, next); err != nil {
		s.internal(c, err)
		return
	}
	if !why.IsZero() { // e.g. enabled again after its end_at: completed now
		if err := s.st.CompleteJob(c.Request.Context(), j.ID, why); err != nil {
			s.internal(c, err)
			return
		}
	}
	before := j
	s.wake()
	j, _ = s.st.Job(c.Request.Context(), j.ID)
	s.audit(c, before.App, action, "job/"+strconv.FormatInt(before.ID, 10), map[string]any{
		"before": map[string]bool{"enabled": before.Enabled, "paused": before.Paused},
		"after":  map[string]bool{"enabled": j.Enabled, "paused": j.Paused}})
	c.JSON(http.StatusOK, jobdef.View(j))
}

func isEnabled(j store.Job) bool { return j.Enabled }
func isPaused(j store.Job) bool  { return j.Paused }
func yes(store.Job) bool         { return true }
func no(store.Job) bool          { return false }

func (s *Server) enableJob(c *gin.Context) {
	s.switchJob(c, "job.enable", yes, isPaused, s.st.SetJobEnabled, true)
}

func (s *Server) disableJob(c *gin.Context) {
	s.switchJob(c, "job.disable", no, isPaused, s.st.SetJobEnabled, false)
}

// pauseJob pauses a job; with a body {"until": instant}, until then only:
// the leader resumes it by itself at that instant and the misfire policy
// decides the firings the pause missed (docs/schedules.md, "Pausing until
// an instant").
func (s *Server) pauseJob(c *gin.Context) {
	body, err := io.ReadAll(c.Request.Body)
	if err != nil || len(bytes.TrimSpace(body)) == 0 {
		s.switchJob(c, "job.pause", isEnabled, yes, s.st.SetJobPaused, true)
		return
	}
	var req struct {
		Until json.RawMessage `json:"until"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		fail(c, http.StatusBadRequest, `invalid JSON body: send nothing (pause until resumed) or {"until": "2026-12-24T18:00:00+08:00"}: `+strings.TrimPrefix(err.Error(), "json: "))
		return
	}
	var until *time.Time
	if len(req.Until) > 0 && json.Unmarshal(req.Until, &until) != nil {
		fields := map[string]msg.Msg{"until": msg.New(msg.JobInstantBad, "value", string(req.Until))}
		c.AbortWithStatusJSON(http.StatusBadRequest, errorBody{Error: jobdef.FieldMsgs(fields).Error(), Fields: fields})
		return
	}
	if until == nil {
		s.switchJob(c, "job.pause", isEnabled, yes, s.st.SetJobPaused, true)
		return
	}
	now := s.cfg.Clock.Now()
	if !until.After(now) {
		fields := map[string]msg.Msg{"until": msg.New(msg.JobPauseUntilPast, "until", until.UTC().Format(time.RFC3339), "now", now.UTC().Format(time.RFC3339))}
		c.AbortWithStatusJSON(http.StatusBadRequest, errorBody{Error: jobdef.FieldMsgs(fields).Error(), Fields: fields})
		return
	}
	j, ok := s.loadOwnJob(c)
	if !ok {
		return
	}
	// The next firing as if the job were not paused (after the current
	// one if a pause until is already running): what the leader decides
	// by the misfire policy when the pause ends.
	next := j.NextFireAt
	if !j.Paused || !next.Valid {
		if next, err = s.nextFireOf(c.Request.Context(), j, now); err != nil {
			fail(c, http.StatusConflict, "job schedule no longer valid: "+err.Error())
			return
		}
	}
	if !j.Enabled {
		next = sql.NullInt64{}
	}
	if err := s.st.PauseJobUntil(c.Request.Context(), j.ID, until.UnixMilli(), next); err != nil {
		s.internal(c, err)
		return
	}
	s.wake()
	after, err := s.st.Job(c.Request.Context(), j.ID)
	if err != nil {
		s.internal(c, err)
		return
	}
	s.audit(c, j.App, "job.pause", "job/"+strconv.FormatInt(j.ID, 10), map[string]any{
		"before": map[string]bool{"enabled": j.Enabled, "paused": j.Paused},
		"after":  map[string]any{"enabled": after.Enabled, "paused": after.Paused, "until": until.UTC()}})
	c.JSON(http.StatusOK, jobdef.View(after))
}

func (s *Server) resumeJob(c *gin.Context) {
	s.switchJob(c, "job.resume", isEnabled, no, s.st.SetJobPaused, false)
}

func (s *Server) triggerJob(c *gin.Context) {
	j, ok := s.loadOwnJob(c)
	if !ok {
		return
	}
	var req apitypes.TriggerRequest
	if c.Request.ContentLength != 0 && !decode(c, &req) {
		return
	}
	params := j.Params
	if req.Params != nil {
		if len(*req.Params) > jobdef.MaxParamsBytes {
			c.AbortWithStatusJSON(http.StatusBadRequest, errorBody{Error: "params too large", Fields: map[string]msg.Msg{"params": msg.New(msg.ValueMaxBytes, "max", jobdef.MaxParamsBytes)}})
			return
		}
		params = *req.Params
	}
	at := s.cfg.Clock.Now()
	kind := store.TriggerManual
	if req.ScheduledAt != nil {
		at = *req.ScheduledAt
		kind = store.TriggerAPI
	}
	rec, err := s.st.Leader(c.Request.Context())
	if err != nil {
		s.internal(c, err)
		return
	}
	nr := store.NewRunOf(j, at.UnixMilli(), kind, store.RunPending)
	nr.Params = params
	run, created, err := s.st.InsertRun(c.Request.Context(), rec.Epoch, nr)
	if err != nil {
		s.internal(c, err)
		return
	}
	code := http.StatusOK
	if created {
		code = http.StatusCreated
		s.audit(c, j.App, "job.trigger", "job/"+strconv.FormatInt(j.ID, 10), map[string]any{"run_id": run.ID, "scheduled_at": msTime(run.ScheduledAt)})
		s.wake()
	}
	c.JSON(code, gin.H{"run": runView(run), "created": created})
}

func (s *Server) wake() {
	if s.cfg.Scheduler != nil {
		s.cfg.Scheduler.Wake()
	}
}

// identityKept fills the app and name of an update from the object read
// (old) when the request omits them, and answers 400 when they differ:
// they identify it (what says what it is, and what to do instead).
func identityKept(c *gin.Context, what string, app, name *string, oldApp, oldName string) bool {
	if *app == "" {
		*app = oldApp
	}
	if *name == "" {
		*name = oldName
	}
	if *app == oldApp && *name == oldName {
		return true
	}
	c.AbortWithStatusJSON(http.StatusBadRequest, errorBody{Error: "app and name identify " + what,
		Fields: map[string]msg.Msg{"name": msg.New(msg.MustStay, "value", oldName), "app": msg.New(msg.MustStay, "value", oldApp)}})
	return false
}

// versionGiven answers 400 when an update does not say which version it
// read (the optimistic lock), naming the current one.
func versionGiven(c *gin.Context, version, current int64) bool {
	if version > 0 {
		return true
	}
	c.AbortWithStatusJSON(http.StatusBadRequest, errorBody{Error: "version is required",
		Fields: map[string]msg.Msg{"version": msg.New(msg.JobVersionRequired, "version", current)}})
	return false
}
