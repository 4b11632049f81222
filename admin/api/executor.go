package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/shardjob/shardjob/admin/dispatch"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/sdk/protocol"
)

// signed verifies the HMAC signature of executor requests.
func (s *Server) signed(c *gin.Context) {
	if _, err := s.verifier.VerifyRequest(c.Request, s.cfg.MaxBodyBytes); err != nil {
		code := http.StatusUnauthorized
		var mbe *http.MaxBytesError
		switch {
		case errors.Is(err, protocol.ErrNonceUnchecked):
			// The database did not answer: not the executor's fault, and it
			// retries (a new signature, a new nonce).
			s.log.Error("executor request not checked for a replay: the nonce store failed", "path", c.Request.URL.Path, "err", err)
			c.AbortWithStatusJSON(http.StatusServiceUnavailable, protocol.Error{Error: protocol.ErrNonceUnchecked.Error() + " (the admin could not reach its database; see the admin log)"})
			return
		case errors.As(err, &mbe) || strings.Contains(err.Error(), "body larger"):
			code = http.StatusRequestEntityTooLarge
		}
		s.log.Warn("refused executor request", "path", c.Request.URL.Path, "remote", c.ClientIP(), "err", err)
		c.AbortWithStatusJSON(code, protocol.Error{Error: err.Error()})
		return
	}
	c.Next()
}

func decodeSigned(c *gin.Context, v any) bool {
	if err := json.NewDecoder(c.Request.Body).Decode(v); err != nil {
		c.AbortWithStatusJSON(http.StatusBadRequest, protocol.Error{Error: "invalid JSON body: " + err.Error()})
		return false
	}
	return true
}

func (s *Server) heartbeat(c *gin.Context) {
	var req protocol.HeartbeatRequest
	if !decodeSigned(c, &req) {
		return
	}
	if req.InstanceID == "" || req.App == "" || req.Address == "" || len(req.InstanceID) > 191 || len(req.App) > 64 || len(req.Address) > 255 {
		c.AbortWithStatusJSON(http.StatusBadRequest, protocol.Error{Error: "instance_id (≤191), app (≤64) and address (≤255) are required"})
		return
	}
	ctx := c.Request.Context()
	if !s.addressFree(c, req) {
		return
	}
	ex, err := s.st.Heartbeat(ctx, store.ExecutorInfo{
		InstanceID: req.InstanceID, App: req.App, Address: req.Address, Capacity: max(req.Capacity, 1),
		Version: req.Version, Handlers: req.Handlers, Draining: req.Draining,
	})
	if err != nil {
		s.internalProto(c, err)
		return
	}
	if ex.App != req.App {
		c.AbortWithStatusJSON(http.StatusConflict, protocol.Error{Error: "instance_id is registered for app " + ex.App})
		return
	}
	if req.Incarnation != "" && req.Incarnation != ex.Incarnation {
		if len(req.Incarnation) > 64 {
			c.AbortWithStatusJSON(http.StatusBadRequest, protocol.Error{Error: "incarnation: at most 64 characters"})
			return
		}
		if !s.reincarnate(c, ex, req) {
			return
		}
	}
	running := make([]int64, 0, len(req.Running))
	var queued, started []int64
	for _, r := range req.Running {
		running = append(running, r.Token)
		if r.Progress == protocol.ProgressQueued {
			queued = append(queued, r.Token)
		} else {
			started = append(started, r.Token)
		}
	}
	resp := protocol.HeartbeatResponse{ExecutorID: ex.ID, IntervalMS: s.cfg.HeartbeatInterval.Milliseconds(), LostAfterMS: s.cfg.LostAfter.Milliseconds()}
	if !s.reconcile(c, ex, req, running) {
		return
	}
	if len(running) > 0 {
		// One write per token: marking started acknowledges too.
		if err := s.st.RecordAccepted(ctx, ex.ID, queued, started, req.AcceptSeq); err != nil {
			s.internalProto(c, err)
			return
		}
		stale, err := s.st.StaleTokens(ctx, ex.ID, running)
		if err != nil {
			s.internalProto(c, err)
			return
		}
		resp.Cancel = stale
	}
	if len(req.Released) > 0 {
		// Tokens given back for work stealing that the leader did not move
		// (it stopped leading in between): move them now; then tell the
		// executor to forget every released token that is no longer its own.
		if len(req.Released) > 10000 {
			req.Released = req.Released[:10000]
		}
		if n, err := s.st.ReleaseAttempts(ctx, ex.ID, req.Released); err != nil {
			s.internalProto(c, err)
			return
		} else if n > 0 {
			s.log.Info("moved slots an executor gave back", "executor_id", ex.ID, "slots", n)
		}
		gone, err := s.st.StaleTokens(ctx, ex.ID, req.Released)
		if err != nil {
			s.internalProto(c, err)
			return
		}
		resp.Cancel = append(resp.Cancel, gone...)
	}
	// The heartbeat itself (executor.last_heartbeat, database clock) is the
	// lease of every attempt the executor holds: nothing is written per
	// attempt (RecoverLost moves the attempts of a silent executor).
	if !req.Draining {
		slots, err := s.st.UnackedFor(ctx, ex.ID, 1024)
		if err != nil {
			s.internalProto(c, err)
			return
		}
		resp.Assignments = dispatch.BuildAssignments(slots)
		if len(resp.Assignments) > 0 {
			// Read later than this (the executor froze), they are ignored.
			resp.AssignmentsValidUntilMS = time.Now().Add(s.cfg.LostAfter / 2).UnixMilli()
		}
	}
	c.JSON(http.StatusOK, resp)
}

