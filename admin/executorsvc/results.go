package executorsvc

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/sdk/protocol"
)

// Results records the slot results of req. A result is accepted only for
// the current token of the reporting executor (a result delivered twice is
// accepted twice, applied once); the others are listed as rejected. A status
// the protocol does not know is recorded as failed, with the status in the
// error. Errors: ErrUnknownExecutor, or a database error.
func (s *Service) Results(ctx context.Context, req protocol.ResultsRequest) (protocol.ResultsResponse, error) {
	resp := protocol.ResultsResponse{Accepted: []int64{}}
	ex, err := s.knownExecutor(ctx, req.InstanceID)
	if err != nil {
		return protocol.ResultsResponse{}, err
	}
	outcomes := make([]store.SlotOutcome, len(req.Results))
	for i, r := range req.Results {
		status := r.Status
		switch status {
		case protocol.SlotSucceeded, protocol.SlotFailed, protocol.SlotCancelled:
		default:
			status = protocol.SlotFailed
		}
		outcomes[i] = store.SlotOutcome{SlotResult: r, ExecutorID: ex.ID}
		if status != r.Status {
			outcomes[i].Reason = msg.New(msg.AttemptUnknownStatus, "status", r.Status, "error", r.Error)
		}
		if reason := resultProblem(r); status == protocol.SlotSucceeded && !reason.IsZero() {
			status, outcomes[i].Reason = protocol.SlotFailed, reason
		}
		outcomes[i].Status = status
	}
	accepted, err := s.runs.FinishAttempts(ctx, outcomes)
	if err != nil {
		return protocol.ResultsResponse{}, err
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
	if e, ok := s.cfg.Scheduler.(SlotsEnder); ok && len(resp.Accepted) > 0 {
		e.SlotsEnded()
	}
	if len(resp.Rejected) > 0 {
		s.log.Info("stale results rejected (token superseded or unknown)", "instance", req.InstanceID, "tokens", resp.Rejected)
	}
	return resp, nil
}

// resultProblem says why the handler result of r cannot be kept (zero: it
// can): larger than protocol.MaxResultBytes, or not a JSON value. Such a
// slot fails with that reason rather than losing or cutting its result.
func resultProblem(r protocol.SlotResult) msg.Msg {
	switch {
	case len(r.Result) == 0:
		return msg.Msg{}
	case len(r.Result) > protocol.MaxResultBytes:
		return msg.New(msg.AttemptResultTooLarge, "size", len(r.Result), "max", protocol.MaxResultBytes)
	case !json.Valid(r.Result):
		return msg.New(msg.AttemptResultNotJSON)
	}
	return msg.Msg{}
}

// Deregister records that the executor of req stops (a clean shutdown).
// It returns only database errors.
func (s *Service) Deregister(ctx context.Context, req protocol.DeregisterRequest) error {
	return s.st.Deregister(ctx, req.InstanceID)
}

// knownExecutor returns the executor of instanceID, which must have sent a
// heartbeat before; otherwise ErrUnknownExecutor (or a database error).
func (s *Service) knownExecutor(ctx context.Context, instanceID string) (store.Executor, error) {
	ex, err := s.st.ExecutorByInstance(ctx, instanceID)
	if errors.Is(err, store.ErrNotFound) {
		return store.Executor{}, ErrUnknownExecutor
	}
	if err != nil {
		return store.Executor{}, err
	}
	return ex, nil
}
