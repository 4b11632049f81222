package scheduler_test

import (
	"context"
	"database/sql"
	"errors"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/internal/clock"
	"github.com/shardjob/shardjob/admin/runstate"
	"github.com/shardjob/shardjob/admin/scheduler"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/sdk/protocol"
)

// placedOf counts the slots of app's runs placed on executors and not
// ended: what its cap limits (counted here from the runs' attempts, not by
// the query the leader uses).
func placedOf(t *testing.T, st *store.Store, app string) int {
	t.Helper()
	return count(t, st, `SELECT COUNT(*) FROM slot_attempt a JOIN job_run r ON r.id = a.run_id
		WHERE r.app = ? AND a.current = 1 AND a.status IN ('assigned', 'running') AND a.executor_id IS NOT NULL`, app)
}

// finishPlaced ends every placed, unended attempt of run as succeeded and
// returns how many it ended.
func finishPlaced(t *testing.T, st *store.Store, runID int64) int {
	t.Helper()
	ctx := context.Background()
	atts, err := st.Attempts(ctx, runID)
	require.NoError(t, err)
	n := 0
	for _, a := range atts {
		if !a.Current || !a.ExecutorID.Valid || (a.Status != store.AttemptAssigned && a.Status != store.AttemptRunning) {
			continue
		}
		ok, err := runstate.New(st).FinishAttempt(ctx, store.SlotOutcome{SlotResult: protocol.SlotResult{Token: a.Token, Status: store.AttemptSucceeded, FinishedAt: t0.UnixMilli()}, ExecutorID: a.ExecutorID.Int64})
		require.NoError(t, err)
		require.True(t, ok)
		n++
	}
	return n
}

