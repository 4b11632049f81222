package ops

import (
	"context"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/jobdef"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/store"
)

// withBreaker is v with its job's circuit breaker (docs/failures.md), when
// it has a state.
func (s *Service) withBreaker(ctx context.Context, v apitypes.Job) (apitypes.Job, error) {
	b, ok, err := s.st.Breaker(ctx, v.ID)
	if err != nil || !ok {
		return v, err
	}
	v.Breaker = jobdef.BreakerView(b)
	return v, nil
}

// CloseBreaker closes the circuit breaker of job id by hand, from any state
// (docs/failures.md, "What an operator sees and does"): the job's held
// runs start at the leader's next round, its held retries are made, the
// breaker_open alarm is resolved and the count starts again. Closing a
// closed breaker changes nothing; both are audited (job.breaker_close,
// with the state before).
func (s *Service) CloseBreaker(ctx context.Context, a Actor, id int64) (apitypes.Job, error) {
	j, err := s.OwnJob(ctx, a, id)
	if err != nil {
		return apitypes.Job{}, err
	}
	before, had, err := s.st.Breaker(ctx, j.ID)
	if err != nil {
		return apitypes.Job{}, err
	}
	state := store.BreakerClosed
	if had {
		state = before.State
	}
	how := msg.New(msg.BreakerClosedBy, "user", a.User.Username)
	var alarm *store.Alarm
	if had && state != store.BreakerClosed {
		alarm = store.BreakerClosedAlarm(j.ID, j.App, j.Name, a.User.Username, how, s.cfg.Clock.Now().UnixMilli())
	}
	closed, err := s.st.CloseBreaker(ctx, 0, j.ID, "", a.User.Username, msg.New(msg.AlarmResolvedBreakerClosed, "how", how), alarm)
	if err != nil {
		return apitypes.Job{}, err
	}
	s.wake()
	s.audit(ctx, a, j.App, "job.breaker_close", jobObject(j.ID), map[string]any{
		"before": map[string]any{"state": state, "failures": before.Failures}, "closed": closed})
	return s.withBreaker(ctx, jobdef.View(j))
}
