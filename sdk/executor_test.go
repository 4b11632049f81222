package sdk

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/shardjob/shardjob/deploy/dev/testenv"
	"github.com/shardjob/shardjob/sdk/protocol"
)

func TestRegistrationHeartbeat(t *testing.T) {
	t.Parallel()
	fa := newFakeAdmin(t, testSecret)
	e := newExecutor(t, []string{fa.URL()}, map[string]Handler{"zeta": noop, "alpha": noop}, func(c *Config) {
		c.Capacity = 3
		c.Labels = map[string]string{"zone": "z1"}
	})
	require.Regexp(t, `^http://127\.0\.0\.1:\d+$`, e.Addr())

	fa.waitFor(t, "two heartbeats", func(f *fakeAdmin) bool { return len(f.heartbeats) >= 2 })
	fa.mu.Lock()
	hb := fa.heartbeats[0]
	fa.mu.Unlock()
	require.Equal(t, protocol.HeartbeatRequest{
		InstanceID: "exec-" + t.Name(),
		App:        "billing",
		Address:    e.Addr(),
		Capacity:   3,
		Version:    "v1.2.3",
		Handlers:   []string{"alpha", "zeta"},
		Labels:     map[string]string{"zone": "z1"},
		// The process: random, 32 hex digits, the same in every heartbeat.
		Incarnation: e.incarnation,
	}, hb)
	require.Regexp(t, `^[0-9a-f]{32}$`, hb.Incarnation)
	s := waitExec(t, e, "the admin's executor id", func(s Stats) bool { return s.ExecutorID == 42 })
	require.Equal(t, fa.URL(), s.Admin)
}

func TestAssignmentByPushAndHeartbeatStartsOnce(t *testing.T) {
	t.Parallel()
	fa := newFakeAdmin(t, testSecret)
	ra := run("work", 101)
	ra.TimeoutMS = 0
	// The fake keeps delivering the assignment in every heartbeat response,
	// before, during and after the run.
	fa.update(func(f *fakeAdmin) { f.assign = []protocol.RunAssignment{ra} })
	g := newGate()
	e := newExecutor(t, []string{fa.URL()}, map[string]Handler{"work": g.handle}, nil)

	task := recv(t, g.started, "the handler to start")
	require.Equal(t, int64(7), task.RunID)
	require.Equal(t, int64(3), task.JobID)
	require.Equal(t, "job-work", task.JobName)
	require.Equal(t, "work", task.Handler)
	require.True(t, task.ScheduledAt.Equal(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)))
	require.Equal(t, 0, task.Slot)
	require.Equal(t, 1, task.SlotCount)
	require.Equal(t, `{"p":1}`, task.Params)
	require.Equal(t, "param-0", task.SlotParam)
	require.Equal(t, int64(101), task.Token)
	require.Equal(t, 1, task.Attempt)
	require.NotNil(t, task.Logger)

	// The same assignment pushed, twice: accepted (held) but not started again.
	require.Equal(t, []int64{101}, fa.assignPush(t, e, ra))
	require.Equal(t, []int64{101}, fa.assignPush(t, e, ra))
	n := fa.heartbeatCount()
	fa.waitFor(t, "more heartbeats redelivering the assignment", func(f *fakeAdmin) bool { return len(f.heartbeats) >= n+3 })

	g.release <- struct{}{}
	res := fa.waitResult(t, 101)
	require.Equal(t, protocol.SlotSucceeded, res.Status)

	// Still redelivered after the result: still not run again.
	n = fa.heartbeatCount()
	fa.waitFor(t, "heartbeats after the result", func(f *fakeAdmin) bool { return len(f.heartbeats) >= n+3 })
	require.Equal(t, []int64{101}, fa.assignPush(t, e, ra))
	require.EqualValues(t, 1, g.count.Load())
	fa.mu.Lock()
	require.Len(t, fa.results[101], 1)
	fa.mu.Unlock()
	require.EqualValues(t, 1, e.Stats().Started)
}

func TestAssignmentByPushThenHeartbeat(t *testing.T) {
	t.Parallel()
	fa := newFakeAdmin(t, testSecret)
	g := newGate()
	e := newExecutor(t, []string{fa.URL()}, map[string]Handler{"work": g.handle}, nil)
	ra := run("work", 111, 112)
	require.Equal(t, []int64{111, 112}, fa.assignPush(t, e, ra))
	recv(t, g.started, "first slot")
	recv(t, g.started, "second slot")
	fa.update(func(f *fakeAdmin) { f.assign = []protocol.RunAssignment{ra} })
	n := fa.heartbeatCount()
	fa.waitFor(t, "heartbeats delivering the pushed assignment", func(f *fakeAdmin) bool { return len(f.heartbeats) >= n+3 })
	close(g.release)
	require.Equal(t, protocol.SlotSucceeded, fa.waitResult(t, 111).Status)
	require.Equal(t, protocol.SlotSucceeded, fa.waitResult(t, 112).Status)
	require.EqualValues(t, 2, g.count.Load())
}

func TestResultsBatchedAndAcknowledged(t *testing.T) {
	t.Parallel()
	fa := newFakeAdmin(t, testSecret)
	h := func(_ context.Context, task *Task) error {
		task.AddProcessed(int64(task.Slot) + 1)
		task.AddSkipped(2)
		task.AddFailed(3)
		task.AddUncertain(4)
		return nil
	}
	e := newExecutor(t, []string{fa.URL()}, map[string]Handler{"count": h}, func(c *Config) {
		c.ResultBatch = 4
		c.Capacity = 20
	})
	tokens := []int64{201, 202, 203, 204, 205, 206, 207, 208, 209, 210}
	require.Equal(t, tokens, fa.assignPush(t, e, run("count", tokens...)))

	fa.waitFor(t, "all results", func(f *fakeAdmin) bool { return len(f.results) == len(tokens) })
	waitExec(t, e, "every result acknowledged", func(s Stats) bool { return s.PendingResults == 0 && s.ResultsAccepted == 10 })
	fa.mu.Lock()
	defer fa.mu.Unlock()
	for _, b := range fa.batches {
		require.LessOrEqual(t, len(b), 4)
		require.NotEmpty(t, b)
	}
	for i, tok := range tokens {
		rs := fa.results[tok]
		require.Len(t, rs, 1, "token %d delivered once", tok)
		r := rs[0]
		require.Equal(t, protocol.SlotSucceeded, r.Status)
		require.Empty(t, r.Error)
		require.EqualValues(t, i+1, r.Processed)
		require.EqualValues(t, 2, r.Skipped)
		require.EqualValues(t, 3, r.Failed)
		require.EqualValues(t, 4, r.Uncertain)
		require.NotZero(t, r.StartedAt)
		require.GreaterOrEqual(t, r.FinishedAt, r.StartedAt)
	}
}

