package store_test

import (
	"context"
	"database/sql"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/store"
)

func newWorkflow(app, name string) store.Workflow {
	return store.Workflow{App: app, Name: name, Description: "end of day", CronExpr: "0 18 * * MON-FRI", TimeZone: "Europe/London",
		Enabled: true, FailurePolicy: "stop", Definition: `{"name":"` + name + `","nodes":[{"key":"a","handler":"h"}]}`, NodeCount: 1,
		NextFireAt: sql.NullInt64{Int64: 5000, Valid: true}, CreatedBy: "ops"}
}

func TestWorkflowsCRUD(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		id, err := s.CreateWorkflow(ctx, newWorkflow("billing", "eod"))
		require.NoError(t, err)
		_, err = s.CreateWorkflow(ctx, newWorkflow("billing", "eod"))
		require.ErrorIs(t, err, store.ErrConflict, "a name is unique in its app")
		other, err := s.CreateWorkflow(ctx, newWorkflow("search", "eod"))
		require.NoError(t, err, "the same name in another app")

		w, err := s.Workflow(ctx, id)
		require.NoError(t, err)
		require.Equal(t, "eod", w.Name)
		require.Equal(t, int64(1), w.Version)
		require.Equal(t, "ops", w.CreatedBy)
		require.Equal(t, "ops", w.UpdatedBy, "updated_by defaults to the creator")
		require.True(t, w.Enabled)
		require.Equal(t, int64(5000), w.NextFireAt.Int64)
		require.Contains(t, w.Definition, `"key":"a"`)
		require.NotZero(t, w.CreatedAt)
		byName, err := s.WorkflowByName(ctx, "billing", "eod")
		require.NoError(t, err)
		require.Equal(t, w, byName)
		_, err = s.WorkflowByName(ctx, "billing", "nope")
		require.ErrorIs(t, err, store.ErrNotFound)
		_, err = s.Workflow(ctx, id+100)
		require.ErrorIs(t, err, store.ErrNotFound)

		// Lists: filtered to apps, without definitions, keyset paging.
		all, err := s.WorkflowsOfApps(ctx, 0, 10, nil)
		require.NoError(t, err)
		require.Len(t, all, 2)
		require.Empty(t, all[0].Definition)
		require.Equal(t, 1, all[0].NodeCount)
		mine, err := s.WorkflowsOfApps(ctx, 0, 10, []string{"search"})
		require.NoError(t, err)
		require.Len(t, mine, 1)
		require.Equal(t, other, mine[0].ID)
		none, err := s.WorkflowsOfApps(ctx, 0, 10, []string{})
		require.NoError(t, err)
		require.Empty(t, none, "a user of no app sees none")
		page, err := s.WorkflowsOfApps(ctx, id, 10, nil)
		require.NoError(t, err)
		require.Len(t, page, 1)
		require.Equal(t, other, page[0].ID)

		// Update: with the version read; the version goes up, the old
		// definition stays readable; a stale version is refused.
		w.Definition = `{"name":"eod","nodes":[{"key":"a","handler":"h"},{"key":"b","handler":"h"}],"edges":[{"from":"a","to":"b"}]}`
		w.NodeCount, w.CronExpr, w.Enabled, w.NextFireAt, w.UpdatedBy = 2, "", false, sql.NullInt64{}, "boss"
		require.NoError(t, s.UpdateWorkflow(ctx, w))
		got, err := s.Workflow(ctx, id)
		require.NoError(t, err)
		require.Equal(t, int64(2), got.Version)
		require.Equal(t, 2, got.NodeCount)
		require.False(t, got.Enabled)
		require.False(t, got.NextFireAt.Valid)
		require.Equal(t, "boss", got.UpdatedBy)
		require.Equal(t, "ops", got.CreatedBy)
		require.Equal(t, w.Definition, got.Definition)
		v1, err := s.WorkflowDefinition(ctx, id, 1)
		require.NoError(t, err)
		require.Contains(t, v1, `"nodes":[{"key":"a","handler":"h"}]`)
		v2, err := s.WorkflowDefinition(ctx, id, 2)
		require.NoError(t, err)
		require.Equal(t, w.Definition, v2)
		_, err = s.WorkflowDefinition(ctx, id, 3)
		require.ErrorIs(t, err, store.ErrNotFound)
		err = s.UpdateWorkflow(ctx, w) // version 1 again
		require.ErrorIs(t, err, store.ErrConflict)
		require.ErrorContains(t, err, "version 1 is stale, it is at 2")
		w.ID = id + 100
		require.ErrorIs(t, s.UpdateWorkflow(ctx, w), store.ErrNotFound)

		// Delete: refused while a run is active; the versions stay.
		run, _, err := s.CreateWorkflowRun(ctx, 1, newWorkflowRun(id, "2026-03-02"))
		require.NoError(t, err)
		require.ErrorIs(t, s.DeleteWorkflow(ctx, id), store.ErrConflict)
		ok, err := s.TransitionWorkflowRun(ctx, store.StatusTransition{ID: run.ID, From: store.RunPending, To: store.RunCancelled})
		require.NoError(t, err)
		require.True(t, ok)
		require.NoError(t, s.DeleteWorkflow(ctx, id))
		require.ErrorIs(t, s.DeleteWorkflow(ctx, id), store.ErrNotFound)
		_, err = s.Workflow(ctx, id)
		require.ErrorIs(t, err, store.ErrNotFound)
		_, err = s.WorkflowDefinition(ctx, id, 2)
		require.NoError(t, err, "a deleted workflow's runs still have their graph")
		_, err = s.WorkflowRun(ctx, run.ID)
		require.NoError(t, err, "its runs stay")
	})
}

