package scheduler_test

import (
	"context"
	"database/sql"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/internal/clock"
	"github.com/shardjob/shardjob/admin/jobdef"
	"github.com/shardjob/shardjob/admin/runstate"
	"github.com/shardjob/shardjob/admin/scheduler"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/store/storetest"
	"github.com/shardjob/shardjob/deploy/dev/testenv"
	"github.com/shardjob/shardjob/sdk/protocol"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// fakePusher records pushes and accepts everything.
type fakePusher struct {
	mu        sync.Mutex
	pushes    []protocol.AssignRequest
	fail      bool
	failAddr  string         // pushes to this executor fail
	blockAddr string         // pushes to this executor wait for unblock (a frozen executor)
	unblock   chan struct{}  // closed to let blocked pushes fail
	started   map[int64]bool // tokens the executor has started: Release keeps them
	releases  [][]int64      // tokens asked for by Release
	startAll  bool           // answer that every accepted token started at once
	refuse    bool           // accept nothing (an executor that refuses every assignment)
	cancels   []protocol.CancelRequest
}

func (f *fakePusher) Assign(ctx context.Context, addr string, req protocol.AssignRequest) (protocol.AssignResponse, error) {
	if addr == f.blockAddr && f.unblock != nil {
		select {
		case <-f.unblock:
		case <-ctx.Done():
		}
		return protocol.AssignResponse{}, context.DeadlineExceeded
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pushes = append(f.pushes, req)
	var resp protocol.AssignResponse
	if f.fail || addr == f.failAddr {
		return resp, context.DeadlineExceeded
	}
	for _, a := range req.Assignments {
		for _, s := range a.Attempts {
			if !f.refuse {
				resp.Accepted = append(resp.Accepted, s.Token)
			}
		}
	}
	if f.startAll {
		resp.Started = resp.Accepted
	}
	return resp, nil
}

func (f *fakePusher) Cancel(_ context.Context, _ string, req protocol.CancelRequest) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cancels = append(f.cancels, req)
	return nil
}

func (f *fakePusher) Release(_ context.Context, _ string, req protocol.ReleaseRequest) (protocol.ReleaseResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.releases = append(f.releases, req.Tokens)
	resp := protocol.ReleaseResponse{Released: []int64{}}
	for _, t := range req.Tokens {
		if !f.started[t] {
			resp.Released = append(resp.Released, t)
		}
	}
	return resp, nil
}

var _ scheduler.Pusher = (*fakePusher)(nil)

func eachDialect(t *testing.T, fn func(t *testing.T, st *store.Store)) { storetest.EachDialect(t, fn) }

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func createJob(t *testing.T, st *store.Store, spec apitypes.JobSpec, now time.Time) store.Job {
	t.Helper()
	v, err := jobdef.Validate(spec, now)
	require.NoError(t, err)
	id, err := st.CreateJob(context.Background(), v.Job)
	require.NoError(t, err)
	// Pin created_at (the @every anchor) and next_fire_at to the test clock.
	_, err = st.DB().Exec(`UPDATE job SET created_at = ? WHERE id = ?`, now.UnixMilli(), id)
	require.NoError(t, err)
	j, err := st.Job(context.Background(), id)
	require.NoError(t, err)
	return j
}

// online registers an executor (or refreshes it) by a heartbeat and
// returns its row.
func online(t *testing.T, st *store.Store, in store.ExecutorInfo) store.Executor {
	t.Helper()
	e, err := st.Heartbeat(context.Background(), in)
	require.NoError(t, err)
	return e
}

// leading returns a scheduler (newScheduler) after its store recorded
// epoch for "test", the scheduler's id: it leads with that epoch.
func leading(t *testing.T, st *store.Store, c *clock.Manual, p scheduler.Pusher, epoch int64) *scheduler.Scheduler {
	t.Helper()
	s := newScheduler(t, st, c, p)
	claim(t, st, epoch)
	return s
}

// claim records epoch for "test", the id of the tests' schedulers.
func claim(t *testing.T, st *store.Store, epoch int64) {
	t.Helper()
	_, err := st.ClaimEpoch(context.Background(), epoch, "test")
	require.NoError(t, err)
}

func newScheduler(t *testing.T, st *store.Store, c *clock.Manual, p scheduler.Pusher) *scheduler.Scheduler {
	t.Helper()
	s, err := scheduler.New(scheduler.Config{ID: "test", Clock: c, BatchSize: 50}, st, p)
	require.NoError(t, err)
	return s
}

func runsOf(t *testing.T, st *store.Store, jobID int64) []store.Run {
	t.Helper()
	runs, err := st.Runs(context.Background(), store.RunFilter{JobID: jobID, Limit: 1000})
	require.NoError(t, err)
	return runs
}

func TestFireDueCreatesOneRunPerFiringAndAdvances(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		c := clock.NewManual(t0)
		s := leading(t, st, c, &fakePusher{}, 3)
		j := createJob(t, st, apitypes.JobSpec{JobDef: apitypes.JobDef{App: "a", Name: "every-min", Handler: "h", Cron: "* * * * *", SlotCount: 2}}, t0)
		require.Equal(t, t0.Add(time.Minute).UnixMilli(), j.NextFireAt.Int64)

		n, err := s.FireDue(ctx, 3)
		require.NoError(t, err)
		require.Zero(t, n, "nothing due yet")

		c.Set(t0.Add(time.Minute + 200*time.Millisecond))
		n, err = s.FireDue(ctx, 3)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		runs := runsOf(t, st, j.ID)
		require.Len(t, runs, 1)
		require.Equal(t, t0.Add(time.Minute).UnixMilli(), runs[0].ScheduledAt)
		require.Equal(t, int64(3), runs[0].Epoch)
		require.Equal(t, 2, runs[0].SlotCount)
		j, err = st.Job(ctx, j.ID)
		require.NoError(t, err)
		require.Equal(t, t0.Add(2*time.Minute).UnixMilli(), j.NextFireAt.Int64)

		// Firing again at the same instant creates nothing more.
		n, err = s.FireDue(ctx, 3)
		require.NoError(t, err)
		require.Zero(t, n)
		require.Len(t, runsOf(t, st, j.ID), 1)
		require.Equal(t, int64(1), s.Stats().Fired)
	})
}

