package xxljob

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/shardjob/shardjob/admin/dispatch"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/sdk/protocol"
)

// Pusher sends work to executors: dispatch.Pusher, the interface the
// scheduler pushes through.
type Pusher = dispatch.Pusher

// Router is a Pusher that routes by the protocol of the executor at the
// address: shardjob executors go to the next Pusher (dispatch.Client),
// XXL-JOB executors get run, kill calls. The scheduler needs to know no
// more than that it is a Pusher.
type Router struct {
	s    *Service
	next Pusher
}

var _ Pusher = (*Router)(nil)

// Router returns the routing Pusher in front of next.
func (s *Service) Router(next Pusher) *Router { return &Router{s: s, next: next} }

// xxl returns the XXL-JOB executor at baseURL, or ok false for any other
// (shardjob executors, and addresses no executor registered).
func (r *Router) xxl(ctx context.Context, baseURL string) (store.ExecutorRef, bool, error) {
	ex, err := r.s.st.ExecutorProtocol(ctx, baseURL)
	if errors.Is(err, store.ErrNotFound) {
		return ex, false, nil
	}
	if err != nil {
		return ex, false, err
	}
	return ex, ex.Protocol == store.ProtocolXXLJob, nil
}

// Assign sends each slot attempt to an XXL-JOB executor as one run call
// (sharding broadcast: slot → broadcastIndex, slot count → broadcastTotal,
// token → logId). See Service.dispatch.
func (r *Router) Assign(ctx context.Context, baseURL string, req protocol.AssignRequest) (protocol.AssignResponse, error) {
	ex, ok, err := r.xxl(ctx, baseURL)
	if err != nil {
		return protocol.AssignResponse{}, err
	}
	if !ok {
		return r.next.Assign(ctx, baseURL, req)
	}
	return r.s.dispatch(ctx, ex, baseURL, req)
}

// Cancel kills the slots of the tokens on an XXL-JOB executor (each slot
// has its own XXL-JOB job id, SlotJobID). The caller has ended the attempts
// already, so a callback that still comes is ignored. It logs the outcome
// of each kill itself, in the terms of the XXL-JOB protocol (the executor
// has no heartbeat to learn a lost kill from), and returns an error only
// when the admin could not say what to kill.
func (r *Router) Cancel(ctx context.Context, baseURL string, req protocol.CancelRequest) error {
	ex, ok, err := r.xxl(ctx, baseURL)
	if err != nil {
		return err
	}
	if !ok {
		return r.next.Cancel(ctx, baseURL, req)
	}
	t, err := r.s.target(ex.App, baseURL, ex.Version)
	if err != nil {
		return err
	}
	slots, err := r.s.st.SlotsOfTokens(ctx, req.Tokens)
	if err != nil {
		return err
	}
	r.s.killSlots(ctx, t, slots, req.Reason)
	return nil
}

// Release gives nothing back for XXL-JOB executors: they cannot return
// queued runs, so work stealing leaves their slots where they are.
func (r *Router) Release(ctx context.Context, baseURL string, req protocol.ReleaseRequest) (protocol.ReleaseResponse, error) {
	_, ok, err := r.xxl(ctx, baseURL)
	if err != nil {
		return protocol.ReleaseResponse{}, err
	}
	if !ok {
		return r.next.Release(ctx, baseURL, req)
	}
	return protocol.ReleaseResponse{Released: []int64{}}, nil
}