func newWorkflowRun(workflowID int64, date string) store.NewWorkflowRun {
	return store.NewWorkflowRun{WorkflowID: workflowID, App: "billing", RunKey: store.WorkflowRunKeyDate(date), WorkflowVersion: 1,
		ScheduledAt: 1000, BusinessDate: date, TriggerKind: store.TriggerBackfill, Status: store.RunPending, Params: `{"x":1}`}
}

func TestWorkflowRunKeys(t *testing.T) {
	t.Parallel()
	require.Equal(t, "2026-03-02T18:00:00.000Z", store.WorkflowRunKeyAt(1772474400000))
	require.Equal(t, "date:2026-03-02", store.WorkflowRunKeyDate("2026-03-02"))
	require.LessOrEqual(t, len(store.WorkflowRunKeyAt(1<<62/1000)), store.MaxRunKeyLen)
}

// TestWorkflowRunsAreCreatedOnce: a second creation of a run key returns
// the first run and says it existed; so does a node run key; N goroutines
// creating the same key make one row, one of them told it created it.
func TestWorkflowRunsAreCreatedOnce(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		wf, err := s.CreateWorkflow(ctx, newWorkflow("billing", "eod"))
		require.NoError(t, err)

		nr := newWorkflowRun(wf, "2026-03-02")
		nr.CreatedBy = "ops"
		first, created, err := s.CreateWorkflowRun(ctx, 7, nr)
		require.NoError(t, err)
		require.True(t, created)
		require.Equal(t, store.RunPending, first.Status)
		require.Equal(t, "date:2026-03-02", first.RunKey)
		require.Equal(t, "2026-03-02", first.BusinessDate)
		require.Equal(t, int64(7), first.Epoch)
		require.Equal(t, "ops", first.CreatedBy)
		require.False(t, first.FinishedAt.Valid)
		again := nr
		again.Params, again.Status = "other", store.RunRunning
		second, created, err := s.CreateWorkflowRun(ctx, 8, again)
		require.NoError(t, err)
		require.False(t, created, "the key exists: nothing created")
		require.Equal(t, first, second, "the existing run, unchanged")

		// A skipped firing is created ended, with its reason.
		skipped := newWorkflowRun(wf, "2026-03-03")
		skipped.Status, skipped.Reason = store.RunSkipped, msg.New(msg.RunSkippedPaused)
		sr, created, err := s.CreateWorkflowRun(ctx, 7, skipped)
		require.NoError(t, err)
		require.True(t, created)
		require.True(t, sr.FinishedAt.Valid)
		require.Equal(t, msg.RunSkippedPaused, sr.ReasonMsg.Code)
		require.Equal(t, msg.New(msg.RunSkippedPaused).String(), sr.Reason)

		_, _, err = s.CreateWorkflowRun(ctx, 7, store.NewWorkflowRun{WorkflowID: wf, Status: store.RunPending})
		require.ErrorContains(t, err, "key")

		// Concurrent creation of one run key: one row.
		const n = 16
		var wg sync.WaitGroup
		runs := make([]store.WorkflowRun, n)
		made := make([]bool, n)
		errs := make([]error, n)
		key := newWorkflowRun(wf, "2026-03-04")
		key.RunKey = store.WorkflowRunKeyAt(1772647200000)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				runs[i], made[i], errs[i] = s.CreateWorkflowRun(ctx, int64(i+1), key)
			}()
		}
		wg.Wait()
		creators := 0
		for i := range n {
			require.NoError(t, errs[i])
			require.Equal(t, runs[0].ID, runs[i].ID)
			if made[i] {
				creators++
			}
		}
		require.Equal(t, 1, creators, "one caller created it, the others found it")
		require.Equal(t, 1, countRows(t, s, "workflow_run WHERE run_key = '"+key.RunKey+"'"))

		// Node runs: keyed (workflow run, node, rerun).
		node := store.NewNodeRun{WorkflowRunID: first.ID, NodeKey: "settle", Status: store.RunRunning}
		nodeRuns := make([]store.NodeRun, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				nodeRuns[i], made[i], errs[i] = s.CreateNodeRun(ctx, 7, node)
			}()
		}
		wg.Wait()
		creators = 0
		for i := range n {
			require.NoError(t, errs[i])
			require.Equal(t, nodeRuns[0].ID, nodeRuns[i].ID)
			if made[i] {
				creators++
			}
		}
		require.Equal(t, 1, creators)
		require.Equal(t, 1, countRows(t, s, "workflow_node_run"))
		settle := nodeRuns[0]
		require.Equal(t, store.RunRunning, settle.Status)
		require.False(t, settle.JobRunID.Valid)
		require.Zero(t, settle.Rerun)
		dup, created, err := s.CreateNodeRun(ctx, 8, store.NewNodeRun{WorkflowRunID: first.ID, NodeKey: "settle", Status: store.RunSkipped})
		require.NoError(t, err)
		require.False(t, created)
		require.Equal(t, settle, dup)
		_, _, err = s.CreateNodeRun(ctx, 7, store.NewNodeRun{WorkflowRunID: first.ID, Status: store.RunRunning})
		require.Error(t, err)

		// The same node in another workflow run, or in a rerun, is another key.
		_, created, err = s.CreateNodeRun(ctx, 7, store.NewNodeRun{WorkflowRunID: runs[0].ID, NodeKey: "settle", Status: store.RunRunning})
		require.NoError(t, err)
		require.True(t, created)
		rerun, created, err := s.CreateNodeRun(ctx, 7, store.NewNodeRun{WorkflowRunID: first.ID, NodeKey: "settle", Rerun: 1, Status: store.RunRunning})
		require.NoError(t, err)
		require.True(t, created)
		skip, created, err := s.CreateNodeRun(ctx, 7, store.NewNodeRun{WorkflowRunID: first.ID, NodeKey: "report", Status: store.RunSkipped,
			Reason: msg.New(msg.RunSkippedDisabled)})
		require.NoError(t, err)
		require.True(t, created)
		require.True(t, skip.FinishedAt.Valid, "a node run created skipped has ended")
		all, err := s.NodeRuns(ctx, first.ID)
		require.NoError(t, err)
		require.Len(t, all, 3)
		latest := store.LatestNodeRuns(all)
		require.Len(t, latest, 2)
		require.Equal(t, rerun.ID, latest["settle"].ID, "the node's latest node run is the rerun's")
		require.Equal(t, store.RunSkipped, latest["report"].Status)
	})
}

