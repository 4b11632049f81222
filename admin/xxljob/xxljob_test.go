package xxljob_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/shardjob/shardjob/admin/e2e"
	"github.com/shardjob/shardjob/admin/schedule"
	"github.com/shardjob/shardjob/admin/server"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/testenv"
	"github.com/shardjob/shardjob/admin/xxljob"
	"github.com/shardjob/shardjob/sdk/protocol"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(idleClosing{testenv.Wrap(m)}) }

// idleClosing closes the idle keep-alive connections of the default
// transport after the tests, so that goleak sees only real leaks.
type idleClosing struct{ m testenv.TestingM }

func (c idleClosing) Run() int {
	code := c.m.Run()
	http.DefaultTransport.(*http.Transport).CloseIdleConnections()
	return code
}

func TestMappings(t *testing.T) {
	t.Parallel()
	for block, want := range map[string]schedule.OverlapPolicy{
		"": schedule.OverlapQueue, "SERIAL_EXECUTION": schedule.OverlapQueue,
		"DISCARD_LATER": schedule.OverlapSkip, "cover_early": schedule.OverlapReplace,
	} {
		got, err := xxljob.OverlapForBlockStrategy(block)
		require.NoError(t, err, block)
		require.Equal(t, want, got, block)
		if block != "" {
			require.Equal(t, strings.ToUpper(block), xxljob.BlockStrategyForOverlap(got))
		}
	}
	_, err := xxljob.OverlapForBlockStrategy("WAIT")
	require.ErrorContains(t, err, "SERIAL_EXECUTION")
	require.Equal(t, xxljob.BlockSerial, xxljob.BlockStrategyForOverlap(schedule.OverlapAllow))

	n, err := xxljob.SlotsForRoute("SHARDING_BROADCAST", 3)
	require.NoError(t, err)
	require.Equal(t, 3, n)
	n, err = xxljob.SlotsForRoute("SHARDING_BROADCAST", 0)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	for _, r := range []string{"FIRST", "ROUND", "CONSISTENT_HASH", "FAILOVER", "BUSYOVER"} {
		n, err := xxljob.SlotsForRoute(r, 5)
		require.NoError(t, err)
		require.Equal(t, 1, n, r)
	}
	_, err = xxljob.SlotsForRoute("NEAREST", 2)
	require.ErrorContains(t, err, "NEAREST")
}

func TestTokensAreChecked(t *testing.T) {
	t.Parallel()
	_, err := xxljob.New(xxljob.Config{Tokens: map[string]string{"a": "default_token"}}, &store.Store{})
	require.ErrorContains(t, err, "sample configuration")
	_, err = xxljob.New(xxljob.Config{Tokens: map[string]string{"a": "short"}}, &store.Store{})
	require.ErrorContains(t, err, "at least 8")
	bad := filepath.Join(t.TempDir(), "tokens.json")
	require.NoError(t, os.WriteFile(bad, []byte(`["a"]`), 0o600))
	_, err = xxljob.New(xxljob.Config{TokensFile: bad}, &store.Store{})
	require.ErrorContains(t, err, `{"app": "token"}`)
}

func TestClientAgainstFakeExecutor(t *testing.T) {
	t.Parallel()
	f := newFakeExecutor(t, "http://127.0.0.1:1", "app", "right-token-123")
	c := xxljob.NewClient(5*time.Second, nil)
	t.Cleanup(c.CloseIdleConnections)
	ctx := context.Background()
	require.NoError(t, c.Beat(ctx, f.Address(), "right-token-123"))
	err := c.Beat(ctx, f.Address(), "wrong-token-123")
	var ce *xxljob.CallError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, 500, ce.Code)
	require.Contains(t, ce.Msg, "access token is wrong")

	require.NoError(t, c.Run(ctx, f.Address(), "right-token-123", xxljob.TriggerParam{JobID: 7, ExecutorHandler: "hold", LogID: 11, GlueType: xxljob.GlueBean}))
	require.ErrorAs(t, c.IdleBeat(ctx, f.Address(), "right-token-123", 7), &ce, "a job with a held run is busy")
	require.NoError(t, c.IdleBeat(ctx, f.Address(), "right-token-123", 8))
	lr, err := c.Log(ctx, f.Address(), "right-token-123", xxljob.LogParam{LogID: 11, FromLineNum: 3})
	require.NoError(t, err)
	require.Equal(t, 3, lr.FromLineNum)
	require.Contains(t, lr.LogContent, "log of 11 from line 3")
	require.True(t, lr.IsEnd)
	require.ErrorAs(t, c.Run(ctx, f.Address(), "right-token-123", xxljob.TriggerParam{JobID: 7, ExecutorHandler: "missing", GlueType: xxljob.GlueBean}), &ce)
	require.Contains(t, ce.Msg, "not found")
	require.NoError(t, c.Kill(ctx, f.Address(), "right-token-123", 9))
	require.Equal(t, []int64{9}, f.Kills())
	f.Close()
	require.Error(t, c.Beat(ctx, f.Address(), "right-token-123"), "a closed executor does not answer")
}

