package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/shardjob/shardjob/admin/api"
	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/auth"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/deploy/dev/testenv"
	"github.com/shardjob/shardjob/executor/demo"
	"github.com/shardjob/shardjob/sdk"
	"github.com/shardjob/shardjob/sdk/protocol"
	sqlfiles "github.com/shardjob/shardjob/sql"
)

// startRunOn creates a job of handler and a running run of slots slots, all
// placed on executor ex, and returns the run and its tokens by slot.
func startRunOn(t *testing.T, st *store.Store, ex int64, handler string, slots int) (int64, []int64) {
	t.Helper()
	ctx := context.Background()
	_, err := st.ClaimEpoch(ctx, 1, "test")
	require.NoError(t, err)
	jobID, err := st.CreateJob(ctx, store.Job{App: "billing", Name: "logs-" + handler, Handler: handler, CronExpr: "0 0 1 1 *", TimeZone: "UTC",
		MisfirePolicy: "run_once", OverlapPolicy: "allow", SlotCount: slots, Params: "records=1", Enabled: true})
	require.NoError(t, err)
	run, _, err := st.InsertRun(ctx, 1, store.NewRun{JobID: jobID, ScheduledAt: 1, TriggerKind: store.TriggerManual, Status: store.RunPending, Params: "records=1", SlotCount: slots})
	require.NoError(t, err)
	atts := make([]store.NewAttempt, slots)
	for i := range atts {
		atts[i] = store.NewAttempt{Slot: i, Attempt: 1, ExecutorID: ex}
	}
	ok, err := st.StartRun(ctx, 1, run.ID, time.Hour, atts)
	require.NoError(t, err)
	require.True(t, ok)
	got, err := st.Attempts(ctx, run.ID)
	require.NoError(t, err)
	tokens := make([]int64, slots)
	for _, a := range got {
		tokens[a.Slot] = a.Token
	}
	return run.ID, tokens
}

type logsPage struct {
	RunID        int64  `json:"run_id"`
	RunStatus    string `json:"run_status"`
	NextAfterSeq int64  `json:"next_after_seq"`
	HasMore      bool   `json:"has_more"`
	StoredLines  int64  `json:"stored_lines"`
	Lines        []struct {
		Seq     int64          `json:"seq"`
		Slot    int            `json:"slot"`
		Token   int64          `json:"token"`
		Attempt int            `json:"attempt"`
		At      time.Time      `json:"at"`
		Level   string         `json:"level"`
		Message string         `json:"message"`
		Attrs   map[string]any `json:"attrs"`
	} `json:"lines"`
	Dropped struct {
		Executor int64 `json:"executor"`
		Cap      int64 `json:"cap"`
	} `json:"dropped"`
}

