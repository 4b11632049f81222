package store_test

import (
	"context"
	"fmt"
	"math"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/store"
)

// logFixture is a running run of two slots: slot 0 on executor A, slot 1 on
// executor B.
type logFixture struct {
	run          int64
	exA, exB     int64
	tokA, tokB   int64
	otherRunTokA int64 // a token of A in a second run
}

func newLogFixture(t *testing.T, s *store.Store) logFixture {
	t.Helper()
	ctx := context.Background()
	_, err := s.ClaimEpoch(ctx, 1, "me")
	require.NoError(t, err)
	jobID, err := s.CreateJob(ctx, newJob("a", "logs", 0))
	require.NoError(t, err)
	exA, err := s.Heartbeat(ctx, store.ExecutorInfo{InstanceID: "ex-a", App: "a", Address: "http://127.0.0.1:1", Capacity: 2})
	require.NoError(t, err)
	exB, err := s.Heartbeat(ctx, store.ExecutorInfo{InstanceID: "ex-b", App: "a", Address: "http://127.0.0.1:2", Capacity: 2})
	require.NoError(t, err)
	f := logFixture{exA: exA.ID, exB: exB.ID}
	for i, at := range []int64{1, 2} {
		run, _, err := s.InsertRun(ctx, 1, store.NewRun{JobID: jobID, ScheduledAt: at, TriggerKind: store.TriggerManual, Status: store.RunPending, SlotCount: 2})
		require.NoError(t, err)
		started, err := s.StartRun(ctx, 1, run.ID, 0, []store.NewAttempt{{Slot: 0, Attempt: 1, ExecutorID: exA.ID}, {Slot: 1, Attempt: 1, ExecutorID: exB.ID}})
		require.NoError(t, err)
		require.True(t, started)
		atts, err := s.Attempts(ctx, run.ID)
		require.NoError(t, err)
		if i == 0 {
			f.run, f.tokA, f.tokB = run.ID, atts[0].Token, atts[1].Token
		} else {
			f.otherRunTokA = atts[0].Token
		}
	}
	return f
}

func lines(token int64, msgs ...string) []store.LogLine {
	out := make([]store.LogLine, len(msgs))
	for i, m := range msgs {
		out[i] = store.LogLine{Token: token, At: int64(1000 + i), Level: 0, Message: m}
	}
	return out
}

