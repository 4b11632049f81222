package xxljob_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/xxljob"
	"github.com/shardjob/shardjob/admin/xxljob/internal/goexec"
	"github.com/shardjob/shardjob/deploy/dev/testenv"
)

// TestGoClientEmulation: the test executor behaves like xxl-job-executor-go
// where it matters to the admin: a second run of a handler overwrites the
// first's logId, both callbacks carry the second's, and the first's job id
// stays listed as running (idleBeat busy, its next run refused with an
// array).
func TestGoClientEmulation(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var got []int64
	adm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var items []xxljob.CallbackParam
		_ = json.NewDecoder(r.Body).Decode(&items)
		mu.Lock()
		for _, it := range items {
			got = append(got, it.LogID)
		}
		mu.Unlock()
		_, _ = w.Write([]byte(`{"code":200}`))
	}))
	t.Cleanup(adm.Close)
	e := newGoClient(t, adm.URL, "goapp", "go-token-0123", 300*time.Millisecond)
	c := xxljob.NewClient(5*time.Second, nil)
	t.Cleanup(c.CloseIdleConnections)
	ctx := context.Background()
	at := xxljob.Target{Address: e.Address(), App: "goapp", Token: "go-token-0123"}
	run := func(jobID, logID int64) error {
		return c.Run(ctx, at, xxljob.TriggerParam{JobID: jobID, LogID: logID, ExecutorHandler: "work", GlueType: xxljob.GlueBean, ExecutorBlockStrategy: xxljob.BlockSerial})
	}
	require.NoError(t, run(1024, 11))
	require.NoError(t, run(1025, 12), "another job id of the same handler is taken")
	testenv.WaitFor(t, 10*time.Second, func() (bool, error) {
		mu.Lock()
		defer mu.Unlock()
		return len(got) == 2, nil
	}, "both runs call back")
	mu.Lock()
	require.Equal(t, []int64{12, 12}, got, "both callbacks carry the second run's logId")
	mu.Unlock()
	require.Equal(t, []int64{1024}, e.Listed(), "the first run's job id stays listed as running")
	var ce *xxljob.CallError
	require.ErrorAs(t, c.IdleBeat(ctx, at, 1024), &ce, "idleBeat says busy for it")
	require.NoError(t, c.IdleBeat(ctx, at, 1025))
	require.ErrorAs(t, run(1024, 13), &ce)
	require.True(t, ce.Busy(), "its next run is refused as busy (an array answer)")
	require.ErrorAs(t, c.Run(ctx, at, xxljob.TriggerParam{JobID: 9, LogID: 14, ExecutorHandler: "nope", GlueType: xxljob.GlueBean}), &ce)
	require.Equal(t, "Task not registered", ce.Msg)
	require.Equal(t, 2, e.MaxActive("work"))
}

// TestGoClientOneSlotPerHandler: a 5-slot job of one handler on two
// executors that behave like xxl-job-executor-go (2 s per slot in the
// report; 500 ms here). Each executor gets one slot of the handler at a
// time, the others wait in the admin: every slot succeeds with exactly one
// attempt and its own callback. Before, 3 of the 5 slots stayed running for
// ever (the second slot on an executor overwrote the first's logId).
func TestGoClientOneSlotPerHandler(t *testing.T) {
	t.Parallel()
	a := startAdmin(t, "goapp")
	url := a.srv.URL()
	e1 := newGoClient(t, url, "goapp", a.tokens["goapp"], 500*time.Millisecond)
	e2 := newGoClient(t, url, "goapp", a.tokens["goapp"], 500*time.Millisecond)
	start := time.Now()
	_, runID := a.runJob(t, "go-five", "work", 5, map[string]any{"app": "goapp"})
	r, atts := a.waitRun(t, runID)
	t.Logf("SUMMARY 5 slots × 500ms of one handler on 2 Go-client executors: run %s in %s", r.Status, time.Since(start).Round(time.Millisecond))
	require.Equal(t, store.RunSucceeded, r.Status, r.Error)
	require.Len(t, atts, 5, "one attempt per slot: none lost, none retried")
	perSlot := map[int]int{}
	for _, at := range atts {
		require.Equal(t, store.AttemptSucceeded, at.Status, "slot %d", at.Slot)
		perSlot[at.Slot]++
	}
	require.Len(t, perSlot, 5)
	seen := map[int64]int{}
	for _, e := range []*goexec.Executor{e1, e2} {
		require.Equal(t, 1, e.MaxActive("work"), "one slot of the handler at a time on an executor")
		require.Empty(t, e.Listed(), "no job id left listed as running")
		for _, cb := range e.Callbacks() {
			seen[cb.LogID]++
		}
	}
	for _, at := range atts {
		require.Equal(t, 1, seen[at.Token], "each slot's own logId called back once")
	}

	// Two jobs with the same handler (the client's other way to run two
	// tasks of one handler): their slots take turns too.
	_, runA := a.runJob(t, "go-shared-a", "work", 3, map[string]any{"app": "goapp"})
	_, runB := a.runJob(t, "go-shared-b", "work", 3, map[string]any{"app": "goapp"})
	for _, runID := range []int64{runA, runB} {
		r, atts := a.waitRun(t, runID)
		require.Equal(t, store.RunSucceeded, r.Status, r.Error)
		require.Len(t, atts, 3, "one attempt per slot")
	}
	for _, e := range []*goexec.Executor{e1, e2} {
		require.Equal(t, 1, e.MaxActive("work"), "one slot of the handler at a time on an executor, whatever its job")
		require.Empty(t, e.Listed())
	}
}