func TestStaleLeaderCannotFire(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		c := clock.NewManual(t0)
		old := newScheduler(t, st, c, &fakePusher{})
		_, err := st.ClaimEpoch(ctx, 4, "old")
		require.NoError(t, err)
		j := createJob(t, st, apitypes.JobSpec{JobDef: apitypes.JobDef{App: "a", Name: "j", Handler: "h", Cron: "* * * * *"}}, t0)
		// A successor claims a larger epoch while the old leader still runs.
		_, err = st.ClaimEpoch(ctx, 5, "new")
		require.NoError(t, err)
		c.Set(t0.Add(90 * time.Second))
		_, err = old.FireDue(ctx, 4)
		require.ErrorIs(t, err, store.ErrStaleEpoch)
		require.Empty(t, runsOf(t, st, j.ID), "the stale leader wrote nothing")
		j2, err := st.Job(ctx, j.ID)
		require.NoError(t, err)
		require.Equal(t, j.NextFireAt, j2.NextFireAt, "next_fire_at untouched")

		// Lead returns at once for a term whose epoch is not larger.
		done := make(chan struct{})
		go func() { old.Lead(ctx, 5); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Fatal("Lead with an already recorded epoch did not return")
		}
	})
}

func TestMisfirePolicies(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		c := clock.NewManual(t0)
		s := leading(t, st, c, &fakePusher{}, 1)
		once := createJob(t, st, apitypes.JobSpec{JobDef: apitypes.JobDef{App: "a", Name: "once", Handler: "h", Cron: "* * * * *", MisfirePolicy: "run_once"}}, t0)
		skip := createJob(t, st, apitypes.JobSpec{JobDef: apitypes.JobDef{App: "a", Name: "skip", Handler: "h", Cron: "* * * * *", MisfirePolicy: "skip"}}, t0)
		catch := createJob(t, st, apitypes.JobSpec{JobDef: apitypes.JobDef{App: "a", Name: "catch", Handler: "h", Cron: "* * * * *", MisfirePolicy: "catch_up", MaxCatchUp: 3}}, t0)

		// The leader was away for 10 minutes and 30 seconds.
		c.Set(t0.Add(10*time.Minute + 30*time.Second))
		_, err := s.FireDue(ctx, 1)
		require.NoError(t, err)

		count := func(runs []store.Run) (pending, skipped int) {
			for _, r := range runs {
				switch r.Status {
				case store.RunPending:
					pending++
				case store.RunSkipped:
					skipped++
				}
			}
			return
		}
		p, sk := count(runsOf(t, st, once.ID))
		require.Equal(t, 1, p, "run_once fires one run")
		require.Equal(t, 9, sk, "and records every other missed firing as skipped")
		p, sk = count(runsOf(t, st, skip.ID))
		require.Equal(t, 1, p, "skip fires only the on-time firing (12:10, 30s late)")
		require.Equal(t, 9, sk, "and records every late one as skipped")
		p, sk = count(runsOf(t, st, catch.ID))
		require.Equal(t, 4, p, "catch_up fires up to its cap of late firings, plus the on-time one")
		require.Equal(t, 6, sk)
		for _, r := range runsOf(t, st, catch.ID) {
			if r.Status == store.RunPending {
				require.Equal(t, store.TriggerCatchUp, r.TriggerKind)
			}
		}
		for _, id := range []int64{once.ID, skip.ID, catch.ID} {
			j, err := st.Job(ctx, id)
			require.NoError(t, err)
			require.Equal(t, t0.Add(11*time.Minute).UnixMilli(), j.NextFireAt.Int64)
		}
	})
}

