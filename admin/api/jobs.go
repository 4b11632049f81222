package api

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/jobdef"
	"github.com/shardjob/shardjob/admin/jobrules"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/ops"
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
	j, err := s.ops.CreateJob(c.Request.Context(), actor(c), spec)
	if err != nil {
		s.opsFailed(c, err)
		return
	}
	c.JSON(http.StatusCreated, j)
}

func (s *Server) updateJob(c *gin.Context) {
	// The job is read before the body, so that a job the user may not
	// change is answered (404, 409) before a body in error (400).
	old, ok := s.loadOwnJob(c)
	if !ok {
		return
	}
	var spec apitypes.JobSpec
	if !decodeJob(c, &spec) {
		return
	}
	j, err := s.ops.UpdateJob(c.Request.Context(), actor(c), old.ID, spec)
	if err != nil {
		s.opsFailed(c, err)
		return
	}
	c.JSON(http.StatusOK, j)
}

const previewLayout = "2006-01-02 15:04:05 MST"

func (s *Server) validateJob(c *gin.Context) {
	var spec apitypes.JobSpec
	if !decodeJob(c, &spec) {
		return
	}
	v, cs, err := s.ops.ValidateJob(c.Request.Context(), actor(c), spec)
	if err != nil {
		s.opsFailed(c, err)
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
		if !jobrules.InWindow(v.Job.JobWindow, p.At.UnixMilli()) {
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
	w := s.ops.WithWarnings(c.Request.Context(), actor(c), jobdef.View(v.Job))
	c.JSON(http.StatusOK, gin.H{"valid": true, "resolved": v.Schedule.Resolved(), "next": out, "warnings": w.Warnings, "warning_codes": w.WarningCodes})
}

// loadJob reads the job of the id parameter (admin/ops: StoredJob) for a
// handler that goes on with it; false when it has answered (400, 404, 500).
func (s *Server) loadJob(c *gin.Context) (store.Job, bool) {
	return s.readJob(c, s.ops.StoredJob)
}

// loadOwnJob is loadJob for a change of the job (admin/ops: OwnJob): the
// job of a workflow's inline node changes with its workflow only (409
// job.workflow_owned).
func (s *Server) loadOwnJob(c *gin.Context) (store.Job, bool) {
	return s.readJob(c, s.ops.OwnJob)
}

func (s *Server) readJob(c *gin.Context, read func(context.Context, ops.Actor, int64) (store.Job, error)) (store.Job, bool) {
	id, ok := idParam(c)
	if !ok {
		return store.Job{}, false
	}
	j, err := read(c.Request.Context(), actor(c), id)
	if err != nil {
		s.opsFailed(c, err)
		return j, false
	}
	return j, true
}

func (s *Server) getJob(c *gin.Context) {
	s.jobAction(c, http.StatusOK, s.ops.Job)
}

func (s *Server) deleteJob(c *gin.Context) {
	id, ok := idParam(c)
	if !ok {
		return
	}
	if err := s.ops.DeleteJob(c.Request.Context(), actor(c), id); err != nil {
		s.opsFailed(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"deleted": id})
}

// jobAction answers with status the job that op returns for the job of
// the id parameter.
func (s *Server) jobAction(c *gin.Context, status int, op func(context.Context, ops.Actor, int64) (apitypes.Job, error)) {
	id, ok := idParam(c)
	if !ok {
		return
	}
	j, err := op(c.Request.Context(), actor(c), id)
	if err != nil {
		s.opsFailed(c, err)
		return
	}
	c.JSON(status, j)
}

func (s *Server) enableJob(c *gin.Context)  { s.jobAction(c, http.StatusOK, s.ops.EnableJob) }
func (s *Server) disableJob(c *gin.Context) { s.jobAction(c, http.StatusOK, s.ops.DisableJob) }
func (s *Server) resumeJob(c *gin.Context)  { s.jobAction(c, http.StatusOK, s.ops.ResumeJob) }

// closeBreaker closes a job's circuit breaker by hand (docs/failures.md).
func (s *Server) closeBreaker(c *gin.Context) { s.jobAction(c, http.StatusOK, s.ops.CloseBreaker) }

// pauseJob pauses a job; with a body {"until": instant}, until then only
// (admin/ops: PauseJobUntil).
func (s *Server) pauseJob(c *gin.Context) {
	body, err := io.ReadAll(c.Request.Body)
	if err != nil || len(bytes.TrimSpace(body)) == 0 {
		s.jobAction(c, http.StatusOK, s.ops.PauseJob)
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
		s.jobAction(c, http.StatusOK, s.ops.PauseJob)
		return
	}
	// An instant in the past is answered before the id parameter, as it was.
	if err := s.ops.PauseUntilValid(*until); err != nil {
		s.opsFailed(c, err)
		return
	}
	s.jobAction(c, http.StatusOK, func(ctx context.Context, a ops.Actor, id int64) (apitypes.Job, error) {
		return s.ops.PauseJobUntil(ctx, a, id, *until)
	})
}

func (s *Server) triggerJob(c *gin.Context) {
	// The job is read before the body, as in updateJob.
	j, ok := s.loadOwnJob(c)
	if !ok {
		return
	}
	var req apitypes.TriggerRequest
	if c.Request.ContentLength != 0 && !decode(c, &req) {
		return
	}
	run, created, err := s.ops.TriggerJob(c.Request.Context(), actor(c), j.ID, req)
	if err != nil {
		s.opsFailed(c, err)
		return
	}
	code := http.StatusOK
	if created {
		code = http.StatusCreated
	}
	c.JSON(code, gin.H{"run": runView(run), "created": created})
}
