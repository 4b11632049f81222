package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/deploy/dev/testenv"
	harness "github.com/shardjob/shardjob/deploy/dev/testenv/cluster"
	"github.com/shardjob/shardjob/sdk/protocol"
)

// Bad input and abuse of the executor protocol, against one admin.
func TestExecutorProtocolRefusesAbuse(t *testing.T) {
	c := newCluster(t)

	intruder := c.startExecutor("abuse", 2, protocol.NewSecret())
	t.Run("wrong secret", func(t *testing.T) {
		c := c.in(t)
		_, err := intruder.WaitForLine(harness.Ctx(t, startDeadline), "401 Unauthorized")
		require.NoError(t, err, "the executor with a wrong secret logs the admin's 401")
		_, err = c.Admin.WaitForLine(harness.Ctx(t, startDeadline), "refused executor request")
		require.NoError(t, err)
		list, err := c.Executors()
		require.NoError(t, err)
		require.NotContains(t, list, intruder.Name, "an executor with a wrong secret must not register")
		require.NoError(t, intruder.Stop())
		list, err = c.Executors()
		require.NoError(t, err)
		require.NotContains(t, list, intruder.Name)
	})

	t.Run("replayed request to the admin", func(t *testing.T) {
		c := c.in(t)
		body, err := json.Marshal(protocol.HeartbeatRequest{
			InstanceID: "replayer", App: "abuse-replay", Address: "http://127.0.0.1:9", Capacity: 1,
			Handlers: []string{"demo.range"},
		})
		require.NoError(t, err)
		req := signed(t, c.API.Base+protocol.PathHeartbeat, c.AdminOpts.Secret, body, time.Now())
		code, msg := send(t, req, body)
		require.Equal(t, http.StatusOK, code, "the signed request itself is fine: %s", msg)

		code, msg = send(t, req, body) // same nonce, same signature
		require.Equal(t, http.StatusUnauthorized, code, "a replayed request must be refused: %s", msg)
		require.Contains(t, msg, "replayed")

		// Other forgeries of the same request.
		fresh := signed(t, c.API.Base+protocol.PathHeartbeat, c.AdminOpts.Secret, body, time.Now())
		tampered := bytes.Replace(body, []byte(`"capacity":1`), []byte(`"capacity":9`), 1)
		code, msg = send(t, fresh, tampered)
		require.Equal(t, http.StatusUnauthorized, code, "a body changed after signing: %s", msg)
		old := signed(t, c.API.Base+protocol.PathHeartbeat, c.AdminOpts.Secret, body, time.Now().Add(-10*time.Minute))
		code, msg = send(t, old, body)
		require.Equal(t, http.StatusUnauthorized, code, "a timestamp outside the clock window: %s", msg)
		unsigned, err := http.NewRequest(http.MethodPost, c.API.Base+protocol.PathHeartbeat, nil)
		require.NoError(t, err)
		code, msg = send(t, unsigned, body)
		require.Equal(t, http.StatusUnauthorized, code, "an unsigned request: %s", msg)
	})

	// An executor of app B, online, while a run of an app-A job waits.
	b := c.startExecutor("abuse-b", 4)
	c.WaitOnline(b)

	t.Run("replayed push to an executor", func(t *testing.T) {
		c := c.in(t)
		body, err := json.Marshal(protocol.AssignRequest{Assignments: []protocol.RunAssignment{}})
		require.NoError(t, err)
		req := signed(t, b.URL+protocol.PathAssign, c.AdminOpts.Secret, body, time.Now())
		code, msg := send(t, req, body)
		require.Equal(t, http.StatusOK, code, msg)
		code, msg = send(t, req, body)
		require.Equal(t, http.StatusUnauthorized, code, "the executor must refuse a replayed push: %s", msg)
		require.Contains(t, msg, "replayed")
		_, err = b.WaitForLine(harness.Ctx(t, startDeadline), "refused unauthenticated request")
		require.NoError(t, err)
	})

	t.Run("slots stay in their app", func(t *testing.T) {
		c := c.in(t)
		const slots, records = 8, 80
		job := c.createJob("abuse-a", "app-a-job", slots, fmt.Sprintf("records=%d;ms_per_record=0", records))
		run := c.trigger(job)

		// Give the leader time to place the run if it would: wait until B
		// has heartbeated for 4 intervals after the run was created (the
		// leader ticks at least every 200ms, and B would get unacknowledged
		// assignments in its heartbeat responses).
		testenv.WaitFor(t, runDeadline, func() (bool, error) {
			list, err := c.Executors()
			if err != nil {
				return false, err
			}
			return list[b.Name].LastHeartbeat.After(run.CreatedAt.Add(4 * heartbeat)), nil
		}, "executor B stopped heartbeating")
		r, atts, err := c.Run(run.ID)
		require.NoError(t, err)
		require.Equal(t, "pending", r.Status, "a run of app A with no executor of app A online waits")
		require.Empty(t, atts, "no slot of app A may be placed on an executor of app B")
		require.Empty(t, logLines(b.Process, "slot started"), "executor B ran a slot of app A")

		// Once an executor of app A is online the run proceeds, on it only.
		a := c.startExecutor("abuse-a", 4)
		c.WaitOnline(a)
		r, atts = c.waitRunEnded(run.ID)
		current := checkRunSucceeded(t, r, atts, slots, records)
		require.Equal(t, map[int64]int{a.ID: slots}, perExecutor(current))
		checkCoverage(t, ranges(t, run.ID, a, b), current, slots, records)
		require.Empty(t, logLines(b.Process, "slot started"), "executor B ran a slot of app A")
	})

	// Whatever happened meanwhile, the executor with the wrong secret never
	// made it into the registry.
	list, err := c.Executors()
	require.NoError(t, err)
	require.NotContains(t, list, intruder.Name)
}

// signed returns a POST request to url signed with secret for body at now.
func signed(t *testing.T, url, secret string, body []byte, now time.Time) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, nil)
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	protocol.Sign(req, secret, body, now)
	return req
}

// send sends req's method, URL and headers with body and returns the status
// and the response body. It can send the same request twice.
func send(t *testing.T, req *http.Request, body []byte) (int, string) {
	t.Helper()
	r, err := http.NewRequest(req.Method, req.URL.String(), bytes.NewReader(body))
	require.NoError(t, err)
	r.Header = req.Header.Clone()
	client := &http.Client{Timeout: 10 * time.Second}
	res, err := client.Do(r)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, string(b)
}
