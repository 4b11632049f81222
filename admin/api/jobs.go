package api

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/shardjob/shardjob/admin/jobdef"
	"github.com/shardjob/shardjob/admin/store"
)

func itoa(n int) string { return strconv.Itoa(n) }

// JobView is a job as the API returns it.
type JobView struct {
	ID                 int64      `json:"id"`
	App                string     `json:"app"`
	Name               string     `json:"name"`
	Description        string     `json:"description"`
	Handler            string     `json:"handler"`
	Cron               string     `json:"cron"`
	TimeZone           string     `json:"time_zone"`
	Slots              int        `json:"slots"`
	SlotParams         string     `json:"slot_params"`
	Params             string     `json:"params"`
	MisfirePolicy      string     `json:"misfire_policy"`
	MisfireThresholdMS int64      `json:"misfire_threshold_ms"`
	MaxCatchUp         int        `json:"max_catch_up"`
	OverlapPolicy      string     `json:"overlap_policy"`
	TimeoutMS          int64      `json:"timeout_ms"`
	RetryMax           int        `json:"retry_max"`
	RetryBackoffMS     int64      `json:"retry_backoff_ms"`
	Enabled            bool       `json:"enabled"`
	NextFireAt         *time.Time `json:"next_fire_at"`
	CreatedAt          time.Time  `json:"created_at"`
	UpdatedAt          time.Time  `json:"updated_at"`
	Version            int64      `json:"version"`
}