// admin is an in-process admin replica (admin/server) on its own MariaDB
// database and ZooKeeper chroot.
type admin struct {
	srv   *server.Server
	api   *e2e.Client
	st    *store.Store
	token string // the access token of app "xxl"
	logs  *syncBuffer
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var passwordRE = regexp.MustCompile(`with password (\S+)`)

func startAdmin(t *testing.T) *admin {
	t.Helper()
	dsn := testenv.MySQL(t)
	zk := testenv.ZooKeeper(t)
	root := testenv.ZKChroot(t)
	a := &admin{token: "xxl-token-" + protocol.NewSecret()[:16], logs: &syncBuffer{}}
	tokens := filepath.Join(t.TempDir(), "xxljob-tokens.json")
	data, _ := json.Marshal(map[string]string{"xxl": a.token})
	require.NoError(t, os.WriteFile(tokens, data, 0o600))
	var out bytes.Buffer
	srv, err := server.New(context.Background(), server.Config{
		ID: "xxl-admin", HTTPAddr: "127.0.0.1:0", DBDriver: "mysql", DBDSN: dsn,
		ZKServers: []string{zk}, ZKRoot: root, ExecutorSecret: protocol.NewSecret(),
		HeartbeatInterval: 300 * time.Millisecond, PollInterval: 50 * time.Millisecond,
		Out: &out, Logger: slog.New(slog.NewTextHandler(a.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		XXLJob: xxljob.Config{TokensFile: tokens, ResultGrace: 300 * time.Millisecond, RequestTimeout: 2 * time.Second},
	})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
		if t.Failed() {
			t.Logf("admin log (tail):\n%s", tail(a.logs.String(), 12000))
		}
	})
	a.srv, a.st = srv, srv.Store()
	a.api = e2e.NewClient(srv.URL())
	t.Cleanup(a.api.HTTP.CloseIdleConnections)
	m := passwordRE.FindStringSubmatch(out.String())
	require.NotNil(t, m, "first start prints the admin password: %s", out.String())
	require.NoError(t, a.api.Login("admin", m[1]))
	testenv.WaitFor(t, 30*time.Second, func() (bool, error) {
		rec, err := a.st.Leader(context.Background())
		return rec.Epoch > 0, err
	}, "the admin leads")
	return a
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// createJob creates a disabled job of app "xxl" and triggers one run.
func (a *admin) runJob(t *testing.T, name, handler string, slots int, extra map[string]any) (jobID, runID int64) {
	t.Helper()
	spec := map[string]any{"app": "xxl", "name": name, "handler": handler, "cron": "0 0 1 1 *", "slots": slots,
		"params": "p=" + name, "enabled": false}
	for k, v := range extra {
		spec[k] = v
	}
	var job struct {
		ID int64 `json:"id"`
	}
	code, err := a.api.Do(http.MethodPost, "/api/v1/jobs", spec, &job)
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, code)
	var trig struct {
		Run struct {
			ID int64 `json:"id"`
		} `json:"run"`
	}
	code, err = a.api.Do(http.MethodPost, fmt.Sprintf("/api/v1/jobs/%d/trigger", job.ID), map[string]any{}, &trig)
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, code)
	return job.ID, trig.Run.ID
}

// waitRun waits until the run is terminal and returns it with its attempts.
func (a *admin) waitRun(t *testing.T, runID int64) (store.Run, []store.Attempt) {
	t.Helper()
	var r store.Run
	testenv.WaitFor(t, 60*time.Second, func() (bool, error) {
		var err error
		r, err = a.st.Run(context.Background(), runID)
		return err == nil && r.Status != store.RunPending && r.Status != store.RunRunning, err
	}, fmt.Sprintf("run %d ends", runID))
	atts, err := a.st.Attempts(context.Background(), runID)
	require.NoError(t, err)
	return r, atts
}

func current(atts []store.Attempt) map[int]store.Attempt {
	out := map[int]store.Attempt{}
	for _, a := range atts {
		if a.Current {
			out[a.Slot] = a
		}
	}
	return out
}

