package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/cli"
	"github.com/shardjob/shardjob/deploy/dev/testenv"
	harness "github.com/shardjob/shardjob/deploy/dev/testenv/cluster"
)

// downTarget is an HTTP server that answers 503 while down and 204 once
// up, and counts the requests it was sent.
type downTarget struct {
	*httptest.Server
	down atomic.Bool
	mu   sync.Mutex
	hits []time.Time
}

func newDownTarget(t *testing.T) *downTarget {
	d := &downTarget{}
	d.down.Store(true)
	d.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		d.mu.Lock()
		d.hits = append(d.hits, time.Now())
		d.mu.Unlock()
		if d.down.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(d.Close)
	return d
}

// hitsBetween counts the requests received in [from, to).
func (d *downTarget) hitsBetween(from, to time.Time) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := 0
	for _, h := range d.hits {
		if !h.Before(from) && h.Before(to) {
			n++
		}
	}
	return n
}

// breakerOf reads the circuit breaker of job id (nil while closed with no
// failure counted).
func breakerOf(c *cluster, id int64) (*apitypes.Breaker, error) {
	var j apitypes.Job
	if _, err := c.API.Call(context.Background(), http.MethodGet, fmt.Sprintf("/api/v1/jobs/%d", id), nil, &j); err != nil {
		return nil, err
	}
	return j.Breaker, nil
}

// breakerAlarm is the newest alarm of kind (breaker_open, breaker_closed)
// of job id, nil for none. (A job's alarms of an hour share a group: the
// group's latest may be of another kind.)
func breakerAlarm(c *cluster, id int64, kind ...string) (*apitypes.AlarmView, error) {
	k := "breaker_open"
	if len(kind) > 0 {
		k = kind[0]
	}
	var groups struct {
		Groups []apitypes.AlarmGroupView `json:"groups"`
	}
	if _, err := c.API.Call(context.Background(), http.MethodGet, fmt.Sprintf("/api/v1/alarms?kind=%s&job_id=%d", k, id), nil, &groups); err != nil {
		return nil, err
	}
	for _, g := range groups.Groups {
		var members apitypes.AlarmGroupAlarms
		if _, err := c.API.Call(context.Background(), http.MethodGet, fmt.Sprintf("/api/v1/alarm-groups/%d/alarms", g.ID), nil, &members); err != nil {
			return nil, err
		}
		for _, a := range members.Alarms { // newest first
			if a.Kind == k {
				return &a, nil
			}
		}
	}
	return nil, nil
}