func TestRejectedResultIsForgottenAndLogged(t *testing.T) {
	t.Parallel()
	fa := newFakeAdmin(t, testSecret)
	fa.update(func(f *fakeAdmin) { f.reject[301] = true })
	var logs testenv.Buffer
	e := newExecutor(t, []string{fa.URL()}, map[string]Handler{"work": noop}, func(c *Config) { c.Logger = debugLogger(&logs) })
	fa.assignPush(t, e, run("work", 301, 302))
	fa.waitResult(t, 301)
	fa.waitResult(t, 302)
	waitExec(t, e, "both acknowledged", func(s Stats) bool { return s.PendingResults == 0 && s.ResultsRejected == 1 && s.ResultsAccepted == 1 })
	var stale []string
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, `msg="stale token: result ignored by admin"`) {
			stale = append(stale, line)
		}
	}
	require.Len(t, stale, 1)
	require.Contains(t, stale[0], "level=WARN")
	require.Contains(t, stale[0], "token=301")
}

func TestResultsKeptWhileAdminDown(t *testing.T) {
	t.Parallel()
	fa := newFakeAdmin(t, testSecret)
	fa.update(func(f *fakeAdmin) { f.down = true })
	e := newExecutor(t, []string{fa.URL()}, map[string]Handler{"work": noop}, nil)
	fa.assignPush(t, e, run("work", 401))
	waitExec(t, e, "the slot to finish", func(s Stats) bool { return s.Succeeded == 1 })
	waitExec(t, e, "result delivery to fail a few times", func(s Stats) bool { return s.ResultFailures >= 3 })
	require.Equal(t, 1, e.Stats().PendingResults)

	fa.update(func(f *fakeAdmin) { f.down = false })
	res := fa.waitResult(t, 401)
	require.Equal(t, protocol.SlotSucceeded, res.Status)
	waitExec(t, e, "the result acknowledged", func(s Stats) bool { return s.PendingResults == 0 })
	fa.mu.Lock()
	require.Len(t, fa.results[401], 1)
	fa.mu.Unlock()
}

func TestFailoverBetweenAdmins(t *testing.T) {
	t.Parallel()
	dead := deadURL(t)
	second := newFakeAdmin(t, testSecret)
	second.update(func(f *fakeAdmin) { f.down = true })
	live := newFakeAdmin(t, testSecret)
	e := newExecutor(t, []string{dead, second.URL(), live.URL()}, map[string]Handler{"work": noop}, nil)

	live.waitFor(t, "heartbeats on the live admin", func(f *fakeAdmin) bool { return len(f.heartbeats) >= 5 })
	// Sticky: only the first heartbeat went through the dead and the down
	// admin before reaching the live one.
	second.mu.Lock()
	require.Equal(t, 1, second.calls[protocol.PathHeartbeat])
	second.mu.Unlock()
	require.Equal(t, live.URL(), e.Stats().Admin)

	fa := live
	fa.assignPush(t, e, run("work", 501))
	require.Equal(t, protocol.SlotSucceeded, live.waitResult(t, 501).Status)

	// The live admin goes down, the second comes back: the executor goes
	// round the list (live → dead → second) and sticks to the second.
	live.update(func(f *fakeAdmin) { f.down = true })
	second.update(func(f *fakeAdmin) { f.down = false })
	second.waitFor(t, "heartbeats on the second admin", func(f *fakeAdmin) bool { return len(f.heartbeats) >= 3 })
	waitExec(t, e, "the second admin in use", func(s Stats) bool { return s.Admin == second.URL() })
}

func TestAdminReplicasLearnedFromHeartbeat(t *testing.T) {
	t.Parallel()
	first := newFakeAdmin(t, testSecret)
	other := newFakeAdmin(t, testSecret)
	first.update(func(f *fakeAdmin) { f.admins = []string{first.URL(), other.URL() + "/", "not a url"} })
	e := newExecutor(t, []string{first.URL()}, map[string]Handler{"work": noop}, nil)
	first.waitFor(t, "two heartbeats", func(f *fakeAdmin) bool { return len(f.heartbeats) >= 2 })
	first.update(func(f *fakeAdmin) { f.down = true })
	other.waitFor(t, "heartbeats on the announced replica", func(f *fakeAdmin) bool { return len(f.heartbeats) >= 2 })
	require.Equal(t, other.URL(), e.Stats().Admin)
}

func TestCancelByPush(t *testing.T) {
	t.Parallel()
	fa := newFakeAdmin(t, testSecret)
	g := newGate()
	e := newExecutor(t, []string{fa.URL()}, map[string]Handler{"work": g.handle}, nil)
	fa.assignPush(t, e, run("work", 601))
	recv(t, g.started, "the handler to start")

	var resp protocol.CancelResponse
	code, body := fa.push(t, e.Addr(), protocol.PathCancel, protocol.CancelRequest{Tokens: []int64{601, 9999}, Reason: "operator clicked stop"}, &resp)
	require.Equal(t, http.StatusOK, code, string(body))
	require.Equal(t, []int64{601}, resp.Cancelled)

	cause := recv(t, g.causes, "the handler's context to end")
	var ce *CancelledError
	require.ErrorAs(t, cause, &ce)
	require.Equal(t, "operator clicked stop", ce.Reason)
	res := fa.waitResult(t, 601)
	require.Equal(t, protocol.SlotCancelled, res.Status)
	require.Equal(t, "cancelled by admin: operator clicked stop", res.Error)
}

func TestCancelByHeartbeat(t *testing.T) {
	t.Parallel()
	fa := newFakeAdmin(t, testSecret)
	g := newGate()
	e := newExecutor(t, []string{fa.URL()}, map[string]Handler{"work": g.handle}, nil)
	fa.assignPush(t, e, run("work", 701))
	recv(t, g.started, "the handler to start")
	fa.update(func(f *fakeAdmin) { f.cancel = []int64{701} })
	var ce *CancelledError
	require.ErrorAs(t, recv(t, g.causes, "the handler's context to end"), &ce)
	res := fa.waitResult(t, 701)
	require.Equal(t, protocol.SlotCancelled, res.Status)
	require.Equal(t, "cancelled by admin", res.Error)
}

func TestCancelQueuedSlot(t *testing.T) {
	t.Parallel()
	fa := newFakeAdmin(t, testSecret)
	g := newGate()
	e := newExecutor(t, []string{fa.URL()}, map[string]Handler{"work": g.handle}, func(c *Config) { c.Capacity = 1 })
	require.Equal(t, []int64{801, 802}, fa.assignPush(t, e, run("work", 801, 802)))
	require.Equal(t, int64(801), recv(t, g.started, "the first slot").Token)
	s := e.Stats()
	require.Equal(t, 1, s.Running)
	require.Equal(t, 1, s.Queued)
	fa.waitFor(t, "a heartbeat reporting the queued slot", func(f *fakeAdmin) bool {
		hb, ok := f.lastHeartbeat()
		return ok && slices.Contains(hb.Running, protocol.RunningSlot{Token: 802, Progress: "queued"})
	})

	var resp protocol.CancelResponse
	code, _ := fa.push(t, e.Addr(), protocol.PathCancel, protocol.CancelRequest{Tokens: []int64{802}}, &resp)
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, []int64{802}, resp.Cancelled)
	res := fa.waitResult(t, 802)
	require.Equal(t, protocol.SlotCancelled, res.Status)
	require.Contains(t, res.Error, "before it started")

	g.release <- struct{}{}
	require.Equal(t, protocol.SlotSucceeded, fa.waitResult(t, 801).Status)
	require.EqualValues(t, 1, g.count.Load(), "the cancelled queued slot never ran")
}

