package scheduler

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/shardjob/shardjob/admin/jobrules"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/sdk/protocol"
)

// heldBreaker is a job's circuit breaker that holds its work this round.
type heldBreaker struct {
	store.BreakerState
	// wantRun: the breaker is open, its probe is due and none of the job's
	// slots waits to be it: the oldest of its due runs starts with its
	// slots unplaced (taken: one did), and the next round probes with one.
	wantRun bool
	taken   bool
}

// CheckBreakers is the leader's circuit breaker round (docs/failures.md,
// "Retry budgets and circuit breakers"), at the start of each tick: it
// reads every breaker with a state (O(jobs with one)) and, each change in
// a transaction fenced by epoch and guarded by the state read,
//
//   - opens a closed one whose job's consecutive failures reached its
//     breaker_threshold (alarm breaker_open), the probe due after
//     breaker_cooldown;
//   - when an open one's probe is due, makes the oldest held work of its
//     job the probe — a failed slot waiting for its retry (retried now),
//     else an unplaced slot — and moves it to probing; with neither, the
//     start path starts the oldest due run of the job with its slots
//     unplaced, and the next round takes one of them;
//   - ends probing by the probe's outcome: a success, or a permanent
//     failure (the target answered), closes it (the held runs start, the
//     alarm is resolved); a retryable, timeout or lost failure opens it
//     again for another cool-down; a probe cancelled or moved is replaced
//     at once;
//   - closes one whose job no longer has a breaker (or was deleted).
//
// The breakers left open or probing hold their jobs' runs (holdForBreaker)
// and retries (the store's queries leave them out) until they close.
func (s *Scheduler) CheckBreakers(ctx context.Context, epoch int64) error {
	rows, err := s.store.Breakers(ctx)
	if err != nil {
		return err
	}
	now := s.cfg.Clock.Now()
	held := map[int64]*heldBreaker{}
	for _, b := range rows {
		h, err := s.checkBreaker(ctx, epoch, b, now)
		if err != nil {
			return err
		}
		if h != nil {
			held[b.JobID] = h
		}
	}
	s.mu.Lock()
	s.breakers = held
	s.mu.Unlock()
	return nil
}

// checkBreaker decides for breaker b at now (see CheckBreakers); it
// returns the breaker as it holds the job's work, nil when it holds none.
func (s *Scheduler) checkBreaker(ctx context.Context, epoch int64, b store.BreakerState, now time.Time) (*heldBreaker, error) {
	if b.BreakerThreshold <= 0 {
		if b.State != store.BreakerClosed || b.Failures > 0 {
			how := "breaker_threshold 0"
			_, err := s.store.CloseBreaker(ctx, epoch, b.JobID, b.State, store.ResolvedByAdmin, msg.New(msg.AlarmResolvedBreakerClosed, "how", how), s.closedAlarm(b, how))
			return nil, err
		}
		return nil, nil
	}
	switch b.State {
	case store.BreakerClosed:
		if !jobrules.BreakerTrips(b.BreakerThreshold, b.Failures) {
			return nil, nil
		}
		return s.openBreaker(ctx, epoch, b, now, msg.New(msg.BreakerFailures, "failures", b.Failures, "error", b.LastError))
	case store.BreakerProbing:
		return s.checkProbe(ctx, epoch, b, now)
	}
	h := &heldBreaker{BreakerState: b}
	if b.ProbeAt.Valid && b.ProbeAt.Int64 > now.UnixMilli() {
		return h, nil
	}
	token, err := s.takeProbe(ctx, epoch, b)
	if err != nil || token == 0 {
		h.wantRun = err == nil
		return h, err
	}
	ok, err := s.store.SetProbe(ctx, epoch, b.JobID, token)
	if err != nil || !ok {
		return nil, err
	}
	h.State, h.ProbeToken = store.BreakerProbing, sql.NullInt64{Int64: token, Valid: true}
	s.log.Info("circuit breaker probing", "job_id", b.JobID, "job", b.JobName, "probe_token", token)
	return h, nil
}

// openBreaker opens b (from closed or probing) with reason, the probe due
// after the job's cool-down; from closed it raises breaker_open.
func (s *Scheduler) openBreaker(ctx context.Context, epoch int64, b store.BreakerState, now time.Time, reason msg.Msg) (*heldBreaker, error) {
	probeAt := now.Add(jobrules.BreakerCooldown(b))
	var alarm *store.Alarm
	if b.State == store.BreakerClosed {
		alarm = &store.Alarm{
			Kind: store.AlarmBreakerOpen, Severity: "critical", RaisedBy: s.cfg.ID, App: b.App,
			JobID:    sql.NullInt64{Int64: b.JobID, Valid: true},
			DedupKey: fmt.Sprintf("breaker_open:%d:%d", b.JobID, now.UnixMilli()),
			Msg:      msg.New(msg.AlarmBreakerOpen, "job", b.JobName, "reason", reason, "probe_at", probeAt.UTC().Format(time.RFC3339)),
		}
	}
	ok, err := s.store.OpenBreaker(ctx, epoch, b, now.UnixMilli(), probeAt.UnixMilli(), reason, alarm)
	if err != nil || !ok {
		return nil, err
	}
	s.log.Warn("circuit breaker open", "job_id", b.JobID, "job", b.JobName, "reason", reason.String(), "probe_at", probeAt)
	h := &heldBreaker{BreakerState: b}
	h.State, h.Reason, h.ProbeAt, h.ProbeToken = store.BreakerOpen, reason, sql.NullInt64{Int64: probeAt.UnixMilli(), Valid: true}, sql.NullInt64{}
	if !h.OpenedAt.Valid || b.State == store.BreakerClosed {
		h.OpenedAt = sql.NullInt64{Int64: now.UnixMilli(), Valid: true}
	}
	return h, nil
}

