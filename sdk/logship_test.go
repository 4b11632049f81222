package sdk

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/deploy/dev/testenv"
	"github.com/shardjob/shardjob/sdk/protocol"
)

// shippedLines returns the lines the fake admin received for token, in
// arrival order, and the drops it was told about; call under f.mu.
func (f *fakeAdmin) shippedLines(token int64) (lines []protocol.LogLine, dropped int64) {
	for _, req := range f.logs {
		for _, l := range req.Lines {
			if l.Token == token {
				lines = append(lines, l)
			}
		}
		for _, d := range req.Dropped {
			if d.Token == token {
				dropped += d.Lines
			}
		}
	}
	return lines, dropped
}

// waitLogs waits until cond holds for the executor's log counters.
func waitLogs(t *testing.T, e *Executor, what string, cond func(s LogStats) bool) LogStats {
	t.Helper()
	deadline := time.NewTimer(waitTimeout)
	defer deadline.Stop()
	for {
		ch := e.logs.observe()
		if s := e.LogStats(); cond(s) {
			return s
		}
		select {
		case <-ch:
		case <-deadline.C:
			t.Fatalf("timed out after %s waiting for %s; log stats %+v", waitTimeout, what, e.LogStats())
		}
	}
}

func messages(lines []protocol.LogLine) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = l.Message
	}
	return out
}

func TestHandlerLogsAreShippedInBatches(t *testing.T) {
	t.Parallel()
	f := newFakeAdmin(t, testSecret)
	e := newExecutor(t, []string{f.URL()}, map[string]Handler{
		"chatty": func(_ context.Context, task *Task) error {
			l := task.Logger.With("customer", "acme").WithGroup("req")
			for i := range 25 {
				l.Info("line "+strconv.Itoa(i), "i", i, "took", 1500*time.Millisecond, slog.Group("db", "rows", 3))
			}
			task.Logger.Log(context.Background(), slog.LevelDebug-4, "not shipped: below LogShipLevel")
			task.Logger.Error("boom", "err", errors.New("disk full"))
			return nil
		},
	}, func(c *Config) {
		c.LogBatch = 10
		c.LogShipLevel = slog.LevelDebug // the SDK's own per-slot lines are debug
	})

	require.Equal(t, []int64{501}, f.assignPush(t, e, run("chatty", 501)))
	require.Equal(t, protocol.SlotSucceeded, f.waitResult(t, 501).Status)
	// started + 25 + error + finished
	f.waitFor(t, "every line of the slot", func(f *fakeAdmin) bool { l, _ := f.shippedLines(501); return len(l) == 28 })

	f.mu.Lock()
	lines, dropped := f.shippedLines(501)
	for _, req := range f.logs {
		require.LessOrEqual(t, len(req.Lines), 10, "LogBatch bounds a request")
		require.Equal(t, "exec-"+t.Name(), req.InstanceID)
	}
	f.mu.Unlock()
	require.Zero(t, dropped)
	msgs := messages(lines)
	require.Equal(t, "slot started", msgs[0])
	require.Equal(t, "line 0", msgs[1])
	require.Equal(t, "line 24", msgs[25])
	require.Equal(t, "boom", msgs[26])
	require.Equal(t, "slot finished", msgs[27])
	require.NotContains(t, msgs, "not shipped: below LogShipLevel")

	var attrs map[string]any
	require.NoError(t, json.Unmarshal([]byte(lines[3].Attrs), &attrs))
	require.Equal(t, map[string]any{"customer": "acme", "req.i": 2.0, "req.took": "1.5s", "req.db.rows": 3.0}, attrs,
		"attributes of With, groups and the record, flattened; the slot's own tags are columns, not attributes")
	require.Equal(t, int(slog.LevelInfo), lines[3].Level)
	require.Equal(t, int(slog.LevelError), lines[26].Level)
	require.JSONEq(t, `{"err":"disk full"}`, lines[26].Attrs)
	require.JSONEq(t, `{"handler":"chatty"}`, lines[0].Attrs)
	require.InDelta(t, time.Now().UnixMilli(), lines[0].AtMS, float64(time.Minute.Milliseconds()))

	st := waitLogs(t, e, "the counters", func(s LogStats) bool { return s.Shipped == 28 })
	require.Equal(t, uint64(28), st.Captured)
	require.Zero(t, st.Dropped)
	require.Zero(t, st.Buffered)
	require.GreaterOrEqual(t, st.Batches, uint64(3))
}

