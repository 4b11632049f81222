package scheduler_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/internal/clock"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/runstate"
	"github.com/shardjob/shardjob/admin/scheduler"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/sdk/protocol"
)

// breakerFixture is a leader, an executor and a job with a circuit breaker
// (threshold 3, cool-down 1m) and retries.
type breakerFixture struct {
	t   *testing.T
	st  *store.Store
	c   *clock.Manual
	s   *scheduler.Scheduler
	job store.Job
	m   *runstate.Machine
}

func newBreakerFixture(t *testing.T, st *store.Store, def apitypes.JobDef) *breakerFixture {
	c := clock.NewManual(t0)
	s := leading(t, st, c, &fakePusher{}, 1)
	online(t, st, store.ExecutorInfo{InstanceID: "a", App: "app", Address: "http://127.0.0.1:1", Capacity: 8})
	def.App, def.Name, def.Handler, def.Cron = "app", "bank", "h", "@yearly"
	j := createJob(t, st, apitypes.JobSpec{JobDef: def}, t0)
	return &breakerFixture{t: t, st: st, c: c, s: s, job: j, m: runstate.New(st)}
}

// run creates a pending manual run of the job at scheduledAt.
func (f *breakerFixture) run(scheduledAt int64, slots int) store.Run {
	f.t.Helper()
	r, _, err := f.st.InsertRun(context.Background(), 1, store.NewRun{JobID: f.job.ID, ScheduledAt: scheduledAt, TriggerKind: store.TriggerManual, Status: store.RunPending, SlotCount: slots})
	require.NoError(f.t, err)
	return r
}

// current returns the current attempt of each slot of run runID.
func (f *breakerFixture) current(runID int64) map[int]store.Attempt {
	f.t.Helper()
	atts, err := f.st.Attempts(context.Background(), runID)
	require.NoError(f.t, err)
	out := map[int]store.Attempt{}
	for _, a := range atts {
		if a.Current {
			out[a.Slot] = a
		}
	}
	return out
}

func (f *breakerFixture) finish(a store.Attempt, status, class string) {
	f.t.Helper()
	require.True(f.t, a.ExecutorID.Valid, "token %d is placed", a.Token)
	ok, err := f.m.FinishAttempt(context.Background(), store.SlotOutcome{SlotResult: protocol.SlotResult{
		Token: a.Token, Status: status, ErrorClass: class, Error: "bank " + status, FinishedAt: f.c.Now().UnixMilli()}, ExecutorID: a.ExecutorID.Int64})
	require.NoError(f.t, err)
	require.True(f.t, ok)
}

// round runs the leader's duties that the breaker touches, in tick order.
func (f *breakerFixture) round(epoch int64) {
	f.t.Helper()
	ctx := context.Background()
	require.NoError(f.t, f.s.CheckBreakers(ctx, epoch))
	require.NoError(f.t, f.s.RetryFailed(ctx, epoch))
	require.NoError(f.t, f.s.PlaceUnplaced(ctx, epoch))
	require.NoError(f.t, f.s.AssignPending(ctx, epoch))
	f.s.WaitPushes()
}

func (f *breakerFixture) breaker() (store.BreakerState, bool) {
	f.t.Helper()
	b, ok, err := f.st.Breaker(context.Background(), f.job.ID)
	require.NoError(f.t, err)
	return b, ok
}

func (f *breakerFixture) breakerAlarms() (open, resolved int) {
	f.t.Helper()
	alarms, err := f.st.Alarms(context.Background(), 0, 1000)
	require.NoError(f.t, err)
	for _, a := range alarms {
		if a.Kind == store.AlarmBreakerOpen {
			if a.ResolvedAt.Valid {
				resolved++
			} else {
				open++
			}
		}
	}
	return open, resolved
}

