package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/xxljob"
	"github.com/shardjob/shardjob/deploy/dev/testenv"
	harness "github.com/shardjob/shardjob/deploy/dev/testenv/cluster"
	"github.com/shardjob/shardjob/sdk/protocol"
)

// TestStandaloneTakesXXLJobTokens: standalone mode (what `make run` starts)
// takes the XXL-JOB tokens file as serve does. An XXL-JOB executor that
// registers with its app's token is accepted and listed; one with a wrong
// token is refused and not listed.
func TestStandaloneTakesXXLJobTokens(t *testing.T) {
	t.Parallel()
	bin := testenv.BuildBinary(t, harness.AdminPkg)
	const app, token = "orders", "orders-token-6f1c2a"

	// The flag and its environment variable are offered.
	help, _ := exec.Command(bin, "standalone", "-h").CombinedOutput()
	require.Contains(t, string(help), "-xxljob-tokens")
	require.Contains(t, string(help), "SHARDJOB_XXLJOB_TOKENS")
	require.Contains(t, string(help), "-xxljob-allowed-hosts")
	require.Contains(t, string(help), "-xxljob-concurrent-apps")
	require.Contains(t, string(help), "SHARDJOB_XXLJOB_CONCURRENT_APPS")

	dir := t.TempDir()
	tokens := filepath.Join(dir, "xxljob-tokens.json")
	require.NoError(t, os.WriteFile(tokens, []byte(`{"`+app+`": "`+token+`"}`), 0o600))
	port := testenv.FreePort(t)
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	p := harness.StartStandalone(t, filepath.Join(dir, "data"), port, "--no-demo", "--xxljob-tokens", tokens)
	c := p.Login(t)

	// An XXL-JOB executor of the app: it answers the admin's beat (which
	// confirms a registration) only with the app's token.
	xe := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Header.Get(xxljob.TokenHeader) != token {
			_, _ = w.Write([]byte(`{"code":500,"msg":"The access token is wrong."}`))
			return
		}
		_, _ = w.Write([]byte(`{"code":200,"msg":null}`))
	}))
	t.Cleanup(xe.Close)

	register := func(tok string) xxljob.ReturnT {
		t.Helper()
		body, err := json.Marshal(xxljob.RegistryParam{RegistryGroup: "EXECUTOR", RegistryKey: app, RegistryValue: xe.URL + "/"})
		require.NoError(t, err)
		req, err := http.NewRequest(http.MethodPost, base+"/api/registry", bytes.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(xxljob.TokenHeader, tok)
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		require.Equal(t, http.StatusOK, res.StatusCode)
		var rt xxljob.ReturnT
		require.NoError(t, json.NewDecoder(res.Body).Decode(&rt))
		return rt
	}
	listed := func() []ExecutorEntry {
		t.Helper()
		var out struct{ Executors []ExecutorEntry }
		code, err := c.Call(context.Background(), http.MethodGet, "/api/v1/executors", nil, &out)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, code)
		return out.Executors
	}

	rt := register("not-the-token-of-orders")
	require.Equal(t, 500, rt.Code, "a wrong token is refused")
	require.Contains(t, rt.Message(), "access token is wrong")
	require.Empty(t, listed(), "a refused executor is not registered")

	rt = register(token)
	require.Equal(t, xxljob.CodeSuccess, rt.Code, rt.Message())
	ex := listed()
	require.Len(t, ex, 1, "the executor registered with its app's token")
	require.Equal(t, app, ex[0].App)
	require.Equal(t, "xxljob", ex[0].Protocol)
	require.Equal(t, "online", ex[0].State)
}

// ExecutorEntry is an entry of GET /api/v1/executors.
type ExecutorEntry struct {
	ID       int64  `json:"id"`
	App      string `json:"app"`
	State    string `json:"state"`
	Protocol string `json:"protocol"`
}

// goexecPkg is the test executor that behaves like xxl-job-executor-go.
const goexecPkg = "github.com/shardjob/shardjob/admin/xxljob/internal/goexec/cmd/xxljob-goexec"

