package api

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/store"
)

// The bounds of a list page (GET /jobs, GET /runs).
const (
	maxJobPage      = 500
	defaultJobPage  = 100
	maxRunPage      = 1000
	maxNameSearch   = 128
	jobCursorPrefix = "j1."
	runCursorPrefix = "r1."
)

// listParamFailed answers 400 naming the query parameter param and what is
// wrong with it (m, in the catalog: the console shows it translated).
func listParamFailed(c *gin.Context, param string, m msg.Msg) {
	c.AbortWithStatusJSON(http.StatusBadRequest, errorBody{Error: param + ": " + m.String(), Fields: map[string]msg.Msg{param: m}})
}

// oneOf reads query parameter param, which must be "" or one of values.
func oneOf(c *gin.Context, param string, values ...string) (string, bool) {
	v := c.Query(param)
	if v == "" || slices.Contains(values, v) {
		return v, true
	}
	listParamFailed(c, param, msg.New(msg.ListOneOf, "values", strings.Join(values, ", "), "value", strconv.Quote(v)))
	return "", false
}

// pageSize reads query parameter limit: def when absent, otherwise 1..most.
func pageSize(c *gin.Context, def, most int) (int, bool) {
	v := c.Query("limit")
	if v == "" {
		return def, true
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > most {
		listParamFailed(c, "limit", msg.New(msg.ListLimitRange, "max", most, "value", strconv.Quote(v)))
		return 0, false
	}
	return n, true
}

// positiveID reads query parameter param as a positive integer (0 when absent).
func positiveID(c *gin.Context, param string) (int64, bool) {
	v := c.Query(param)
	if v == "" {
		return 0, true
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 {
		listParamFailed(c, param, msg.New(msg.ListIDInvalid, "value", strconv.Quote(v)))
		return 0, false
	}
	return n, true
}

// jobCursorWire is a job list's cursor as its opaque text carries it: the
// sort it belongs to and the last job's key.
type jobCursorWire struct {
	Sort   string `json:"s"`
	ID     int64  `json:"i"`
	Name   string `json:"n,omitempty"`
	Next   int64  `json:"f,omitempty"`
	NoNext bool   `json:"z,omitempty"`
}

func encodeCursor(prefix string, v any) string {
	b, _ := json.Marshal(v)
	return prefix + base64.RawURLEncoding.EncodeToString(b)
}

func decodeCursor(prefix, text string, v any) bool {
	rest, ok := strings.CutPrefix(text, prefix)
	if !ok {
		return false
	}
	b, err := base64.RawURLEncoding.DecodeString(rest)
	return err == nil && json.Unmarshal(b, v) == nil
}

// jobQuery reads the query parameters of GET /jobs (docs/openapi.yaml),
// answering 400 itself when one is wrong.
func jobQuery(c *gin.Context) (store.JobQuery, bool) {
	var q store.JobQuery
	var ok bool
	if q.Limit, ok = pageSize(c, defaultJobPage, maxJobPage); !ok {
		return q, false
	}
	if q.State, ok = oneOf(c, "state", apitypes.JobScheduled, apitypes.JobPaused, apitypes.JobDisabled, apitypes.JobCompleted); !ok {
		return q, false
	}
	if q.Schedule, ok = oneOf(c, "schedule", store.ScheduleCron, store.ScheduleEvery, store.ScheduleAt); !ok {
		return q, false
	}
	if q.Sort, ok = oneOf(c, "sort", store.JobSortName, store.JobSortID, store.JobSortNext); !ok {
		return q, false
	}
	match, ok := oneOf(c, "match", "prefix", "contains")
	if !ok {
		return q, false
	}
	q.Contains = match == "contains"
	q.Name = strings.TrimSpace(c.Query("q"))
	if n := utf8.RuneCountInString(q.Name); n > maxNameSearch {
		listParamFailed(c, "q", msg.New(msg.ListSearchLong, "max", maxNameSearch, "len", n))
		return q, false
	}
	q.App, q.Handler = c.Query("app"), c.Query("handler")
	var after int64
	if v := c.Query("after"); v != "" && v != "0" { // after=0: the first page
		if after, ok = positiveID(c, "after"); !ok {
			return q, false
		}
	}
	if after > 0 {
		// The first API's keyset: by id after job "after".
		if q.Sort != "" && q.Sort != store.JobSortID {
			listParamFailed(c, "after", msg.New(msg.ListCursorInvalid))
			return q, false
		}
		q.Sort, q.After.ID = store.JobSortID, after
	}
	if q.Sort == "" {
		q.Sort = store.JobSortName
	}
	if v := c.Query("cursor"); v != "" {
		var w jobCursorWire
		if !decodeCursor(jobCursorPrefix, v, &w) || w.Sort != q.Sort || w.ID < 0 || after > 0 {
			listParamFailed(c, "cursor", msg.New(msg.ListCursorInvalid))
			return q, false
		}
		q.After = store.JobCursor{ID: w.ID, Name: w.Name, Next: w.Next, NoNext: w.NoNext}
	}
	return q, true
}

// listJobs answers GET /jobs (admin/ops: Jobs); the count comes with a
// first page only.
func (s *Server) listJobs(c *gin.Context) {
	q, ok := jobQuery(c)
	if !ok {
		return
	}
	out, next, err := s.ops.Jobs(c.Request.Context(), actor(c), q, c.Query("cursor") == "" && q.After.ID == 0)
	if err != nil {
		s.opsFailed(c, err)
		return
	}
	if n := next; n != nil {
		out.NextCursor = encodeCursor(jobCursorPrefix, jobCursorWire{Sort: q.Sort, ID: n.ID, Name: n.Name, Next: n.Next, NoNext: n.NoNext})
	}
	c.JSON(http.StatusOK, out)
}

// runCursorWire is a run list's cursor: the last run's scheduled time and id.
type runCursorWire struct {
	At int64 `json:"a"`
	ID int64 `json:"i"`
}

// runFilter reads the query parameters of GET /runs (docs/openapi.yaml),
// answering 400 itself when one is wrong.
func runFilter(c *gin.Context) (store.RunFilter, bool) {
	var f store.RunFilter
	var ok bool
	if f.JobID, ok = positiveID(c, "job_id"); !ok {
		return f, false
	}
	if f.Status, ok = oneOf(c, "status", store.RunPending, store.RunRunning, store.RunSucceeded, store.RunFailed,
		store.RunPartiallyFailed, store.RunCancelled, store.RunSkipped); !ok {
		return f, false
	}
	if f.Trigger, ok = oneOf(c, "trigger", runTriggers...); !ok {
		return f, false
	}
	f.App = c.Query("app")
	if f.BeforeID, ok = positiveID(c, "before"); !ok {
		return f, false
	}
	if v := c.Query("cursor"); v != "" {
		var w runCursorWire
		if !decodeCursor(runCursorPrefix, v, &w) || w.ID <= 0 || f.BeforeID > 0 {
			listParamFailed(c, "cursor", msg.New(msg.ListCursorInvalid))
			return f, false
		}
		f.BeforeID, f.BeforeAt = w.ID, w.At
	}
	if f.FromMS, f.ToMS, ok = timeRange(c, "runs by scheduled time"); !ok {
		return f, false
	}
	if f.Limit, ok = pageSize(c, 100, maxRunPage); !ok {
		return f, false
	}
	f.Apps = currentUser(c).AppList()
	return f, true
}

// runTriggers are the trigger kinds of runs (apitypes.Run.Trigger).
var runTriggers = []string{store.TriggerCron, store.TriggerManual, store.TriggerRetry, store.TriggerCatchUp,
	store.TriggerChild, store.TriggerAPI, store.TriggerBackfill, store.TriggerWorkflow}