// TestXXLJobExecutorsAgainstARealAdmin runs unchanged-protocol XXL-JOB
// executors (fakeExecutor) against an admin replica on MariaDB and
// ZooKeeper: registration and its token, sharding broadcast, success,
// failure, refusal, lost results, log and kill from the console, an
// executor going away mid-run, and a late callback.
func TestXXLJobExecutorsAgainstARealAdmin(t *testing.T) {
	a := startAdmin(t)
	ctx := context.Background()
	url := a.srv.URL()

	t.Run("registration needs the app's token", func(t *testing.T) {
		f := newFakeExecutor(t, url, "xxl", a.token)
		rt, err := f.Register("wrong-token-0000")
		require.NoError(t, err)
		require.Equal(t, 500, rt.Code)
		require.Contains(t, rt.Message(), "access token is wrong")

		other := newFakeExecutor(t, url, "no-token-app", a.token)
		rt2, err := other.Register(a.token)
		require.NoError(t, err)
		require.Equal(t, rt, rt2, "an app without a token gets the answer of a wrong token")
		require.Contains(t, rt2.Message(), "--xxljob-tokens")

		rt, err = f.Callback("wrong-token-0000", xxljob.CallbackParam{LogID: 1, HandleCode: 200})
		require.NoError(t, err)
		require.Equal(t, 500, rt.Code, "a callback with a wrong token is refused")

		execs, err := a.st.Executors(ctx)
		require.NoError(t, err)
		require.Empty(t, execs, "nothing registered with a wrong or missing token")

		// Registered and removed: gone.
		rt, err = f.Register(a.token)
		require.NoError(t, err)
		require.Equal(t, 200, rt.Code, rt.Message())
		rt, err = f.RegisterRemove()
		require.NoError(t, err)
		require.Equal(t, 200, rt.Code, rt.Message())
		execs, err = a.st.Executors(ctx)
		require.NoError(t, err)
		require.Len(t, execs, 1)
		require.Equal(t, store.ExecutorGone, execs[0].State)
	})

	ex1 := newFakeExecutor(t, url, "xxl", a.token)
	ex2 := newFakeExecutor(t, url, "xxl", a.token)
	for _, f := range []*fakeExecutor{ex1, ex2} {
		rt, err := f.Register(a.token)
		require.NoError(t, err)
		require.Equal(t, 200, rt.Code, rt.Message())
	}
	// They register once; the admin's beats keep them online well past
	// lost-after (3 × 300ms).
	testenv.WaitFor(t, 30*time.Second, func() (bool, error) {
		return ex1.Beats() >= 8 && ex2.Beats() >= 8, nil
	}, "the admin probes the executors")
	online, err := a.st.OnlineExecutors(ctx, "xxl", 900)
	require.NoError(t, err)
	require.Len(t, online, 2, "beats keep XXL-JOB executors online")

	t.Run("sharding broadcast and success", func(t *testing.T) {
		jobID, runID := a.runJob(t, "broadcast", "ok", 4, map[string]any{"timeout_ms": 30000})
		r, atts := a.waitRun(t, runID)
		require.Equal(t, store.RunSucceeded, r.Status, r.Error)
		cur := current(atts)
		require.Len(t, cur, 4)
		var got []xxljob.TriggerParam
		for _, f := range []*fakeExecutor{ex1, ex2} {
			for _, p := range f.Runs() {
				if p.JobID == jobID {
					got = append(got, p)
				}
			}
		}
		require.Len(t, got, 4, "one run call per slot")
		sort.Slice(got, func(i, j int) bool { return got[i].BroadcastIndex < got[j].BroadcastIndex })
		for i, p := range got {
			require.Equal(t, i, p.BroadcastIndex)
			require.Equal(t, 4, p.BroadcastTotal)
			require.Equal(t, cur[i].ID, p.LogID, "logId is the attempt's token")
			require.Equal(t, "ok", p.ExecutorHandler)
			require.Equal(t, "p=broadcast", p.ExecutorParams)
			require.Equal(t, xxljob.BlockSerial, p.ExecutorBlockStrategy)
			require.Equal(t, 30, p.ExecutorTimeout)
			require.Equal(t, xxljob.GlueBean, p.GlueType)
			require.Equal(t, store.AttemptSucceeded, cur[i].Status)
		}
	})

	t.Run("failure is retried per the job's policy", func(t *testing.T) {
		_, runID := a.runJob(t, "failing", "fail", 1, map[string]any{"retry_max": 1, "retry_backoff_ms": 1})
		r, atts := a.waitRun(t, runID)
		require.Equal(t, store.RunFailed, r.Status)
		require.Len(t, atts, 2, "one retry")
		for _, at := range atts {
			require.Equal(t, store.AttemptFailed, at.Status)
			require.Contains(t, at.Error, "boom")
		}
		require.NotEqual(t, atts[0].ExecutorID, atts[1].ExecutorID, "the retry prefers another executor")
	})

	t.Run("a refused run fails the slot", func(t *testing.T) {
		_, runID := a.runJob(t, "refused", "missing", 1, nil)
		r, atts := a.waitRun(t, runID)
		require.Equal(t, store.RunFailed, r.Status)
		require.Len(t, atts, 1)
		require.Contains(t, atts[0].Error, "not found")
	})

	t.Run("no callback within the timeout fails as timed out", func(t *testing.T) {
		_, runID := a.runJob(t, "silent", "silent", 1, map[string]any{"timeout_ms": 500, "retry_max": 1, "retry_backoff_ms": 1})
		r, atts := a.waitRun(t, runID)
		require.Equal(t, store.RunFailed, r.Status)
		require.Len(t, atts, 2, "the timed-out slot is retried once")
		for _, at := range atts {
			require.Equal(t, store.AttemptFailed, at.Status)
			require.Contains(t, at.Error, "timed out")
		}
	})

	t.Run("log and kill from the console", func(t *testing.T) {
		jobID, runID := a.runJob(t, "held", "hold", 1, nil)
		var token int64
		var holder *fakeExecutor
		testenv.WaitFor(t, 30*time.Second, func() (bool, error) {
			for _, f := range []*fakeExecutor{ex1, ex2} {
				for id, p := range f.Held() {
					if p.JobID == jobID {
						token, holder = id, f
						return true, nil
					}
				}
			}
			return false, nil
		}, "the slot runs on an executor")
		var lr struct {
			Content string `json:"content"`
			From    int    `json:"from_line"`
			End     bool   `json:"end"`
		}
		code, err := a.api.Do(http.MethodGet, fmt.Sprintf("/api/v1/xxljob/attempts/%d/log?from=2", token), nil, &lr)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, code)
		require.Contains(t, lr.Content, fmt.Sprintf("log of %d from line 2", token))
		require.Equal(t, 2, lr.From)
		require.True(t, lr.End)

		code, err = a.api.Do(http.MethodPost, fmt.Sprintf("/api/v1/xxljob/attempts/%d/kill", token), nil, nil)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, code)
		require.Contains(t, holder.Kills(), jobID)
		var app string
		require.NoError(t, a.st.DB().Get(&app, a.st.DB().Rebind(`SELECT app FROM audit_log WHERE action = 'xxljob.kill' AND object = ?`), fmt.Sprintf("attempt/%d", token)))
		require.Equal(t, "xxl", app, "the kill is audited for the job's app: its users read it")
		r, atts := a.waitRun(t, runID)
		require.Equal(t, store.RunFailed, r.Status)
		require.Contains(t, atts[0].Error, "killed")

		code, err = a.api.Do(http.MethodGet, "/api/v1/xxljob/attempts/999999/log", nil, nil)
		require.NoError(t, err)
		require.Equal(t, http.StatusNotFound, code)
	})

	t.Run("an executor that goes away mid-run loses its slots to the other", func(t *testing.T) {
		jobID, runID := a.runJob(t, "moving", "hold", 2, nil)
		testenv.WaitFor(t, 30*time.Second, func() (bool, error) {
			n := 0
			for _, f := range []*fakeExecutor{ex1, ex2} {
				for _, p := range f.Held() {
					if p.JobID == jobID {
						n++
					}
				}
			}
			return n == 2, nil
		}, "both slots run")
		gone, stays := ex1, ex2
		if len(heldOf(ex1, jobID)) == 0 {
			gone, stays = ex2, ex1
		}
		oldTokens := heldOf(gone, jobID)
		gone.Close() // stops answering beat; never calls back

		// The admin stops hearing it, marks it lost and moves its slots to
		// the executor that stays, with new tokens.
		testenv.WaitFor(t, 30*time.Second, func() (bool, error) {
			return len(heldOf(stays, jobID)) == 2, nil
		}, "the slots of the executor that went away run on the other")
		stays.ReleaseAll()
		r, atts := a.waitRun(t, runID)
		require.Equal(t, store.RunSucceeded, r.Status, r.Error)
		for _, old := range oldTokens {
			at, err := a.st.Attempt(ctx, old)
			require.NoError(t, err)
			require.Equal(t, store.AttemptLost, at.Status)
			require.False(t, at.Current)
		}
		for _, at := range current(atts) {
			require.Equal(t, store.AttemptSucceeded, at.Status)
		}

		// A late callback for a superseded attempt is acknowledged (the
		// executor stops retrying it) and ignored.
		rt, err := gone.Callback(a.token, xxljob.CallbackParam{LogID: oldTokens[0], HandleCode: 200, HandleMsg: "late"})
		require.NoError(t, err)
		require.Equal(t, 200, rt.Code)
		at, err := a.st.Attempt(ctx, oldTokens[0])
		require.NoError(t, err)
		require.Equal(t, store.AttemptLost, at.Status)
		r, err = a.st.Run(ctx, runID)
		require.NoError(t, err)
		require.Equal(t, 2, r.SlotsSucceeded)
	})
}

func heldOf(f *fakeExecutor, jobID int64) []int64 {
	var out []int64
	for id, p := range f.Held() {
		if p.JobID == jobID {
			out = append(out, id)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