func TestLogBufferDropsOldestAndReportsTheCount(t *testing.T) {
	t.Parallel()
	f := newFakeAdmin(t, testSecret)
	f.update(func(f *fakeAdmin) { f.failLogs = true })
	long := strings.Repeat("é", 400) // 800 bytes
	e := newExecutor(t, []string{f.URL()}, map[string]Handler{
		"flood": func(_ context.Context, task *Task) error {
			for i := range 100 {
				task.Logger.Info("line "+strconv.Itoa(i), "blob", long)
			}
			return nil
		},
	}, func(c *Config) { c.LogBufferLines = 20; c.LogLineMax = 256 })

	require.Equal(t, []int64{601}, f.assignPush(t, e, run("flood", 601)))
	require.Equal(t, protocol.SlotSucceeded, f.waitResult(t, 601).Status, "results flow while logs fail")
	// 100 lines (the SDK's per-slot lines are debug), of which the newest
	// 20 are kept.
	waitLogs(t, e, "every line captured, the newest 20 kept", func(s LogStats) bool {
		return s.Captured == 100 && s.Buffered == 20 && s.Dropped == 80
	})

	f.update(func(f *fakeAdmin) { f.failLogs = false })
	f.waitFor(t, "the kept lines and the drop count", func(f *fakeAdmin) bool {
		l, d := f.shippedLines(601)
		return len(l) == 20 && d == 80
	})
	f.mu.Lock()
	lines, _ := f.shippedLines(601)
	f.mu.Unlock()
	require.Equal(t, "line 80", lines[0].Message, "the oldest lines were dropped")
	require.Equal(t, "line 99", lines[19].Message)
	var attrs map[string]any
	require.NoError(t, json.Unmarshal([]byte(lines[0].Attrs), &attrs), lines[0].Attrs)
	blob := attrs["blob"].(string)
	require.LessOrEqual(t, len(blob), 256, "LogLineMax cuts long values")
	require.True(t, strings.HasSuffix(blob, "…"))
	require.True(t, strings.HasPrefix(blob, "éé"), "cut on a rune boundary")
}

func TestLogBufferByteCapAndLongMessages(t *testing.T) {
	t.Parallel()
	cfg := Config{LogBufferLines: 1000, LogBufferBytes: 4000, LogLineMax: 300, LogBatch: 10}
	s := newLogShipper(cfg.WithDefaults())
	h := &shipHandler{next: slog.DiscardHandler, ship: s, token: 9}
	l := slog.New(h)
	for i := range 50 {
		l.Info(strings.Repeat("x", 1000) + strconv.Itoa(i))
	}
	st := s.snapshot()
	// Each line costs 300 bytes of message + the overhead: 10 fit in 4000.
	require.Equal(t, 10, st.Buffered)
	require.Equal(t, uint64(40), st.Dropped)
	lines, drops := s.take()
	require.Len(t, lines, 10, "a batch is at most LogBatch lines")
	require.Equal(t, []protocol.LogDrop{{Token: 9, Lines: 40}}, drops)
	require.Len(t, lines[0].Message, 300)
	require.True(t, strings.HasSuffix(lines[0].Message, "…"))

	// A batch that failed goes back in front, still within the caps.
	s.putBack(lines, drops)
	st = s.snapshot()
	require.Equal(t, 10, st.Buffered)
	require.Equal(t, uint64(40), st.Dropped, "drops are not counted twice")
	again, drops := s.take()
	require.Equal(t, messages(lines), messages(again))
	require.Equal(t, []protocol.LogDrop{{Token: 9, Lines: 40}}, drops)
}

func TestShipHandlerKeepsTheConfiguredHandlersLevel(t *testing.T) {
	t.Parallel()
	var out testenv.Buffer
	next := slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelWarn})
	s := newLogShipper(Config{LogShipLevel: slog.LevelDebug}.WithDefaults())
	l := slog.New(&shipHandler{next: next, ship: s, token: 1})
	l.Debug("debug line")
	l.Warn("warn line")
	require.NotContains(t, out.String(), "debug line", "the configured handler filters as before")
	require.Contains(t, out.String(), "warn line")
	lines, _ := s.take()
	require.Equal(t, []string{"debug line", "warn line"}, messages(lines), "LogShipLevel decides what is shipped")
}

