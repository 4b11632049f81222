package xxljob_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"golang.org/x/crypto/bcrypt"

	"github.com/shardjob/shardjob/admin/auth"
	"github.com/shardjob/shardjob/admin/cli"
	"github.com/shardjob/shardjob/admin/schedule"
	"github.com/shardjob/shardjob/admin/scheduler"
	"github.com/shardjob/shardjob/admin/server"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/xxljob"
	"github.com/shardjob/shardjob/deploy/dev/testenv"
	harness "github.com/shardjob/shardjob/deploy/dev/testenv/cluster"
	"github.com/shardjob/shardjob/sdk/protocol"
)

func TestMain(m *testing.M) {
	auth.HashCost = bcrypt.MinCost // no test here measures the cost of a hash; cost 10 under -race on a loaded machine outlasts the client's 10 s login timeout
	goleak.VerifyTestMain(idleClosing{testenv.Wrap(m)})
}

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

// TestAnswerShapes: an executor's answer is a ReturnT or a refusal array;
// anything else is unreadable (a failed trigger, not a network failure).
func TestAnswerShapes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		body     string
		code     int // 0: no CallError
		busy     bool
		readable bool
	}{
		{body: `{"code":200,"msg":""}`, readable: true},
		{body: `{"code":500,"msg":"job handler [x] not found."}`, code: 500, readable: true},
		{body: `[{"logId":3,"handleCode":500,"handleMsg":"There are tasks running"}]`, code: 500, busy: true, readable: true},
		{body: ` [{"logId":3,"handleCode":500,"handleMsg":"Task not registered"}]`, code: 500, readable: true},
		{body: `[{"logId":3,"handleCode":0,"handleMsg":"task is running"}]`, code: 500, busy: true, readable: true},
		{body: `{"code":200,"msg":null,"data":null}`, readable: true}, // 3.3's Response
		{body: `{"code":500,"msg":"invalid request, uri-mapping(/run) not found.","data":null}`, code: 500, readable: true},
		{body: `[]`},
		{body: `<html>hello</html>`},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			_, _ = w.Write([]byte(tc.body))
		}))
		c := xxljob.NewClient(5*time.Second, nil)
		err := c.Run(context.Background(), xxljob.Target{Address: srv.URL, Token: "token-0123"}, xxljob.TriggerParam{JobID: 1})
		c.CloseIdleConnections()
		srv.Close()
		var ce *xxljob.CallError
		switch {
		case !tc.readable:
			require.ErrorIs(t, err, xxljob.ErrUnreadableAnswer, tc.body)
		case tc.code == 0:
			require.NoError(t, err, tc.body)
		default:
			require.ErrorAs(t, err, &ce, tc.body)
			require.Equal(t, tc.code, ce.Code, tc.body)
			require.Equal(t, tc.busy, ce.Busy(), tc.body)
		}
	}
	require.Equal(t, int64(7*1024+3), xxljob.SlotJobID(7, 3))
	require.Equal(t, "/api/registry", xxljob.CleanPath("//api/registry"))
	require.True(t, xxljob.IsAdminPath("/xxl-job-admin//api/callback"))
	require.False(t, xxljob.IsAdminPath("//api/v1/jobs"))
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
	_, err = xxljob.New(xxljob.Config{ConcurrentApps: []string{"orders", " billing"}}, &store.Store{})
	require.ErrorContains(t, err, "--xxljob-concurrent-apps")
	require.ErrorContains(t, err, `" billing"`)
}