// TestCapsHoldSlotsBackUntilRoomFrees: under an app cap of 16, a 100-slot
// run starts with 16 slots placed and the rest waiting unplaced; each round
// places as many as ended; another run of the app waits pending, saying
// why, until the first run's slots are all placed; an app without a cap is
// not held back. A job cap does the same for one job. At no point are more
// slots placed than the cap, and a former leader places nothing.
func TestCapsHoldSlotsBackUntilRoomFrees(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		c := clock.NewManual(t0)
		s := leading(t, st, c, &fakePusher{startAll: true}, 1)
		execs := []store.ExecutorInfo{
			{InstanceID: "c1", App: "capped", Address: "http://127.0.0.1:1", Capacity: 100, Handlers: []string{"h"}},
			{InstanceID: "c2", App: "capped", Address: "http://127.0.0.1:2", Capacity: 100, Handlers: []string{"h"}},
			{InstanceID: "f1", App: "free", Address: "http://127.0.0.1:3", Capacity: 100, Handlers: []string{"h"}},
		}
		for _, e := range execs {
			online(t, st, e)
		}
		big := createJob(t, st, apitypes.JobSpec{JobDef: apitypes.JobDef{App: "capped", Name: "big", Handler: "h", Cron: "@yearly", SlotCount: 100}}, t0)
		small := createJob(t, st, apitypes.JobSpec{JobDef: apitypes.JobDef{App: "capped", Name: "small", Handler: "h", Cron: "@yearly", SlotCount: 4}}, t0)
		other := createJob(t, st, apitypes.JobSpec{JobDef: apitypes.JobDef{App: "free", Name: "other", Handler: "h", Cron: "@yearly", SlotCount: 50}}, t0)
		narrow := createJob(t, st, apitypes.JobSpec{JobDef: apitypes.JobDef{App: "free", Name: "narrow", Handler: "h", Cron: "@yearly", SlotCount: 10}}, t0)
		limitApp(t, st, "capped", func(a *store.App) { a.MaxRunningSlots = sql.NullInt64{Int64: 16, Valid: true} })
		_, err := st.DB().Exec(`UPDATE job SET max_running_slots = 3 WHERE id = ?`, narrow.ID)
		require.NoError(t, err)

		bigRun := pendingRun(t, st, big.ID, t0.UnixMilli()-2, store.TriggerManual, 100)
		smallRun := pendingRun(t, st, small.ID, t0.UnixMilli()-1, store.TriggerManual, 4)
		otherRun := pendingRun(t, st, other.ID, t0.UnixMilli(), store.TriggerManual, 50)
		narrowRun := pendingRun(t, st, narrow.ID, t0.UnixMilli(), store.TriggerManual, 10)
		_, err = s.Tick(ctx, 1)
		require.NoError(t, err)
		s.WaitPushes()

		require.Equal(t, 16, placedOf(t, st, "capped"), "the cap's worth of slots placed")
		require.True(t, s.CapHeld(), "work held back: ending slots wake the loop")
		require.Equal(t, 100, count(t, st, `SELECT COUNT(*) FROM slot_attempt WHERE run_id = ? AND current = 1`, bigRun.ID), "every slot has its attempt")
		require.Equal(t, 84, count(t, st, `SELECT COUNT(*) FROM slot_attempt WHERE run_id = ? AND current = 1 AND executor_id IS NULL AND dispatched_at IS NULL AND lease_until IS NULL`, bigRun.ID),
			"the rest wait unplaced, without a lease")
		r, err := st.Run(ctx, smallRun.ID)
		require.NoError(t, err)
		require.Equal(t, store.RunPending, r.Status)
		require.Equal(t, "waiting: app capped runs 16 of its 16 slots (max_running_slots)", r.Error)
		require.Equal(t, 50, count(t, st, `SELECT COUNT(*) FROM slot_attempt WHERE run_id = ? AND executor_id IS NOT NULL`, otherRun.ID), "an app without a cap is not held back")
		require.Equal(t, 3, count(t, st, `SELECT COUNT(*) FROM slot_attempt WHERE run_id = ? AND executor_id IS NOT NULL`, narrowRun.ID), "a job cap of 3")

		// A former leader places nothing: the fence refuses it.
		require.Equal(t, 3, finishPlaced(t, st, narrowRun.ID))
		claim(t, st, 2)
		err = s.PlaceUnplaced(ctx, 1)
		require.True(t, errors.Is(err, store.ErrStaleEpoch), "got %v", err)
		require.Equal(t, 3, count(t, st, `SELECT COUNT(*) FROM slot_attempt WHERE run_id = ? AND executor_id IS NOT NULL`, narrowRun.ID))
		s = leading(t, st, c, &fakePusher{startAll: true}, 3)

		// Rounds: finish what runs, tick; the cap is never exceeded, and the
		// small run starts only once the big one's slots are all placed.
		done := func() bool {
			for _, id := range []int64{bigRun.ID, smallRun.ID, narrowRun.ID} {
				if r, err := st.Run(ctx, id); err != nil || r.Status != store.RunSucceeded {
					return false
				}
			}
			return true
		}
		// Until every run is done (a round that ended nothing is no end: a
		// push of the round before may still be landing), at most 80 rounds.
		for round := 0; round < 80 && !done(); round++ {
			// The executors' heartbeats are on the database clock, which
			// runs on: on a loaded machine the rounds outlasted the
			// lost-after window, the executors counted as offline and
			// the slots left stayed unplaced ("no executor of app capped
			// is online"). They beat at every round.
			for _, e := range execs {
				online(t, st, e)
			}
			finishPlaced(t, st, bigRun.ID)
			finishPlaced(t, st, smallRun.ID)
			finishPlaced(t, st, narrowRun.ID)
			_, err = s.Tick(ctx, 3)
			require.NoError(t, err)
			s.WaitPushes()
			require.LessOrEqual(t, placedOf(t, st, "capped"), 16, "round %d", round)
			require.LessOrEqual(t, count(t, st, `SELECT COUNT(*) FROM slot_attempt WHERE run_id = ? AND current = 1 AND status IN ('assigned', 'running') AND executor_id IS NOT NULL`, narrowRun.ID), 3)
			waitingBig := count(t, st, `SELECT COUNT(*) FROM slot_attempt WHERE run_id = ? AND current = 1 AND executor_id IS NULL`, bigRun.ID)
			r, err := st.Run(ctx, smallRun.ID)
			require.NoError(t, err)
			if waitingBig > 0 {
				require.Equal(t, store.RunPending, r.Status, "round %d: the small run waits behind the big run's %d waiting slots", round, waitingBig)
			}
		}
		for _, id := range []int64{bigRun.ID, smallRun.ID, narrowRun.ID} {
			r, err := st.Run(ctx, id)
			require.NoError(t, err)
			require.Equal(t, store.RunSucceeded, r.Status, "run %d", id)
		}
		require.False(t, s.CapHeld(), "nothing held back any more")
	})
}