// closedAlarm is the breaker_closed alarm of breaker b closing because of
// how (a string or a msg.Msg); nil when b was closed already (it had only
// counted failures: it never opened).
func (s *Scheduler) closedAlarm(b store.BreakerState, how any) *store.Alarm {
	if b.State == store.BreakerClosed {
		return nil
	}
	return store.BreakerClosedAlarm(b.JobID, b.App, b.JobName, s.cfg.ID, how, s.cfg.Clock.Now().UnixMilli())
}

// checkProbe ends probing breaker b by its probe's outcome, if it has one.
func (s *Scheduler) checkProbe(ctx context.Context, epoch int64, b store.BreakerState, now time.Time) (*heldBreaker, error) {
	o, found, err := s.store.ProbeOutcome(ctx, b.ProbeToken.Int64)
	if err != nil {
		return nil, err
	}
	switch {
	case found && o.Status == store.AttemptSucceeded,
		found && o.Status == store.AttemptFailed && o.ErrorClass == protocol.ClassPermanent:
		how := msg.New(msg.BreakerClosedProbe, "token", b.ProbeToken.Int64)
		if _, err := s.store.CloseBreaker(ctx, epoch, b.JobID, store.BreakerProbing, store.ResolvedByAdmin, msg.New(msg.AlarmResolvedBreakerClosed, "how", how), s.closedAlarm(b, how)); err != nil {
			return nil, err
		}
		s.log.Info("circuit breaker closed: its probe succeeded", "job_id", b.JobID, "job", b.JobName, "probe_token", b.ProbeToken.Int64)
		return nil, nil
	case found && (o.Status == store.AttemptFailed || o.Status == store.AttemptLost):
		errText := o.Error
		if o.Status == store.AttemptLost || errText == "" {
			errText = o.ErrorClass
		}
		return s.openBreaker(ctx, epoch, b, now, msg.New(msg.BreakerProbeFailed, "token", b.ProbeToken.Int64, "error", errText))
	case !found || o.Status == store.AttemptCancelled || o.Status == store.AttemptMoved:
		// No verdict: another probe goes at once, with the reason kept.
		b.State = store.BreakerProbing
		ok, err := s.store.OpenBreaker(ctx, epoch, b, now.UnixMilli(), now.UnixMilli(), b.Reason, nil)
		if err != nil || !ok {
			return nil, err
		}
		h := &heldBreaker{BreakerState: b}
		h.State, h.ProbeAt, h.ProbeToken = store.BreakerOpen, sql.NullInt64{Int64: now.UnixMilli(), Valid: true}, sql.NullInt64{}
		return h, nil
	}
	return &heldBreaker{BreakerState: b}, nil // the probe runs
}

// takeProbe makes the oldest held work of b's job the probe and returns
// its token: a failed slot waiting for a retry (retried now, the cool-down
// was its wait), else an unplaced slot; 0 when the job has neither.
func (s *Scheduler) takeProbe(ctx context.Context, epoch int64, b store.BreakerState) (int64, error) {
	c, ok, err := s.store.HeldRetry(ctx, b.JobID)
	if err != nil {
		return 0, err
	}
	if ok {
		tok, err := s.store.Retry(ctx, epoch, c)
		if err != nil || tok > 0 {
			if tok > 0 {
				s.count(func(st *Stats) { st.Retried++ })
			}
			return tok, err
		}
	}
	return s.store.HeldUnplaced(ctx, b.JobID)
}

// breakerOf is the breaker holding job jobID's work this round, nil when
// none.
func (s *Scheduler) breakerOf(jobID int64) *heldBreaker {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.breakers[jobID]
}

// holdForBreaker decides for pending run r whose job's circuit breaker is
// open or probing: held until the probe is due (at least HoldRecheck) with
// the reason, or — the one run a due probe waits for (heldBreaker.wantRun)
// — started with its slots unplaced (probe true).
func (st *starter) holdForBreaker(r store.PendingRun) (held, probe bool) {
	s := st.s
	b := s.breakerOf(r.JobID)
	if b == nil {
		return false, false
	}
	s.mu.Lock()
	if b.wantRun && !b.taken {
		b.taken = true
		s.mu.Unlock()
		return false, true
	}
	s.mu.Unlock()
	now := s.cfg.Clock.Now()
	until := now.Add(s.cfg.HoldRecheck)
	var cause msg.Msg
	if b.State == store.BreakerProbing {
		cause = msg.New(msg.CauseBreakerProbing, "job", r.JobName, "token", b.ProbeToken.Int64)
	} else {
		probeAt := time.UnixMilli(b.ProbeAt.Int64)
		if probeAt.After(until) {
			until = probeAt
		}
		cause = msg.New(msg.CauseBreakerOpen, "job", r.JobName, "opened_at", time.UnixMilli(b.OpenedAt.Int64).UTC().Format(time.RFC3339),
			"reason", b.Reason, "probe_at", probeAt.UTC().Format(time.RFC3339))
	}
	st.holdRun(r.ID, until, msg.New(msg.RunWaiting, "cause", cause))
	return true, false
}
