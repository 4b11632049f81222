package alarm_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/alarm"
	"github.com/shardjob/shardjob/admin/internal/clock"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/store/storetest"
	"github.com/shardjob/shardjob/deploy/dev/testenv"
	sqlfiles "github.com/shardjob/shardjob/sql"
)

// recorder is a channel that keeps what it is sent; it fails while fail > 0.
type recorder struct {
	mu   sync.Mutex
	msgs []alarm.Message
	fail int
}

func (r *recorder) Send(_ context.Context, m alarm.Message) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail > 0 {
		r.fail--
		return errors.New("receiver down")
	}
	r.msgs = append(r.msgs, m)
	return nil
}

func (r *recorder) sent() []alarm.Message {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]alarm.Message(nil), r.msgs...)
}

var _ alarm.Channel = (*recorder)(nil)

var quiet = slog.New(slog.DiscardHandler)

// nextRun numbers the runs of raise's alarms.
var nextRun atomic.Int64

// raise raises n alarms of the job (0: none), each of a run of its own, so
// each is a group of its own (groups: TestOneMessagePerGroup).
func raise(t *testing.T, st *store.Store, n int, jobID int64, kinds ...string) {
	t.Helper()
	for i := range n {
		kind := kinds[i%len(kinds)]
		job := sql.NullInt64{Int64: jobID, Valid: jobID != 0}
		run := sql.NullInt64{Int64: nextRun.Add(1), Valid: true}
		_, err := st.RaiseAlarm(context.Background(), store.Alarm{Kind: kind, Severity: "critical", JobID: job, RunID: run,
			DedupKey: fmt.Sprintf("test:%s:%d:%d:%d", kind, jobID, i, time.Now().UnixNano()), Message: fmt.Sprintf("%s %d of job %d", kind, i, jobID), RaisedBy: "test"})
		require.NoError(t, err)
	}
}

func notifier(t *testing.T, st *store.Store, clk *clock.Manual, id string, eps ...alarm.Endpoint) *alarm.Notifier {
	n, err := alarm.New(alarm.Config{ID: id, Channels: eps, Clock: clk, Window: time.Minute, RetryBase: 10 * time.Second,
		MaxAge: 24 * time.Hour, Logger: quiet}, st)
	require.NoError(t, err)
	return n
}

func runOnce(t *testing.T, n *alarm.Notifier) alarm.Round {
	t.Helper()
	r, err := n.RunOnce(context.Background())
	require.NoError(t, err)
	return r
}

func TestBurstIsOneMessageAndOneDigestPerWindow(t *testing.T) {
	t.Parallel()
	storetest.EachDialect(t, func(t *testing.T, st *store.Store) {
		clk := newClock()
		rec := &recorder{}
		n := notifier(t, st, clk, "a1", alarm.Endpoint{Name: "ops", Type: "test", Default: true, Channel: rec})
		raise(t, st, 1000, 7, store.AlarmRunFailed, store.AlarmRunFailed, store.AlarmSlotDead)
		raise(t, st, 3, 0, store.AlarmExecutorLost)

		r := runOnce(t, n)
		require.Equal(t, 1003, r.Alarms)
		require.Equal(t, 2, r.Sent, "the first alarm of each group goes out at once")
		msgs := rec.sent()
		require.Len(t, msgs, 2)
		for _, m := range msgs {
			require.False(t, m.Digest)
			require.Equal(t, 1, m.Count)
		}
		require.Zero(t, runOnce(t, n).Sent, "inside the window nothing more is sent")
		clk.Advance(59 * time.Second)
		require.Zero(t, runOnce(t, n).Sent)

		clk.Advance(time.Second)
		require.Equal(t, 2, runOnce(t, n).Sent, "window over: one digest per group")
		msgs = rec.sent()[2:]
		byJob := map[int64]alarm.Message{}
		for _, m := range msgs {
			byJob[m.JobID] = m
		}
		d := byJob[7]
		require.True(t, d.Digest)
		require.Equal(t, 999, d.Count)
		require.Equal(t, []alarm.Count{{Kind: "run_failed", JobID: 7, N: 666}, {Kind: "slot_dead", JobID: 7, N: 333}}, d.Summary)
		require.Equal(t, "shardjob [critical] 999 alarms: 666 run_failed on job 7, 333 slot_dead on job 7", d.Title)
		require.Len(t, d.Alarms, 10)
		require.Contains(t, d.Text, "and 989 more")
		k := byJob[0]
		require.Equal(t, "executor_lost", k.Kind)
		require.Equal(t, 2, k.Count)

		clk.Advance(time.Hour)
		require.Zero(t, runOnce(t, n).Sent, "nothing left")
		counts, err := st.AlarmDeliveryCounts(context.Background())
		require.NoError(t, err)
		require.Equal(t, map[string]int{store.DeliverySent: 1003}, counts)

		// After a quiet window, the next alarm goes out alone at once.
		raise(t, st, 1, 7, store.AlarmRunFailed)
		require.Equal(t, 1, runOnce(t, n).Sent)
		last := rec.sent()[len(rec.sent())-1]
		require.False(t, last.Digest)
		require.Equal(t, "shardjob [critical] run_failed on job 7", last.Title)
	})
}