func TestRunLogsAppendAndPage(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		f := newLogFixture(t, s)
		lim := store.RunLogLimits{}

		batch := append(lines(f.tokA, "a1", "a2"), store.LogLine{Token: f.tokA, At: 5, Level: 8, Message: "a3 error", Attrs: `{"err":"disk full"}`})
		batch = append(batch, lines(f.otherRunTokA, "other run")...)
		res, err := s.AppendRunLogs(ctx, f.exA, batch, []store.LogDrop{{Token: f.tokA, Lines: 7}}, lim)
		require.NoError(t, err)
		require.Equal(t, 4, res.Stored)
		require.Empty(t, res.Rejected)

		// Another executor's token is refused: B may not log for A's slot.
		res, err = s.AppendRunLogs(ctx, f.exB, append(lines(f.tokB, "b1"), lines(f.tokA, "forged")...), []store.LogDrop{{Token: f.tokA, Lines: 100}}, lim)
		require.NoError(t, err)
		require.Equal(t, 1, res.Stored)
		require.Equal(t, []int64{f.tokA}, res.Rejected)
		res, err = s.AppendRunLogs(ctx, f.exA, lines(999999, "unknown"), nil, lim)
		require.NoError(t, err)
		require.Equal(t, []int64{999999}, res.Rejected)

		got, st, err := s.RunLogs(ctx, f.run, store.RunLogFilter{Slot: -1, MinLevel: math.MinInt32})
		require.NoError(t, err)
		require.Len(t, got, 4)
		for i, want := range []string{"a1", "a2", "a3 error", "b1"} {
			require.Equal(t, want, got[i].Message)
			require.Equal(t, int64(i+1), got[i].Seq, "seq numbers the run's lines from 1")
		}
		require.Equal(t, 0, got[0].Slot)
		require.Equal(t, f.tokA, got[0].Token)
		require.Equal(t, 1, got[0].Attempt)
		require.Equal(t, 1, got[3].Slot, "slot and attempt come from the attempt, not the executor")
		require.Equal(t, `{"err":"disk full"}`, got[2].Attrs)
		require.Equal(t, int64(5), got[2].At)
		require.Equal(t, int64(5), st.NextSeq)
		require.Equal(t, int64(4), st.StoredLines)
		require.Equal(t, int64(7), st.DroppedExecutor, "the forged drop count was ignored")
		require.Zero(t, st.DroppedCap)

		// Keyset pages, slot and level filters.
		page, _, err := s.RunLogs(ctx, f.run, store.RunLogFilter{Slot: -1, AfterSeq: 1, Limit: 2, MinLevel: math.MinInt32})
		require.NoError(t, err)
		require.Equal(t, []int64{2, 3}, seqs(page))
		page, _, err = s.RunLogs(ctx, f.run, store.RunLogFilter{Slot: 1, MinLevel: math.MinInt32})
		require.NoError(t, err)
		require.Equal(t, []int64{4}, seqs(page))
		page, _, err = s.RunLogs(ctx, f.run, store.RunLogFilter{Slot: -1, MinLevel: 4})
		require.NoError(t, err)
		require.Equal(t, []int64{3}, seqs(page))

		// A run without logs.
		page, st, err = s.RunLogs(ctx, f.run+100, store.RunLogFilter{Slot: -1})
		require.NoError(t, err)
		require.Empty(t, page)
		require.Equal(t, int64(1), st.NextSeq)
	})
}

func seqs(ls []store.RunLogLine) []int64 {
	out := make([]int64, len(ls))
	for i, l := range ls {
		out[i] = l.Seq
	}
	return out
}

func TestRunLogsCapCountsDroppedLines(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		f := newLogFixture(t, s)
		lim := store.RunLogLimits{MaxLines: 5, MaxBytes: 1 << 20}
		res, err := s.AppendRunLogs(ctx, f.exA, lines(f.tokA, "1", "2", "3"), nil, lim)
		require.NoError(t, err)
		require.Equal(t, 3, res.Stored)
		res, err = s.AppendRunLogs(ctx, f.exA, lines(f.tokA, "4", "5", "6", "7"), nil, lim)
		require.NoError(t, err)
		require.Equal(t, 2, res.Stored)
		require.Equal(t, 2, res.Dropped)
		res, err = s.AppendRunLogs(ctx, f.exB, lines(f.tokB, "8"), nil, lim)
		require.NoError(t, err)
		require.Zero(t, res.Stored)
		require.Equal(t, 1, res.Dropped)
		got, st, err := s.RunLogs(ctx, f.run, store.RunLogFilter{Slot: -1, MinLevel: math.MinInt32})
		require.NoError(t, err)
		require.Len(t, got, 5)
		require.Equal(t, int64(3), st.DroppedCap)

		// Retention deletes a run's lines and state.
		require.NoError(t, s.Tx(ctx, func(tx *store.Tx) error { return tx.DeleteRunLogs(ctx, []int64{f.run}) }))
		got, st, err = s.RunLogs(ctx, f.run, store.RunLogFilter{Slot: -1, MinLevel: math.MinInt32})
		require.NoError(t, err)
		require.Empty(t, got)
		require.Zero(t, st.DroppedCap)

		// The byte budget counts message and attributes.
		lim = store.RunLogLimits{MaxLines: 100, MaxBytes: 10}
		res, err = s.AppendRunLogs(ctx, f.exA, []store.LogLine{{Token: f.otherRunTokA, Message: "12345"}, {Token: f.otherRunTokA, Message: "1", Attrs: "{}"},
			{Token: f.otherRunTokA, Message: "123"}, {Token: f.otherRunTokA, Message: "1"}}, nil, lim)
		require.NoError(t, err)
		require.Equal(t, 2, res.Stored, "5 + 3 bytes fit, then 3 more do not: the stored lines stay a prefix")
		require.Equal(t, 2, res.Dropped)
	})
}

