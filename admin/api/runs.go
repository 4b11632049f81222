package api

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/store"
)

func optTime(v sql.NullInt64) *time.Time {
	if !v.Valid {
		return nil
	}
	t := msTime(v.Int64)
	return &t
}

// runView is run r as the API returns it.
func runView(r store.Run) apitypes.Run {
	return apitypes.Run{
		ID: r.ID, JobID: r.JobID, JobName: r.JobName, App: r.App, JobDeleted: r.JobDeleted, ScheduledAt: msTime(r.ScheduledAt),
		Trigger: r.TriggerKind, Status: r.Status, Params: r.Params, SlotCount: r.SlotCount,
		SlotsSucceeded: r.SlotsSucceeded, SlotsFailed: r.SlotsFailed, Epoch: r.Epoch, CreatedAt: msTime(r.CreatedAt),
		StartedAt: optTime(r.StartedAt), FinishedAt: optTime(r.FinishedAt), Error: r.Error,
		ErrorCode: string(r.ErrorMsg.Code), ErrorArgs: r.ErrorMsg.Args,
		ParentRunID: optID(r.ParentRunID), PredictedMS: optID(r.PredictedMS), ActualMS: actualMS(r),
		FirstSlotStartedAt: optTime(r.FirstStartedAt),
		StartDeadlineAt:    optTime(r.StartDeadlineAt), FinishDeadlineAt: optTime(r.FinishDeadlineAt), DeadlineAction: r.DeadlineAction,
		CalendarID: r.CalendarID, CalendarVersion: r.CalendarVersion, ShiftedFrom: optTime(r.ShiftedFrom),
		TimeZone:   r.TimeZone,
		StartAfter: optTime(sql.NullInt64{Int64: r.StartAfter, Valid: r.StartAfter != 0}),
		Workflow:   optJSON(r.Workflow),
	}
}

// optJSON is a stored JSON text as a raw message, nil when NULL or empty.
func optJSON(v sql.NullString) json.RawMessage {
	if !v.Valid || v.String == "" {
		return nil
	}
	return json.RawMessage(v.String)
}

func actualMS(r store.Run) *int64 {
	if !r.StartedAt.Valid || !r.FinishedAt.Valid {
		return nil
	}
	d := r.FinishedAt.Int64 - r.StartedAt.Int64
	return &d
}

func optID(v sql.NullInt64) *int64 {
	if !v.Valid {
		return nil
	}
	return &v.Int64
}

// attemptView is attempt a as the API returns it.
func attemptView(a store.Attempt) apitypes.Attempt {
	v := apitypes.Attempt{
		Token: a.Token, Slot: a.Slot, Attempt: a.Attempt, Status: store.SlotState(a), Current: a.Current,
		StartedAt: optTime(a.StartedAt), FinishedAt: optTime(a.FinishedAt),
		Processed: a.Processed, Skipped: a.Skipped, Failed: a.Failed, Uncertain: a.Uncertain, Error: a.Error,
		ErrorCode: string(a.ErrorMsg.Code), ErrorArgs: a.ErrorMsg.Args, Executor: a.ExecutorInstance,
		ErrorClass: a.ErrorClass,
	}
	if a.ExecutorID.Valid {
		id := a.ExecutorID.Int64
		v.ExecutorID = &id
	}
	return v
}

func (s *Server) listRuns(c *gin.Context) {
	f, ok := runFilter(c)
	if !ok {
		return
	}
	ctx := c.Request.Context()
	runs, err := s.st.ListRuns(ctx, f)
	if err != nil {
		s.internal(c, err)
		return
	}
	out := make([]apitypes.Run, 0, len(runs))
	for _, r := range runs {
		out = append(out, runView(r))
	}
	resp := gin.H{"runs": out}
	if len(runs) > 0 && len(runs) == max(f.Limit, 1) {
		last := runs[len(runs)-1]
		resp["next_before"] = last.ID
		resp["next_cursor"] = encodeCursor(runCursorPrefix, runCursorWire{At: last.ScheduledAt, ID: last.ID})
	}
	if c.Query("cursor") == "" && c.Query("before") == "" && c.Query("count") != "0" {
		n, exact, err := s.st.CountRuns(ctx, f, store.DefaultListCountCap)
		if err != nil {
			s.internal(c, err)
			return
		}
		resp["count"], resp["count_exact"] = n, exact
	}
	c.JSON(http.StatusOK, resp)
}