func TestRoutesAddChannelsAndRecipients(t *testing.T) {
	t.Parallel()
	storetest.EachDialect(t, func(t *testing.T, st *store.Store) {
		clk := newClock()
		ops, team, mail := &recorder{}, &recorder{}, &recorder{}
		n := notifier(t, st, clk, "a1",
			alarm.Endpoint{Name: "ops", Type: "test", Default: true, Channel: ops},
			alarm.Endpoint{Name: "team", Type: "test", Channel: team},
			alarm.Endpoint{Name: "mail", Type: alarm.TypeSMTP, Channel: mail})
		ctx := context.Background()
		require.NoError(t, st.SetAlarmRoutes(ctx, 5, []store.AlarmRoute{{Channel: "team"}, {Channel: "mail", Recipient: "owner@example.com"}, {Channel: "gone"}}))
		raise(t, st, 1, 5, store.AlarmRunFailed)
		raise(t, st, 1, 6, store.AlarmRunFailed)
		runOnce(t, n)
		require.Len(t, ops.sent(), 2)
		require.Len(t, team.sent(), 1)
		require.Equal(t, int64(5), team.sent()[0].JobID)
		require.Len(t, mail.sent(), 1)
		require.Equal(t, []string{"owner@example.com"}, mail.sent()[0].To)

		// Alarms older than MaxAge (a backlog) are not sent.
		clk.Advance(48 * time.Hour)
		raise(t, st, 1, 6, store.AlarmRunFailed)
		r := runOnce(t, n)
		require.Equal(t, 1, r.Alarms)
		require.Zero(t, r.Messages)
	})
}

func TestFailedDeliveryIsRetriedWithBackoff(t *testing.T) {
	t.Parallel()
	storetest.EachDialect(t, func(t *testing.T, st *store.Store) {
		var calls atomic.Int32
		rc := newReceiver(t, func(w http.ResponseWriter) {
			if calls.Add(1) <= 2 {
				http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
				return
			}
			_, _ = io.WriteString(w, "ok")
		})
		hook, err := alarm.NewWebhook(rc.srv.URL, "retry-test-secret-0123", 0)
		require.NoError(t, err)
		clk := newClock()
		n := notifier(t, st, clk, "a1", alarm.Endpoint{Name: "hook", Type: alarm.TypeWebhook, Default: true, Channel: hook})
		raise(t, st, 1, 9, store.AlarmRunFailed)

		require.Equal(t, 1, runOnce(t, n).Failed)
		require.Zero(t, runOnce(t, n).Messages, "not before the backoff")
		clk.Advance(10 * time.Second)
		require.Equal(t, 1, runOnce(t, n).Failed)
		clk.Advance(10 * time.Second)
		require.Zero(t, runOnce(t, n).Messages, "backoff doubled")
		clk.Advance(10 * time.Second)
		require.Equal(t, 1, runOnce(t, n).Sent)
		require.EqualValues(t, 3, calls.Load())
		for range 3 {
			r := rc.next(t)
			require.NoError(t, alarm.VerifyWebhook([]byte("retry-test-secret-0123"), r.header, r.body, time.Now(), time.Minute))
		}
		var d struct {
			Status   string `db:"status"`
			Attempts int    `db:"attempts"`
			Err      string `db:"last_error"`
		}
		require.NoError(t, st.DB().Get(&d, `SELECT status, attempts, last_error FROM alarm_delivery`))
		require.Equal(t, store.DeliverySent, d.Status)
		require.Equal(t, 3, d.Attempts)
		require.Contains(t, d.Err, "503", "the last error is kept")
	})
}