// TestReleaseGivesBackOnlyQueuedSlots: a release request (work stealing)
// gives back queued slots and keeps the running one; a given-back slot never
// starts here, even when delivered again, and is reported in heartbeats
// until the admin says it is no longer this executor's.
func TestReleaseGivesBackOnlyQueuedSlots(t *testing.T) {
	t.Parallel()
	fa := newFakeAdmin(t, testSecret)
	g := newGate()
	e := newExecutor(t, []string{fa.URL()}, map[string]Handler{"work": g.handle}, func(c *Config) { c.Capacity = 1 })
	require.Equal(t, []int64{901, 902, 903}, fa.assignPush(t, e, run("work", 901, 902, 903)))
	require.Equal(t, int64(901), recv(t, g.started, "the first slot").Token)

	var resp protocol.ReleaseResponse
	code, _ := fa.push(t, e.Addr(), protocol.PathRelease, protocol.ReleaseRequest{Tokens: []int64{901, 903, 999}}, &resp)
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, []int64{903}, resp.Released, "the running slot and an unknown token are kept out")
	require.Equal(t, 1, e.Stats().Queued)
	require.EqualValues(t, 1, e.Stats().Released)

	// Delivered again (a heartbeat response crossing the release): held, not run.
	require.Equal(t, []int64{903}, fa.assignPush(t, e, run("work", 903)))
	fa.waitFor(t, "a heartbeat reporting the released token", func(f *fakeAdmin) bool {
		hb, ok := f.lastHeartbeat()
		return ok && slices.Equal(hb.Released, []int64{903})
	})

	g.release <- struct{}{}
	require.Equal(t, int64(902), recv(t, g.started, "the second slot").Token)
	g.release <- struct{}{}
	require.Equal(t, protocol.SlotSucceeded, fa.waitResult(t, 902).Status)
	require.EqualValues(t, 2, g.count.Load(), "the released slot never ran here")

	// The admin moved it: it says so in Cancel, and the executor forgets it.
	fa.update(func(f *fakeAdmin) { f.cancel = []int64{903} })
	fa.waitFor(t, "a heartbeat without released tokens", func(f *fakeAdmin) bool {
		hb, ok := f.lastHeartbeat()
		return ok && len(hb.Released) == 0
	})
	fa.mu.Lock()
	_, reported := fa.results[903]
	fa.mu.Unlock()
	require.False(t, reported, "a released slot has no result")
}

func TestTimeout(t *testing.T) {
	t.Parallel()
	fa := newFakeAdmin(t, testSecret)
	g := newGate()
	e := newExecutor(t, []string{fa.URL()}, map[string]Handler{"slow": g.handle}, nil)
	ra := run("slow", 901)
	ra.TimeoutMS = 50
	fa.assignPush(t, e, ra)
	var te *TimeoutError
	require.ErrorAs(t, recv(t, g.causes, "the timeout"), &te)
	res := fa.waitResult(t, 901)
	require.Equal(t, protocol.SlotFailed, res.Status)
	require.Equal(t, "timed out after 50ms", res.Error)
	require.Equal(t, protocol.ClassTimeout, res.ErrorClass)
}

func TestHandlerErrorAndPanic(t *testing.T) {
	t.Parallel()
	fa := newFakeAdmin(t, testSecret)
	e := newExecutor(t, []string{fa.URL()}, map[string]Handler{
		"boom": func(context.Context, *Task) error { panic("boom at record 17") },
		"err":  func(context.Context, *Task) error { return errors.New("database is read-only") },
		"ok":   noop,
	}, nil)
	fa.assignPush(t, e, run("boom", 1001), run("err", 1002))
	res := fa.waitResult(t, 1001)
	require.Equal(t, protocol.SlotFailed, res.Status)
	require.Equal(t, "handler panicked: boom at record 17", res.Error)
	require.Equal(t, protocol.ClassRetryable, res.ErrorClass, "a panic stays retryable")
	res = fa.waitResult(t, 1002)
	require.Equal(t, protocol.SlotFailed, res.Status)
	require.Equal(t, "database is read-only", res.Error)
	require.Equal(t, protocol.ClassRetryable, res.ErrorClass)

	// The executor survives the panic.
	fa.assignPush(t, e, run("ok", 1003))
	require.Equal(t, protocol.SlotSucceeded, fa.waitResult(t, 1003).Status)
	s := e.Stats()
	require.EqualValues(t, 2, s.Failed)
	require.EqualValues(t, 1, s.Succeeded)
}

func TestUnknownHandlerAndInvalidSlotFailAtOnce(t *testing.T) {
	t.Parallel()
	fa := newFakeAdmin(t, testSecret)
	g := newGate()
	e := newExecutor(t, []string{fa.URL()}, map[string]Handler{"work": g.handle}, nil)
	bad := run("work", 1102)
	bad.Attempts[0].Slot = 5
	require.Equal(t, []int64{1101, 1102}, fa.assignPush(t, e, run("nope", 1101), bad))
	res := fa.waitResult(t, 1101)
	require.Equal(t, protocol.SlotFailed, res.Status)
	require.Equal(t, "no handler named nope registered on this executor (app billing)", res.Error)
	res = fa.waitResult(t, 1102)
	require.Equal(t, protocol.SlotFailed, res.Status)
	require.Equal(t, "invalid assignment: slot 5 is outside [0, 1)", res.Error)
	require.Zero(t, g.count.Load())
}

func TestPushAuthentication(t *testing.T) {
	t.Parallel()
	fa := newFakeAdmin(t, testSecret)
	g := newGate()
	e := newExecutor(t, []string{fa.URL()}, map[string]Handler{"work": g.handle}, nil)
	body := mustJSON(protocol.AssignRequest{Assignments: []protocol.RunAssignment{run("work", 1201)}})

	newReq := func(t *testing.T, path string, body []byte) *http.Request {
		req, err := http.NewRequest(http.MethodPost, e.Addr()+path, bytes.NewReader(body))
		require.NoError(t, err)
		return req
	}
	refused := func(t *testing.T, req *http.Request, want error) {
		t.Helper()
		code, data := fa.do(t, req, nil)
		require.Equal(t, http.StatusUnauthorized, code, string(data))
		var perr protocol.Error
		require.NoError(t, json.Unmarshal(data, &perr))
		require.Contains(t, perr.Error, strings.SplitN(want.Error(), ":", 2)[0])
	}

	t.Run("unsigned assign", func(t *testing.T) {
		refused(t, newReq(t, protocol.PathAssign, body), protocol.ErrUnsigned)
	})
	t.Run("unsigned cancel", func(t *testing.T) {
		refused(t, newReq(t, protocol.PathCancel, mustJSON(protocol.CancelRequest{Tokens: []int64{1201}})), protocol.ErrUnsigned)
	})
	t.Run("wrong secret", func(t *testing.T) {
		req := newReq(t, protocol.PathAssign, body)
		protocol.Sign(req, "another-secret-0123456789", body, time.Now())
		refused(t, req, protocol.ErrBadSignature)
	})
	t.Run("outside the clock window", func(t *testing.T) {
		req := newReq(t, protocol.PathAssign, body)
		protocol.Sign(req, testSecret, body, time.Now().Add(-5*time.Minute))
		refused(t, req, protocol.ErrClockWindow)
	})
	t.Run("body tampered", func(t *testing.T) {
		req := newReq(t, protocol.PathAssign, body)
		protocol.Sign(req, testSecret, []byte(`{}`), time.Now())
		refused(t, req, protocol.ErrBadSignature)
	})
	require.Zero(t, e.Stats().Started, "no refused push may start a slot")

	t.Run("replayed", func(t *testing.T) {
		cancelBody := mustJSON(protocol.CancelRequest{Tokens: []int64{77}})
		req := newReq(t, protocol.PathCancel, cancelBody)
		protocol.Sign(req, testSecret, cancelBody, time.Now())
		code, data := fa.do(t, req, nil)
		require.Equal(t, http.StatusOK, code, string(data))
		again := newReq(t, protocol.PathCancel, cancelBody)
		again.Header = req.Header.Clone()
		refused(t, again, protocol.ErrReplay)
	})
	t.Run("wrong method", func(t *testing.T) {
		req, err := http.NewRequest(http.MethodGet, e.Addr()+protocol.PathAssign, nil)
		require.NoError(t, err)
		code, data := fa.do(t, req, nil)
		require.Equal(t, http.StatusMethodNotAllowed, code, string(data))
	})
	t.Run("health needs no signature", func(t *testing.T) {
		req, err := http.NewRequest(http.MethodGet, e.Addr()+protocol.PathHealth, nil)
		require.NoError(t, err)
		var h protocol.HealthResponse
		code, _ := fa.do(t, req, &h)
		require.Equal(t, http.StatusOK, code)
		require.Equal(t, protocol.HealthResponse{Status: protocol.HealthOK, InstanceID: e.InstanceID()}, h)
	})
}