// TestRoomOfCaps: the least room of the caps that are set, none below 0.
func TestRoomOfCaps(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		caps  []scheduler.CapUse
		room  int64
		which int
	}{
		{"no caps", []scheduler.CapUse{{}, {}}, math.MaxInt64, -1},
		{"app cap", []scheduler.CapUse{{Max: 16, Used: 10}, {}}, 6, 0},
		{"job cap smaller", []scheduler.CapUse{{Max: 16, Used: 10}, {Max: 3, Used: 1}}, 2, 1},
		{"app cap smaller", []scheduler.CapUse{{Max: 4, Used: 3}, {Max: 3, Used: 1}}, 1, 0},
		{"over the cap (lowered)", []scheduler.CapUse{{Max: 16, Used: 20}, {}}, 0, 0},
		{"full", []scheduler.CapUse{{}, {Max: 3, Used: 3}}, 0, 1},
	} {
		room, which := scheduler.RoomFor(c.caps...)
		require.Equal(t, c.room, room, c.name)
		require.Equal(t, c.which, which, c.name)
	}
}

// TestPrioritiesTakeTheRoomFirstAndLowWorkAges: under an app cap of one
// slot, of three due runs the critical one starts first although it is the
// newest, then the normal one; a low run that has waited three aging
// intervals competes with a new critical run as critical, and, older,
// starts first. The slots carry their run's priority to the executor.
func TestPrioritiesTakeTheRoomFirstAndLowWorkAges(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		c := clock.NewManual(t0)
		p := &fakePusher{startAll: true}
		obs := &capWaits{}
		s, err := scheduler.New(scheduler.Config{ID: "test", Clock: c, PriorityAging: time.Minute, Observer: obs}, st, p)
		require.NoError(t, err)
		claim(t, st, 1)
		online(t, st, store.ExecutorInfo{InstanceID: "a", App: "one", Address: "http://127.0.0.1:1", Capacity: 10, Handlers: []string{"h"}})
		limitApp(t, st, "one", func(a *store.App) { a.MaxRunningSlots = sql.NullInt64{Int64: 1, Valid: true} })
		job := func(name, prio string) store.Job {
			return createJob(t, st, apitypes.JobSpec{JobDef: apitypes.JobDef{App: "one", Name: name, Handler: "h", Cron: "@yearly", Priority: prio}}, t0)
		}
		low, normal, critical := job("low", "low"), job("normal", ""), job("critical", "critical")
		at := t0.UnixMilli()
		lowRun := pendingRun(t, st, low.ID, at-3, store.TriggerManual, 1)
		normalRun := pendingRun(t, st, normal.ID, at-2, store.TriggerManual, 1)
		criticalRun := pendingRun(t, st, critical.ID, at-1, store.TriggerManual, 1)
		startedNow := func() int64 {
			t.Helper()
			_, err := s.Tick(ctx, 1)
			require.NoError(t, err)
			s.WaitPushes()
			var id int64
			require.NoError(t, st.DB().Get(&id, `SELECT r.id FROM job_run r JOIN slot_attempt a ON a.run_id = r.id
				WHERE a.current = 1 AND a.status IN ('assigned', 'running') AND a.executor_id IS NOT NULL`))
			return id
		}
		require.Equal(t, criticalRun.ID, startedNow(), "the newest run, critical, takes the one slot")
		p.mu.Lock()
		require.Equal(t, "critical", p.pushes[len(p.pushes)-1].Assignments[0].Priority, "the executor learns the run's priority")
		p.mu.Unlock()
		require.Equal(t, 1, finishPlaced(t, st, criticalRun.ID))
		require.Equal(t, normalRun.ID, startedNow(), "then normal before low")
		p.mu.Lock()
		require.Empty(t, p.pushes[len(p.pushes)-1].Assignments[0].Priority, "normal goes unsaid")
		p.mu.Unlock()

		// The low run has waited 3 minutes (3 aging intervals) when another
		// critical run comes due: both count as critical, and the low one is older.
		c.Set(t0.Add(3 * time.Minute))
		critical2 := pendingRun(t, st, critical.ID, c.Now().UnixMilli(), store.TriggerManual, 1)
		require.Equal(t, 1, finishPlaced(t, st, normalRun.ID))
		require.Equal(t, lowRun.ID, startedNow(), "aged low work goes before newer critical work")
		require.Equal(t, 1, finishPlaced(t, st, lowRun.ID))
		require.Equal(t, critical2.ID, startedNow())
		obs.mu.Lock()
		defer obs.mu.Unlock()
		require.Equal(t, []string{"one", "one", "one"}, obs.apps, "the normal, low and second critical runs waited for the cap (the first critical did not)")
	})
}

