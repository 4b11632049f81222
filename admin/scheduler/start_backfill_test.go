package scheduler_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/backfill"
	"github.com/shardjob/shardjob/admin/internal/clock"
	"github.com/shardjob/shardjob/admin/jobrules"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/runstate"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/sdk/protocol"
)

// createJobBackfill plans and writes a backfill of job j over [from, to]
// as the API does, and returns its id and its runs in backfill order.
func createJobBackfill(t *testing.T, st *store.Store, j store.Job, req backfill.Request) (int64, []store.Run) {
	t.Helper()
	sc, err := jobrules.ScheduleOf(j)
	require.NoError(t, err)
	plan, fields := backfill.PlanJob(req, time.UTC, sc.Next, nil)
	require.Nil(t, fields)
	var runs []store.NewRun
	for _, d := range plan {
		require.Equal(t, backfill.Create, d.Action)
		runs = append(runs, jobrules.NewRun(j, d.ScheduledAt.UnixMilli(), store.TriggerBackfill, store.RunPending))
	}
	id, made, created, err := st.CreateJobBackfill(context.Background(), 1, store.JobBackfill{JobID: j.ID, App: j.App, FromDate: req.From, ToDate: req.To,
		NewestFirst: req.NewestFirst, Parallel: req.Parallel}, runs)
	require.NoError(t, err)
	require.NotContains(t, created, false)
	return id, made
}

// TestBackfillStartsAtMostParallelInOrder: a job backfill of 10 dates with
// parallelism 3 never has more than 3 runs running, whatever the order
// runs end in; each date's run starts once, in the backfill's order
// (oldest date first, or newest first although the leader pages pending
// runs by scheduled time); the runs waiting their turn say so, and are
// looked at again HoldRecheck later.
func TestBackfillStartsAtMostParallelInOrder(t *testing.T) {
	t.Parallel()
	for _, newest := range []bool{false, true} {
		t.Run(fmt.Sprintf("newest_first=%v", newest), func(t *testing.T) {
			t.Parallel()
			eachDialect(t, func(t *testing.T, st *store.Store) {
				ctx := context.Background()
				c := clock.NewManual(t0)
				p := &fakePusher{startAll: true}
				s := leading(t, st, c, p, 1)
				online(t, st, store.ExecutorInfo{InstanceID: "a", App: "app", Address: "http://127.0.0.1:1", Capacity: 100, Handlers: []string{"h"}})
				j := createJob(t, st, apitypes.JobSpec{JobDef: apitypes.JobDef{App: "app", Name: "load", Handler: "h", Cron: "0 3 * * *", SlotCount: 1}}, t0)
				bid, runs := createJobBackfill(t, st, j, backfill.Request{From: "2026-02-10", To: "2026-02-19", NewestFirst: newest, Parallel: 3})
				require.Len(t, runs, 10)
				order := make([]int64, len(runs)) // the backfill's order
				for i, r := range runs {
					order[i] = r.ID
					wantDay := 10 + i
					if newest {
						wantDay = 19 - i
					}
					require.Equal(t, time.Date(2026, 2, wantDay, 3, 0, 0, 0, time.UTC).UnixMilli(), r.ScheduledAt, "the date's 03:00 firing")
				}

				var started []int64
				seen := map[int64]bool{}
				most := 0
				for tick := 0; tick < 40 && (len(started) < len(runs) || active(t, st, j.ID)); tick++ {
					require.NoError(t, s.AssignPending(ctx, 1))
					s.WaitPushes()
					var running, now []int64
					for _, r := range runsOf(t, st, j.ID) {
						switch r.Status {
						case store.RunRunning:
							running = append(running, r.ID)
							if !seen[r.ID] {
								seen[r.ID] = true
								now = append(now, r.ID)
							}
						case store.RunPending:
							require.Equal(t, msg.RunWaitsBackfill, r.ErrorMsg.Code, "run %d says why it waits", r.ID)
							require.Contains(t, r.Error, fmt.Sprintf("waits its turn: backfill #%d runs at most 3 at once", bid))
						}
					}
					require.LessOrEqual(t, len(running), 3, "tick %d: %v running", tick, running)
					most = max(most, len(running))
					slices.Sort(now)
					started = append(started, now...)
					// End one or two of the running runs (not always the
					// oldest), then come back when the held runs are due.
					slices.Sort(running)
					end := running
					if len(end) > 1+tick%2 {
						end = end[len(end)-1-tick%2:]
					}
					for _, id := range end {
						finishRun(t, st, id)
					}
					c.Advance(5 * time.Second)
				}
				require.Equal(t, 3, most, "3 at once, not fewer")
				require.Equal(t, order, started, "each date once, in the backfill's order")
				for _, r := range runsOf(t, st, j.ID) {
					require.Equal(t, store.RunSucceeded, r.Status)
					require.Equal(t, store.TriggerBackfill, r.TriggerKind)
					atts, err := st.Attempts(ctx, r.ID)
					require.NoError(t, err)
					require.Len(t, atts, 1, "started once")
				}
			})
		})
	}
}

// active reports whether job jobID has a pending or running run.
func active(t *testing.T, st *store.Store, jobID int64) bool {
	t.Helper()
	return count(t, st, `SELECT COUNT(*) FROM job_run WHERE job_id = ? AND status IN ('running', 'pending')`, jobID) > 0
}

// finishRun ends the current attempts of run id as succeeded (the run
// succeeds with them).
func finishRun(t *testing.T, st *store.Store, id int64) {
	t.Helper()
	atts, err := st.Attempts(context.Background(), id)
	require.NoError(t, err)
	for _, a := range atts {
		if !a.Current {
			continue
		}
		ok, err := runstate.New(st).FinishAttempt(context.Background(), store.SlotOutcome{SlotResult: protocol.SlotResult{Token: a.Token,
			Status: store.AttemptSucceeded, FinishedAt: t0.UnixMilli()}, ExecutorID: a.ExecutorID.Int64})
		require.NoError(t, err)
		require.True(t, ok)
	}
}