// dispatch makes one run call per slot attempt. On an executor of an app
// not in Config.ConcurrentApps, only one slot per handler is sent at a time:
// the unfinished attempt of the handler there with the smallest token (the
// same answer on every replica); the others are held, left unaccepted and
// sent when a callback ends that one (kick) or at a later probe. Otherwise
// the executor's answer decides what becomes of the attempt:
//
//   - accepted (code 200): marked started (an XXL-JOB executor does not tell
//     queued from running, and cannot give queued runs back);
//   - refused as busy (CallError.Busy: a task of the slot's job id runs
//     there, the executor runs one at a time): left unaccepted and sent
//     again at the next probe of the executor — the slot waits, it does not
//     fail;
//   - refused otherwise (code ≠ 200 in a ReturnT or a refusal array: unknown
//     handler, wrong token, …) or answered unreadably (ErrUnreadableAnswer,
//     a failed trigger as for XXL-JOB's admin): failed at once with the
//     executor's message, retried per the job's policy;
//   - not answered: the remaining attempts are left unaccepted: if none got
//     through the error is returned (the scheduler moves the slots to other
//     executors), otherwise the prober sends them again after
//     Config.RedispatchAfter.
func (s *Service) dispatch(ctx context.Context, ex store.ExecutorRef, address string, req protocol.AssignRequest) (protocol.AssignResponse, error) {
	resp := protocol.AssignResponse{Accepted: []int64{}}
	target, err := s.target(ex.App, address, ex.Version)
	if err != nil {
		return resp, err
	}
	var all []int64
	for _, a := range req.Assignments {
		for _, sl := range a.Attempts {
			all = append(all, sl.Token)
		}
	}
	mine := s.claim(s.sending, all)
	defer s.unclaim(s.sending, mine)
	send := make(map[int64]bool, len(mine))
	for _, t := range mine {
		send[t] = true
	}
	turns, err := s.handlerTurns(ctx, ex)
	if err != nil {
		return resp, err
	}
	var refused []store.SlotOutcome
	var callErr error
	answered := 0
outer:
	for _, a := range req.Assignments {
		for _, sl := range a.Attempts {
			if !send[sl.Token] {
				continue // this replica is sending it already
			}
			if first, ok := turns[a.Handler]; ok && first != sl.Token {
				// Another slot of the handler is on the executor: this one
				// waits in the admin, sent once that one has ended.
				s.setBusy(sl.Token, ex.ID, true)
				s.log.Debug("XXL-JOB executor runs one slot per handler: the run waits for the handler's earlier slot there", "address", address, "run_id", a.RunID, "slot", sl.Slot, "token", sl.Token, "handler", a.Handler, "waits_for", first)
				continue
			}
			err := s.client.Run(ctx, target, triggerFor(a, sl))
			var ce *CallError
			busy := err != nil && errors.As(err, &ce) && ce.Busy()
			s.setBusy(sl.Token, ex.ID, busy)
			switch {
			case err == nil:
				resp.Accepted = append(resp.Accepted, sl.Token)
			case busy:
				s.log.Info("XXL-JOB executor is busy with the slot's job id: the run is sent again at its next probe", "address", address, "run_id", a.RunID, "slot", sl.Slot, "token", sl.Token, "msg", ce.Msg)
			case ce != nil || errors.Is(err, ErrUnreadableAnswer):
				why := err.Error()
				if ce != nil {
					why = fmt.Sprintf("code %d: %s", ce.Code, ce.Msg)
				}
				s.log.Warn("XXL-JOB executor refused a run", "address", address, "run_id", a.RunID, "slot", sl.Slot, "token", sl.Token, "why", why)
				refused = append(refused, store.SlotOutcome{ExecutorID: ex.ID, SlotResult: protocol.SlotResult{
					Token: sl.Token, Status: store.AttemptFailed, FinishedAt: s.cfg.Clock.Now().UnixMilli(),
				}, Reason: msg.New(msg.AttemptXXLRefused, "address", address, "why", why)})
			default:
				callErr = err
				break outer
			}
			answered++
		}
	}
	if len(resp.Accepted) > 0 {
		if err := s.st.MarkStarted(ctx, ex.ID, resp.Accepted); err != nil {
			s.log.Error("mark XXL-JOB runs started", "executor_id", ex.ID, "err", err)
		}
	}
	if len(refused) > 0 {
		if _, err := s.runs.FinishAttempts(ctx, refused); err != nil {
			s.log.Error("record refused XXL-JOB runs", "executor_id", ex.ID, "err", err)
		}
	}
	if callErr != nil {
		if answered == 0 {
			return resp, callErr
		}
		s.log.Warn("XXL-JOB executor unreachable part way: the rest is sent again at a later probe", "address", address, "err", callErr)
	}
	return resp, nil
}

// withWorkflow is params as an XXL-JOB executor receives them: an XXL-JOB
// handler reads nothing but its executorParams, so the workflow context
// of a workflow node's run (protocol.RunAssignment.Workflow, the same
// object SDK executors receive beside the params) is laid into params, a
// JSON object (or none), under the key "workflow". Params that are not a
// JSON object, or a run that is no workflow node's, pass unchanged.
func withWorkflow(params string, w *protocol.WorkflowContext) string {
	if w == nil {
		return params
	}
	fields := map[string]json.RawMessage{}
	if strings.TrimSpace(params) != "" {
		if err := json.Unmarshal([]byte(params), &fields); err != nil || fields == nil {
			return params
		}
	}
	b, err := json.Marshal(w)
	if err != nil {
		return params
	}
	fields["workflow"] = b
	out, err := json.Marshal(fields)
	if err != nil {
		return params
	}
	return string(out)
}

// handlerTurns returns, on an executor that runs one slot per handler at a
// time, the token whose turn it is for each handler (store.XXLHandlerTurns);
// nil for an app in Config.ConcurrentApps.
func (s *Service) handlerTurns(ctx context.Context, ex store.ExecutorRef) (map[string]int64, error) {
	if s.concurrent[ex.App] {
		return nil, nil
	}
	return s.st.XXLHandlerTurns(ctx, ex.ID)
}

// triggerFor builds the run call of one slot attempt; its job id is the
// slot's own (SlotJobID).
func triggerFor(a protocol.RunAssignment, sl protocol.SlotAttempt) TriggerParam {
	params := withWorkflow(a.Params, a.Workflow)
	if sl.Param != "" {
		params = sl.Param // a per-slot parameter replaces the run's
	}
	timeout := 0
	if a.TimeoutMS > 0 {
		timeout = int((a.TimeoutMS + 999) / 1000)
	}
	return TriggerParam{
		JobID: SlotJobID(a.JobID, sl.Slot), ExecutorHandler: a.Handler, ExecutorParams: params,
		ExecutorBlockStrategy: BlockSerial, ExecutorTimeout: timeout,
		LogID: sl.Token, LogDateTime: a.ScheduledAt, GlueType: GlueBean,
		BroadcastIndex: sl.Slot, BroadcastTotal: a.SlotCount,
	}
}