func TestStopDrainsThenDeregisters(t *testing.T) {
	t.Parallel()
	fa := newFakeAdmin(t, testSecret)
	g := newGate()
	e := buildExecutor(t, []string{fa.URL()}, map[string]Handler{"work": g.handle}, nil)
	require.NoError(t, e.Start(context.Background()))
	fa.assignPush(t, e, run("work", 1301))
	recv(t, g.started, "the handler to start")

	stopped := make(chan error, 1)
	go func() { stopped <- e.Stop(context.Background()) }()
	fa.waitFor(t, "a draining heartbeat", func(f *fakeAdmin) bool { return slices.Contains(f.events, "heartbeat:draining") })

	// Draining: new work is refused, health says so, nothing deregistered yet.
	code, data := fa.push(t, e.Addr(), protocol.PathAssign, protocol.AssignRequest{Assignments: []protocol.RunAssignment{run("work", 1302)}}, nil)
	require.Equal(t, http.StatusServiceUnavailable, code, string(data))
	req, err := http.NewRequest(http.MethodGet, e.Addr()+protocol.PathHealth, nil)
	require.NoError(t, err)
	code, data = fa.do(t, req, nil)
	require.Equal(t, http.StatusServiceUnavailable, code)
	require.Contains(t, string(data), `"status":"draining"`)
	require.NotContains(t, fa.eventsCopy(), "deregister")
	select {
	case err := <-stopped:
		t.Fatalf("Stop returned %v while a slot was running", err)
	default:
	}

	g.release <- struct{}{}
	require.NoError(t, recv(t, stopped, "Stop to return"))
	require.Equal(t, protocol.SlotSucceeded, fa.waitResult(t, 1301).Status)
	ev := fa.eventsCopy()
	res, dereg, draining := slices.Index(ev, "results:1301"), slices.Index(ev, "deregister"), slices.Index(ev, "heartbeat:draining")
	require.NotEqual(t, -1, res, "events %v", ev)
	require.NotEqual(t, -1, dereg, "events %v", ev)
	require.Less(t, draining, dereg, "events %v", ev)
	require.Less(t, res, dereg, "events %v", ev)
	fa.mu.Lock()
	require.Equal(t, []string{e.InstanceID()}, fa.deregs)
	fa.mu.Unlock()
	require.EqualValues(t, 1, g.count.Load())

	// Idempotent, and final.
	require.NoError(t, e.Stop(context.Background()))
	require.ErrorIs(t, e.Start(context.Background()), ErrStopped)
	req, err = http.NewRequest(http.MethodGet, e.Addr()+protocol.PathHealth, nil)
	require.NoError(t, err)
	gone, err := fa.pushHTTP.Do(req)
	if err == nil {
		_ = gone.Body.Close()
	}
	require.Error(t, err, "the HTTP server is gone")
}

