package ops

import (
	"context"
	"errors"
	"strconv"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/sdk/protocol"
)

// runObject is run id as the audit log names it.
func runObject(id int64) string { return "run/" + strconv.FormatInt(id, 10) }

// StoredRun reads run id for a: ErrNotFound when it does not exist or is
// of an app a may not see.
func (s *Service) StoredRun(ctx context.Context, a Actor, id int64) (store.Run, error) {
	r, err := s.st.Run(ctx, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && !a.User.AppAllowed(r.App)) {
		return r, notFound("run", id)
	}
	return r, err
}

// CancelReason is why a cancels a run by hand: their name, and their words
// when they give any.
func CancelReason(a Actor, words string) msg.Msg {
	if words != "" {
		return msg.New(msg.RunCancelledByReason, "user", a.User.Username, "reason", words)
	}
	return msg.New(msg.RunCancelledBy, "user", a.User.Username)
}

// CancelRun cancels run id, pending or running (ErrConflict otherwise),
// with words as the reason a gives (may be ""): its unfinished attempts
// end and their executors are told (CancelRunOf). It returns the run as
// it is then.
func (s *Service) CancelRun(ctx context.Context, a Actor, id int64, words string) (store.Run, error) {
	reason := CancelReason(a, words)
	r, err := s.StoredRun(ctx, a, id)
	if err != nil {
		return r, err
	}
	active, cancelled, err := s.runs.Cancel(ctx, id, reason)
	if err != nil {
		return r, err
	}
	if !cancelled {
		return r, s.runRefusal(r, "; only pending or running runs can be cancelled")
	}
	s.pushCancel(ctx, active, reason.String())
	s.audit(ctx, a, r.App, "run.cancel", runObject(id), map[string]any{"reason": reason.String(), "slots": len(active)})
	r, _ = s.st.Run(ctx, id)
	return r, nil
}

// CancelRunOf cancels run id for reason as CancelRun does, without
// checking who asks and without an audit entry: for an operation that
// checked and records it (a workflow run cancelled with its job runs).
// cancelled is false when the run had ended.
func (s *Service) CancelRunOf(ctx context.Context, id int64, reason msg.Msg) (cancelled bool, err error) {
	active, cancelled, err := s.runs.Cancel(ctx, id, reason)
	if err != nil || !cancelled {
		return false, err
	}
	s.pushCancel(ctx, active, reason.String())
	return true, nil
}

// RetryRun gives every failed or cancelled slot of finished run id a new
// attempt, which the leader places on executors; a run with no such slot
// is an ErrConflict. It returns the run as it is then and how many slots
// it retries.
func (s *Service) RetryRun(ctx context.Context, a Actor, id int64) (store.Run, int, error) {
	r, err := s.StoredRun(ctx, a, id)
	if err != nil {
		return r, 0, err
	}
	var reach []reached // a run that succeeds fires its job's children
	if j, err := s.st.Job(ctx, r.JobID); err == nil {
		if reach, err = s.jobActing(ctx, a, j); err != nil {
			return r, 0, err
		}
	} else if !errors.Is(err, store.ErrNotFound) {
		return r, 0, err
	}
	n, err := s.runs.Retry(ctx, id)
	if err != nil {
		return r, 0, err
	}
	if n == 0 {
		return r, 0, s.runRefusal(r, " and has no failed or cancelled slot to retry")
	}
	s.audit(ctx, a, r.App, "run.retry", runObject(id), map[string]any{"slots": n})
	s.auditReach(ctx, a, reach, "run.retry", runObject(id), map[string]any{"slots": n})
	s.wake()
	r, _ = s.st.Run(ctx, id)
	return r, n, nil
}

// runRefusal is the ErrConflict of an action that run r's status does not
// allow: "run 7 has succeeded" and why.
func (s *Service) runRefusal(r store.Run, why string) error {
	return &Error{Kind: ErrConflict, Msg: "run " + strconv.FormatInt(r.ID, 10) + " " + apitypes.RunStatusPhrase(r.Status) + why,
		Object: "run", ID: r.ID}
}

// pushCancel tells executors to stop tokens, one request per executor. A
// failed push is fine: the next heartbeat response cancels them too.
func (s *Service) pushCancel(ctx context.Context, active []store.ActiveToken, reason string) {
	if s.cfg.Canceller == nil || len(active) == 0 {
		return
	}
	byAddr := map[string][]int64{}
	for _, a := range active {
		byAddr[a.Address] = append(byAddr[a.Address], a.Token)
	}
	for addr, tokens := range byAddr {
		if err := s.cfg.Canceller.Cancel(ctx, addr, protocol.CancelRequest{Tokens: tokens, Reason: reason}); err != nil {
			s.log.Warn("cancel push failed; the executor learns it at its next heartbeat", "address", addr, "err", err)
		}
	}
}