func TestOverlapSkipRecordsSkippedFiring(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		c := clock.NewManual(t0)
		s := leading(t, st, c, &fakePusher{}, 1)
		j := createJob(t, st, apitypes.JobSpec{JobDef: apitypes.JobDef{App: "a", Name: "ov", Handler: "h", Cron: "* * * * *", OverlapPolicy: "skip"}}, t0)
		c.Set(t0.Add(time.Minute))
		_, err := s.FireDue(ctx, 1)
		require.NoError(t, err)
		c.Set(t0.Add(2 * time.Minute))
		_, err = s.FireDue(ctx, 1) // the first run is still pending (no executor)
		require.NoError(t, err)
		runs := runsOf(t, st, j.ID)
		require.Len(t, runs, 2)
		require.Equal(t, store.RunSkipped, runs[0].Status, "newest first")
		require.Contains(t, runs[0].Error, "still active")
		require.Equal(t, store.RunPending, runs[1].Status)
	})
}

func TestAssignPushesOneRequestPerExecutorAndRecoversLostSlots(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		c := clock.NewManual(t0)
		p := &fakePusher{}
		s := leading(t, st, c, p, 1)
		exA := online(t, st, store.ExecutorInfo{InstanceID: "a", App: "app", Address: "http://127.0.0.1:1", Capacity: 1, Handlers: []string{"h"}})
		exB := online(t, st, store.ExecutorInfo{InstanceID: "b", App: "app", Address: "http://127.0.0.1:2", Capacity: 3, Handlers: []string{"h"}})
		online(t, st, store.ExecutorInfo{InstanceID: "c", App: "app", Address: "http://127.0.0.1:3", Capacity: 3, Handlers: []string{"other"}})
		j := createJob(t, st, apitypes.JobSpec{JobDef: apitypes.JobDef{App: "app", Name: "j", Handler: "h", Cron: "* * * * *", SlotCount: 8, SlotParams: "0=Beijing"}}, t0)
		run, _, err := st.InsertRun(ctx, 1, store.NewRun{JobID: j.ID, ScheduledAt: 1, TriggerKind: store.TriggerManual, Status: store.RunPending, SlotCount: 8})
		require.NoError(t, err)

		require.NoError(t, s.AssignPending(ctx, 1))
		s.WaitPushes()
		require.Len(t, p.pushes, 2, "one request per executor, never one per slot")
		perExec := map[int]int{}
		for _, req := range p.pushes {
			require.Len(t, req.Assignments, 1)
			perExec[len(req.Assignments[0].Attempts)]++
			for _, sl := range req.Assignments[0].Attempts {
				if sl.Slot == 0 {
					require.Equal(t, "Beijing", sl.Param)
				}
			}
		}
		require.Equal(t, map[int]int{2: 1, 6: 1}, perExec, "slots in proportion to capacity; executor without the handler gets none")
		r, err := st.Run(ctx, run.ID)
		require.NoError(t, err)
		require.Equal(t, store.RunRunning, r.Status)

		// Executor B stops heartbeating: its slots move to A with new tokens.
		_, err = st.DB().Exec(`UPDATE executor SET last_heartbeat = last_heartbeat - 600000 WHERE id = ?`, exB.ID)
		require.NoError(t, err)
		require.NoError(t, s.RecoverLost(ctx, 1))
		s.WaitPushes()
		require.Equal(t, int64(6), s.Stats().Reassigned)
		atts, err := st.Attempts(ctx, run.ID)
		require.NoError(t, err)
		current := 0
		for _, a := range atts {
			if a.Current {
				current++
				require.Equal(t, exA.ID, a.ExecutorID.Int64)
			} else {
				require.Equal(t, store.AttemptLost, a.Status)
			}
		}
		require.Equal(t, 8, current)
		require.Len(t, atts, 14)
		_ = sql.ErrNoRows
	})
}