// TestBreakerOpensHoldsProbesAndCloses (docs/failures.md, "Retry budgets
// and circuit breakers"): 3 consecutive retryable or timeout failures open
// the breaker (a permanent one does not count), with breaker_open; a new
// run waits with the reason and retries wait; after the cool-down exactly
// one probe goes (the oldest held retry); its failure opens the breaker
// again for another cool-down; the next probe's success closes it, resolves
// the alarm and lets the held work go.
func TestBreakerOpensHoldsProbesAndCloses(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, st *store.Store) {
		f := newBreakerFixture(t, st, apitypes.JobDef{SlotCount: 3, RetryMax: 10, RetryBackoffMS: 1000, BreakerThreshold: 3, BreakerCooldown: "1m"})
		a := f.run(1, 3)
		f.round(1)
		atts := f.current(a.ID)
		f.finish(atts[0], store.AttemptFailed, protocol.ClassPermanent)
		f.finish(atts[1], store.AttemptFailed, protocol.ClassRetryable)
		f.finish(atts[2], store.AttemptFailed, protocol.ClassRetryable)
		f.c.Set(t0.Add(2 * time.Second))
		f.round(1)
		b, _ := f.breaker()
		require.Equal(t, store.BreakerClosed, b.State, "two failures count; the permanent one does not")
		require.Equal(t, 2, b.Failures)
		atts = f.current(a.ID)
		require.Equal(t, 2, atts[1].Attempt, "retried")
		f.finish(atts[1], store.AttemptFailed, protocol.ClassTimeout)
		f.round(1)
		b, _ = f.breaker()
		require.Equal(t, store.BreakerOpen, b.State, "the third failure opens it")
		require.Equal(t, t0.Add(2*time.Second+time.Minute).UnixMilli(), b.ProbeAt.Int64)
		require.Equal(t, msg.BreakerFailures, b.Reason.Code)
		open, _ := f.breakerAlarms()
		require.Equal(t, 1, open)

		// Held: a new run waits with the reason; slot 1's retry waits.
		bRun := f.run(t0.Add(3*time.Second).UnixMilli(), 1)
		f.c.Set(t0.Add(30 * time.Second))
		f.round(1)
		r, err := st.Run(context.Background(), bRun.ID)
		require.NoError(t, err)
		require.Equal(t, store.RunPending, r.Status)
		require.Equal(t, msg.RunWaiting, r.ErrorMsg.Code)
		cause, _ := r.ErrorMsg.Nested("cause")
		require.Equal(t, msg.CauseBreakerOpen, cause.Code)
		require.Contains(t, r.Error, "circuit breaker of job bank is open")
		require.Equal(t, 2, f.current(a.ID)[1].Attempt, "the retry waits")

		// Slot 2's retry (placed before it opened) fails meanwhile: nothing changes.
		f.finish(f.current(a.ID)[2], store.AttemptFailed, protocol.ClassRetryable)

		// After the cool-down: one probe, the oldest held retry.
		f.c.Set(t0.Add(2*time.Second + time.Minute))
		f.round(1)
		b, _ = f.breaker()
		require.Equal(t, store.BreakerProbing, b.State)
		atts = f.current(a.ID)
		require.Equal(t, b.ProbeToken.Int64, atts[1].Token, "slot 1 failed first: it probes")
		require.True(t, atts[1].ExecutorID.Valid, "the probe is placed")
		require.Equal(t, store.AttemptFailed, atts[2].Status, "slot 2 still waits")
		f.round(1)
		require.Equal(t, atts[2].Token, f.current(a.ID)[2].Token, "one probe at a time")

		// The probe fails: open again, for another cool-down.
		f.c.Set(t0.Add(70 * time.Second))
		f.finish(atts[1], store.AttemptFailed, protocol.ClassRetryable)
		f.round(1)
		b, _ = f.breaker()
		require.Equal(t, store.BreakerOpen, b.State)
		require.Equal(t, msg.BreakerProbeFailed, b.Reason.Code)
		require.Equal(t, t0.Add(70*time.Second+time.Minute).UnixMilli(), b.ProbeAt.Int64)
		require.Equal(t, t0.Add(2*time.Second).UnixMilli(), b.OpenedAt.Int64, "opened at: when it first opened")
		open, _ = f.breakerAlarms()
		require.Equal(t, 1, open, "one alarm for the outage")

		// The next probe (now slot 2's retry: it waits longest) succeeds:
		// closed, alarm resolved, held work goes.
		f.c.Set(t0.Add(70*time.Second + time.Minute))
		f.round(1)
		b, _ = f.breaker()
		require.Equal(t, store.BreakerProbing, b.State)
		probe := f.current(a.ID)[2]
		require.Equal(t, b.ProbeToken.Int64, probe.Token)
		f.finish(probe, store.AttemptSucceeded, "")
		f.round(1)
		_, ok := f.breaker()
		require.False(t, ok, "closed, nothing counted")
		open, resolved := f.breakerAlarms()
		require.Equal(t, [2]int{0, 1}, [2]int{open, resolved})
		f.round(1) // the held run and retry go
		r, err = st.Run(context.Background(), bRun.ID)
		require.NoError(t, err)
		require.Equal(t, store.RunRunning, r.Status, "the held run started")
		require.Equal(t, 4, f.current(a.ID)[1].Attempt, "slot 1 is retried")
	})
}

