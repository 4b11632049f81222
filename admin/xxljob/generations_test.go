package xxljob_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/xxljob"
	"github.com/shardjob/shardjob/deploy/dev/testenv"
)

// versions are the XXL-JOB versions whose executors the tests play, and the
// generation the admin must detect for each.
var versions = []struct {
	version string
	gen     xxljob.Generation
}{
	{"2.4", xxljob.GenClassic}, {"3.3", xxljob.GenClassic}, {"3.4", xxljob.GenClassic}, {"3.5", xxljob.Gen35},
}

// TestClientSpeaksEachGeneration: the client calls executors of every
// version in their own terms, and learns a generation from an executor that
// has no endpoint of the name it called.
func TestClientSpeaksEachGeneration(t *testing.T) {
	t.Parallel()
	admin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"code":200}`))
	}))
	t.Cleanup(admin.Close)
	ctx := context.Background()
	for _, v := range versions {
		t.Run(v.version, func(t *testing.T) {
			f := newFakeExecutorOf(t, v.version, admin.URL, "app", "right-token-123")
			c := xxljob.NewClient(5*time.Second, nil)
			t.Cleanup(c.CloseIdleConnections)
			at := xxljob.Target{Address: f.Address(), App: "app", Token: "right-token-123", Generation: v.gen}
			require.NoError(t, c.Beat(ctx, at))
			require.NoError(t, c.Run(ctx, at, xxljob.TriggerParam{JobID: 7, ExecutorHandler: "hold", LogID: 11, LogDateTime: 1700, GlueType: xxljob.GlueBean}))
			lr, err := c.Log(ctx, at, xxljob.LogParam{LogID: 11, LogDateTim: 1700, LogDateTime: 1700, JobID: 7, FromLineNum: 2})
			require.NoError(t, err)
			require.Contains(t, lr.LogContent, "log of 11 from line 2", "the log comes in content (2.x) or data (3.x)")
			got := f.Logs()[0]
			if v.version == "2.4" {
				require.Equal(t, int64(1700), got.LogDateTim)
			} else {
				require.Equal(t, int64(1700), got.LogDateTime)
				require.Equal(t, int64(7), got.JobID)
			}
			require.NoError(t, c.Kill(ctx, at, 7))
			require.Zero(t, f.Endpoint(map[bool]string{true: "/run", false: "/trigger"}[v.gen == xxljob.Gen35]), "the generation's own run endpoint only")

			if v.gen == xxljob.Gen35 {
				noName := at
				noName.App = ""
				var ce *xxljob.CallError
				require.ErrorAs(t, c.Beat(ctx, noName), &ce, "3.5 executors require the appname header")
				require.Contains(t, ce.Msg, "appname")
			}

			// Recorded under the other generation: the run call is refused
			// as "no such endpoint", sent once under the right name, and
			// the client keeps the right name for the address.
			wrong := at
			wrong.Generation = map[bool]xxljob.Generation{true: xxljob.GenClassic, false: xxljob.Gen35}[v.gen == xxljob.Gen35]
			wrongPath := map[bool]string{true: "/run", false: "/trigger"}[v.gen == xxljob.Gen35]
			c2 := xxljob.NewClient(5*time.Second, nil)
			t.Cleanup(c2.CloseIdleConnections)
			require.NoError(t, c2.Run(ctx, wrong, xxljob.TriggerParam{JobID: 8, ExecutorHandler: "ok", LogID: 12, GlueType: xxljob.GlueBean}))
			require.NoError(t, c2.Run(ctx, wrong, xxljob.TriggerParam{JobID: 9, ExecutorHandler: "ok", LogID: 13, GlueType: xxljob.GlueBean}))
			require.Equal(t, 1, f.Endpoint(wrongPath), "one refused call, then the learned endpoint")
			require.Len(t, f.Runs(), 3)
		})
	}

	// An executor that answers HTTP 404 for an unknown endpoint is tried
	// under the other name too.
	mux := http.NewServeMux()
	mux.HandleFunc("POST /trigger", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(`{"code":200,"data":null}`)) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	c := xxljob.NewClient(5*time.Second, nil)
	t.Cleanup(c.CloseIdleConnections)
	require.NoError(t, c.Run(ctx, xxljob.Target{Address: srv.URL, App: "app", Token: "right-token-123"}, xxljob.TriggerParam{JobID: 1}))
	// A refusal of the handler is not mistaken for a missing endpoint.
	f := newFakeExecutorOf(t, "3.5", admin.URL, "app", "right-token-123")
	var ce *xxljob.CallError
	require.ErrorAs(t, c.Run(ctx, xxljob.Target{Address: f.Address(), App: "app", Token: "right-token-123", Generation: xxljob.Gen35},
		xxljob.TriggerParam{JobID: 1, ExecutorHandler: "missing", GlueType: xxljob.GlueBean}), &ce)
	require.Equal(t, msgNoHandler, ce.Msg)
	require.Zero(t, f.Endpoint("/run"))

	require.Equal(t, xxljob.Gen35, xxljob.GenerationOf(xxljob.VersionLabel(xxljob.Gen35)))
	require.Equal(t, xxljob.GenClassic, xxljob.GenerationOf(xxljob.VersionLabel(xxljob.GenClassic)))
	require.Equal(t, xxljob.GenClassic, xxljob.GenerationOf("xxl-job"), "rows registered before generations were told apart")
}

// TestXXLJobProtocolGenerations runs executors of XXL-JOB 2.4, 3.3, 3.4 and
// 3.5 (fakeExecutor: each version's envelope, endpoints, headers, callback
// body and admin path, with the Go client's quirks: array refusals, one
// task per job id, success on kill, duplicate callbacks) against one admin
// on MariaDB and ZooKeeper.
func TestXXLJobProtocolGenerations(t *testing.T) {
	t.Parallel()
	apps := make([]string, len(versions))
	for i, v := range versions {
		apps[i] = "xxl-v" + v.version
	}
	// The fake executors keep one task per job id: several slots of a
	// handler may run side by side on them.
	a := startAdminWith(t, func(c *xxljob.Config) { c.ConcurrentApps = append(c.ConcurrentApps, apps...) }, apps...)
	ctx := context.Background()
	for i, v := range versions {
		app, token := apps[i], a.tokens[apps[i]]
		t.Run(v.version, func(t *testing.T) {
			ex1 := newFakeExecutorOf(t, v.version, a.srv.URL(), app, token)
			ex2 := newFakeExecutorOf(t, v.version, a.srv.URL(), app, token)
			for _, f := range []*fakeExecutor{ex1, ex2} {
				rt, err := f.Register(token)
				require.NoError(t, err)
				require.Equal(t, 200, rt.Code, rt.Message())
				e, err := a.st.ExecutorByInstance(ctx, "xxljob:"+app+"@"+f.Address())
				require.NoError(t, err)
				require.Equal(t, xxljob.VersionLabel(v.gen), e.Version, "the generation is detected at registration")
			}
			testenv.WaitFor(t, 30*time.Second, func() (bool, error) {
				online, err := a.st.OnlineExecutors(ctx, app, 900)
				return len(online) == 2 && ex1.Beats() >= 3 && ex2.Beats() >= 3, err
			}, "the admin probes both executors")
			opts := func(extra map[string]any) map[string]any {
				extra["app"] = app
				return extra
			}

			// 5 slots of 2 s on 2 executors that run one task per job id.
			start := time.Now()
			jobID, runID := a.runJob(t, "parallel-"+v.version, "work", 5, opts(map[string]any{"timeout_ms": 30000}))
			r, atts := a.waitRun(t, runID)
			t.Logf("SUMMARY XXL-JOB %s: 5 slots × 2s on 2 serial executors: run succeeded in %s", v.version, time.Since(start).Round(time.Millisecond))
			require.Equal(t, store.RunSucceeded, r.Status, r.Error)
			require.Len(t, atts, 5, "every slot ran once")
			require.Zero(t, ex1.Refusals(msgBusy)+ex2.Refusals(msgBusy), "no run was refused as busy")
			require.Len(t, xxlJobIDs(jobID, ex1, ex2), 5, "five XXL-JOB job ids")
			wrongRun := map[bool]string{true: "/run", false: "/trigger"}[v.gen == xxljob.Gen35]
			require.Zero(t, ex1.Endpoint(wrongRun)+ex2.Endpoint(wrongRun), "runs go to the generation's endpoint at once")

			// An unknown handler: refused with an array, the run fails.
			_, runID = a.runJob(t, "refused-"+v.version, "missing", 1, opts(map[string]any{}))
			r, atts = a.waitRun(t, runID)
			require.Equal(t, store.RunFailed, r.Status)
			require.Len(t, atts, 1)
			require.Contains(t, atts[0].Error, msgNoHandler)

			// Duplicate callbacks: the first counts.
			_, atts = a.duplicatedFailures(t, "duplicated-"+v.version, opts(map[string]any{}), ex1, ex2)
			for _, at := range atts {
				require.Equal(t, store.AttemptFailed, at.Status)
				require.Contains(t, at.Error, "boom")
			}

			// Log and kill from the console; the killed task calls back
			// success, which changes nothing.
			jobID, runID = a.runJob(t, "held-"+v.version, "hold", 1, opts(map[string]any{}))
			tok, holder := holding(t, jobID, ex1, ex2)
			var lr struct {
				Content string `json:"content"`
			}
			code, err := a.api.Call(context.Background(), http.MethodGet, fmt.Sprintf("/api/v1/xxljob/attempts/%d/log?from=2", tok), nil, &lr)
			require.NoError(t, err)
			require.Equal(t, http.StatusOK, code)
			require.Contains(t, lr.Content, fmt.Sprintf("log of %d from line 2", tok))
			run, err := a.st.Run(ctx, runID)
			require.NoError(t, err)
			logs := holder.Logs()
			got := logs[len(logs)-1]
			if v.version == "2.4" {
				require.Equal(t, run.ScheduledAt, got.LogDateTim, "2.4 reads logDateTim")
			} else {
				require.Equal(t, run.ScheduledAt, got.LogDateTime, "3.x reads logDateTime")
				require.Equal(t, xxljob.SlotJobID(jobID, 0), got.JobID, "3.x reads jobId")
			}
			code, err = a.api.Call(context.Background(), http.MethodPost, fmt.Sprintf("/api/v1/xxljob/attempts/%d/kill", tok), nil, nil)
			require.NoError(t, err)
			require.Equal(t, http.StatusOK, code)
			require.Contains(t, holder.Kills(), xxljob.SlotJobID(jobID, 0))
			waitCallback(t, holder, tok)
			at, err := a.st.Attempt(ctx, tok)
			require.NoError(t, err)
			require.Equal(t, store.AttemptFailed, at.Status, "the success callback of a killed task changes nothing")
			require.Contains(t, at.Error, "killed by admin")

			if v.gen != xxljob.Gen35 {
				return
			}
			// 3.5's appname header must name the app, in both directions.
			rt, err := ex1.postWith("/api/registry", token, map[string]string{xxljob.AppNameHeader: "xxl"},
				xxljob.RegistryParam{RegistryGroup: "EXECUTOR", RegistryKey: app, RegistryValue: ex1.Address()})
			require.NoError(t, err)
			require.Equal(t, 500, rt.Code)
			require.Contains(t, rt.Message(), "is not the registryKey")
			rt, err = ex1.postWith("/api/callback", token, map[string]string{xxljob.AppNameHeader: "xxl"},
				map[string]any{"callbackList": []xxljob.CallbackParam{{LogID: tok, HandleCode: 200}}})
			require.NoError(t, err)
			require.Equal(t, 500, rt.Code, "a callback naming another app than its token's is refused")
			rt, err = ex1.postWith("/api/callback", token, nil, map[string]any{"callbacks": []int{}})
			require.NoError(t, err)
			require.Equal(t, 500, rt.Code)
			require.Contains(t, rt.Message(), "callbackList")
		})
	}
	var gens []string
	execs, err := a.st.Executors(ctx)
	require.NoError(t, err)
	for _, e := range execs {
		gens = append(gens, e.App+"="+e.Version)
	}
	sort.Strings(gens)
	t.Logf("executors: %v", gens)
}