func TestRetryDelayIsFullJitterAndDeterministic(t *testing.T) {
	t.Parallel()
	base, cap := time.Second, 20*time.Second
	for tok := int64(1); tok < 2000; tok++ {
		for attempt := 1; attempt <= 8; attempt++ {
			d := scheduler.RetryDelay(tok, attempt, base, cap)
			ceiling := min(base*time.Duration(1<<(attempt-1)), cap)
			require.GreaterOrEqual(t, d, time.Duration(0))
			require.Less(t, d, ceiling+1)
			require.Equal(t, d, scheduler.RetryDelay(tok, attempt, base, cap), "deterministic")
		}
	}
	// Spread: the mean of many delays is about half the ceiling.
	var sum time.Duration
	for tok := int64(1); tok <= 10000; tok++ {
		sum += scheduler.RetryDelay(tok, 3, base, cap)
	}
	mean := sum / 10000
	require.InDelta(t, float64(2*time.Second), float64(mean), float64(200*time.Millisecond))
	require.Zero(t, scheduler.RetryDelay(5, 1, 0, cap))
}

func TestFailedSlotIsRetriedOnAnotherExecutorThenDead(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		c := clock.NewManual(t0)
		p := &fakePusher{}
		s := leading(t, st, c, p, 1)
		exA := online(t, st, store.ExecutorInfo{InstanceID: "a", App: "app", Address: "http://127.0.0.1:1", Capacity: 1})
		exB := online(t, st, store.ExecutorInfo{InstanceID: "b", App: "app", Address: "http://127.0.0.1:2", Capacity: 1})
		j := createJob(t, st, apitypes.JobSpec{JobDef: apitypes.JobDef{App: "app", Name: "flaky", Handler: "h", Cron: "@yearly", SlotCount: 1, RetryMax: 1, RetryBackoffMS: 1000}}, t0)
		run, _, err := st.InsertRun(ctx, 1, store.NewRun{JobID: j.ID, ScheduledAt: 1, TriggerKind: store.TriggerManual, Status: store.RunPending, SlotCount: 1})
		require.NoError(t, err)
		require.NoError(t, s.AssignPending(ctx, 1))
		s.WaitPushes()
		current := func() store.Attempt {
			atts, err := st.Attempts(ctx, run.ID)
			require.NoError(t, err)
			for _, a := range atts {
				if a.Current {
					return a
				}
			}
			t.Fatal("no current attempt")
			return store.Attempt{}
		}
		first := current()
		ok, err := runstate.New(st).FinishAttempt(ctx, store.SlotOutcome{SlotResult: protocol.SlotResult{Token: first.Token, Status: store.AttemptFailed, Error: "boom", FinishedAt: t0.UnixMilli()}, ExecutorID: first.ExecutorID.Int64})
		require.NoError(t, err)
		require.True(t, ok)
		r, err := st.Run(ctx, run.ID)
		require.NoError(t, err)
		require.Equal(t, store.RunRunning, r.Status, "a slot with retries left keeps the run running")

		// After the backoff (at most 1 s for the first retry) the slot moves to the other executor.
		c.Set(t0.Add(1100 * time.Millisecond))
		require.NoError(t, s.RetryFailed(ctx, 1))
		require.NoError(t, s.PlaceUnplaced(ctx, 1))
		s.WaitPushes()
		second := current()
		require.Equal(t, 2, second.Attempt)
		require.Greater(t, second.Token, first.Token)
		require.NotEqual(t, first.ExecutorID.Int64, second.ExecutorID.Int64, "retried on the other executor")
		require.Contains(t, []int64{exA.ID, exB.ID}, second.ExecutorID.Int64)
		require.Equal(t, int64(1), s.Stats().Retried)

		// The last attempt fails too: the slot is dead and the run failed.
		ok, err = runstate.New(st).FinishAttempt(ctx, store.SlotOutcome{SlotResult: protocol.SlotResult{Token: second.Token, Status: store.AttemptFailed, Error: "boom again", FinishedAt: t0.UnixMilli() + 2000}, ExecutorID: second.ExecutorID.Int64})
		require.NoError(t, err)
		require.True(t, ok)
		r, err = st.Run(ctx, run.ID)
		require.NoError(t, err)
		require.Equal(t, store.RunFailed, r.Status)
		c.Set(t0.Add(time.Hour))
		require.NoError(t, s.RetryFailed(ctx, 1))
		require.Equal(t, int64(1), s.Stats().Retried, "no retry beyond retry_max")

		// An operator retries the failed run by hand.
		n, err := runstate.New(st).Retry(ctx, run.ID)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		r, err = st.Run(ctx, run.ID)
		require.NoError(t, err)
		require.Equal(t, store.RunRunning, r.Status)
		require.NoError(t, s.PlaceUnplaced(ctx, 1))
		s.WaitPushes()
		third := current()
		require.Equal(t, 3, third.Attempt)
		require.True(t, third.ExecutorID.Valid)
		ok, err = runstate.New(st).FinishAttempt(ctx, store.SlotOutcome{SlotResult: protocol.SlotResult{Token: third.Token, Status: store.AttemptSucceeded, FinishedAt: t0.UnixMilli() + 5000}, ExecutorID: third.ExecutorID.Int64})
		require.NoError(t, err)
		require.True(t, ok)
		r, err = st.Run(ctx, run.ID)
		require.NoError(t, err)
		require.Equal(t, store.RunSucceeded, r.Status)
		n, err = runstate.New(st).Retry(ctx, run.ID)
		require.NoError(t, err)
		require.Zero(t, n, "nothing to retry in a succeeded run")
	})
}