// addressFree refuses (409) a heartbeat whose address is the address of a
// live XXL-JOB executor: the admin finds the executor to push to by its
// address, so an address belongs to one protocol at a time. Shardjob
// executors may share one (a restarted process under a new instance id
// takes over its predecessor's address). It answers and returns false
// when the heartbeat must stop.
func (s *Server) addressFree(c *gin.Context, req protocol.HeartbeatRequest) bool {
	live, err := s.st.LiveExecutorsAt(c.Request.Context(), req.Address, req.InstanceID, s.cfg.LostAfter.Milliseconds())
	if err != nil {
		s.internalProto(c, err)
		return false
	}
	for _, e := range live {
		if e.Protocol == store.ProtocolXXLJob {
			s.log.Warn("refused heartbeat: its address is a live XXL-JOB executor's", "instance", req.InstanceID, "app", req.App, "address", req.Address, "xxljob_executor_id", e.ID)
			c.AbortWithStatusJSON(http.StatusConflict, protocol.Error{Error: fmt.Sprintf(
				"address %s is the address of a live XXL-JOB executor: an address belongs to one executor protocol at a time. Give this executor the URL it really listens on (AdvertiseURL); the address is free again %s after the XXL-JOB executor stops answering", req.Address, s.cfg.LostAfter)})
			return false
		}
	}
	return true
}

// reincarnate records a new process behind an executor. If another process
// was behind it before (the instance restarted under the same instance id
// before anyone declared it lost), the slots that process held are lost at
// once and placed again, except those the new process reports as its own.
// It answers 500 and returns false on a database error.
func (s *Server) reincarnate(c *gin.Context, ex store.Executor, req protocol.HeartbeatRequest) bool {
	ctx := c.Request.Context()
	keep := append(slices.Clone(req.Unsent), req.Released...)
	for _, r := range req.Running {
		keep = append(keep, r.Token)
	}
	moved, changed, err := s.st.Reincarnate(ctx, ex.ID, ex.Incarnation, req.Incarnation, keep)
	if err != nil {
		s.internalProto(c, err)
		return false
	}
	if !changed || ex.Incarnation == "" {
		return true
	}
	s.log.Warn("executor restarted under the same instance id: the slots of its previous process are lost and placed again",
		"executor_id", ex.ID, "instance", ex.InstanceID, "moved", moved)
	if moved > 0 {
		if _, err := s.st.RaiseAlarm(ctx, store.Alarm{
			Kind: store.AlarmExecutorLost, Severity: "warning", App: ex.App,
			DedupKey: fmt.Sprintf("executor_lost:restart:%d:%s", ex.ID, req.Incarnation),
			Message:  fmt.Sprintf("executor %s (app %s) restarted while its previous process held %d slot(s): they were lost and are placed again", ex.InstanceID, ex.App, moved),
		}); err != nil {
			s.log.Warn("cannot record the executor_lost alarm", "err", err)
		}
		if s.cfg.Scheduler != nil {
			s.cfg.Scheduler.Wake() // the leader places them (on this replica if it leads)
		}
	}
	return true
}