// TestGoClientExecutorsRunEverySlotOnce: a real admin process and two
// executor processes that behave like xxl-job-executor-go (one task object
// per handler name) run a 5-slot job of one handler, 2 s per slot — the
// reported case, where 3 slots stayed running for ever. Every slot ends
// succeeded with exactly one attempt, none is left running, the handler ran
// 5 times and each slot's own logId was called back once.
func TestGoClientExecutorsRunEverySlotOnce(t *testing.T) {
	t.Parallel()
	dsn := testenv.MySQL(t)
	zk := testenv.ZooKeeper(t)
	root := testenv.ZKChroot(t)
	const app, token = "goapp", "goapp-token-5e2a91c3"
	tokens := filepath.Join(t.TempDir(), "xxljob-tokens.json")
	require.NoError(t, os.WriteFile(tokens, []byte(`{"`+app+`": "`+token+`"}`), 0o600))
	a := serveAdmin(t, protocol.NewSecret(), "--db-driver", "mysql", "--db-dsn", dsn, "--zk", zk, "--zk-root", root,
		"--heartbeat-interval", "500ms", "--xxljob-tokens", tokens)
	c := a.Login(t)

	bin := testenv.BuildBinary(t, goexecPkg)
	var execs []*testenv.Process
	for range 2 {
		p := testenv.StartProcess(t, bin, []string{"-admin", a.URL, "-app", app, "-token", token, "-work", "2s", "-register-every", "1s"}, nil)
		_, err := p.WaitForLine(harness.Ctx(t, 60*time.Second), "listening at")
		require.NoError(t, err)
		execs = append(execs, p)
	}
	testenv.WaitFor(t, 60*time.Second, func() (bool, error) {
		var out struct{ Executors []ExecutorEntry }
		_, err := c.Call(context.Background(), http.MethodGet, "/api/v1/executors", nil, &out)
		n := 0
		for _, e := range out.Executors {
			if e.App == app && e.Protocol == "xxljob" && e.State == "online" {
				n++
			}
		}
		return n == 2, err
	}, "both executors register")

	var job struct {
		ID int64 `json:"id"`
	}
	code, err := c.Call(context.Background(), http.MethodPost, "/api/v1/jobs", map[string]any{
		"app": app, "name": "go-five", "handler": "work", "cron": "0 0 1 1 *", "slots": 5, "enabled": false,
	}, &job)
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, code)
	var trig struct {
		Run struct {
			ID int64 `json:"id"`
		} `json:"run"`
	}
	start := time.Now()
	code, err = c.Call(context.Background(), http.MethodPost, "/api/v1/jobs/"+strconv.FormatInt(job.ID, 10)+"/trigger", map[string]any{}, &trig)
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, code)

	var run apitypes.RunDetail
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("run %s, attempts %+v", run.Run.Status, run.Attempts)
			for i, p := range execs {
				t.Logf("executor %d:\n%s", i, p.Output())
			}
			t.Logf("admin log (tail):\n%s", tailOf(a.Output(), 8000))
		}
	})
	testenv.WaitFor(t, 90*time.Second, func() (bool, error) {
		_, err := c.Call(context.Background(), http.MethodGet, "/api/v1/runs/"+strconv.FormatInt(trig.Run.ID, 10), nil, &run)
		return run.Run.Status != "" && run.Run.Status != "pending" && run.Run.Status != "running", err
	}, "the run ends")
	t.Logf("SUMMARY 5 slots × 2s of one handler on 2 xxl-job-executor-go-like processes: run %s in %s", run.Run.Status, time.Since(start).Round(time.Millisecond))
	require.Equal(t, "succeeded", run.Run.Status)
	rows := map[int]int{}
	for _, at := range run.Attempts {
		require.Equal(t, "succeeded", at.Status, "slot %d: no attempt lost, failed or left running", at.Slot)
		rows[at.Slot]++
	}
	require.Equal(t, map[int]int{0: 1, 1: 1, 2: 1, 3: 1, 4: 1}, rows, "each slot succeeded exactly once")

	runs, callbacks := 0, map[string]int{}
	for _, p := range execs {
		for _, line := range strings.Split(p.Stdout(), "\n") {
			switch {
			case strings.HasPrefix(line, "run "):
				runs++
			case strings.HasPrefix(line, "callback "):
				callbacks[strings.Fields(line)[1]]++
			}
		}
	}
	require.Equal(t, 5, runs, "the handler ran 5 times")
	for _, at := range run.Attempts {
		require.Equal(t, 1, callbacks["log_id="+strconv.FormatInt(at.Token, 10)], "slot %d: its own logId called back once", at.Slot)
	}
}

// tailOf returns the last n bytes of s.
func tailOf(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