func countRows(t *testing.T, s *store.Store, from string) int {
	t.Helper()
	var n int
	require.NoError(t, s.DB().Get(&n, "SELECT COUNT(*) FROM "+from))
	return n
}

// TestWorkflowRunTransitionsAreGuarded: a status changes only from the
// status read; the job run of a node run is linked once; a rerun reopens a
// finished run once; inside a fenced transaction a stale epoch writes
// nothing.
func TestWorkflowRunTransitionsAreGuarded(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		wf, err := s.CreateWorkflow(ctx, newWorkflow("billing", "eod"))
		require.NoError(t, err)
		run, _, err := s.CreateWorkflowRun(ctx, 1, newWorkflowRun(wf, "2026-03-02"))
		require.NoError(t, err)

		move := func(from, to string, reason msg.Msg) bool {
			t.Helper()
			ok, err := s.TransitionWorkflowRun(ctx, store.StatusTransition{ID: run.ID, From: from, To: to, Reason: reason})
			require.NoError(t, err)
			return ok
		}
		require.False(t, move(store.RunRunning, store.RunSucceeded, msg.Msg{}), "not running yet")
		require.True(t, move(store.RunPending, store.RunRunning, msg.Msg{}))
		require.False(t, move(store.RunPending, store.RunRunning, msg.Msg{}), "a second leader's same move changes nothing")
		got, err := s.WorkflowRun(ctx, run.ID)
		require.NoError(t, err)
		require.Equal(t, store.RunRunning, got.Status)
		require.True(t, got.StartedAt.Valid)
		require.False(t, got.FinishedAt.Valid)
		started := got.StartedAt.Int64

		reason := msg.New(msg.RunSlotsFailed, "failed", "1", "slots", "2")
		require.True(t, move(store.RunRunning, store.RunFailed, reason))
		require.False(t, move(store.RunRunning, store.RunSucceeded, msg.Msg{}), "ended: a late writer changes nothing")
		got, err = s.WorkflowRun(ctx, run.ID)
		require.NoError(t, err)
		require.Equal(t, store.RunFailed, got.Status)
		require.True(t, got.FinishedAt.Valid)
		require.Equal(t, started, got.StartedAt.Int64)
		require.Equal(t, reason.Code, got.ReasonMsg.Code)
		require.Equal(t, reason.String(), got.Reason)

		// Rerun: once per reruns read.
		_, err = s.RerunWorkflowRun(ctx, run.ID, store.RunRunning, 0, []string{"a"})
		require.Error(t, err, "only a finished run is re-run")
		ok, err := s.RerunWorkflowRun(ctx, run.ID, store.RunFailed, 0, []string{"a"})
		require.NoError(t, err)
		require.True(t, ok)
		ok, err = s.RerunWorkflowRun(ctx, run.ID, store.RunFailed, 0, []string{"a"})
		require.NoError(t, err)
		require.False(t, ok, "the second click finds the run reopened")
		got, err = s.WorkflowRun(ctx, run.ID)
		require.NoError(t, err)
		require.Equal(t, store.RunRunning, got.Status)
		require.Equal(t, 1, got.Reruns)
		require.False(t, got.FinishedAt.Valid)
		require.Empty(t, got.Reason)

		// Node runs: guarded transitions, the job run linked once, found by
		// its job run.
		node, _, err := s.CreateNodeRun(ctx, 1, store.NewNodeRun{WorkflowRunID: run.ID, NodeKey: "settle", Rerun: 1, Status: store.RunRunning})
		require.NoError(t, err)
		linked, err := s.LinkNodeRunJobRun(ctx, node.ID, 41)
		require.NoError(t, err)
		require.True(t, linked)
		linked, err = s.LinkNodeRunJobRun(ctx, node.ID, 42)
		require.NoError(t, err)
		require.False(t, linked, "the first job run stays")
		byJob, err := s.NodeRunOfJobRun(ctx, 41)
		require.NoError(t, err)
		require.Equal(t, node.ID, byJob.ID)
		_, err = s.NodeRunOfJobRun(ctx, 42)
		require.ErrorIs(t, err, store.ErrNotFound)

		nodeMove := func(from, to string) bool {
			t.Helper()
			ok, err := s.TransitionNodeRun(ctx, store.StatusTransition{ID: node.ID, From: from, To: to})
			require.NoError(t, err)
			return ok
		}
		require.True(t, nodeMove(store.RunRunning, store.RunSucceeded))
		require.False(t, nodeMove(store.RunRunning, store.RunFailed))
		got2, err := s.NodeRun(ctx, node.ID)
		require.NoError(t, err)
		require.Equal(t, store.RunSucceeded, got2.Status)
		require.True(t, got2.FinishedAt.Valid)
		require.Equal(t, int64(41), got2.JobRunID.Int64)

		// A leader's transaction: fenced by its epoch.
		_, err = s.ClaimEpoch(ctx, 3, "admin-a")
		require.NoError(t, err)
		err = s.Tx(ctx, func(tx *store.Tx) error {
			if err := tx.CheckEpoch(ctx, 3); err != nil {
				return err
			}
			active, err := tx.ActiveWorkflowRuns(ctx, 10)
			require.NoError(t, err)
			require.Len(t, active, 1)
			r, created, err := tx.CreateWorkflowRun(ctx, 3, newWorkflowRun(wf, "2026-03-05"))
			require.NoError(t, err)
			require.True(t, created)
			if _, err := tx.TransitionWorkflowRun(ctx, store.StatusTransition{ID: r.ID, From: store.RunPending, To: store.RunRunning}); err != nil {
				return err
			}
			nr, _, err := tx.CreateNodeRun(ctx, 3, store.NewNodeRun{WorkflowRunID: r.ID, NodeKey: "a", Status: store.RunRunning, JobRunID: 7})
			require.NoError(t, err)
			require.Equal(t, int64(7), nr.JobRunID.Int64)
			if _, err := tx.LinkNodeRunJobRun(ctx, nr.ID, 8); err != nil {
				return err
			}
			if _, err := tx.TransitionNodeRun(ctx, store.StatusTransition{ID: nr.ID, From: store.RunRunning, To: store.RunFailed}); err != nil {
				return err
			}
			runs, err := tx.NodeRuns(ctx, r.ID)
			require.NoError(t, err)
			require.Len(t, runs, 1)
			_, err = tx.RerunWorkflowRun(ctx, r.ID, store.RunFailed, 0, []string{"a"})
			return err
		})
		require.NoError(t, err)
		_, err = s.ClaimEpoch(ctx, 4, "admin-b")
		require.NoError(t, err)
		err = s.Tx(ctx, func(tx *store.Tx) error {
			if err := tx.CheckEpoch(ctx, 3); err != nil {
				return err
			}
			_, _, err := tx.CreateWorkflowRun(ctx, 3, newWorkflowRun(wf, "2026-03-06"))
			return err
		})
		require.ErrorIs(t, err, store.ErrStaleEpoch)
		history, err := s.WorkflowRuns(ctx, wf, 0, 10)
		require.NoError(t, err)
		require.Len(t, history, 2, "the stale leader created nothing")
		require.Equal(t, "2026-03-05", history[0].BusinessDate, "newest first")
		older, err := s.WorkflowRuns(ctx, wf, history[0].ID, 10)
		require.NoError(t, err)
		require.Len(t, older, 1)
		require.Equal(t, run.ID, older[0].ID)
	})
}