func TestIdleExecutorStealsQueuedSlots(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		c := clock.NewManual(t0)
		p := &fakePusher{}
		s, err := scheduler.New(scheduler.Config{ID: "test", Clock: c}, st, p)
		require.NoError(t, err)
		claim(t, st, 1)
		busy := online(t, st, store.ExecutorInfo{InstanceID: "busy", App: "app", Address: "http://127.0.0.1:1", Capacity: 2})
		j := createJob(t, st, apitypes.JobSpec{JobDef: apitypes.JobDef{App: "app", Name: "big", Handler: "h", Cron: "@yearly", SlotCount: 10}}, t0)
		run, _, err := st.InsertRun(ctx, 1, store.NewRun{JobID: j.ID, ScheduledAt: 1, TriggerKind: store.TriggerManual, Status: store.RunPending, SlotCount: 10})
		require.NoError(t, err)
		require.NoError(t, s.AssignPending(ctx, 1)) // all 10 on the only executor; the push acknowledged them
		s.WaitPushes()
		atts, err := st.Attempts(ctx, run.ID)
		require.NoError(t, err)
		// The executor runs 2 (its capacity) and queues 8.
		require.NoError(t, st.MarkStarted(ctx, busy.ID, []int64{atts[0].Token, atts[1].Token}))

		require.NoError(t, s.StealWork(ctx, 1))
		s.WaitPushes()
		require.Zero(t, s.Stats().Stolen, "nobody idle: nothing moves")

		idle := online(t, st, store.ExecutorInfo{InstanceID: "idle", App: "app", Address: "http://127.0.0.1:2", Capacity: 3})
		other := online(t, st, store.ExecutorInfo{InstanceID: "other-app", App: "x", Address: "http://127.0.0.1:3", Capacity: 8})
		require.NoError(t, s.StealWork(ctx, 1))
		s.WaitPushes()
		require.Equal(t, int64(3), s.Stats().Stolen, "the idle executor fills its capacity")

		atts, err = st.Attempts(ctx, run.ID)
		require.NoError(t, err)
		on := map[int64]int{}
		moved := 0
		for _, a := range atts {
			if a.Current {
				on[a.ExecutorID.Int64]++
			} else {
				require.Equal(t, store.AttemptMoved, a.Status)
				require.False(t, a.StartedAt.Valid, "only unstarted slots move")
				moved++
			}
		}
		require.Equal(t, map[int64]int{busy.ID: 7, idle.ID: 3}, on)
		require.Equal(t, 3, moved)
		require.Zero(t, on[other.ID], "another app's executor gets nothing")

		// Running slots never move; the thief is now full: a second pass moves nothing.
		require.NoError(t, s.StealWork(ctx, 1))
		s.WaitPushes()
		require.Equal(t, int64(3), s.Stats().Stolen)
	})
}