// capWaits is a scheduler.Observer that records the apps of the runs that
// started after waiting for a cap.
type capWaits struct {
	mu   sync.Mutex
	apps []string
}

func (o *capWaits) RunStarted(string, time.Duration) {}
func (o *capWaits) DeadlineMissed(string)            {}
func (o *capWaits) CapWaited(app string, _ time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.apps = append(o.apps, app)
}

// TestStartRateOfAnApp: an app limited to 3 starts a second starts 3 of 10
// due runs at once (the burst), the others wait pending saying why; a
// second later 3 more start; an app without a rate is not held back.
func TestStartRateOfAnApp(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		c := clock.NewManual(t0)
		s := leading(t, st, c, &fakePusher{startAll: true}, 1)
		online(t, st, store.ExecutorInfo{InstanceID: "a", App: "slow", Address: "http://127.0.0.1:1", Capacity: 100, Handlers: []string{"h"}})
		online(t, st, store.ExecutorInfo{InstanceID: "b", App: "fast", Address: "http://127.0.0.1:2", Capacity: 100, Handlers: []string{"h"}})
		limitApp(t, st, "slow", func(a *store.App) { a.MaxStartsPerSecond = sql.NullInt64{Int64: 3, Valid: true} })
		slow := createJob(t, st, apitypes.JobSpec{JobDef: apitypes.JobDef{App: "slow", Name: "s", Handler: "h", Cron: "@yearly"}}, t0)
		fast := createJob(t, st, apitypes.JobSpec{JobDef: apitypes.JobDef{App: "fast", Name: "f", Handler: "h", Cron: "@yearly"}}, t0)
		for i := range 10 {
			pendingRun(t, st, slow.ID, t0.UnixMilli()-int64(i)-1, store.TriggerManual, 1)
			pendingRun(t, st, fast.ID, t0.UnixMilli()-int64(i)-1, store.TriggerManual, 1)
		}
		running := func(jobID int64) int {
			return count(t, st, `SELECT COUNT(*) FROM job_run WHERE job_id = ? AND status = 'running'`, jobID)
		}
		tick := func() {
			_, err := s.Tick(ctx, 1)
			require.NoError(t, err)
			s.WaitPushes()
		}
		tick()
		require.Equal(t, 3, running(slow.ID), "the burst: a second's worth")
		require.Equal(t, 10, running(fast.ID), "no rate: all at once")
		require.Equal(t, 7, count(t, st, `SELECT COUNT(*) FROM job_run WHERE job_id = ? AND status = 'pending' AND error = ?`, slow.ID,
			"waiting: app slow starts at most 3 runs a second (max_starts_per_second)"))
		tick()
		require.Equal(t, 3, running(slow.ID), "no token left in the same instant")
		c.Set(t0.Add(time.Second))
		tick()
		require.Equal(t, 6, running(slow.ID), "a second later: 3 more")
	})
}