func msTime(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

func jobView(j store.Job) JobView {
	v := JobView{
		ID: j.ID, App: j.App, Name: j.Name, Description: j.Description, Handler: j.Handler, Cron: j.CronExpr,
		TimeZone: j.TimeZone, Slots: j.SlotCount, SlotParams: j.SlotParams, Params: j.Params,
		MisfirePolicy: j.MisfirePolicy, MisfireThresholdMS: j.MisfireMS, MaxCatchUp: j.MaxCatchUp,
		OverlapPolicy: j.OverlapPolicy, TimeoutMS: j.TimeoutMS, RetryMax: j.RetryMax, RetryBackoffMS: j.RetryBackoffMS,
		Enabled: j.Enabled, CreatedAt: msTime(j.CreatedAt), UpdatedAt: msTime(j.UpdatedAt), Version: j.Version,
	}
	if j.NextFireAt.Valid {
		t := msTime(j.NextFireAt.Int64)
		v.NextFireAt = &t
	}
	return v
}

func idParam(c *gin.Context) (int64, bool) {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil || id <= 0 {
		fail(c, http.StatusBadRequest, "id must be a positive integer, got "+strconv.Quote(c.Param("id")))
		return 0, false
	}
	return id, true
}

func (s *Server) validationFailed(c *gin.Context, err error) bool {
	var fe jobdef.FieldErrors
	if errors.As(err, &fe) {
		c.AbortWithStatusJSON(http.StatusBadRequest, errorBody{Error: fe.Error(), Fields: fe})
		return true
	}
	return false
}

func (s *Server) createJob(c *gin.Context) {
	var spec jobdef.Spec
	if !decode(c, &spec) {
		return
	}
	v, err := jobdef.Validate(spec, s.cfg.Now())
	if err != nil {
		if !s.validationFailed(c, err) {
			s.internal(c, err)
		}
		return
	}
	id, err := s.st.CreateJob(c.Request.Context(), v.Job)
	if errors.Is(err, store.ErrConflict) {
		c.AbortWithStatusJSON(http.StatusConflict, errorBody{Error: err.Error(), Fields: map[string]string{"name": "a job with this name exists in app " + spec.App + "; choose another name"}})
		return
	}
	if err != nil {
		s.internal(c, err)
		return
	}
	j, err := s.st.Job(c.Request.Context(), id)
	if err != nil {
		s.internal(c, err)
		return
	}
	s.audit(c, "job.create", "job/"+strconv.FormatInt(id, 10), jobView(j))
	s.wake()
	c.JSON(http.StatusCreated, jobView(j))
}

// Preview is one upcoming firing.
type Preview struct {
	At    time.Time `json:"at"`
	Local string    `json:"local"`
	Note  string    `json:"note,omitempty"`
}

func (s *Server) validateJob(c *gin.Context) {
	var spec jobdef.Spec
	if !decode(c, &spec) {
		return
	}
	v, err := jobdef.Validate(spec, s.cfg.Now())
	if err != nil {
		if !s.validationFailed(c, err) {
			s.internal(c, err)
		}
		return
	}
	var out []Preview
	for _, f := range v.Schedule.Preview(s.cfg.Now(), 10) {
		out = append(out, Preview{At: f.At.UTC(), Local: f.Local.Format("2006-01-02 15:04:05 MST"), Note: f.Note})
	}
	c.JSON(http.StatusOK, gin.H{"valid": true, "resolved": v.Schedule.Resolved(), "next": out})
}

func (s *Server) listJobs(c *gin.Context) {
	after, _ := strconv.ParseInt(c.Query("after"), 10, 64)
	limit, _ := strconv.Atoi(c.Query("limit"))
	if limit <= 0 || limit > 500 {
		limit = 100
	}
	jobs, err := s.st.ListJobs(c.Request.Context(), after, limit)
	if err != nil {
		s.internal(c, err)
		return
	}
	out := make([]JobView, 0, len(jobs))
	for _, j := range jobs {
		out = append(out, jobView(j))
	}
	c.JSON(http.StatusOK, gin.H{"jobs": out})
}

func (s *Server) loadJob(c *gin.Context) (store.Job, bool) {
	id, ok := idParam(c)
	if !ok {
		return store.Job{}, false
	}
	j, err := s.st.Job(c.Request.Context(), id)
	if errors.Is(err, store.ErrNotFound) {
		fail(c, http.StatusNotFound, "job "+c.Param("id")+" does not exist")
		return j, false
	}
	if err != nil {
		s.internal(c, err)
		return j, false
	}
	return j, true
}

func (s *Server) getJob(c *gin.Context) {
	if j, ok := s.loadJob(c); ok {
		c.JSON(http.StatusOK, jobView(j))
	}
}

func (s *Server) deleteJob(c *gin.Context) {
	j, ok := s.loadJob(c)
	if !ok {
		return
	}
	if err := s.st.DeleteJob(c.Request.Context(), j.ID); err != nil {
		s.internal(c, err)
		return
	}
	s.audit(c, "job.delete", "job/"+strconv.FormatInt(j.ID, 10), jobView(j))
	c.JSON(http.StatusOK, gin.H{"deleted": j.ID})
}

func (s *Server) setEnabled(c *gin.Context, enabled bool) {
	j, ok := s.loadJob(c)
	if !ok {
		return
	}
	next := j.NextFireAt
	if enabled {
		sc, err := jobdef.ScheduleOf(j)
		if err != nil {
			fail(c, http.StatusConflict, "job schedule no longer valid: "+err.Error())
			return
		}
		next = jobdef.NextFire(sc, s.cfg.Now())
	} else {
		next.Valid = false
	}
	if err := s.st.SetJobEnabled(c.Request.Context(), j.ID, enabled, next); err != nil {
		s.internal(c, err)
		return
	}
	action := "job.disable"
	if enabled {
		action = "job.enable"
	}
	s.audit(c, action, "job/"+strconv.FormatInt(j.ID, 10), nil)
	s.wake()
	j, _ = s.st.Job(c.Request.Context(), j.ID)
	c.JSON(http.StatusOK, jobView(j))
}

func (s *Server) enableJob(c *gin.Context)  { s.setEnabled(c, true) }
func (s *Server) disableJob(c *gin.Context) { s.setEnabled(c, false) }

type triggerRequest struct {
	// Params overrides the job's params for this run.
	Params *string `json:"params"`
	// ScheduledAt triggers the firing of that instant (backfill); the run
	// key makes a repeat of the same request idempotent.
	ScheduledAt *time.Time `json:"scheduled_at"`
}

func (s *Server) triggerJob(c *gin.Context) {
	j, ok := s.loadJob(c)
	if !ok {
		return
	}
	var req triggerRequest
	if c.Request.ContentLength != 0 && !decode(c, &req) {
		return
	}
	params := j.Params
	if req.Params != nil {
		if len(*req.Params) > jobdef.MaxParamsBytes {
			c.AbortWithStatusJSON(http.StatusBadRequest, errorBody{Error: "params too large", Fields: map[string]string{"params": "at most 65536 bytes"}})
			return
		}
		params = *req.Params
	}
	at := s.cfg.Now()
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
	run, created, err := s.st.InsertRun(c.Request.Context(), rec.Epoch, store.NewRun{
		JobID: j.ID, ScheduledAt: at.UnixMilli(), TriggerKind: kind, Status: store.RunPending, Params: params, SlotCount: j.SlotCount,
	})
	if err != nil {
		s.internal(c, err)
		return
	}
	code := http.StatusOK
	if created {
		code = http.StatusCreated
		s.audit(c, "job.trigger", "job/"+strconv.FormatInt(j.ID, 10), map[string]any{"run_id": run.ID, "scheduled_at": msTime(run.ScheduledAt)})
		s.wake()
	}
	c.JSON(code, gin.H{"run": runView(run), "created": created})
}

func (s *Server) wake() {
	if s.cfg.Scheduler != nil {
		s.cfg.Scheduler.Wake()
	}
}

func (s *Server) audit(c *gin.Context, action, object string, detail any) {
	b, _ := json.Marshal(detail)
	if err := s.st.Audit(c.Request.Context(), currentUser(c).Username, action, object, string(b)); err != nil {
		s.log.Error("audit log write failed", "action", action, "object", object, "err", err)
	}
}