// TestGoClientLostCallbackIsFoundByIdleBeat: an xxl-job-executor-go
// executor whose callback did not reach the admin (it does not send one
// again) says it is idle for the slot's job id; the admin marks the slot
// lost with a reason and an alarm and runs it again with a new token — with
// no job timeout, long before the 10-minute result timeout. Before, the
// slot stayed running until that timeout.
func TestGoClientLostCallbackIsFoundByIdleBeat(t *testing.T) {
	t.Parallel()
	a := startAdminWith(t, func(c *xxljob.Config) {
		c.IdleCheckAfter, c.IdleConfirm = time.Second, time.Second
	}, "goapp")
	// Each run works 2.5 s: the admin asks about it while it runs (busy),
	// and must not lose it then.
	e := newGoClient(t, a.srv.URL(), "goapp", a.tokens["goapp"], 2500*time.Millisecond)
	e.LoseCallbacks(1)
	_, runID := a.runJob(t, "go-lost", "work", 1, map[string]any{"app": "goapp"})
	testenv.WaitFor(t, 30*time.Second, func() (bool, error) { return len(e.Callbacks()) == 1, nil }, "the first callback is lost")
	idle := time.Now()
	testenv.WaitFor(t, 30*time.Second, func() (bool, error) { return len(e.Runs()) == 2, nil }, "the slot runs again")
	t.Logf("SUMMARY executor idle without a callback → slot sent again in %s (IdleCheckAfter 1s, IdleConfirm 1s, probes every 300ms; ResultTimeout 10m)", time.Since(idle).Round(time.Millisecond))
	r, atts := a.waitRun(t, runID)
	require.Equal(t, store.RunSucceeded, r.Status, r.Error)
	require.Len(t, atts, 2)
	lost, again := atts[0], atts[1]
	require.Equal(t, store.AttemptLost, lost.Status)
	require.Equal(t, msg.AttemptXXLIdleLost, lost.ErrorMsg.Code)
	require.Contains(t, lost.Error, "no callback came")
	require.Equal(t, store.AttemptSucceeded, again.Status)
	require.Equal(t, lost.Failures, again.Failures, "a lost slot is no failure")
	require.Equal(t, int64(1), a.srv.XXLJob().Stats().IdleLost)
	require.Positive(t, e.BusyIdleBeats(), "asked while it ran the slot: busy, not lost")
	alarms, err := a.st.Alarms(context.Background(), 0, 100)
	require.NoError(t, err)
	found := false
	for _, al := range alarms {
		if al.Kind == store.AlarmExecutorLost && al.Msg.Code == msg.AlarmXXLSlotIdle && al.RunID.Int64 == runID {
			found = true
			require.Contains(t, al.Message, fmt.Sprintf("token %d", lost.Token))
		}
	}
	require.True(t, found, "an executor_lost alarm names the slot")
}