func TestExecutorLogsAndRunLogsAPI(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		runID, tokens := executorWithRun(t, e, "i-1", 2)

		at := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC).UnixMilli()
		req := protocol.LogsRequest{InstanceID: "i-1", Lines: []protocol.LogLine{
			{Token: tokens[0], AtMS: at, Level: 0, Message: "slot started", Attrs: `{"handler":"settle.v1"}`},
			{Token: tokens[1], AtMS: at + 1, Level: 8, Message: "<script>alert(1)</script>", Attrs: `not json`},
			{Token: 987654, AtMS: at, Message: "not mine"},
			{Token: tokens[0], AtMS: at + 2, Level: -4, Message: "debug " + strings.Repeat("x", 10_000)},
		}, Dropped: []protocol.LogDrop{{Token: tokens[0], Lines: 3}}}
		code, _ := e.signed(protocol.PathLogs, req, "")
		require.Equal(t, http.StatusUnauthorized, code, "unsigned")
		code, _ = e.signed(protocol.PathLogs, protocol.LogsRequest{InstanceID: "nobody"}, e.secret)
		require.Equal(t, http.StatusConflict, code, "unknown instance")
		code, out := e.signed(protocol.PathLogs, req, e.secret)
		require.Equal(t, http.StatusOK, code, string(out))
		var lr protocol.LogsResponse
		require.NoError(t, json.Unmarshal(out, &lr))
		require.Equal(t, protocol.LogsResponse{Stored: 3, RejectedTokens: []int64{987654}}, lr)

		e.user("watcher", auth.RoleViewer)
		tok := e.token("watcher")
		var page logsPage
		path := fmt.Sprintf("/api/v1/runs/%d/logs", runID)
		require.Equal(t, http.StatusOK, e.call("GET", path, tok, nil, &page))
		require.Equal(t, "running", page.RunStatus)
		require.Len(t, page.Lines, 3)
		require.Equal(t, "slot started", page.Lines[0].Message)
		require.Equal(t, map[string]any{"handler": "settle.v1"}, page.Lines[0].Attrs)
		require.Equal(t, "INFO", page.Lines[0].Level)
		require.Equal(t, time.UnixMilli(at).UTC(), page.Lines[0].At)
		require.Equal(t, 1, page.Lines[1].Slot)
		require.Equal(t, "ERROR", page.Lines[1].Level)
		require.Equal(t, "<script>alert(1)</script>", page.Lines[1].Message, "stored as text")
		require.Nil(t, page.Lines[1].Attrs, "attrs that are not a JSON object are dropped")
		require.Equal(t, "DEBUG", page.Lines[2].Level)
		require.LessOrEqual(t, len(page.Lines[2].Message), 8<<10, "messages are cut")
		require.Equal(t, int64(3), page.NextAfterSeq)
		require.False(t, page.HasMore)
		require.Equal(t, int64(3), page.Dropped.Executor)
		require.Equal(t, int64(3), page.StoredLines)

		// Filters and keyset pages.
		require.Equal(t, http.StatusOK, e.call("GET", path+"?level=warn", tok, nil, &page))
		require.Len(t, page.Lines, 1)
		require.Equal(t, int64(3), page.NextAfterSeq, "non-matching lines are skipped for the next poll")
		require.Equal(t, http.StatusOK, e.call("GET", path+"?slot=0&limit=1", tok, nil, &page))
		require.Len(t, page.Lines, 1)
		require.True(t, page.HasMore)
		require.Equal(t, http.StatusOK, e.call("GET", fmt.Sprintf("%s?slot=0&after_seq=%d", path, page.NextAfterSeq), tok, nil, &page))
		require.Len(t, page.Lines, 1)
		require.Equal(t, int64(3), page.Lines[0].Seq)
		require.Equal(t, http.StatusOK, e.call("GET", path+"?after_seq=3", tok, nil, &page))
		require.Empty(t, page.Lines)
		require.NotNil(t, page.Lines, "an empty page is [] not null")

		for _, q := range []string{"?slot=-1", "?slot=x", "?after_seq=-2", "?limit=0", "?limit=1001", "?level=loud"} {
			require.Equal(t, http.StatusBadRequest, e.call("GET", path+q, tok, nil, nil), q)
		}
		require.Equal(t, http.StatusNotFound, e.call("GET", "/api/v1/runs/99999/logs", tok, nil, nil))
		require.Equal(t, http.StatusUnauthorized, e.call("GET", path, "", nil, nil))
	})
}

