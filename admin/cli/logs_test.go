package cli_test

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/cli"
	"github.com/shardjob/shardjob/admin/runstate"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/deploy/dev/testenv"
	"github.com/shardjob/shardjob/sdk/protocol"
)

func TestLogsPrintsAndFollowsShippedLines(t *testing.T) {
	t.Parallel()
	a := startAdmin(t)
	st := a.st
	ctx := context.Background()
	_, err := st.ClaimEpoch(ctx, 1, "test")
	require.NoError(t, err)
	jobID, err := st.CreateJob(ctx, store.Job{App: "billing", Name: "chatty", Handler: "chatty.v1", CronExpr: "0 0 1 1 *", TimeZone: "UTC",
		MisfirePolicy: "run_once", OverlapPolicy: "allow", SlotCount: 2, Enabled: true})
	require.NoError(t, err)
	ex, err := st.Heartbeat(ctx, store.ExecutorInfo{InstanceID: "ex-1", App: "billing", Address: "http://127.0.0.1:1", Capacity: 2})
	require.NoError(t, err)
	run, _, err := st.InsertRun(ctx, 1, store.NewRun{JobID: jobID, ScheduledAt: 1, TriggerKind: store.TriggerManual, Status: store.RunPending, SlotCount: 2})
	require.NoError(t, err)
	ok, err := st.StartRun(ctx, 1, run.ID, time.Hour, []store.NewAttempt{{Slot: 0, Attempt: 1, ExecutorID: ex.ID}, {Slot: 1, Attempt: 1, ExecutorID: ex.ID}})
	require.NoError(t, err)
	require.True(t, ok)
	atts, err := st.Attempts(ctx, run.ID)
	require.NoError(t, err)
	tok0, tok1 := atts[0].Token, atts[1].Token
	at := time.Date(2030, 1, 2, 3, 4, 5, 600e6, time.UTC).UnixMilli()
	_, err = st.AppendRunLogs(ctx, ex.ID, []store.LogLine{
		{Token: tok0, At: at, Level: 0, Message: "hello from slot", Attrs: `{"slot":0,"note":"a b"}`},
		{Token: tok1, At: at + 1, Level: 8, Message: "boom\nsecond line"},
	}, []store.LogDrop{{Token: tok0, Lines: 2}}, store.RunLogLimits{})
	require.NoError(t, err)
	id := strconv.FormatInt(run.ID, 10)

	code, out, errs := a.ctl("logs", id)
	require.Equal(t, cli.ExitOK, code, errs)
	require.Contains(t, out, "run "+id+" of billing/chatty: running")
	require.Contains(t, out, "SLOT")
	require.Contains(t, out, `2030-01-02T03:04:05.600Z INFO  slot=0 hello from slot slot=0 note="a b"`)
	require.Contains(t, out, "2030-01-02T03:04:05.601Z ERROR slot=1 boom second line\n", "one line per log line")
	require.Contains(t, out, "2 lines dropped (2 by executors")

	code, out, _ = a.ctl("logs", id, "--slot", "1")
	require.Equal(t, cli.ExitOK, code)
	require.NotContains(t, out, "hello from slot")
	require.Contains(t, out, "boom")
	code, out, _ = a.ctl("logs", "--level", "warn", id)
	require.Equal(t, cli.ExitOK, code)
	require.NotContains(t, out, "hello from slot")

	code, out, _ = a.ctl("logs", id, "-o", "json")
	require.Equal(t, cli.ExitOK, code)
	var doc struct {
		Run  struct{ ID int64 }
		Logs []struct {
			Seq     int64
			Message string
		}
		LogsDropped struct{ Executor int64 } `json:"logs_dropped"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &doc), out)
	require.Equal(t, run.ID, doc.Run.ID)
	require.Len(t, doc.Logs, 2)
	require.Equal(t, int64(2), doc.LogsDropped.Executor)

	code, _, _ = a.ctl("logs", id, "-f", "-o", "json")
	require.Equal(t, cli.ExitUsage, code)
	code, _, _ = a.ctl("logs", id, "--level", "loud")
	require.Equal(t, cli.ExitUsage, code)

	// -f prints what is there, then new lines until the run ends.
	w := &testenv.Buffer{}
	seen := w.Watch("boom")
	var errb strings.Builder
	done := make(chan int, 1)
	go func() {
		done <- cli.Main([]string{"logs", "-f", id}, cli.Env{Stdout: w, Stderr: &errb, Stdin: strings.NewReader(""), HTTP: a.srv.Client(),
			Getenv: func(k string) string { return a.envMap[k] }})
	}()
	select {
	case <-seen:
	case <-time.After(30 * time.Second):
		t.Fatalf("logs -f printed nothing: %s", w.String())
	}
	_, err = st.AppendRunLogs(ctx, ex.ID, []store.LogLine{{Token: tok1, At: at + 5, Level: 4, Message: "late line"}}, nil, store.RunLogLimits{})
	require.NoError(t, err)
	_, err = runstate.New(st).FinishAttempts(ctx, []store.SlotOutcome{
		{ExecutorID: ex.ID, SlotResult: protocol.SlotResult{Token: tok0, Status: store.AttemptSucceeded, StartedAt: at, FinishedAt: at + 10}},
		{ExecutorID: ex.ID, SlotResult: protocol.SlotResult{Token: tok1, Status: store.AttemptSucceeded, StartedAt: at, FinishedAt: at + 10}},
	})
	require.NoError(t, err)
	select {
	case code = <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("logs -f did not end with the run: %s", w.String())
	}
	require.Equal(t, cli.ExitOK, code, errb.String())
	out = w.String()
	require.Contains(t, out, "WARN  slot=1 late line")
	require.Equal(t, 1, strings.Count(out, "hello from slot"), "no line printed twice")
	require.Contains(t, out, "run "+id+" has already succeeded", "issue 30: not \"is succeeded\"")
}