func TestSlowAdminNeverBlocksHandlers(t *testing.T) {
	t.Parallel()
	f := newFakeAdmin(t, testSecret)
	gate := make(chan struct{})
	f.update(func(f *fakeAdmin) { f.logGate = gate })
	e := newExecutor(t, []string{f.URL()}, map[string]Handler{
		"flood": func(_ context.Context, task *Task) error {
			for i := range 20_000 {
				task.Logger.Info("line", "i", i)
			}
			return nil
		},
	}, func(c *Config) { c.LogBufferLines = 100; c.LogBatch = 10 })

	// The logs endpoint hangs, yet the handler logs 20,000 lines, finishes,
	// and its result is delivered.
	require.Equal(t, []int64{701}, f.assignPush(t, e, run("flood", 701)))
	require.Equal(t, protocol.SlotSucceeded, f.waitResult(t, 701).Status)
	st := waitLogs(t, e, "every line captured", func(s LogStats) bool { return s.Captured == 20_000 })
	require.LessOrEqual(t, st.Buffered, 110, "the buffer and a batch on its way")

	close(gate)
	f.waitFor(t, "the newest lines and the drop count", func(f *fakeAdmin) bool {
		l, d := f.shippedLines(701)
		return len(l) > 0 && l[len(l)-1].Message == "line" && l[len(l)-1].Attrs == `{"i":19999}` && int64(len(l))+d == 20_000
	})
}

func TestLogsAreFlushedOnStopAndCanBeDisabled(t *testing.T) {
	t.Parallel()
	f := newFakeAdmin(t, testSecret)
	e := buildExecutor(t, []string{f.URL()}, map[string]Handler{"hello": func(_ context.Context, task *Task) error {
		task.Logger.Info("hello")
		return nil
	}}, nil)
	e.logs.flushInterval = time.Hour // only Stop ships
	require.NoError(t, e.Start(context.Background()))
	require.Equal(t, []int64{801}, f.assignPush(t, e, run("hello", 801)))
	f.waitResult(t, 801)
	waitLogs(t, e, "the slot's lines", func(s LogStats) bool { return s.Captured == 1 })
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	require.NoError(t, e.Stop(ctx))
	f.mu.Lock()
	lines, _ := f.shippedLines(801)
	f.mu.Unlock()
	require.Equal(t, []string{"hello"}, messages(lines), "the SDK's per-slot lines are debug: not shipped at the default LogShipLevel")

	off := newFakeAdmin(t, testSecret)
	e2 := newExecutor(t, []string{off.URL()}, map[string]Handler{"hello": func(_ context.Context, task *Task) error {
		task.Logger.Info("hello")
		return nil
	}}, func(c *Config) { c.DisableLogShipping = true })
	require.Equal(t, []int64{802}, off.assignPush(t, e2, run("hello", 802)))
	off.waitResult(t, 802)
	require.NoError(t, e2.Stop(ctx))
	off.mu.Lock()
	defer off.mu.Unlock()
	require.Zero(t, off.calls[protocol.PathLogs])
	require.Equal(t, LogStats{}, e2.LogStats())
}

func TestLogConfigValidation(t *testing.T) {
	t.Parallel()
	c := Config{App: "a", Admins: []string{"http://127.0.0.1:1"}, Secret: testSecret, LogLineMax: 100, LogBatch: -1}
	err := c.Validate()
	require.ErrorIs(t, err, ErrInvalidConfig)
	require.ErrorContains(t, err, "LogLineMax is 100")
	require.ErrorContains(t, err, "LogBatch (-1)")
	d := Config{}.WithDefaults()
	require.Equal(t, DefaultLogBufferLines, d.LogBufferLines)
	require.Equal(t, DefaultLogBufferBytes, d.LogBufferBytes)
	require.Equal(t, DefaultLogLineMax, d.LogLineMax)
	require.Equal(t, DefaultLogBatch, d.LogBatch)
	require.False(t, d.DisableLogShipping, "shipping is on by default")
}