func TestDeliveryGivesUpAfterMaxAttempts(t *testing.T) {
	t.Parallel()
	storetest.EachDialect(t, func(t *testing.T, st *store.Store) {
		clk := newClock()
		rec := &recorder{fail: 1 << 30}
		n, err := alarm.New(alarm.Config{ID: "a1", Clock: clk, MaxAttempts: 3, Logger: quiet, RetryBase: time.Second,
			Channels: []alarm.Endpoint{{Name: "ops", Default: true, Channel: rec}}}, st)
		require.NoError(t, err)
		raise(t, st, 1, 9, store.AlarmRunFailed)
		require.Equal(t, 1, runOnce(t, n).Failed)
		clk.Advance(time.Second)
		require.Equal(t, 1, runOnce(t, n).Failed)
		clk.Advance(2 * time.Second)
		require.Equal(t, 1, runOnce(t, n).GaveUp)
		clk.Advance(time.Hour)
		require.Zero(t, runOnce(t, n).Messages)
		var d struct {
			Status   string `db:"status"`
			Attempts int    `db:"attempts"`
			Err      string `db:"last_error"`
		}
		require.NoError(t, st.DB().Get(&d, `SELECT status, attempts, last_error FROM alarm_delivery`))
		require.Equal(t, store.DeliveryFailed, d.Status)
		require.Equal(t, 3, d.Attempts)
		require.Equal(t, "receiver down", d.Err)
	})
}

// Two replicas (two pools on one MariaDB database) run rounds at the same
// time: every alarm is covered by exactly one message, and each job gets
// one message plus one digest.
func TestTwoNotifiersDeliverEachAlarmOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := testenv.MySQL(t)
	open := func() *store.Store {
		st, err := store.Open(ctx, store.Config{Driver: sqlfiles.MySQL, DSN: dsn})
		require.NoError(t, err)
		t.Cleanup(func() { _ = st.Close() })
		return st
	}
	st1, st2 := open(), open()
	_, err := st1.Migrate(ctx)
	require.NoError(t, err)
	const jobs, perJob = 40, 25
	for j := 1; j <= jobs; j++ {
		raise(t, st1, perJob, int64(j), store.AlarmRunFailed)
	}
	clk := newClock()
	rec := &recorder{}
	ep := alarm.Endpoint{Name: "ops", Default: true, Channel: rec}
	mk := func(id string, st *store.Store) *alarm.Notifier {
		n, err := alarm.New(alarm.Config{ID: id, Channels: []alarm.Endpoint{ep}, Clock: clk, BatchSize: 7, Parallel: 3, Logger: quiet}, st)
		require.NoError(t, err)
		return n
	}
	ns := []*alarm.Notifier{mk("a1", st1), mk("a2", st2)}
	both := func() (rounds [2]alarm.Round) {
		var wg sync.WaitGroup
		for i, n := range ns {
			wg.Go(func() {
				r, err := n.RunOnce(ctx)
				require.NoError(t, err)
				rounds[i] = r
			})
		}
		wg.Wait()
		return rounds
	}
	r := both()
	require.Equal(t, jobs*perJob, r[0].Alarms+r[1].Alarms, "each alarm fanned out once")
	require.Equal(t, jobs, r[0].Sent+r[1].Sent)
	clk.Advance(time.Minute)
	r = both()
	require.Equal(t, jobs, r[0].Sent+r[1].Sent)
	clk.Advance(time.Minute)
	r = both()
	require.Zero(t, r[0].Messages+r[1].Messages)

	perJobMsgs := map[int64][]int{}
	total := 0
	for _, m := range rec.sent() {
		perJobMsgs[m.JobID] = append(perJobMsgs[m.JobID], m.Count)
		total += m.Count
	}
	require.Equal(t, jobs*perJob, total, "every alarm covered exactly once")
	require.Len(t, perJobMsgs, jobs)
	for j, counts := range perJobMsgs {
		require.Equal(t, []int{1, perJob - 1}, counts, "job %d: one message, then one digest", j)
	}
	counts, err := st1.AlarmDeliveryCounts(ctx)
	require.NoError(t, err)
	require.Equal(t, map[string]int{store.DeliverySent: jobs * perJob}, counts)
}

// chanFunc adapts a function to Channel.
type chanFunc func(ctx context.Context, m alarm.Message) error

func (f chanFunc) Send(ctx context.Context, m alarm.Message) error { return f(ctx, m) }

func TestRunStopsWithItsContext(t *testing.T) {
	t.Parallel()
	st := storetest.Open(t, sqlfiles.SQLite)
	raise(t, st, 1, 3, store.AlarmRunFailed)
	var sent atomic.Int32
	got := make(chan struct{}, 1)
	ch := chanFunc(func(context.Context, alarm.Message) error {
		sent.Add(1)
		got <- struct{}{}
		return nil
	})
	for i := range 3 { // repeated start/stop leaks nothing (goleak in TestMain)
		n, err := alarm.New(alarm.Config{ID: "a1", Interval: time.Millisecond, Logger: quiet, Channels: []alarm.Endpoint{{Name: "ops", Default: true, Channel: ch}}}, st)
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			n.Run(ctx)
		}()
		if i == 0 {
			select {
			case <-got:
			case <-time.After(10 * time.Second):
				t.Fatal("the running notifier sent nothing within 10s")
			}
		}
		cancel()
		<-done
	}
	require.EqualValues(t, 1, sent.Load(), "sent once, by the first run")
}