func TestJobKeys(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		a, err := s.CreateJob(ctx, newJob("billing", "load-trades", 0))
		require.NoError(t, err)
		b, err := s.CreateJob(ctx, newJob("market-data", "load-fx", 0))
		require.NoError(t, err)
		keys, err := s.JobKeys(ctx, []int64{a, 9999}, []store.JobKey{{App: "market-data", Name: "load-fx"}, {App: "billing", Name: "nope"}})
		require.NoError(t, err)
		require.ElementsMatch(t, []store.JobKey{{ID: a, App: "billing", Name: "load-trades"}, {ID: b, App: "market-data", Name: "load-fx"}}, keys)
		keys, err = s.JobKeys(ctx, nil, nil)
		require.NoError(t, err)
		require.Empty(t, keys)
	})
}

// The jobs of a workflow's inline nodes are written with its definition:
// created, replaced, and deleted with a node that is no longer inline or
// with the workflow; a stale update writes none. They are not listed with
// the ordinary jobs and no node or child references them.
func TestInlineJobsFollowTheWorkflow(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		inline := func(node, handler string, slots int) store.InlineJob {
			return store.InlineJob{Node: node, Job: store.Job{Handler: handler, SlotCount: slots, Params: `{"n":"` + node + `"}`,
				TimeZone: "UTC", MisfirePolicy: "run_once", OverlapPolicy: "allow", MisfireMS: 60000, MaxCatchUp: 10, RetryMax: 2, RetryBackoffMS: 1000}}
		}
		ordinary, err := s.CreateJob(ctx, store.Job{App: "billing", Name: "load", Handler: "h", CronExpr: "@daily", TimeZone: "UTC", SlotCount: 1, Enabled: true})
		require.NoError(t, err)
		w := newWorkflow("billing", "eod")
		w.Inline = []store.InlineJob{inline("a", "load.a", 1), inline("b", "load.b", 4)}
		id, err := s.CreateWorkflow(ctx, w)
		require.NoError(t, err)
		jobs, err := s.WorkflowJobs(ctx, id)
		require.NoError(t, err)
		require.Len(t, jobs, 2)
		a, b := jobs[0], jobs[1]
		require.Equal(t, store.InlineJobName(id, "a"), a.Name)
		require.Equal(t, "@"+strconv.FormatInt(id, 10)+"/b", b.Name)
		require.Equal(t, "billing", b.App)
		require.Equal(t, "load.b", b.Handler)
		require.Equal(t, 4, b.SlotCount)
		require.Equal(t, 2, b.RetryMax)
		require.True(t, b.Enabled)
		require.Empty(t, b.CronExpr)
		require.False(t, b.NextFireAt.Valid, "no schedule")
		require.Equal(t, sql.NullInt64{Int64: id, Valid: true}, b.WorkflowID)
		require.NotZero(t, b.CreatedAt)

		listed, err := s.Jobs(ctx, 0, 100)
		require.NoError(t, err)
		require.Len(t, listed, 1, "only the ordinary job is listed")
		require.Equal(t, ordinary, listed[0].ID)
		mine, err := s.JobsOfApps(ctx, 0, 100, []string{"billing"})
		require.NoError(t, err)
		require.Len(t, mine, 1)
		keys, err := s.JobKeys(ctx, []int64{a.ID, ordinary}, []store.JobKey{{App: "billing", Name: b.Name}})
		require.NoError(t, err)
		require.Equal(t, []store.JobKey{{ID: ordinary, App: "billing", Name: "load"}}, keys, "a node cannot reference an inline node's job")
		got, err := s.Job(ctx, a.ID)
		require.NoError(t, err, "read by id (its runs link to it)")
		require.Equal(t, "load.a", got.Handler)
		require.NoError(t, s.Tx(ctx, func(tx *store.Tx) error {
			jid, found, err := tx.InlineJobID(ctx, id, "b")
			require.True(t, found)
			require.Equal(t, b.ID, jid)
			_, found, _ = tx.InlineJobID(ctx, id, "zzz")
			require.False(t, found)
			return err
		}))

		// Update: b replaced in place, a no longer inline (deleted), c new.
		cur, err := s.Workflow(ctx, id)
		require.NoError(t, err)
		cur.Inline = []store.InlineJob{inline("b", "load.b2", 8), inline("c", "load.c", 1)}
		cur.UpdatedBy = "boss"
		require.NoError(t, s.UpdateWorkflow(ctx, cur))
		jobs, err = s.WorkflowJobs(ctx, id)
		require.NoError(t, err)
		require.Len(t, jobs, 2)
		require.Equal(t, b.ID, jobs[0].ID, "the job of a node that stays inline keeps its id (and its runs' history)")
		require.Equal(t, "load.b2", jobs[0].Handler)
		require.Equal(t, 8, jobs[0].SlotCount)
		require.Equal(t, b.Version+1, jobs[0].Version)
		require.Equal(t, store.InlineJobName(id, "c"), jobs[1].Name)
		_, err = s.Job(ctx, a.ID)
		require.ErrorIs(t, err, store.ErrNotFound)

		// A stale version changes nothing, jobs included.
		cur.Inline = []store.InlineJob{inline("d", "load.d", 1)}
		require.ErrorIs(t, s.UpdateWorkflow(ctx, cur), store.ErrConflict)
		again, err := s.WorkflowJobs(ctx, id)
		require.NoError(t, err)
		require.Equal(t, jobs, again)

		require.NoError(t, s.DeleteWorkflow(ctx, id))
		left, err := s.WorkflowJobs(ctx, id)
		require.NoError(t, err)
		require.Empty(t, left, "deleted with the workflow")
		_, err = s.Job(ctx, ordinary)
		require.NoError(t, err, "ordinary jobs stay")
	})
}
