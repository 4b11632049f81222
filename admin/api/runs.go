package api

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/ops"
	"github.com/shardjob/shardjob/admin/store"
)

// runView is run r as the API returns it (admin/ops: RunView).
func runView(r store.Run) apitypes.Run { return ops.RunView(r) }

func (s *Server) listRuns(c *gin.Context) {
	f, ok := runFilter(c)
	if !ok {
		return
	}
	ctx := c.Request.Context()
	runs, err := s.ops.Runs(ctx, actor(c), f)
	if err != nil {
		s.opsFailed(c, err)
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
		n, exact, err := s.ops.CountRuns(ctx, actor(c), f)
		if err != nil {
			s.opsFailed(c, err)
			return
		}
		resp["count"], resp["count_exact"] = n, exact
	}
	c.JSON(http.StatusOK, resp)
}

func (s *Server) getRun(c *gin.Context) {
	id, ok := idParam(c)
	if !ok {
		return
	}
	out, err := s.ops.RunDetail(c.Request.Context(), actor(c), id)
	if err != nil {
		s.opsFailed(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
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
	out, err := s.ops.Executors(c.Request.Context(), actor(c), all)
	if err != nil {
		s.opsFailed(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"executors": out})
}

func (s *Server) cluster(c *gin.Context) {
	rec, err := s.ops.Leader(c.Request.Context())
	if err != nil {
		s.opsFailed(c, err)
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
	parts, err := s.ops.Partitions(c.Request.Context())
	if err != nil {
		s.opsFailed(c, err)
		return
	}
	due, err := s.ops.PartitionsNextDue(c.Request.Context())
	if err != nil {
		s.opsFailed(c, err)
		return
	}
	nextDue := make(map[int]int64, len(due))
	for _, d := range due {
		if d.NextDue.Valid {
			nextDue[d.Partition] = d.NextDue.Int64
		}
	}
	// A partition's firing lag: how long its earliest due job has been
	// waiting to fire (0 while every job of it fires on time, ahead of its
	// time with the pre-read window).
	now := s.cfg.Clock.Now().UnixMilli()
	owned := map[string]int{}
	records := make([]gin.H, 0, len(parts))
	var maxLag int64
	for _, p := range parts {
		owned[p.Holder]++
		r := gin.H{"partition": p.Partition, "epoch": p.Epoch, "holder": p.Holder, "claimed_at": msTime(p.ClaimedMS), "lag_ms": int64(0)}
		if next, ok := nextDue[p.Partition]; ok {
			r["next_due_at"] = msTime(next)
			lag := max(now-next, 0)
			r["lag_ms"] = lag
			maxLag = max(maxLag, lag)
		}
		records = append(records, r)
	}
	resp["partitions"] = gin.H{"owned": owned, "records": records, "max_lag_ms": maxLag}
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

func (s *Server) ackAlarm(c *gin.Context) {
	s.changeAlarm(c, s.ops.AckAlarm)
}

func (s *Server) resolveAlarm(c *gin.Context) {
	s.changeAlarm(c, s.ops.ResolveAlarm)
}

// changeAlarm acknowledges or resolves an alarm the user may see (admin/ops:
// AckAlarm, ResolveAlarm): 404 for another app's alarm, 409 when it was
// done already.
func (s *Server) changeAlarm(c *gin.Context, change func(context.Context, ops.Actor, int64) (store.Alarm, error)) {
	id, ok := idParam(c)
	if !ok {
		return
	}
	a, err := change(c.Request.Context(), actor(c), id)
	if err != nil {
		s.opsFailed(c, err)
		return
	}
	c.JSON(http.StatusOK, ops.AlarmView(a))
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