func TestClientAgainstFakeExecutor(t *testing.T) {
	t.Parallel()
	callbacks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"code":200}`)) // an admin that acknowledges every callback
	}))
	t.Cleanup(callbacks.Close)
	f := newFakeExecutor(t, callbacks.URL, "app", "right-token-123")
	c := xxljob.NewClient(5*time.Second, nil)
	t.Cleanup(c.CloseIdleConnections)
	ctx := context.Background()
	at := func(token string) xxljob.Target { return xxljob.Target{Address: f.Address(), App: "app", Token: token} }
	require.NoError(t, c.Beat(ctx, at("right-token-123")))
	err := c.Beat(ctx, at("wrong-token-123"))
	var ce *xxljob.CallError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, 500, ce.Code)
	require.Contains(t, ce.Msg, "access token is wrong")

	require.NoError(t, c.Run(ctx, at("right-token-123"), xxljob.TriggerParam{JobID: 7, ExecutorHandler: "hold", LogID: 11, GlueType: xxljob.GlueBean}))
	require.ErrorAs(t, c.IdleBeat(ctx, at("right-token-123"), 7), &ce, "a job with a held run is busy")
	require.NoError(t, c.IdleBeat(ctx, at("right-token-123"), 8))
	lr, err := c.Log(ctx, at("right-token-123"), xxljob.LogParam{LogID: 11, FromLineNum: 3})
	require.NoError(t, err)
	require.Equal(t, 3, lr.FromLineNum)
	require.Contains(t, lr.LogContent, "log of 11 from line 3")
	require.True(t, lr.IsEnd)

	// Refusals come as callback-shaped arrays: read as CallErrors, a running
	// job id as busy.
	err = c.Run(ctx, at("right-token-123"), xxljob.TriggerParam{JobID: 7, ExecutorHandler: "hold", LogID: 12, GlueType: xxljob.GlueBean})
	require.ErrorAs(t, err, &ce)
	require.Equal(t, 500, ce.Code)
	require.Equal(t, msgBusy, ce.Msg)
	require.True(t, ce.Busy(), "a second run of a running job id is refused as busy")
	err = c.Run(ctx, at("right-token-123"), xxljob.TriggerParam{JobID: 8, ExecutorHandler: "missing", GlueType: xxljob.GlueBean})
	require.ErrorAs(t, err, &ce)
	require.Equal(t, msgNoHandler, ce.Msg)
	require.False(t, ce.Busy(), "an unknown handler is a refusal, not busy")

	require.NoError(t, c.Kill(ctx, at("right-token-123"), 7))
	require.ErrorAs(t, c.Kill(ctx, at("right-token-123"), 9), &ce, "nothing of job id 9 runs there")
	require.Equal(t, []int64{7, 9}, f.Kills())
	f.Close()
	require.Error(t, c.Beat(ctx, at("right-token-123")), "a closed executor does not answer")
}

// admin is an in-process admin replica (admin/server) on its own MariaDB
// database and ZooKeeper chroot.
type admin struct {
	srv    *server.Server
	api    *cli.Client
	st     *store.Store
	token  string            // the access token of app "xxl"
	tokens map[string]string // app → access token: "xxl" and the apps startAdmin was given
	logs   *testenv.Buffer
}

var passwordRE = regexp.MustCompile(`with password (\S+)`)

// dispatchTimeout is the test admins' --dispatch-timeout (the default).
const dispatchTimeout = 30 * time.Second

// startAdmin starts an admin whose XXL-JOB tokens file gives app "xxl" and
// each of apps a token of its own.
func startAdmin(t *testing.T, apps ...string) *admin {
	t.Helper()
	return startAdminWith(t, nil, apps...)
}

// startAdminWith starts an admin as startAdmin does, its XXL-JOB config
// changed by with (when not nil). App "xxl" is in ConcurrentApps: the fake
// executors of package fakeexec keep one task per job id, as XXL-JOB's Java
// executor does; the other apps get one slot per handler at a time.
func startAdminWith(t *testing.T, with func(*xxljob.Config), apps ...string) *admin {
	t.Helper()
	dsn := testenv.MySQL(t)
	zk := testenv.ZooKeeper(t)
	root := testenv.ZKChroot(t)
	a := &admin{tokens: map[string]string{}, logs: &testenv.Buffer{}}
	for _, app := range append([]string{"xxl"}, apps...) {
		a.tokens[app] = app + "-token-" + protocol.NewSecret()[:16]
	}
	a.token = a.tokens["xxl"]
	tokens := filepath.Join(t.TempDir(), "xxljob-tokens.json")
	data, _ := json.Marshal(a.tokens)
	require.NoError(t, os.WriteFile(tokens, data, 0o600))
	xcfg := xxljob.Config{TokensFile: tokens, ResultGrace: 300 * time.Millisecond, RequestTimeout: 2 * time.Second, ConcurrentApps: []string{"xxl"}}
	if with != nil {
		with(&xcfg)
	}
	var out bytes.Buffer
	srv, err := server.New(context.Background(), server.Config{
		ID: "xxl-admin", HTTPAddr: "127.0.0.1:0", DBDriver: "mysql", DBDSN: dsn,
		ZKServers: []string{zk}, ZKRoot: root, ExecutorSecret: protocol.NewSecret(),
		Timing: protocol.Timing{Heartbeat: 300 * time.Millisecond}, Scheduler: scheduler.Config{PollInterval: 50 * time.Millisecond, DispatchTimeout: dispatchTimeout},
		Out: &out, Logger: slog.New(slog.NewTextHandler(a.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		XXLJob: xcfg,
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
	a.api = harness.NewClient(srv.URL())
	t.Cleanup(a.api.HTTP.CloseIdleConnections)
	m := passwordRE.FindStringSubmatch(out.String())
	require.NotNil(t, m, "first start prints the admin password: %s", out.String())
	require.NoError(t, a.api.Login(context.Background(), "admin", m[1]))
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
	code, err := a.api.Call(context.Background(), http.MethodPost, "/api/v1/jobs", spec, &job)
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, code)
	return job.ID, a.trigger(t, job.ID)
}

// trigger starts a run of a job by hand.
func (a *admin) trigger(t *testing.T, jobID int64) int64 {
	t.Helper()
	var trig struct {
		Run struct {
			ID int64 `json:"id"`
		} `json:"run"`
	}
	code, err := a.api.Call(context.Background(), http.MethodPost, fmt.Sprintf("/api/v1/jobs/%d/trigger", jobID), map[string]any{}, &trig)
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, code)
	return trig.Run.ID
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
				if jobOf(p) == jobID {
					got = append(got, p)
				}
			}
		}
		require.Len(t, got, 4, "one run call per slot")
		sort.Slice(got, func(i, j int) bool { return got[i].BroadcastIndex < got[j].BroadcastIndex })
		for i, p := range got {
			require.Equal(t, i, p.BroadcastIndex)
			require.Equal(t, xxljob.SlotJobID(jobID, i), p.JobID, "each slot has its own XXL-JOB job id")
			require.Equal(t, 4, p.BroadcastTotal)
			require.Equal(t, cur[i].Token, p.LogID, "logId is the attempt's token")
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

	t.Run("an unknown handler fails the slot at once", func(t *testing.T) {
		// The executor refuses with an array answer, not a ReturnT: a
		// refusal, not an unreachable executor.
		start := time.Now()
		_, runID := a.runJob(t, "refused", "missing", 1, map[string]any{"retry_max": 1, "retry_backoff_ms": 1})
		r, atts := a.waitRun(t, runID)
		t.Logf("SUMMARY unknown handler → run failed in %s, retry included (dispatch deadline %s)", time.Since(start).Round(time.Millisecond), dispatchTimeout)
		require.Equal(t, store.RunFailed, r.Status)
		require.Len(t, atts, 2, "each refusal is a failed attempt, retried per the job's policy")
		for _, at := range atts {
			require.Equal(t, store.AttemptFailed, at.Status)
			require.Contains(t, at.Error, msgNoHandler)
			require.Contains(t, at.Error, "refused the run")
		}
		require.NotContains(t, a.logs.String(), "not an XXL-JOB ReturnT")
	})

	t.Run("several slots of one run on one executor run side by side", func(t *testing.T) {
		// The executors run one task per job id at a time and refuse the
		// next: each slot has its own job id, so 5 slots of 2 s on 2
		// executors take one round, not 5 one after the other.
		busyBefore := ex1.Refusals(msgBusy) + ex2.Refusals(msgBusy)
		start := time.Now()
		jobID, runID := a.runJob(t, "parallel", "work", 5, map[string]any{"timeout_ms": 30000})
		r, atts := a.waitRun(t, runID)
		took := time.Since(start)
		t.Logf("SUMMARY 5 slots × 2s on 2 serial executors: run succeeded in %s (target ≈ 6s; 23.4s before)", took.Round(time.Millisecond))
		require.Equal(t, store.RunSucceeded, r.Status, r.Error)
		require.Len(t, atts, 5, "every slot ran once")
		require.Equal(t, busyBefore, ex1.Refusals(msgBusy)+ex2.Refusals(msgBusy), "no run was refused as busy")
		require.Len(t, xxlJobIDs(jobID, ex1, ex2), 5, "five XXL-JOB job ids")
		require.GreaterOrEqual(t, max(ex1.MaxParallel(), ex2.MaxParallel()), 2, "slots ran side by side on an executor")
	})

	t.Run("duplicate callbacks: the first counts, the rest are counted and logged", func(t *testing.T) {
		before, atts := a.duplicatedFailures(t, "duplicated", nil, ex1, ex2)
		require.Equal(t, int64(2), a.srv.XXLJob().Stats().IgnoredCallbacks-before)
		for _, at := range atts {
			require.Equal(t, store.AttemptFailed, at.Status)
			// The counter goes up just before its log line is written:
			// wait for the line rather than read the log at once.
			testenv.WaitFor(t, 10*time.Second, func() (bool, error) {
				return strings.Contains(a.logs.String(), fmt.Sprintf("log_id=%d ", at.Token)), nil
			}, fmt.Sprintf("the ignored callback of log_id %d is logged", at.Token))
		}
		require.Contains(t, a.logs.String(), "already has its outcome acknowledged and ignored")
	})

	t.Run("admin paths with doubled slashes", func(t *testing.T) {
		// An executor configured with "http://admin:8080/" calls
		// "//api/registry".
		for _, path := range []string{"//api/registry", "/xxl-job-admin//api/registry", "//api/callback"} {
			rt, err := ex1.post(path, a.token, xxljob.RegistryParam{RegistryGroup: "EXECUTOR", RegistryKey: "xxl", RegistryValue: ex1.Address()})
			require.NoError(t, err, path)
			if strings.HasSuffix(path, "callback") {
				require.Equal(t, 500, rt.Code, "a registry body is no callback: answered by the callback endpoint")
				require.Contains(t, rt.Message(), "invalid request body")
				continue
			}
			require.Equal(t, 200, rt.Code, path+": "+rt.Message())
		}
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
		token, holder := holding(t, jobID, ex1, ex2)
		var lr struct {
			Content string `json:"content"`
			From    int    `json:"from_line"`
			End     bool   `json:"end"`
		}
		code, err := a.api.Call(context.Background(), http.MethodGet, fmt.Sprintf("/api/v1/xxljob/attempts/%d/log?from=2", token), nil, &lr)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, code)
		require.Contains(t, lr.Content, fmt.Sprintf("log of %d from line 2", token))
		require.Equal(t, 2, lr.From)
		require.True(t, lr.End)

		code, err = a.api.Call(context.Background(), http.MethodPost, fmt.Sprintf("/api/v1/xxljob/attempts/%d/kill", token), nil, nil)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, code)
		require.Contains(t, holder.Kills(), xxljob.SlotJobID(jobID, 0), "the slot's job id is killed")
		var app string
		require.NoError(t, a.st.DB().Get(&app, a.st.DB().Rebind(`SELECT app FROM audit_log WHERE action = 'xxljob.kill' AND object = ?`), fmt.Sprintf("attempt/%d", token)))
		require.Equal(t, "xxl", app, "the kill is audited for the job's app: its users read it")
		// The executor calls back success for the killed task: the attempt
		// stays failed.
		r, atts := a.waitRun(t, runID)
		require.Equal(t, store.RunFailed, r.Status)
		require.Len(t, atts, 1)
		require.Equal(t, store.AttemptFailed, atts[0].Status)
		require.Contains(t, atts[0].Error, "killed by admin")
		waitCallback(t, holder, token)
		at, err := a.st.Attempt(ctx, token)
		require.NoError(t, err)
		require.Equal(t, store.AttemptFailed, at.Status, "the success callback of a killed task changes nothing")
		code, err = a.api.Call(context.Background(), http.MethodPost, fmt.Sprintf("/api/v1/xxljob/attempts/%d/kill", token), nil, nil)
		require.NoError(t, err)
		require.Equal(t, http.StatusConflict, code, "an ended attempt has nothing to kill")

		code, err = a.api.Call(context.Background(), http.MethodGet, "/api/v1/xxljob/attempts/999999/log", nil, nil)
		require.NoError(t, err)
		require.Equal(t, http.StatusNotFound, code)
	})

	t.Run("a cancelled run stays cancelled though the killed task calls back success", func(t *testing.T) {
		jobID, runID := a.runJob(t, "cancelled", "hold", 1, nil)
		token, holder := holding(t, jobID, ex1, ex2)
		code, err := a.api.Call(context.Background(), http.MethodPost, fmt.Sprintf("/api/v1/runs/%d/cancel", runID), map[string]any{}, nil)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, code)
		waitCallback(t, holder, token)
		r, atts := a.waitRun(t, runID)
		require.Equal(t, store.RunCancelled, r.Status)
		require.Equal(t, store.AttemptCancelled, atts[0].Status)
		require.Contains(t, holder.Kills(), xxljob.SlotJobID(jobID, 0))

		// A kill of a slot the executor no longer runs is logged in the
		// terms of the protocol: XXL-JOB executors have no heartbeat.
		jobID, runID = a.runJob(t, "forgotten", "hold", 1, nil)
		token, holder = holding(t, jobID, ex1, ex2)
		holder.Forget(token) // the executor lost the task (restarted) without a callback
		code, err = a.api.Call(context.Background(), http.MethodPost, fmt.Sprintf("/api/v1/runs/%d/cancel", runID), map[string]any{}, nil)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, code)
		testenv.WaitFor(t, 30*time.Second, func() (bool, error) {
			return strings.Contains(a.logs.String(), "refused the kill: it no longer runs the slot"), nil
		}, "the refused kill is logged")
		require.NotContains(t, a.logs.String(), "learns it at its next heartbeat")
	})

	t.Run("a task the executor stopped at its timeout fails though it calls back success", func(t *testing.T) {
		// timeout 1s: the executor stops the 2s task after 1s and calls
		// back handleCode 200.
		_, runID := a.runJob(t, "overrun", "work", 1, map[string]any{"timeout_ms": 1000})
		r, atts := a.waitRun(t, runID)
		require.Equal(t, store.RunFailed, r.Status)
		require.Len(t, atts, 1)
		require.Equal(t, store.AttemptFailed, atts[0].Status)
		require.Contains(t, atts[0].Error, "timed out")
	})

	t.Run("an executor that goes away mid-run loses its slots to the other", func(t *testing.T) {
		jobID, runID := a.runJob(t, "moving", "hold", 2, nil)
		testenv.WaitFor(t, 30*time.Second, func() (bool, error) {
			n := 0
			for _, f := range []*fakeExecutor{ex1, ex2} {
				for _, p := range f.Held() {
					if jobOf(p) == jobID {
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

// TestXXLJobBusyExecutor: an executor that runs one task per job id refuses
// a run of a slot whose previous run still runs there ("There are tasks
// running"). The slot waits in the admin — sent again at each probe, past
// the dispatch deadline if need be — and runs once the executor is free;
// it does not fail.
func TestXXLJobBusyExecutor(t *testing.T) {
	t.Parallel()
	a := startAdmin(t)
	f := newFakeExecutor(t, a.srv.URL(), "xxl", a.token)
	rt, err := f.Register(a.token)
	require.NoError(t, err)
	require.Equal(t, 200, rt.Code, rt.Message())

	jobID, first := a.runJob(t, "overlapping", "hold", 1, nil) // overlap_policy allow
	testenv.WaitFor(t, 30*time.Second, func() (bool, error) { return len(heldOf(f, jobID)) == 1, nil }, "the first run's slot runs")
	second := a.trigger(t, jobID)
	testenv.WaitFor(t, 30*time.Second, func() (bool, error) { return f.Refusals(msgBusy) >= 3, nil }, "the second run's slot is refused as busy, and sent again")
	atts, err := a.st.Attempts(context.Background(), second)
	require.NoError(t, err)
	require.Len(t, atts, 1)
	require.Equal(t, store.AttemptAssigned, atts[0].Status, "busy is no failure: the slot waits")
	require.Positive(t, a.srv.XXLJob().Stats().BusyWaiting)

	f.ReleaseAll() // the first run ends; the second's slot gets the job id
	testenv.WaitFor(t, 30*time.Second, func() (bool, error) {
		ids := heldOf(f, jobID)
		return len(ids) == 1 && ids[0] == atts[0].Token, nil
	}, "the second run's slot runs")
	f.ReleaseAll()
	for _, runID := range []int64{first, second} {
		r, atts := a.waitRun(t, runID)
		require.Equal(t, store.RunSucceeded, r.Status, r.Error)
		require.Len(t, atts, 1, "no attempt failed")
	}
	testenv.WaitFor(t, 10*time.Second, func() (bool, error) { return a.srv.XXLJob().Stats().BusyWaiting == 0, nil }, "nothing waits")
}

// xxlJobIDs returns the XXL-JOB job ids of the run calls of a job that
// execs accepted.
func xxlJobIDs(jobID int64, execs ...*fakeExecutor) map[int64]bool {
	ids := map[int64]bool{}
	for _, f := range execs {
		for _, p := range f.Runs() {
			if jobOf(p) == jobID {
				ids[p.JobID] = true
			}
		}
	}
	return ids
}

// duplicatedFailures runs a job of 2 failing slots while execs send every
// callback twice, waits until the admin has counted the second callback of
// each, and returns the ignored-callback count from before the run and the
// run's attempts.
func (a *admin) duplicatedFailures(t *testing.T, name string, extra map[string]any, execs ...*fakeExecutor) (int64, []store.Attempt) {
	t.Helper()
	before := a.srv.XXLJob().Stats().IgnoredCallbacks
	for _, f := range execs {
		f.DuplicateCallbacks(true)
	}
	_, runID := a.runJob(t, name, "fail", 2, extra)
	r, atts := a.waitRun(t, runID)
	require.Equal(t, store.RunFailed, r.Status)
	testenv.WaitFor(t, 30*time.Second, func() (bool, error) {
		return a.srv.XXLJob().Stats().IgnoredCallbacks-before >= 2, nil
	}, "the second callback of each slot is counted")
	for _, f := range execs {
		f.DuplicateCallbacks(false)
	}
	return before, atts
}

func heldOf(f *fakeExecutor, jobID int64) []int64 {
	var out []int64
	for id, p := range f.Held() {
		if jobOf(p) == jobID {
			out = append(out, id)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// waitCallback waits until f has called back logID.
func waitCallback(t *testing.T, f *fakeExecutor, logID int64) {
	t.Helper()
	testenv.WaitFor(t, 30*time.Second, func() (bool, error) {
		for _, cb := range f.Callbacks() {
			if cb.LogID == logID {
				return true, nil
			}
		}
		return false, nil
	}, fmt.Sprintf("logId %d is called back", logID))
	f.wg.Wait() // and acknowledged
}

// holding waits until one of execs runs the single slot of a job and
// returns its logId and the executor.
func holding(t *testing.T, jobID int64, execs ...*fakeExecutor) (int64, *fakeExecutor) {
	t.Helper()
	var token int64
	var holder *fakeExecutor
	testenv.WaitFor(t, 30*time.Second, func() (bool, error) {
		for _, f := range execs {
			if ids := heldOf(f, jobID); len(ids) == 1 {
				token, holder = ids[0], f
			}
		}
		return token != 0, nil
	}, fmt.Sprintf("the slot of job %d runs on an executor", jobID))
	return token, holder
}