func TestMeasuredCostsDrivePlacement(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		c := clock.NewManual(t0)
		p := &fakePusher{}
		s := leading(t, st, c, p, 1)
		exA := online(t, st, store.ExecutorInfo{InstanceID: "a", App: "app", Address: "http://127.0.0.1:1", Capacity: 1})
		exB := online(t, st, store.ExecutorInfo{InstanceID: "b", App: "app", Address: "http://127.0.0.1:2", Capacity: 1})
		j := createJob(t, st, apitypes.JobSpec{JobDef: apitypes.JobDef{App: "app", Name: "skewed", Handler: "h", Cron: "@yearly", SlotCount: 4}}, t0)
		// Slot 0 is measured at 10 s, the others at 1 s.
		for slot, cost := range []float64{10000, 1000, 1000, 1000} {
			_, err := st.DB().Exec(`INSERT INTO slot_stats (job_id, slot, cost_ms, records, samples, last_executor, updated_at) VALUES (?, ?, ?, 0, 3, NULL, 0)`, j.ID, slot, cost)
			require.NoError(t, err)
		}
		run, _, err := st.InsertRun(ctx, 1, store.NewRun{JobID: j.ID, ScheduledAt: 1, TriggerKind: store.TriggerManual, Status: store.RunPending, SlotCount: 4})
		require.NoError(t, err)
		require.NoError(t, s.AssignPending(ctx, 1))
		s.WaitPushes()
		atts, err := st.Attempts(ctx, run.ID)
		require.NoError(t, err)
		owner := map[int]int64{}
		for _, a := range atts {
			owner[a.Slot] = a.ExecutorID.Int64
		}
		for slot := 1; slot < 4; slot++ {
			require.NotEqual(t, owner[0], owner[slot], "the 10 s slot runs alone; the small ones go to the other executor")
		}
		require.ElementsMatch(t, []int64{exA.ID, exB.ID}, []int64{owner[0], owner[1]})
		r, err := st.Run(ctx, run.ID)
		require.NoError(t, err)
		require.Equal(t, int64(10000), r.PredictedMS.Int64, "predicted makespan: the largest slot")
	})
}

func TestFailedPushMovesSlotsElsewhere(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		c := clock.NewManual(t0)
		p := &fakePusher{failAddr: "http://127.0.0.1:1"}
		s := leading(t, st, c, p, 1)
		online(t, st, store.ExecutorInfo{InstanceID: "down", App: "app", Address: "http://127.0.0.1:1", Capacity: 4})
		up := online(t, st, store.ExecutorInfo{InstanceID: "up", App: "app", Address: "http://127.0.0.1:2", Capacity: 4})
		j := createJob(t, st, apitypes.JobSpec{JobDef: apitypes.JobDef{App: "app", Name: "j", Handler: "h", Cron: "@yearly", SlotCount: 8}}, t0)
		run, _, err := st.InsertRun(ctx, 1, store.NewRun{JobID: j.ID, ScheduledAt: 1, TriggerKind: store.TriggerManual, Status: store.RunPending, SlotCount: 8})
		require.NoError(t, err)
		require.NoError(t, s.AssignPending(ctx, 1))
		s.WaitPushes()
		atts, err := st.Attempts(ctx, run.ID)
		require.NoError(t, err)
		current := 0
		for _, a := range atts {
			if a.Current {
				current++
				require.Equal(t, up.ID, a.ExecutorID.Int64, "slot %d: every slot ends on the executor that answered", a.Slot)
				require.True(t, a.Acked)
			}
		}
		require.Equal(t, 8, current)
		require.Equal(t, int64(4), s.Stats().Reassigned)
	})
}