func TestStopCancelsSlotsPastDrainTimeout(t *testing.T) {
	t.Parallel()
	fa := newFakeAdmin(t, testSecret)
	g := newGate()
	var logs testenv.Buffer
	e := buildExecutor(t, []string{fa.URL()}, map[string]Handler{"work": g.handle}, func(c *Config) {
		c.DrainTimeout = 50 * time.Millisecond
		c.Logger = slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	require.NoError(t, e.Start(context.Background()))
	fa.assignPush(t, e, run("work", 1401))
	recv(t, g.started, "the handler to start")

	require.NoError(t, e.Stop(context.Background()))
	var se *StoppingError
	require.ErrorAs(t, recv(t, g.causes, "the handler's context to end"), &se)
	res := fa.waitResult(t, 1401)
	require.Equal(t, protocol.SlotCancelled, res.Status)
	require.Equal(t, "cancelled: executor stopping and drain timeout 50ms exceeded", res.Error)
	// Issue 30: durations are logged as durations, not nanoseconds, in JSON
	// logs too.
	require.Equal(t, 2, strings.Count(logs.String(), `"drain_timeout":"50ms"`), logs.String())
	require.NotContains(t, logs.String(), `"drain_timeout":50000000`)
	require.Regexp(t, `"msg":"slot finished".*"duration":"\d+(\.\d+)?m?s"`, logs.String())
	ev := fa.eventsCopy()
	require.Less(t, slices.Index(ev, "results:1401"), slices.Index(ev, "deregister"), "events %v", ev)
}

func TestStopHandsBackQueuedSlots(t *testing.T) {
	t.Parallel()
	fa := newFakeAdmin(t, testSecret)
	g := newGate()
	e := buildExecutor(t, []string{fa.URL()}, map[string]Handler{"work": g.handle}, func(c *Config) { c.Capacity = 1 })
	require.NoError(t, e.Start(context.Background()))
	fa.assignPush(t, e, run("work", 1501, 1502, 1503))
	recv(t, g.started, "the first slot")

	stopped := make(chan error, 1)
	go func() { stopped <- e.Stop(context.Background()) }()
	fa.waitFor(t, "a draining heartbeat without the queued slots", func(f *fakeAdmin) bool {
		hb, ok := f.lastHeartbeat()
		return ok && hb.Draining && slices.Equal(hb.Running, []protocol.RunningSlot{{Token: 1501}})
	})
	g.release <- struct{}{}
	require.NoError(t, recv(t, stopped, "Stop to return"))
	require.EqualValues(t, 1, g.count.Load())
	fa.mu.Lock()
	defer fa.mu.Unlock()
	require.Len(t, fa.results, 1)
	require.Contains(t, fa.results, int64(1501))
	require.Equal(t, []string{e.InstanceID()}, fa.deregs)
}

func TestStopReportsUndeliveredResults(t *testing.T) {
	t.Parallel()
	fa := newFakeAdmin(t, testSecret)
	e := buildExecutor(t, []string{fa.URL()}, map[string]Handler{"work": noop}, func(c *Config) { c.DrainTimeout = 100 * time.Millisecond })
	require.NoError(t, e.Start(context.Background()))
	fa.update(func(f *fakeAdmin) { f.failResult = true })
	fa.assignPush(t, e, run("work", 1601))
	waitExec(t, e, "the slot to finish", func(s Stats) bool { return s.Succeeded == 1 })
	err := e.Stop(context.Background())
	require.ErrorIs(t, err, ErrResultsUndelivered)
	require.ErrorContains(t, err, "1 results")
	var ae *AdminError
	require.ErrorAs(t, err, &ae)
	require.Equal(t, http.StatusServiceUnavailable, ae.StatusCode)
}

// TestStartStopRepeated is not parallel: its leak check needs to be alone.
// (Go runs the sequential tests before resuming the parallel ones.)
func TestStartStopRepeated(t *testing.T) {
	fa := newFakeAdmin(t, testSecret)
	// Everything alive now may stay; whatever the executors start must be gone
	// once they are stopped, including HTTP keep-alive connections.
	before := goleak.IgnoreCurrent()
	for i := range 20 {
		e := buildExecutor(t, []string{fa.URL()}, map[string]Handler{"work": noop}, func(c *Config) { c.InstanceID = "" })
		require.NoError(t, e.Start(context.Background()))
		require.ErrorIs(t, e.Start(context.Background()), ErrAlreadyStarted)
		tok := int64(1700 + i)
		fa.assignPush(t, e, run("work", tok))
		fa.waitResult(t, tok)
		// Concurrent and repeated Stops all return the first one's result.
		errs := make(chan error, 3)
		for range 3 {
			go func() { errs <- e.Stop(context.Background()) }()
		}
		for range 3 {
			require.NoError(t, recv(t, errs, "Stop"))
		}
		require.NoError(t, e.Stop(context.Background()))
		require.ErrorIs(t, e.Start(context.Background()), ErrStopped)
	}
	fa.mu.Lock()
	require.Len(t, fa.deregs, 20)
	fa.mu.Unlock()
	goleak.VerifyNone(t, before)
}

func TestStopBeforeStart(t *testing.T) {
	t.Parallel()
	e := buildExecutor(t, []string{"http://127.0.0.1:1"}, map[string]Handler{"work": noop}, nil)
	require.NoError(t, e.Stop(context.Background()))
	require.ErrorIs(t, e.Start(context.Background()), ErrStopped)
}

func TestStartErrors(t *testing.T) {
	t.Parallel()
	t.Run("port taken", func(t *testing.T) {
		t.Parallel()
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		defer ln.Close()
		e := buildExecutor(t, []string{"http://127.0.0.1:1"}, map[string]Handler{"work": noop}, func(c *Config) { c.ListenAddr = ln.Addr().String() })
		err = e.Start(context.Background())
		require.ErrorContains(t, err, `ListenAddr "`+ln.Addr().String()+`"`)
		require.ErrorContains(t, err, "address already in use")
	})
	t.Run("no handlers", func(t *testing.T) {
		t.Parallel()
		e := buildExecutor(t, []string{"http://127.0.0.1:1"}, nil, nil)
		require.ErrorIs(t, e.Start(context.Background()), ErrNoHandlers)
	})
	t.Run("cancelled context", func(t *testing.T) {
		t.Parallel()
		e := buildExecutor(t, []string{"http://127.0.0.1:1"}, map[string]Handler{"work": noop}, nil)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		require.ErrorIs(t, e.Start(ctx), context.Canceled)
	})
}

func TestHandlePanicsOnProgrammerErrors(t *testing.T) {
	t.Parallel()
	fa := newFakeAdmin(t, testSecret)
	e := buildExecutor(t, []string{fa.URL()}, map[string]Handler{"work": noop}, nil)
	require.PanicsWithValue(t, "sdk: Executor.Handle: empty handler name", func() { e.Handle("", noop) })
	require.PanicsWithValue(t, `sdk: Executor.Handle("x"): nil handler`, func() { e.Handle("x", nil) })
	require.PanicsWithValue(t, `sdk: Executor.Handle: handler "work" registered twice`, func() { e.Handle("work", noop) })
	require.NoError(t, e.Start(context.Background()))
	defer func() { require.NoError(t, e.Stop(context.Background())) }()
	require.Panics(t, func() { e.Handle("late", noop) })
}

func TestCapacityRespected(t *testing.T) {
	t.Parallel()
	fa := newFakeAdmin(t, testSecret)
	var active, peak atomic.Int64
	started := make(chan int64, 100)
	release := make(chan struct{}, 100)
	h := func(ctx context.Context, task *Task) error {
		n := active.Add(1)
		defer active.Add(-1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		started <- task.Token
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	e := newExecutor(t, []string{fa.URL()}, map[string]Handler{"work": h}, func(c *Config) { c.Capacity = 3 })
	tokens := make([]int64, 12)
	for i := range tokens {
		tokens[i] = int64(1801 + i)
	}
	require.Equal(t, tokens, fa.assignPush(t, e, run("work", tokens...)))
	s := e.Stats()
	require.Equal(t, 3, s.Running)
	require.Equal(t, 9, s.Queued)
	for range 3 {
		recv(t, started, "a slot to start")
	}
	fa.waitFor(t, "a heartbeat with 3 running and 9 queued", func(f *fakeAdmin) bool {
		hb, ok := f.lastHeartbeat()
		queued := 0
		for _, r := range hb.Running {
			if r.Progress == "queued" {
				queued++
			}
		}
		return ok && len(hb.Running) == 12 && queued == 9
	})
	// Each release finishes one handler, which starts exactly one queued
	// slot: the oldest.
	for _, want := range tokens[3:] {
		release <- struct{}{}
		require.Equal(t, want, recv(t, started, "a queued slot to start"))
	}
	for range 3 {
		release <- struct{}{}
	}
	fa.waitFor(t, "every result", func(f *fakeAdmin) bool { return len(f.results) == 12 })
	require.EqualValues(t, 3, peak.Load(), "never more than Capacity handlers at once")
	fa.mu.Lock()
	defer fa.mu.Unlock()
	for _, hb := range fa.heartbeats {
		running := 0
		for _, r := range hb.Running {
			if r.Progress != "queued" {
				running++
			}
		}
		require.LessOrEqual(t, running, 3)
	}
}

func TestMaxPendingResultsRefusesNewWork(t *testing.T) {
	t.Parallel()
	fa := newFakeAdmin(t, testSecret)
	fa.update(func(f *fakeAdmin) { f.failResult = true })
	e := newExecutor(t, []string{fa.URL()}, map[string]Handler{"work": noop}, func(c *Config) { c.MaxPendingResults = 2 })
	require.Equal(t, []int64{1901, 1902}, fa.assignPush(t, e, run("work", 1901, 1902)))
	waitExec(t, e, "both slots to finish", func(s Stats) bool { return s.Succeeded == 2 })
	require.Empty(t, fa.assignPush(t, e, run("work", 1903)))
	s := e.Stats()
	require.EqualValues(t, 1, s.Refused)
	require.Equal(t, 2, s.PendingResults)

	fa.update(func(f *fakeAdmin) { f.failResult = false })
	waitExec(t, e, "the results delivered", func(s Stats) bool { return s.PendingResults == 0 })
	require.Equal(t, []int64{1903}, fa.assignPush(t, e, run("work", 1903)))
	require.Equal(t, protocol.SlotSucceeded, fa.waitResult(t, 1903).Status)
}

func TestProgressInHeartbeat(t *testing.T) {
	t.Parallel()
	fa := newFakeAdmin(t, testSecret)
	release := make(chan struct{})
	h := func(ctx context.Context, task *Task) error {
		task.Progress(3, 10)
		select {
		case <-release:
		case <-ctx.Done():
		}
		return nil
	}
	e := newExecutor(t, []string{fa.URL()}, map[string]Handler{"work": h}, nil)
	fa.assignPush(t, e, run("work", 2001))
	fa.waitFor(t, "progress in a heartbeat", func(f *fakeAdmin) bool {
		hb, ok := f.lastHeartbeat()
		return ok && slices.Equal(hb.Running, []protocol.RunningSlot{{Token: 2001, Progress: "3/10"}})
	})
	close(release)
	fa.waitResult(t, 2001)
	fa.waitFor(t, "a heartbeat without the finished slot", func(f *fakeAdmin) bool {
		hb, ok := f.lastHeartbeat()
		return ok && len(hb.Running) == 0
	})
}

func TestHandlerContextKeepsStartValues(t *testing.T) {
	t.Parallel()
	type key struct{}
	fa := newFakeAdmin(t, testSecret)
	got := make(chan any, 1)
	e := buildExecutor(t, []string{fa.URL()}, map[string]Handler{"work": func(ctx context.Context, _ *Task) error {
		got <- ctx.Value(key{})
		return nil
	}}, nil)
	ctx, cancel := context.WithCancel(context.WithValue(context.Background(), key{}, "trace-1"))
	require.NoError(t, e.Start(ctx))
	cancel() // Start's cancellation does not stop the executor
	defer func() { require.NoError(t, e.Stop(context.Background())) }()
	fa.assignPush(t, e, run("work", 2101))
	require.Equal(t, "trace-1", recv(t, got, "the handler"))
	require.Equal(t, protocol.SlotSucceeded, fa.waitResult(t, 2101).Status)
}

func TestStopLeavesStuckHandlerBehind(t *testing.T) {
	t.Parallel()
	fa := newFakeAdmin(t, testSecret)
	started, unblock, returned := make(chan struct{}), make(chan struct{}), make(chan struct{})
	stubborn := func(context.Context, *Task) error { // ignores its context
		defer close(returned)
		close(started)
		<-unblock
		return nil
	}
	e := buildExecutor(t, []string{fa.URL()}, map[string]Handler{"stubborn": stubborn}, func(c *Config) { c.DrainTimeout = 20 * time.Millisecond })
	require.NoError(t, e.Start(context.Background()))
	fa.assignPush(t, e, run("stubborn", 2201))
	recv(t, started, "the handler to start")

	err := e.Stop(context.Background())
	require.ErrorIs(t, err, ErrHandlersStuck)
	require.ErrorContains(t, err, "tokens [2201]")
	fa.mu.Lock()
	require.Empty(t, fa.results)
	require.Equal(t, []string{e.InstanceID()}, fa.deregs)
	fa.mu.Unlock()
	close(unblock)
	recv(t, returned, "the handler to return")
}

// TestPushAnswerSaysWhatStarted: the answer to a push lists the tokens the
// executor started at once apart from the ones it queued (the admin records
// the first as running, so only the second look like work to steal); a
// slot delivered again is reported by what it is now.
func TestPushAnswerSaysWhatStarted(t *testing.T) {
	t.Parallel()
	fa := newFakeAdmin(t, testSecret)
	g := newGate()
	e := newExecutor(t, []string{fa.URL()}, map[string]Handler{"work": g.handle}, func(c *Config) { c.Capacity = 1 })
	var resp protocol.AssignResponse
	push := func(as ...protocol.RunAssignment) {
		t.Helper()
		resp = protocol.AssignResponse{}
		code, body := fa.push(t, e.Addr(), protocol.PathAssign, protocol.AssignRequest{Assignments: as}, &resp)
		require.Equal(t, http.StatusOK, code, string(body))
	}
	push(run("work", 901, 902, 903), run("no-such-handler", 904))
	require.Equal(t, []int64{901, 902, 903, 904}, resp.Accepted)
	require.Equal(t, []int64{901, 904}, resp.Started, "901 runs, 904 failed before it could start; 902 and 903 wait for capacity")
	require.Equal(t, int64(901), recv(t, g.started, "the first slot").Token)

	g.release <- struct{}{} // 901 ends, 902 starts
	require.Equal(t, int64(902), recv(t, g.started, "the second slot").Token)
	push(run("work", 901, 902, 903))
	require.Equal(t, []int64{901, 902, 903}, resp.Accepted)
	require.Equal(t, []int64{901, 902}, resp.Started, "finished and running are not queued; 903 still is")
	g.release <- struct{}{}
	g.release <- struct{}{}
	require.Equal(t, protocol.SlotSucceeded, fa.waitResult(t, 903).Status)
}

// TestExpiredPushStartsNothing: a push read after its validity bound (the
// executor was frozen while it waited in the socket; the admin may have
// moved the slots since) is refused whole with 410, and none of its slots
// starts, even when the same token comes again within its bound later.
func TestExpiredPushStartsNothing(t *testing.T) {
	t.Parallel()
	fa := newFakeAdmin(t, testSecret)
	g := newGate()
	e := newExecutor(t, []string{fa.URL()}, map[string]Handler{"work": g.handle}, nil)
	var resp protocol.AssignResponse
	code, body := fa.push(t, e.Addr(), protocol.PathAssign, protocol.AssignRequest{
		Assignments: []protocol.RunAssignment{run("work", 951, 952)}, ValidUntilMS: time.Now().Add(-time.Second).UnixMilli(),
	}, &resp)
	require.Equal(t, http.StatusGone, code, string(body))
	require.Contains(t, string(body), "expired")
	require.EqualValues(t, 2, e.Stats().Refused)
	require.Zero(t, e.Stats().Started, "nothing of an expired push starts")

	// A push within its bound is taken as usual.
	code, body = fa.push(t, e.Addr(), protocol.PathAssign, protocol.AssignRequest{
		Assignments: []protocol.RunAssignment{run("work", 953)}, ValidUntilMS: time.Now().Add(time.Minute).UnixMilli(),
	}, &resp)
	require.Equal(t, http.StatusOK, code, string(body))
	require.Equal(t, []int64{953}, resp.Accepted)
	require.Equal(t, int64(953), recv(t, g.started, "the valid slot").Token)
	g.release <- struct{}{}
	require.Equal(t, protocol.SlotSucceeded, fa.waitResult(t, 953).Status)
	require.EqualValues(t, 1, g.count.Load())
}

// TestExpiredHeartbeatAssignmentsAreIgnored: assignments in a heartbeat
// response read after their bound are not taken; once the admin's answer
// is fresh again they are.
func TestExpiredHeartbeatAssignmentsAreIgnored(t *testing.T) {
	t.Parallel()
	fa := newFakeAdmin(t, testSecret)
	g := newGate()
	fa.update(func(f *fakeAdmin) {
		f.assign = []protocol.RunAssignment{run("work", 961)}
		f.assignTTL = -time.Second
	})
	e := newExecutor(t, []string{fa.URL()}, map[string]Handler{"work": g.handle}, func(c *Config) { c.HeartbeatInterval = 20 * time.Millisecond })
	fa.waitFor(t, "three heartbeats answered with expired assignments", func(f *fakeAdmin) bool { return len(f.heartbeats) >= 3 })
	require.Zero(t, e.Stats().Started, "expired assignments are not taken")
	fa.update(func(f *fakeAdmin) { f.assignTTL = time.Minute })
	require.Equal(t, int64(961), recv(t, g.started, "the slot, once the answer is fresh").Token)
	g.release <- struct{}{}
	require.Equal(t, protocol.SlotSucceeded, fa.waitResult(t, 961).Status)
}

// TestHeartbeatsTellTheProcessAndItsUnsentResults: every heartbeat carries
// the incarnation of the process (the same for its life, another for the
// next process under the same instance id), and the tokens whose results
// no admin has acknowledged yet, which are not lost when it restarted.
func TestHeartbeatsTellTheProcessAndItsUnsentResults(t *testing.T) {
	t.Parallel()
	fa := newFakeAdmin(t, testSecret)
	fa.update(func(f *fakeAdmin) { f.failResult = true })
	hello := map[string]Handler{"hello": func(context.Context, *Task) error { return nil }}
	e := newExecutor(t, []string{fa.URL()}, hello, func(c *Config) { c.HeartbeatInterval = 20 * time.Millisecond })
	require.Equal(t, []int64{971}, fa.assignPush(t, e, run("hello", 971)))
	fa.waitFor(t, "a heartbeat listing the undelivered result", func(f *fakeAdmin) bool {
		hb, ok := f.lastHeartbeat()
		return ok && slices.Equal(hb.Unsent, []int64{971}) && len(hb.Running) == 0
	})
	other := newExecutor(t, []string{fa.URL()}, hello, func(c *Config) { c.HeartbeatInterval = 20 * time.Millisecond })
	fa.waitFor(t, "heartbeats of both processes", func(f *fakeAdmin) bool {
		seen := map[string]bool{}
		for _, hb := range f.heartbeats {
			require.Len(t, hb.Incarnation, 32)
			seen[hb.Incarnation] = true
		}
		return len(seen) == 2
	})
	require.NotEqual(t, e.incarnation, other.incarnation)
}

// TestAcceptedBatchesAreNumbered: each push answer numbers the batch it
// accepted, and a heartbeat carries the number of the last batch accepted
// before it was built, with every token of that batch the process still
// has (the admin loses the rest at once).
func TestAcceptedBatchesAreNumbered(t *testing.T) {
	t.Parallel()
	fa := newFakeAdmin(t, testSecret)
	g := newGate()
	e := newExecutor(t, []string{fa.URL()}, map[string]Handler{"work": g.handle}, func(c *Config) { c.Capacity = 1 })
	fa.waitFor(t, "a heartbeat before any batch", func(f *fakeAdmin) bool {
		hb, ok := f.lastHeartbeat()
		return ok && hb.AcceptSeq == 0
	})
	var first, second protocol.AssignResponse
	code, body := fa.push(t, e.Addr(), protocol.PathAssign, protocol.AssignRequest{Assignments: []protocol.RunAssignment{run("work", 1101)}}, &first)
	require.Equal(t, http.StatusOK, code, string(body))
	code, body = fa.push(t, e.Addr(), protocol.PathAssign, protocol.AssignRequest{Assignments: []protocol.RunAssignment{run("work", 1102)}}, &second)
	require.Equal(t, http.StatusOK, code, string(body))
	require.Equal(t, int64(1), first.AcceptSeq)
	require.Equal(t, int64(2), second.AcceptSeq)
	fa.waitFor(t, "a heartbeat built after batch 2 reporting both tokens", func(f *fakeAdmin) bool {
		hb, ok := f.lastHeartbeat()
		return ok && hb.AcceptSeq == 2 && slices.Equal(hb.Running, []protocol.RunningSlot{{Token: 1101}, {Token: 1102, Progress: "queued"}})
	})
	recv(t, g.started, "the first slot")
	g.release <- struct{}{}
	recv(t, g.started, "the second slot")
	g.release <- struct{}{}
	fa.waitResult(t, 1102)
}

// TestFrozenAdminIsHedged: an admin that stops answering (SIGSTOP: the
// connection stays open, no answer comes) does not hold the executor's
// heartbeats until the HTTP timeout: after a quarter of the loss threshold
// the heartbeat goes to the next admin too, which answers, and the executor
// sticks to it. The HTTP timeout here is an hour: without hedging no
// heartbeat would reach the live admin within the test.
func TestFrozenAdminIsHedged(t *testing.T) {
	t.Parallel()
	frozen := newFakeAdmin(t, testSecret)
	live := newFakeAdmin(t, testSecret)
	e := newExecutor(t, []string{frozen.URL(), live.URL()}, map[string]Handler{"work": noop}, func(c *Config) {
		c.HTTPClient = &http.Client{Timeout: time.Hour}
	})
	frozen.waitFor(t, "heartbeats on the first admin", func(f *fakeAdmin) bool { return len(f.heartbeats) >= 2 })
	require.Zero(t, live.heartbeatCount(), "sticky: the first admin answers")

	thaw := make(chan struct{})
	frozen.update(func(f *fakeAdmin) { f.frozen = thaw })
	t.Cleanup(func() { close(thaw) })
	live.waitFor(t, "heartbeats on the live admin while the first is frozen", func(f *fakeAdmin) bool { return len(f.heartbeats) >= 3 })
	waitExec(t, e, "the live admin in use", func(s Stats) bool { return s.Admin == live.URL() })
	require.Zero(t, e.Stats().HeartbeatFailures, "no heartbeat failed: the slow one was hedged, not waited out")
}

// TestQueuedSlotWaitsForAnAdminAfterLosingContact: a slot queued while no
// admin answers heartbeats (the process was cut off or frozen for longer
// than half the loss threshold; the admins may have moved its slots) does
// not start when capacity frees up: the executor asks first, and the
// heartbeat answer cancels it because it was moved meanwhile. It never runs.
func TestQueuedSlotWaitsForAnAdminAfterLosingContact(t *testing.T) {
	t.Parallel()
	fa := newFakeAdmin(t, testSecret)
	g := newGate()
	e := newExecutor(t, []string{fa.URL()}, map[string]Handler{"work": g.handle}, func(c *Config) { c.Capacity = 1 })
	fa.waitFor(t, "a heartbeat", func(f *fakeAdmin) bool { return len(f.heartbeats) >= 1 })
	require.Equal(t, []int64{1201, 1202}, fa.assignPush(t, e, run("work", 1201, 1202)))
	require.Equal(t, int64(1201), recv(t, g.started, "the first slot").Token)

	// Contact lost for three heartbeat intervals (more than half the loss
	// threshold); meanwhile the admins moved the queued slot.
	fa.update(func(f *fakeAdmin) { f.down = true; f.cancel = []int64{1202} })
	waitExec(t, e, "three failed heartbeats", func(s Stats) bool { return s.HeartbeatFailures >= 3 })
	g.release <- struct{}{} // capacity frees up: 1202 must not start yet
	waitExec(t, e, "the first slot finished", func(s Stats) bool { return s.Succeeded == 1 })
	require.Equal(t, 1, e.Stats().Queued, "held back until an admin answers")

	fa.update(func(f *fakeAdmin) { f.down = false })
	res := fa.waitResult(t, 1202)
	require.Equal(t, protocol.SlotCancelled, res.Status)
	require.Contains(t, res.Error, "before it started")
	require.EqualValues(t, 1, g.count.Load(), "the moved slot never ran here")
}

// A handler's result (Task.SetResult) travels with a succeeded slot's
// outcome; a failed slot sends none, a result over the cap is refused by
// SetResult and a handler that returns that error fails its slot.
func TestHandlerResult(t *testing.T) {
	t.Parallel()
	fa := newFakeAdmin(t, testSecret)
	e := newExecutor(t, []string{fa.URL()}, map[string]Handler{
		"sum": func(_ context.Context, task *Task) error {
			if err := task.SetResult(map[string]int{"first": 1}); err != nil {
				return err
			}
			return task.SetResult(map[string]any{"rows": 42, "slot": task.Slot}) // the last one counts
		},
		"fails": func(_ context.Context, task *Task) error {
			if err := task.SetResult("partial"); err != nil {
				return err
			}
			return errors.New("load failed")
		},
		"big": func(_ context.Context, task *Task) error {
			return task.SetResult(strings.Repeat("x", protocol.MaxResultBytes))
		},
		"plain": noop,
	}, nil)
	fa.assignPush(t, e, run("sum", 2001), run("fails", 2002), run("big", 2003), run("plain", 2004))
	res := fa.waitResult(t, 2001)
	require.Equal(t, protocol.SlotSucceeded, res.Status)
	require.JSONEq(t, `{"rows":42,"slot":0}`, string(res.Result))
	res = fa.waitResult(t, 2002)
	require.Equal(t, protocol.SlotFailed, res.Status)
	require.Nil(t, res.Result)
	res = fa.waitResult(t, 2003)
	require.Equal(t, protocol.SlotFailed, res.Status)
	require.Contains(t, res.Error, "result larger than 16 KiB")
	require.Nil(t, res.Result)
	res = fa.waitResult(t, 2004)
	require.Equal(t, protocol.SlotSucceeded, res.Status)
	require.Nil(t, res.Result)
}

// A request carries at most 256 KiB of handler results (the admin's body
// limit is 1 MiB), and at least one result.
func TestResultBatchBoundedByResultBytes(t *testing.T) {
	t.Parallel()
	big := protocol.SlotResult{Result: json.RawMessage(`"` + strings.Repeat("x", protocol.MaxResultBytes-2) + `"`)}
	pending := make([]protocol.SlotResult, 40)
	for i := range pending {
		pending[i] = big
	}
	require.Equal(t, 16, batchEnd(pending, 256)) // 16 × 16 KiB = 256 KiB
	require.Equal(t, 10, batchEnd(pending, 10))
	require.Equal(t, 3, batchEnd(make([]protocol.SlotResult, 3), 256))
	require.Equal(t, 1, batchEnd([]protocol.SlotResult{{Result: make(json.RawMessage, maxBatchResultBytes+1)}}, 256))
}

// badInput is a handler's own error type that wraps a *PermanentError.
type badInput struct {
	field string
	err   error
}

func (e *badInput) Error() string { return "bad input in " + e.field + ": " + e.err.Error() }
func (e *badInput) Unwrap() error { return e.err }

func TestErrorClassesReported(t *testing.T) {
	t.Parallel()
	fa := newFakeAdmin(t, testSecret)
	e := newExecutor(t, []string{fa.URL()}, map[string]Handler{
		"permanent": func(context.Context, *Task) error { return Permanent(errors.New("account closed")) },
		"own-type": func(context.Context, *Task) error {
			return fmt.Errorf("row 3: %w", &badInput{field: "iban", err: Permanent(errors.New("checksum"))})
		},
		"retry-after": func(context.Context, *Task) error {
			return fmt.Errorf("bank api: %w", RetryAfter(errors.New("rate limited"), 90*time.Second))
		},
		"retry-after-capped": func(context.Context, *Task) error {
			return RetryAfter(errors.New("closed for the night"), 48*time.Hour)
		},
		"both": func(context.Context, *Task) error {
			return RetryAfter(Permanent(errors.New("no such account")), time.Minute)
		},
		"panic-permanent": func(context.Context, *Task) error { panic(Permanent(errors.New("in a panic"))) },
	}, nil)
	fa.assignPush(t, e, run("permanent", 1201), run("own-type", 1202), run("retry-after", 1203),
		run("retry-after-capped", 1204), run("both", 1205), run("panic-permanent", 1206))
	for _, c := range []struct {
		token int64
		class string
		after int64
		err   string
	}{
		{1201, protocol.ClassPermanent, 0, "account closed"},
		{1202, protocol.ClassPermanent, 0, "row 3: bad input in iban: checksum"},
		{1203, protocol.ClassRetryable, 90_000, "bank api: rate limited"},
		{1204, protocol.ClassRetryable, protocol.MaxRetryAfter.Milliseconds(), "closed for the night"},
		{1205, protocol.ClassPermanent, 0, "no such account"},
		{1206, protocol.ClassRetryable, 0, "handler panicked: in a panic"},
	} {
		res := fa.waitResult(t, c.token)
		require.Equal(t, protocol.SlotFailed, res.Status, "token %d", c.token)
		require.Equal(t, c.class, res.ErrorClass, "token %d", c.token)
		require.Equal(t, c.after, res.RetryAfterMS, "token %d", c.token)
		require.Equal(t, c.err, res.Error, "token %d", c.token)
	}
}

func TestPermanentAndRetryAfterWrap(t *testing.T) {
	t.Parallel()
	require.NoError(t, Permanent(nil))
	require.NoError(t, RetryAfter(nil, time.Second))
	base := errors.New("declined")
	err := fmt.Errorf("charge: %w", Permanent(base))
	var pe *PermanentError
	require.ErrorAs(t, err, &pe)
	require.ErrorIs(t, err, base, "Permanent keeps the chain")
	require.Equal(t, "charge: declined", err.Error())
	err = RetryAfter(base, 3*time.Second)
	var ra *RetryAfterError
	require.ErrorAs(t, err, &ra)
	require.Equal(t, 3*time.Second, ra.After)
	require.ErrorIs(t, err, base)
	class, after := classify(err)
	require.Equal(t, protocol.ClassRetryable, class)
	require.EqualValues(t, 3000, after)
	class, after = classify(RetryAfter(base, -time.Second))
	require.Equal(t, protocol.ClassRetryable, class)
	require.Zero(t, after, "a negative delay asks for nothing")
	class, _ = classify(errors.New("plain"))
	require.Equal(t, protocol.ClassRetryable, class)
}