// limitApp sets limits of app (its row made first) through set.
func limitApp(t *testing.T, st *store.Store, app string, set func(a *store.App)) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, st.EnsureApp(ctx, app))
	a, err := st.App(ctx, app)
	require.NoError(t, err)
	set(&a)
	require.NoError(t, st.UpdateApp(ctx, a))
}

// TestFairShareOfThePlatformsCapacity: with a platform capacity of 8 slots
// and two apps of weights 1 and 3, each with more due runs than fit, every
// round gives them 2 and 6 slots; the runs that wait say it is the
// platform's capacity; an app with one run (little work) gets its turn in
// the first round it is due.
func TestFairShareOfThePlatformsCapacity(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		c := clock.NewManual(t0)
		s, err := scheduler.New(scheduler.Config{ID: "test", Clock: c, MaxRunningSlots: 8}, st, &fakePusher{startAll: true})
		require.NoError(t, err)
		claim(t, st, 1)
		jobs := map[string]store.Job{}
		for _, app := range []string{"light", "heavy", "tiny"} {
			online(t, st, store.ExecutorInfo{InstanceID: app, App: app, Address: "http://127.0.0.1/" + app, Capacity: 100, Handlers: []string{"h"}})
			jobs[app] = createJob(t, st, apitypes.JobSpec{JobDef: apitypes.JobDef{App: app, Name: "j", Handler: "h", Cron: "@yearly"}}, t0)
		}
		limitApp(t, st, "heavy", func(a *store.App) { a.Weight = sql.NullInt64{Int64: 3, Valid: true} })
		for i := range 40 {
			pendingRun(t, st, jobs["light"].ID, t0.UnixMilli()-1000+int64(i), store.TriggerManual, 1)
			pendingRun(t, st, jobs["heavy"].ID, t0.UnixMilli()-500+int64(i), store.TriggerManual, 1)
		}
		placed := func(app string) int {
			return count(t, st, `SELECT COUNT(*) FROM slot_attempt a JOIN job_run r ON r.id = a.run_id
				WHERE r.app = ? AND a.current = 1 AND a.status IN ('assigned', 'running') AND a.executor_id IS NOT NULL`, app)
		}
		finish := func(app string) {
			runs := runsOf(t, st, jobs[app].ID)
			for _, r := range runs {
				if r.Status == store.RunRunning {
					finishPlaced(t, st, r.ID)
				}
			}
		}
		for round := range 3 {
			_, err := s.Tick(ctx, 1)
			require.NoError(t, err)
			s.WaitPushes()
			require.Equal(t, 2, placed("light"), "round %d: weight 1 of 4", round)
			require.Equal(t, 6, placed("heavy"), "round %d: weight 3 of 4", round)
			finish("light")
			finish("heavy")
		}
		require.Equal(t, 40-6, count(t, st, `SELECT COUNT(*) FROM job_run WHERE job_id = ? AND status = 'pending' AND error LIKE ?`,
			jobs["light"].ID, "waiting: the platform runs % of its 8 slots (--max-running-slots)%"))

		// A small app comes due: it gets a slot in the next round, at
		// the expense of the others' shares (it has used nothing).
		tiny := pendingRun(t, st, jobs["tiny"].ID, t0.UnixMilli(), store.TriggerManual, 1)
		_, err = s.Tick(ctx, 1)
		require.NoError(t, err)
		s.WaitPushes()
		r, err := st.Run(ctx, tiny.ID)
		require.NoError(t, err)
		require.Equal(t, store.RunRunning, r.Status, "little work is not delayed beyond one round")
		require.Equal(t, 8, placed("light")+placed("heavy")+placed("tiny"))
	})
}