// TestFrozenExecutorDoesNotStallTheLoop: a push to an executor that does not
// answer runs in the background; the loop goes on (here: it detects a lost
// executor and dispatches another run) while the push waits.
func TestFrozenExecutorDoesNotStallTheLoop(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		c := clock.NewManual(t0)
		p := &fakePusher{blockAddr: "http://127.0.0.1:1", unblock: make(chan struct{})}
		s := leading(t, st, c, p, 1)
		frozen := online(t, st, store.ExecutorInfo{InstanceID: "frozen", App: "app", Address: "http://127.0.0.1:1", Capacity: 4})
		j := createJob(t, st, apitypes.JobSpec{JobDef: apitypes.JobDef{App: "app", Name: "j", Handler: "h", Cron: "@yearly", SlotCount: 4}}, t0)
		run, _, err := st.InsertRun(ctx, 1, store.NewRun{JobID: j.ID, ScheduledAt: 1, TriggerKind: store.TriggerManual, Status: store.RunPending, SlotCount: 4})
		require.NoError(t, err)
		require.NoError(t, s.AssignPending(ctx, 1), "returns while the push to the frozen executor waits")

		// Meanwhile the frozen executor misses its heartbeats and a healthy
		// one joins: the loop moves the slots at once.
		up := online(t, st, store.ExecutorInfo{InstanceID: "up", App: "app", Address: "http://127.0.0.1:2", Capacity: 4})
		_, err = st.DB().Exec(`UPDATE executor SET last_heartbeat = last_heartbeat - 600000 WHERE id = ?`, frozen.ID)
		require.NoError(t, err)
		require.NoError(t, s.RecoverLost(ctx, 1))
		require.Equal(t, int64(4), s.Stats().Reassigned)
		// The moved slots reach the healthy executor while the push to the
		// frozen one still hangs.
		require.Eventually(t, func() bool {
			atts, err := st.Attempts(ctx, run.ID)
			require.NoError(t, err)
			for _, a := range atts {
				if a.Current && (a.ExecutorID.Int64 != up.ID || !a.Acked) {
					return false
				}
			}
			return true
		}, 30*time.Second, 5*time.Millisecond, "slots pushed to the healthy executor")
		close(p.unblock) // the stuck push gives up
		s.WaitPushes()
	})
}

// TestStealMovesOnlyReleasedSlots: the victim keeps a slot it started
// between its last heartbeat and the release request; only released slots
// move, so nothing runs twice.
func TestStealMovesOnlyReleasedSlots(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		c := clock.NewManual(t0)
		p := &fakePusher{started: map[int64]bool{}}
		s := leading(t, st, c, p, 1)
		busy := online(t, st, store.ExecutorInfo{InstanceID: "busy", App: "app", Address: "http://127.0.0.1:1", Capacity: 1})
		j := createJob(t, st, apitypes.JobSpec{JobDef: apitypes.JobDef{App: "app", Name: "j", Handler: "h", Cron: "@yearly", SlotCount: 5}}, t0)
		run, _, err := st.InsertRun(ctx, 1, store.NewRun{JobID: j.ID, ScheduledAt: 1, TriggerKind: store.TriggerManual, Status: store.RunPending, SlotCount: 5})
		require.NoError(t, err)
		require.NoError(t, s.AssignPending(ctx, 1))
		s.WaitPushes()
		atts, err := st.Attempts(ctx, run.ID)
		require.NoError(t, err)
		require.NoError(t, st.MarkStarted(ctx, busy.ID, []int64{atts[0].Token}))
		online(t, st, store.ExecutorInfo{InstanceID: "idle", App: "app", Address: "http://127.0.0.1:2", Capacity: 4})
		// The newest queued token (the first the leader asks for) started on
		// the victim after its last heartbeat.
		newest := atts[0].Token
		for _, a := range atts {
			newest = max(newest, a.Token)
		}
		p.mu.Lock()
		p.started[newest] = true
		p.mu.Unlock()

		require.NoError(t, s.StealWork(ctx, 1))
		s.WaitPushes()
		p.mu.Lock()
		require.Len(t, p.releases, 1, "one release request to the victim")
		asked := p.releases[0]
		p.mu.Unlock()
		require.Contains(t, asked, newest)
		require.Equal(t, int64(len(asked)-1), s.Stats().Stolen, "every asked token but the started one moved")
		atts, err = st.Attempts(ctx, run.ID)
		require.NoError(t, err)
		for _, a := range atts {
			if a.Token == newest {
				require.True(t, a.Current, "the started slot stays on its executor")
				require.Equal(t, busy.ID, a.ExecutorID.Int64)
			}
		}
	})
}