// reconcile loses at once the slots the executor process acknowledged and no
// longer reports (see store.Reconcile), raises an executor_lost alarm for
// them and wakes the leader to place them again. It answers 500 and returns
// false on a database error.
func (s *Server) reconcile(c *gin.Context, ex store.Executor, req protocol.HeartbeatRequest, running []int64) bool {
	if req.AcceptSeq <= 0 || req.Incarnation == "" {
		return true // an executor that does not number what it accepts
	}
	reported := slices.Concat(running, req.Released, req.Unsent)
	moved, err := s.st.Reconcile(c.Request.Context(), ex.ID, req.AcceptSeq, reported)
	if err != nil {
		s.internalProto(c, err)
		return false
	}
	if len(moved) == 0 {
		return true
	}
	s.log.Warn("executor no longer reports slots it accepted: they are lost and placed again",
		"executor_id", ex.ID, "instance", ex.InstanceID, "slots", len(moved), "tokens", moved[:min(len(moved), 20)])
	if _, err := s.st.RaiseAlarm(c.Request.Context(), store.Alarm{
		Kind: store.AlarmExecutorLost, Severity: "warning",
		DedupKey: fmt.Sprintf("executor_lost:reconcile:%d:%s:%d", ex.ID, req.Incarnation, req.AcceptSeq),
		Message: fmt.Sprintf("executor %s (app %s) no longer reports %d slot(s) it had accepted (first token %d): they were lost and are placed again",
			ex.InstanceID, ex.App, len(moved), moved[0]),
	}); err != nil {
		s.log.Warn("cannot record the executor_lost alarm", "err", err)
	}
	if s.cfg.Scheduler != nil {
		s.cfg.Scheduler.Wake()
	}
	return true
}

func (s *Server) results(c *gin.Context) {
	var req protocol.ResultsRequest
	if !decodeSigned(c, &req) {
		return
	}
	resp := protocol.ResultsResponse{Accepted: []int64{}}
	ex, ok := s.knownExecutor(c, req.InstanceID)
	if !ok {
		return
	}
	outcomes := make([]store.SlotOutcome, len(req.Results))
	for i, r := range req.Results {
		status := r.Status
		switch status {
		case protocol.SlotSucceeded, protocol.SlotFailed, protocol.SlotCancelled:
		default:
			status = protocol.SlotFailed
			r.Error = "executor reported unknown status " + r.Status + ": " + r.Error
		}
		outcomes[i] = store.SlotOutcome{
			Token: r.Token, ExecutorID: ex.ID, Status: status, Error: r.Error, StartedAt: r.StartedAt, FinishedAt: r.FinishedAt,
			Processed: r.Processed, Skipped: r.Skipped, Failed: r.Failed, Uncertain: r.Uncertain,
		}
	}
	accepted, err := s.st.FinishAttempts(c.Request.Context(), outcomes)
	if err != nil {
		s.internalProto(c, err)
		return
	}
	for i, ok := range accepted {
		if ok {
			resp.Accepted = append(resp.Accepted, outcomes[i].Token)
			if s.cfg.Results != nil {
				s.cfg.Results.SlotResult(outcomes[i])
			}
		} else {
			resp.Rejected = append(resp.Rejected, outcomes[i].Token)
		}
	}
	if len(resp.Rejected) > 0 {
		s.log.Info("stale results rejected (token superseded or unknown)", "instance", req.InstanceID, "tokens", resp.Rejected)
	}
	c.JSON(http.StatusOK, resp)
}

func (s *Server) deregister(c *gin.Context) {
	var req protocol.DeregisterRequest
	if !decodeSigned(c, &req) {
		return
	}
	if err := s.st.Deregister(c.Request.Context(), req.InstanceID); err != nil {
		s.internalProto(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"ok": true})
}

func (s *Server) internalProto(c *gin.Context, err error) {
	s.log.Error("executor request failed", "path", c.Request.URL.Path, "err", err)
	c.AbortWithStatusJSON(http.StatusInternalServerError, protocol.Error{Error: "internal error; see the admin log"})
}

// knownExecutor returns the executor of instanceID, which must have sent a
// heartbeat before; otherwise it answers 409 (or 500) and returns false.
func (s *Server) knownExecutor(c *gin.Context, instanceID string) (store.Executor, bool) {
	ex, err := s.st.ExecutorByInstance(c.Request.Context(), instanceID)
	if errors.Is(err, store.ErrNotFound) {
		c.AbortWithStatusJSON(http.StatusConflict, protocol.Error{Error: "unknown instance_id: heartbeat first"})
		return store.Executor{}, false
	}
	if err != nil {
		s.internalProto(c, err)
		return store.Executor{}, false
	}
	return ex, true
}