// TestBreakerProbeRunAndLeaderChange: with no held retry, the probe is a
// slot of the oldest held run (started with its slots unplaced, one placed
// as the probe); the state survives a leader change — the new leader keeps
// it open and probes, the former one's epoch is refused — and a permanent
// probe failure (the target answered) closes it.
func TestBreakerProbeRunAndLeaderChange(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		f := newBreakerFixture(t, st, apitypes.JobDef{SlotCount: 2, RetryMax: 0, RetryBackoffMS: 1000, BreakerThreshold: 2, BreakerCooldown: "1m"})
		a := f.run(1, 2)
		f.round(1)
		for _, at := range f.current(a.ID) {
			f.finish(at, store.AttemptFailed, protocol.ClassRetryable)
		}
		f.round(1)
		b, _ := f.breaker()
		require.Equal(t, store.BreakerOpen, b.State)
		held := f.run(t0.Add(time.Second).UnixMilli(), 2)

		// A new leader (epoch 2) keeps it open; the old one is fenced.
		c2 := clock.NewManual(t0.Add(10 * time.Second))
		s2 := leading(t, st, c2, &fakePusher{}, 2)
		require.NoError(t, s2.CheckBreakers(ctx, 2))
		require.NoError(t, s2.AssignPending(ctx, 2))
		b, _ = f.breaker()
		require.Equal(t, store.BreakerOpen, b.State)
		r, err := st.Run(ctx, held.ID)
		require.NoError(t, err)
		require.Equal(t, store.RunPending, r.Status, "still held under the new leader")
		f.c.Set(t0.Add(2 * time.Minute))
		require.NoError(t, f.s.CheckBreakers(ctx, 1))
		require.ErrorIs(t, f.s.AssignPending(ctx, 1), store.ErrStaleEpoch, "the former leader cannot start the probe run")

		// The new leader probes with a slot of the held run.
		c2.Set(t0.Add(2 * time.Minute))
		require.NoError(t, s2.CheckBreakers(ctx, 2))
		require.NoError(t, s2.AssignPending(ctx, 2))
		require.NoError(t, s2.CheckBreakers(ctx, 2))
		require.NoError(t, s2.PlaceUnplaced(ctx, 2))
		s2.WaitPushes()
		b, _ = f.breaker()
		require.Equal(t, store.BreakerProbing, b.State)
		require.Equal(t, int64(2), b.Epoch)
		atts := f.current(held.ID)
		require.Len(t, atts, 2)
		require.Equal(t, b.ProbeToken.Int64, atts[0].Token, "the oldest slot probes")
		require.True(t, atts[0].ExecutorID.Valid)
		require.False(t, atts[1].ExecutorID.Valid, "the other slot waits")

		f.finish(atts[0], store.AttemptFailed, protocol.ClassPermanent)
		require.NoError(t, s2.CheckBreakers(ctx, 2))
		_, ok := f.breaker()
		require.False(t, ok, "a permanent failure: the target answered, closed")
		require.NoError(t, s2.PlaceUnplaced(ctx, 2))
		require.True(t, f.current(held.ID)[1].ExecutorID.Valid, "the held slot is placed")
	})
}

// TestRetryBudgetSpent: retries may be at most retry_budget_percent of the
// job's first attempts over the window; the retry beyond it is not made —
// the slot fails with the reason (slot_dead) and the run settles; the
// backoff is capped by retry_backoff_max.
func TestRetryBudgetSpent(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		f := newBreakerFixture(t, st, apitypes.JobDef{SlotCount: 1, RetryMax: 5, RetryBackoffMS: 3_600_000, RetryBackoffMax: "1s",
			RetryBudgetPercent: 100, RetryBudgetWindow: "10m"})
		a := f.run(t0.UnixMilli(), 1)
		f.round(1)
		f.finish(f.current(a.ID)[0], store.AttemptFailed, protocol.ClassRetryable)
		f.c.Set(t0.Add(time.Second + time.Millisecond)) // past the capped backoff
		f.round(1)
		atts := f.current(a.ID)
		require.Equal(t, 2, atts[0].Attempt, "one retry for one first attempt: within 100%")
		f.finish(atts[0], store.AttemptFailed, protocol.ClassRetryable)
		f.c.Set(t0.Add(3 * time.Second))
		f.round(1)
		atts = f.current(a.ID)
		require.Equal(t, 2, atts[0].Attempt, "a second retry would be 200%: not made")
		require.Equal(t, msg.AttemptBudgetSpent, atts[0].ErrorMsg.Code)
		require.Contains(t, atts[0].ErrorMsg.String(), "retry budget is spent (1 retries for 1 first attempts in the last 10m0s, at most 100%)")
		r, err := st.Run(ctx, a.ID)
		require.NoError(t, err)
		require.Equal(t, store.RunFailed, r.Status, "the slot is final: the run settles")
		alarms, err := st.Alarms(ctx, 0, 100)
		require.NoError(t, err)
		dead := 0
		for _, al := range alarms {
			if al.Kind == store.AlarmSlotDead && al.Msg.Code == msg.AlarmSlotDeadBudget {
				dead++
			}
		}
		require.Equal(t, 1, dead)
		letters := count(t, st, `SELECT COUNT(*) FROM dead_letter WHERE token = ?`, atts[0].Token)
		require.Equal(t, 1, letters, "the slot the budget let die is a dead letter")
	})
}