// loadRun reads run id (admin/ops: StoredRun), answering 404 or 500
// itself when it cannot.
func (s *Server) loadRun(c *gin.Context, id int64) (store.Run, bool) {
	r, err := s.ops.StoredRun(c.Request.Context(), actor(c), id)
	if err != nil {
		s.opsFailed(c, err)
		return r, false
	}
	return r, true
}

func (s *Server) getRun(c *gin.Context) {
	id, ok := idParam(c)
	if !ok {
		return
	}
	r, ok := s.loadRun(c, id)
	if !ok {
		return
	}
	atts, err := s.st.Attempts(c.Request.Context(), id)
	if err != nil {
		s.internal(c, err)
		return
	}
	results, err := s.st.RunResults(c.Request.Context(), []int64{id})
	if err != nil {
		s.internal(c, err)
		return
	}
	out := apitypes.RunDetail{Run: runView(r), Attempts: make([]apitypes.Attempt, 0, len(atts)), Result: results[id]}
	for _, a := range atts {
		out.Attempts = append(out.Attempts, attemptView(a))
	}
	c.JSON(http.StatusOK, out)
}

func executorView(e store.Executor) apitypes.ExecutorView {
	return apitypes.ExecutorView{
		ID: e.ID, InstanceID: e.InstanceID, App: e.App, Address: e.Address, Capacity: e.Capacity,
		Version: e.Version, Handlers: e.Handlers, State: e.State,
		RegisteredAt: msTime(e.RegisteredAt), LastHeartbeat: msTime(e.LastHeartbeat), DrainRequested: e.DrainRequested,
		Protocol: e.Protocol,
	}
}

// listExecutors lists the executors of the user's apps. Gone executors
// (deregistered, or lost for longer than the leader's forget horizon) are
// left out unless all=1.
func (s *Server) listExecutors(c *gin.Context) {
	all := false
	switch v := c.Query("all"); v {
	case "", "0", "false":
	case "1", "true":
		all = true
	default:
		fail(c, http.StatusBadRequest, "all="+strconv.Quote(v)+": use all=1 to list gone executors too (deregistered, or lost longer than --forget-lost-after), or leave it out")
		return
	}
	execs, err := s.st.Executors(c.Request.Context())
	if err != nil {
		s.internal(c, err)
		return
	}
	loads, err := s.st.Loads(c.Request.Context())
	if err != nil {
		s.internal(c, err)
		return
	}
	out := make([]apitypes.ExecutorView, 0, len(execs))
	u := currentUser(c)
	for _, e := range execs {
		if !u.AppAllowed(e.App) || (e.State == store.ExecutorGone && !all) {
			continue
		}
		v := executorView(e)
		v.Active, v.Queued = loads[e.ID].Active, loads[e.ID].Queued
		out = append(out, v)
	}
	c.JSON(http.StatusOK, gin.H{"executors": out})
}

func (s *Server) cluster(c *gin.Context) {
	rec, err := s.st.Leader(c.Request.Context())
	if err != nil {
		s.internal(c, err)
		return
	}
	resp := gin.H{"leader": gin.H{"epoch": rec.Epoch, "holder": rec.Holder, "since": msTime(rec.SinceMS)}}
	if s.cfg.Members != nil {
		members, err := s.cfg.Members.Members(c.Request.Context())
		if err != nil {
			resp["members_error"] = err.Error()
		} else {
			resp["members"] = members
		}
	}
	c.JSON(http.StatusOK, resp)
}

func (s *Server) cancelRun(c *gin.Context) {
	id, ok := idParam(c)
	if !ok {
		return
	}
	var req apitypes.CancelRequest
	if c.Request.ContentLength != 0 && !decode(c, &req) {
		return
	}
	r, err := s.ops.CancelRun(c.Request.Context(), actor(c), id, req.Reason)
	if err != nil {
		s.opsFailed(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"run": runView(r)})
}