// TestRunLogsConcurrentAppendsKeepSeqDense: executors appending to the same
// run at once get distinct, gap-free seq numbers.
func TestRunLogsConcurrentAppendsKeepSeqDense(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		f := newLogFixture(t, s)
		var wg sync.WaitGroup
		errs := make([]error, 8)
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ex, tok := f.exA, f.tokA
				if i%2 == 1 {
					ex, tok = f.exB, f.tokB
				}
				msgs := make([]string, 50)
				for k := range msgs {
					msgs[k] = fmt.Sprintf("g%d-%d", i, k)
				}
				_, errs[i] = s.AppendRunLogs(ctx, ex, lines(tok, msgs...), nil, store.RunLogLimits{})
			}()
		}
		wg.Wait()
		for _, err := range errs {
			require.NoError(t, err)
		}
		got, st, err := s.RunLogs(ctx, f.run, store.RunLogFilter{Slot: -1, Limit: 1000, MinLevel: math.MinInt32})
		require.NoError(t, err)
		require.Len(t, got, 400)
		for i, l := range got {
			require.Equal(t, int64(i+1), l.Seq)
		}
		require.Equal(t, int64(401), st.NextSeq)
	})
}

// TestRunLogsAppQuotaPerDay: an app with a quota of 10 bytes a day stores
// lines while they fit; the lines that do not are counted on the run
// (DroppedQuota) and on the day, and a smaller line may still fit; the next
// day the quota starts again; without a quota nothing is counted per day.
func TestRunLogsAppQuotaPerDay(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		f := newLogFixture(t, s)
		lim := store.RunLogLimits{App: "a", Day: "2026-12-06", AppBytesPerDay: 10}

		res, err := s.AppendRunLogs(ctx, f.exA, lines(f.tokA, "1234", "5678", "abc", "d"), nil, lim)
		require.NoError(t, err)
		require.Equal(t, 3, res.Stored, "1234 and 5678 (8 bytes), then d (9): abc does not fit")
		require.Equal(t, 1, res.OverQuota)
		require.Zero(t, res.Dropped)
		res, err = s.AppendRunLogs(ctx, f.exB, lines(f.tokB, "xy", "z"), nil, lim)
		require.NoError(t, err)
		require.Equal(t, 1, res.Stored, "the day's quota is the app's, whatever the executor: z fits (10 bytes)")
		require.Equal(t, 1, res.OverQuota)
		bytes, dropped, err := s.AppLogDay(ctx, "a", "2026-12-06")
		require.NoError(t, err)
		require.Equal(t, int64(10), bytes)
		require.Equal(t, int64(2), dropped)
		got, st, err := s.RunLogs(ctx, f.run, store.RunLogFilter{Slot: -1, MinLevel: math.MinInt32, Limit: 100})
		require.NoError(t, err)
		require.Len(t, got, 4)
		require.Equal(t, int64(2), st.DroppedQuota)
		require.Zero(t, st.DroppedCap)

		lim.Day = "2026-12-07"
		res, err = s.AppendRunLogs(ctx, f.exA, lines(f.tokA, "next day"), nil, lim)
		require.NoError(t, err)
		require.Equal(t, 1, res.Stored, "a new day, a new quota")
		res, err = s.AppendRunLogs(ctx, f.exA, lines(f.tokA, "no quota at all"), nil, store.RunLogLimits{})
		require.NoError(t, err)
		require.Equal(t, 1, res.Stored)
		bytes, _, err = s.AppLogDay(ctx, "a", "2026-12-07")
		require.NoError(t, err)
		require.Equal(t, int64(8), bytes, "lines stored without a quota are not counted")
	})
}