// TestDemoHandlerLogsReachTheAPI runs the demo handlers in a real SDK
// executor against the admin API: what demo.hello logs per slot is shipped,
// stored and served by GET /runs/:id/logs. Not parallel, so that goleak can
// check that the executor left nothing behind.
func TestDemoHandlerLogsReachTheAPI(t *testing.T) {
	ctx := context.Background()
	leaks := goleak.IgnoreCurrent() // parallel tests of the package are paused, not gone
	st, err := store.Open(ctx, store.Config{Driver: sqlfiles.SQLite, DSN: filepath.Join(t.TempDir(), "sj.db")})
	require.NoError(t, err)
	_, err = st.Migrate(ctx)
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = st.Close()
		goleak.VerifyNone(t, leaks)
	}) // registered first: runs last
	secret := protocol.NewSecret()
	h, err := api.New(api.Config{Store: st, ExecutorSecret: secret, Timing: protocol.Timing{Heartbeat: 50 * time.Millisecond}, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	e := &env{t: t, st: st, srv: srv, secret: secret}

	ex, err := sdk.New(sdk.Config{App: "billing", Admins: []string{srv.URL}, Secret: secret, InstanceID: "demo-1",
		HeartbeatInterval: 50 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	demo.Register(ex)
	require.NoError(t, ex.Start(ctx))
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		require.NoError(t, ex.Stop(sctx))
	})
	var registered store.Executor
	testenv.WaitFor(t, 15*time.Second, func() (bool, error) {
		registered, err = st.ExecutorByInstance(ctx, "demo-1")
		return err == nil, nil
	}, "the executor registers")
	runID, tokens := startRunOn(t, st, registered.ID, "demo.hello", 3)

	e.user("watcher", auth.RoleViewer)
	tok := e.token("watcher")
	var page logsPage
	testenv.WaitFor(t, 30*time.Second, func() (bool, error) {
		code := e.call("GET", fmt.Sprintf("/api/v1/runs/%d/logs?limit=1000", runID), tok, nil, &page)
		if code != http.StatusOK {
			return false, fmt.Errorf("GET logs: %d", code)
		}
		said := 0
		for _, l := range page.Lines {
			if l.Message == "hello from slot" {
				said++
			}
		}
		return said == 3, nil
	}, "every slot's lines shipped")
	hello := map[int]bool{}
	for _, l := range page.Lines {
		require.Equal(t, tokens[l.Slot], l.Token)
		if l.Message == "hello from slot" {
			hello[l.Slot] = true
			require.Equal(t, float64(l.Slot), l.Attrs["slot"], "the handler's own attributes")
			require.Equal(t, float64(3), l.Attrs["total"])
		}
	}
	require.Equal(t, map[int]bool{0: true, 1: true, 2: true}, hello, "demo.hello logs once per slot")
	require.Zero(t, page.Dropped.Executor+page.Dropped.Cap)
}

// TestAppLogQuotaThroughTheAPI: an admin gives app billing a quota of 20
// log bytes a day; an executor of billing ships 3 lines of 8 bytes: two are
// stored, the third is dropped and counted — on the run's logs
// (dropped.quota) and on the app (log_bytes_today, log_lines_dropped_today).
func TestAppLogQuotaThroughTheAPI(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		runID, tokens := executorWithRun(t, e, "i-q", 1)
		e.user("root", auth.RoleAdmin)
		root := e.token("root")
		var app apitypes.AppView
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/apps/billing", root, nil, &app))
		require.Equal(t, http.StatusOK, e.call("PATCH", "/api/v1/apps/billing", root, map[string]any{"version": app.Version, "max_log_bytes_per_day": 20}, &app))
		require.Equal(t, int64(20), *app.MaxLogBytesPerDay)

		req := protocol.LogsRequest{InstanceID: "i-q", Lines: []protocol.LogLine{
			{Token: tokens[0], AtMS: 1, Message: "line one"}, {Token: tokens[0], AtMS: 2, Message: "line two"}, {Token: tokens[0], AtMS: 3, Message: "line 3!!"},
		}}
		code, out := e.signed(protocol.PathLogs, req, e.secret)
		require.Equal(t, http.StatusOK, code, string(out))
		var lr protocol.LogsResponse
		require.NoError(t, json.Unmarshal(out, &lr))
		require.Equal(t, 2, lr.Stored)

		var page struct {
			Lines   []json.RawMessage `json:"lines"`
			Dropped struct {
				Quota int64 `json:"quota"`
			} `json:"dropped"`
		}
		require.Equal(t, http.StatusOK, e.call("GET", fmt.Sprintf("/api/v1/runs/%d/logs", runID), root, nil, &page))
		require.Len(t, page.Lines, 2)
		require.Equal(t, int64(1), page.Dropped.Quota)
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/apps/billing", root, nil, &app))
		require.Equal(t, int64(16), app.LogBytesToday)
		require.Equal(t, int64(1), app.LogLinesDroppedToday)
	})
}

// executorWithRun registers executor instance of app billing by a signed
// heartbeat and starts a run of slots slots on it; it returns the run and
// its tokens.
func executorWithRun(t *testing.T, e *env, instance string, slots int) (int64, []int64) {
	t.Helper()
	hb := protocol.HeartbeatRequest{InstanceID: instance, App: "billing", Address: "http://127.0.0.1:9", Capacity: 2}
	code, out := e.signed(protocol.PathHeartbeat, hb, e.secret)
	require.Equal(t, http.StatusOK, code, string(out))
	ex, err := e.st.ExecutorByInstance(context.Background(), instance)
	require.NoError(t, err)
	return startRunOn(t, e.st, ex.ID, "settle.v1", slots)
}