// TestLeadingRaisesLeaderChange: each term a replica leads records one
// leader_change alarm.
func TestLeadingRaisesLeaderChange(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, st *store.Store) {
		ctx, cancel := context.WithCancel(context.Background())
		s := newScheduler(t, st, clock.NewManual(t0), &fakePusher{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			s.Lead(ctx, 5)
		}()
		require.Eventually(t, func() bool {
			alarms, err := st.Alarms(context.Background(), 0, 10)
			require.NoError(t, err)
			return len(alarms) == 1 && alarms[0].Kind == store.AlarmLeaderChange && strings.Contains(alarms[0].Message, "epoch 5")
		}, 30*time.Second, 5*time.Millisecond)
		cancel()
		<-done
	})
}

// TestDrainedExecutorGivesBackQueuedSlots: an executor an operator drains
// gets no new slots; the leader asks it to release its queued ones, moves
// those it released to another executor, and leaves its running slot.
func TestDrainedExecutorGivesBackQueuedSlots(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		p := &fakePusher{started: map[int64]bool{}}
		s, err := scheduler.New(scheduler.Config{ID: "test", Clock: clock.NewManual(t0), DisableWorkStealing: true}, st, p)
		require.NoError(t, err)
		claim(t, st, 1)
		busy := online(t, st, store.ExecutorInfo{InstanceID: "busy", App: "app", Address: "http://127.0.0.1:1", Capacity: 1})
		j := createJob(t, st, apitypes.JobSpec{JobDef: apitypes.JobDef{App: "app", Name: "j", Handler: "h", Cron: "@yearly", SlotCount: 4}}, t0)
		run, _, err := st.InsertRun(ctx, 1, store.NewRun{JobID: j.ID, ScheduledAt: 1, TriggerKind: store.TriggerManual, Status: store.RunPending, SlotCount: 4})
		require.NoError(t, err)
		require.NoError(t, s.AssignPending(ctx, 1))
		s.WaitPushes()
		atts, err := st.Attempts(ctx, run.ID)
		require.NoError(t, err)
		require.NoError(t, st.MarkStarted(ctx, busy.ID, []int64{atts[0].Token}))
		p.mu.Lock()
		p.started[atts[0].Token] = true
		p.mu.Unlock()
		other := online(t, st, store.ExecutorInfo{InstanceID: "other", App: "app", Address: "http://127.0.0.1:2", Capacity: 4})

		require.NoError(t, st.SetDrain(ctx, busy.ID, true))
		online, err := st.OnlineExecutors(ctx, "app", 60_000)
		require.NoError(t, err)
		require.Len(t, online, 1, "a drained executor is no placement target")
		require.NoError(t, s.DrainRequested(ctx))
		s.WaitPushes()
		require.NoError(t, s.PlaceUnplaced(ctx, 1))
		s.WaitPushes()
		atts, err = st.Attempts(ctx, run.ID)
		require.NoError(t, err)
		on := map[int64]int{}
		for _, a := range atts {
			if a.Current {
				on[a.ExecutorID.Int64]++
			}
		}
		require.Equal(t, map[int64]int{busy.ID: 1, other.ID: 3}, on, "the running slot stays; the 3 queued moved")
	})
}