// TestBreakerHoldsADownTargetAcrossAFailover (issue 37), with real
// processes: two admin replicas, an executor whose operator opened the
// built-in http handler, and a job firing every second whose target
// answers 503 (retryable) until the test brings it up. After 3 consecutive
// failures the breaker opens with a breaker_open alarm; while it is open
// the job's new runs wait (pending, with the breaker as their reason) and
// the target sees only the probes, one per cool-down (4 s) instead of one
// request per second. The leader is killed with kill -9: the replica takes
// over with the breaker still open and still holds the runs. Once the
// target answers again the next probe closes the breaker, the alarm is
// resolved by the admin, and the held runs start and succeed.
func TestBreakerHoldsADownTargetAcrossAFailover(t *testing.T) {
	const cooldown = 4 * time.Second
	target := newDownTarget(t)
	c := newClusterWith(t, "--zk-session-timeout", "2s")
	replica := c.startReplica("replica")
	c.Exec.Admins = c.API.Base + "," + replica.URL
	ex := c.StartExecutor(harness.ExecutorOpts{App: "bank", Capacity: 4, InstanceID: "bank-http", LogDir: logDir(t),
		Args: []string{"--http-allow", "127.0.0.1"}})
	c.WaitOnline(ex)

	params, err := json.Marshal(map[string]any{"url": target.URL + "/settle", "timeout_ms": 2000})
	require.NoError(t, err)
	job := c.CreateJob(apitypes.JobSpec{JobDef: apitypes.JobDef{
		App: "bank", Name: "settle", Handler: "http", Cron: "* * * * * *", SlotCount: 1, Params: string(params),
		BreakerThreshold: 3, BreakerCooldown: cooldown.String(),
	}})

	// The breaker opens after 3 consecutive 503s, with its alarm.
	var opened *apitypes.Breaker
	testenv.WaitFor(t, runDeadline, func() (bool, error) {
		b, err := breakerOf(c, job)
		opened = b
		return err == nil && b != nil && b.State != apitypes.BreakerClosed, err
	}, "the breaker did not open")
	require.NotNil(t, opened.OpenedAt)
	require.Regexp(t, `^\d+ consecutive failures of its slots \(last: .*503`, opened.Reason)
	openSeen := time.Now()
	alarm, err := breakerAlarm(c, job)
	require.NoError(t, err)
	require.NotNil(t, alarm, "a breaker_open alarm")
	require.Nil(t, alarm.ResolvedAt, "the breaker_open alarm is open")
	require.Equal(t, "critical", alarm.Severity)

	// While open, the job's due runs wait with the breaker as their reason
	// (the newest pending runs are fired ahead of their time, not due yet).
	heldRun := func(what string) apitypes.Run {
		var held apitypes.Run
		testenv.WaitFor(t, runDeadline, func() (bool, error) {
			var out struct{ Runs []apitypes.Run }
			if _, err := c.API.Call(context.Background(), http.MethodGet, fmt.Sprintf("/api/v1/runs?job_id=%d&status=pending&limit=100", job), nil, &out); err != nil {
				return false, err
			}
			for _, r := range out.Runs {
				if strings.Contains(r.Error, "circuit breaker") {
					held = r
					return true, nil
				}
			}
			return false, fmt.Errorf("%d pending runs (those due are started or held first; the rest are fired ahead)", len(out.Runs))
		}, what)
		return held
	}
	held := heldRun("no run waits for the open breaker")
	t.Logf("held run %d: %s", held.ID, held.Error)

	// Two cool-downs and more of the first leader: the target sees the
	// probes only.
	watch := func(d time.Duration) (int, time.Duration) {
		from := time.Now()
		testenv.WaitFor(t, d+runDeadline, func() (bool, error) {
			b, err := breakerOf(c, job)
			if err != nil {
				return false, err
			}
			require.NotNil(t, b, "the breaker closed while the target is down")
			require.NotEqual(t, apitypes.BreakerClosed, b.State, "the breaker closed while the target is down")
			return time.Since(from) >= d, nil
		}, "watching the open breaker")
		span := time.Since(from)
		return target.hitsBetween(from, from.Add(span)), span
	}
	bound := func(span time.Duration) int { return int(span/cooldown) + 2 }
	n, span := watch(2*cooldown + time.Second)
	t.Logf("first leader, breaker open: %d requests in %s (one request per second without the breaker)", n, span.Round(time.Millisecond))
	require.LessOrEqual(t, n, bound(span), "the open breaker lets only its probes through")

	// kill -9 of the leader: the replica takes over with the breaker open.
	require.NoError(t, c.Admin.Kill())
	killedAt := time.Now()
	_, err = replica.WaitForLine(harness.Ctx(t, runDeadline), "msg=leading")
	require.NoError(t, err, "the replica did not take over")
	t.Logf("the replica leads %s after the kill", time.Since(killedAt).Round(time.Millisecond))
	c.API = &cli.Client{Base: replica.URL, Token: c.API.Token, HTTP: c.API.HTTP}
	n, span = watch(2*cooldown + time.Second)
	t.Logf("new leader, breaker open: %d requests in %s", n, span.Round(time.Millisecond))
	require.LessOrEqual(t, n, bound(span), "after the failover the breaker still lets only its probes through")
	held = heldRun("no run waits for the open breaker after the failover")

	// The target comes back: the next probe closes the breaker, the alarm
	// is resolved, the held runs start and succeed.
	target.down.Store(false)
	upAt := time.Now()
	testenv.WaitFor(t, runDeadline, func() (bool, error) {
		b, err := breakerOf(c, job)
		return err == nil && (b == nil || b.State == apitypes.BreakerClosed), err
	}, "the breaker did not close once the target answered")
	t.Logf("breaker closed %s after the target came back (cool-down %s)", time.Since(upAt).Round(time.Millisecond), cooldown)
	testenv.WaitFor(t, runDeadline, func() (bool, error) {
		a, err := breakerAlarm(c, job)
		return err == nil && a != nil && a.ResolvedAt != nil, err
	}, "the breaker_open alarm was not resolved")
	alarm, err = breakerAlarm(c, job)
	require.NoError(t, err)
	require.Equal(t, "shardjob", alarm.ResolvedBy)
	require.Contains(t, alarm.ResolvedReason, "closed")
	closedAlarm, err := breakerAlarm(c, job, "breaker_closed")
	require.NoError(t, err)
	require.NotNil(t, closedAlarm, "a breaker_closed alarm")
	require.Equal(t, "info", closedAlarm.Severity)
	require.Contains(t, closedAlarm.Message, "circuit breaker closed: the probe")

	r, _ := c.waitRunEnded(held.ID)
	require.Equal(t, "succeeded", r.Status, "the run held by the breaker: %s", r.Error)
	t.Logf("held run %d (scheduled %s) succeeded; the target saw %d requests in all, %d while the breaker was open (%s)",
		r.ID, r.ScheduledAt.Format(time.RFC3339), target.hitsBetween(time.Time{}, time.Now()),
		target.hitsBetween(openSeen, upAt), upAt.Sub(openSeen).Round(time.Second))
}