// retryRun gives every failed or cancelled slot of a finished run a new
// attempt (admin/ops: RetryRun); the leader places them on executors.
func (s *Server) retryRun(c *gin.Context) {
	id, ok := idParam(c)
	if !ok {
		return
	}
	r, n, err := s.ops.RetryRun(c.Request.Context(), actor(c), id)
	if err != nil {
		s.opsFailed(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"run": runView(r), "retried_slots": n})
}

func alarmView(a store.Alarm) apitypes.AlarmView {
	v := apitypes.AlarmView{ID: a.ID, At: msTime(a.At), Kind: a.Kind, Severity: a.Severity, JobName: a.JobName,
		JobID: optID(a.JobID), RunID: optID(a.RunID), Message: a.Message, RaisedBy: a.RaisedBy, App: a.App,
		MessageCode: string(a.Msg.Code), MessageArgs: a.Msg.Args,
		AckedAt: optTime(a.AckedAt), AckedBy: a.AckedBy, ResolvedAt: optTime(a.ResolvedAt), ResolvedBy: a.ResolvedBy,
		GroupID: optID(a.GroupID)}
	if !a.ResolvedMsg.IsZero() {
		v.ResolvedReason, v.ResolvedCode, v.ResolvedArgs = a.ResolvedMsg.String(), string(a.ResolvedMsg.Code), a.ResolvedMsg.Args
	}
	return v
}

func (s *Server) ackAlarm(c *gin.Context) {
	s.changeAlarm(c, "alarm.ack", "acknowledged", s.st.AckAlarm)
}

func (s *Server) resolveAlarm(c *gin.Context) {
	s.changeAlarm(c, "alarm.resolve", "resolved", s.st.ResolveAlarm)
}

// changeAlarm acknowledges or resolves an alarm the user may see (another
// app's alarm, or a platform alarm for an app-limited user, is 404 as if it
// did not exist); 409 when it was done already, saying by whom and when.
func (s *Server) changeAlarm(c *gin.Context, action, done string, change func(context.Context, int64, string) (bool, error)) {
	id, ok := idParam(c)
	if !ok {
		return
	}
	ctx := c.Request.Context()
	u := currentUser(c)
	a, err := s.st.AlarmByID(ctx, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && u.AppList() != nil && (a.App == "" || !u.AppAllowed(a.App))) {
		fail(c, http.StatusNotFound, "alarm "+c.Param("id")+" does not exist (or is not of your apps)")
		return
	}
	if err != nil {
		s.internal(c, err)
		return
	}
	changed, err := change(ctx, id, u.Username)
	if err != nil {
		s.internal(c, err)
		return
	}
	if a, err = s.st.AlarmByID(ctx, id); err != nil {
		s.internal(c, err)
		return
	}
	if !changed {
		by, at := a.AckedBy, a.AckedAt
		if a.ResolvedAt.Valid {
			by, at, done = a.ResolvedBy, a.ResolvedAt, "resolved"
		}
		fail(c, http.StatusConflict, fmt.Sprintf("alarm %d was %s already, by %s at %s", id, done, by, msTime(at.Int64).Format(time.RFC3339)))
		return
	}
	s.audit(c, a.App, action, "alarm/"+c.Param("id"), map[string]any{"kind": a.Kind})
	c.JSON(http.StatusOK, alarmView(a))
}

// timeRange reads the query parameters from and to (RFC 3339, either may be
// absent: 0) as Unix ms; what says what they select, for the message of a
// 400 answered when one is not a time or to is not after from.
func timeRange(c *gin.Context, what string) (from, to int64, ok bool) {
	for _, p := range []struct {
		name string
		dst  *int64
	}{{"from", &from}, {"to", &to}} {
		if v := c.Query(p.name); v != "" {
			at, err := time.Parse(time.RFC3339, v)
			if err != nil {
				fail(c, http.StatusBadRequest, p.name+" must be an RFC 3339 time such as 2026-11-30T08:00:00Z or 2026-11-30T16:00:00+08:00 ("+what+"), got "+strconv.Quote(v))
				return 0, 0, false
			}
			*p.dst = at.UnixMilli()
		}
	}
	if from != 0 && to != 0 && to <= from {
		fail(c, http.StatusBadRequest, "to must be after from")
		return 0, 0, false
	}
	return from, to, true
}
