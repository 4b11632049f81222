package api_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/runstate"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/sdk/protocol"
)

// deadRun starts a run of a new job of app with slots slots on a new
// executor and fails the first dead of them permanently (the others
// succeed): it returns the run and the executor.
func deadRun(t *testing.T, st *store.Store, app, name string, slots, dead int) (store.Run, int64) {
	t.Helper()
	ctx := context.Background()
	_, err := st.ClaimEpoch(ctx, 1, "test")
	require.NoError(t, err)
	ex, err := st.Heartbeat(ctx, store.ExecutorInfo{InstanceID: app + "-" + name, App: app, Address: "http://127.0.0.1:1", Capacity: slots})
	require.NoError(t, err)
	jobID, err := st.CreateJob(ctx, store.Job{App: app, Name: name, Handler: "charge", CronExpr: "0 0 1 1 *", TimeZone: "UTC",
		MisfirePolicy: "run_once", OverlapPolicy: "allow", SlotCount: slots, Params: "{}", Enabled: true})
	require.NoError(t, err)
	run, _, err := st.InsertRun(ctx, 1, store.NewRun{JobID: jobID, ScheduledAt: 7000, TriggerKind: store.TriggerManual, Status: store.RunPending, Params: "{}", SlotCount: slots})
	require.NoError(t, err)
	atts := make([]store.NewAttempt, slots)
	for i := range atts {
		atts[i] = store.NewAttempt{Slot: i, Attempt: 1, ExecutorID: ex.ID}
	}
	ok, err := st.StartRun(ctx, 1, run.ID, time.Hour, atts)
	require.NoError(t, err)
	require.True(t, ok)
	got, err := st.Attempts(ctx, run.ID)
	require.NoError(t, err)
	outs := make([]store.SlotOutcome, 0, len(got))
	for _, a := range got {
		o := store.SlotOutcome{ExecutorID: ex.ID, SlotResult: protocol.SlotResult{Token: a.Token, Status: store.AttemptSucceeded, FinishedAt: 10}}
		if a.Slot < dead {
			o.Status, o.ErrorClass, o.Error = store.AttemptFailed, protocol.ClassPermanent, "account closed"
		}
		outs = append(outs, o)
	}
	_, err = runstate.New(st).FinishAttempts(ctx, outs)
	require.NoError(t, err)
	run, err = st.Run(ctx, run.ID)
	require.NoError(t, err)
	return run, ex.ID
}

// TestDeadLettersAPI: who may list and replay which letters, the filters
// and pages of the list, and a replay of 1,000 dead slots of a 1024-slot
// run in one request (one new attempt each, same run key; the run
// succeeds when they do), which a concurrent or later second replay does
// not repeat unless forced.
func TestDeadLettersAPI(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		e.user("root", admin)
		e.user("viewer", viewer)
		e.user("ops", operator)
		e.user("billops", operator)
		root, view, ops := e.token("root"), e.token("viewer"), e.token("ops")
		var billopsID int64
		for _, u := range []string{"billops"} {
			x, err := e.st.UserByName(ctx, u)
			require.NoError(t, err)
			billopsID = x.ID
		}
		require.Equal(t, http.StatusOK, e.call("PUT", "/api/v1/users/"+itoa(billopsID), root, map[string]any{"apps": []string{"billing"}}, nil))
		billops := e.token("billops")

		big, ex := deadRun(t, e.st, "search", "reindex", 1024, 1000)
		require.Equal(t, store.RunPartiallyFailed, big.Status)
		small, _ := deadRun(t, e.st, "billing", "charge", 2, 1)

		var all apitypes.DeadList
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/dead?limit=10", view, nil, &all))
		require.Len(t, all.Dead, 10)
		require.Equal(t, int64(1001), *all.Count)
		require.True(t, *all.CountExact)
		require.NotEmpty(t, all.NextCursor, "more than a page: says so")
		require.Equal(t, small.ID, all.Dead[0].RunID, "newest first")
		var next apitypes.DeadList
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/dead?limit=10&cursor="+all.NextCursor, view, nil, &next))
		require.Len(t, next.Dead, 10)
		require.Less(t, next.Dead[0].ID, all.Dead[9].ID)
		require.Nil(t, next.Count, "later pages do not count again")

		var mine apitypes.DeadList
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/dead", billops, nil, &mine))
		require.Len(t, mine.Dead, 1, "an app-limited user sees their apps' letters only")
		require.Equal(t, "billing", mine.Dead[0].App)
		require.Equal(t, "charge", mine.Dead[0].JobName)
		require.Equal(t, "account closed", mine.Dead[0].Error)
		require.Equal(t, protocol.ClassPermanent, mine.Dead[0].ErrorClass)
		var filtered apitypes.DeadList
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/dead?app=search&class=permanent&job_id="+itoa(big.JobID)+"&handler=charge&limit=1", view, nil, &filtered))
		require.Equal(t, int64(1000), *filtered.Count)
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/dead?class=timeout", view, nil, &filtered))
		require.Zero(t, *filtered.Count)
		require.Equal(t, http.StatusBadRequest, e.call("GET", "/api/v1/dead?class=sad", view, nil, nil))

		// Who may replay.
		body := map[string]any{"ids": []int64{mine.Dead[0].ID}}
		require.Equal(t, http.StatusForbidden, e.call("POST", "/api/v1/dead/replay", view, body, nil), "a viewer cannot replay")
		var bigIDs []int64
		var page apitypes.DeadList
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/dead?app=search&limit=1000", view, nil, &page))
		for _, d := range page.Dead {
			bigIDs = append(bigIDs, d.ID)
		}
		require.Len(t, bigIDs, 1000)
		var refusal struct {
			Error  string
			Fields map[string]string
		}
		require.Equal(t, http.StatusNotFound, e.call("POST", "/api/v1/dead/replay", billops, map[string]any{"ids": []int64{mine.Dead[0].ID, bigIDs[0]}}, &refusal),
			"an operator of billing cannot replay a letter of search (nor see it)")
		require.Contains(t, refusal.Fields["ids[1]"], "does not exist")
		require.Equal(t, http.StatusBadRequest, e.call("POST", "/api/v1/dead/replay", ops, map[string]any{"ids": []int64{}}, nil))
		for _, bad := range []any{42, []int{1}, true} {
			require.Equal(t, http.StatusBadRequest, e.call("POST", "/api/v1/dead/replay", ops, map[string]any{"ids": bigIDs[:1], "params": bad}, &refusal), "params %v", bad)
			require.Contains(t, refusal.Fields["params"], "JSON string", "the refusal says what params may be")
		}

		// 1,000 letters of one run in one request, twice at once.
		before := e.lastAuditID()
		codes := make([]int, 2)
		answers := make([]apitypes.ReplayAnswer, 2)
		var wg sync.WaitGroup
		for i := range 2 {
			wg.Go(func() {
				codes[i] = e.call("POST", "/api/v1/dead/replay", ops, map[string]any{"ids": bigIDs}, &answers[i])
			})
		}
		wg.Wait()
		require.ElementsMatch(t, []int{http.StatusOK, http.StatusConflict}, codes, "one of two concurrent replays of the same letters replays them")
		won := answers[0]
		if codes[1] == http.StatusOK {
			won = answers[1]
		}
		require.Len(t, won.Replayed, 1000)
		audit := e.auditSince(before)
		require.Len(t, audit, 1, "one audit entry per app")
		require.Equal(t, "dead.replay", audit[0].Action)
		require.Equal(t, "search", audit[0].App)

		atts, err := e.st.Attempts(ctx, big.ID)
		require.NoError(t, err)
		require.Len(t, atts, 2024, "1024 first attempts and exactly one new attempt per replayed slot")
		var outs []store.SlotOutcome
		var placements []store.Placement
		byToken := map[int64]store.Attempt{}
		for _, a := range atts {
			byToken[a.Token] = a
		}
		for _, d := range won.Replayed {
			a := byToken[*d.ReplayToken]
			require.True(t, a.Current)
			require.Equal(t, d.Slot, a.Slot)
			require.Greater(t, a.Token, d.Token)
			placements = append(placements, store.Placement{Token: a.Token, ExecutorID: ex})
			outs = append(outs, store.SlotOutcome{ExecutorID: ex, SlotResult: protocol.SlotResult{Token: a.Token, Status: store.AttemptSucceeded, FinishedAt: 20}})
		}
		r, err := e.st.Run(ctx, big.ID)
		require.NoError(t, err)
		require.Equal(t, store.RunRunning, r.Status, "the run runs again")
		require.Equal(t, big.ScheduledAt, r.ScheduledAt, "same run key")

		require.Equal(t, http.StatusConflict, e.call("POST", "/api/v1/dead/replay", ops, map[string]any{"ids": bigIDs[:3]}, &refusal), "replayed already")
		require.Contains(t, refusal.Fields["ids[0]"], "replayed already by ops")
		require.Equal(t, http.StatusConflict, e.call("POST", "/api/v1/dead/replay", ops, map[string]any{"ids": bigIDs[:3], "force": true}, &refusal),
			"forced, but the slots run again already")
		require.Contains(t, refusal.Error, "runs again already")

		done, err := e.st.PlaceAttempts(ctx, 1, time.Hour, placements)
		require.NoError(t, err)
		require.Len(t, done, 1000)
		acc, err := runstate.New(e.st).FinishAttempts(ctx, outs)
		require.NoError(t, err)
		require.NotContains(t, acc, false)
		r, err = e.st.Run(ctx, big.ID)
		require.NoError(t, err)
		require.Equal(t, store.RunSucceeded, r.Status, "a failed run whose dead slots all succeed on replay succeeds")
		require.Equal(t, 1024, r.SlotsSucceeded)

		// Forced replay of a letter whose slot failed again.
		var ans apitypes.ReplayAnswer
		require.Equal(t, http.StatusOK, e.call("POST", "/api/v1/dead/replay", billops, map[string]any{"ids": []int64{mine.Dead[0].ID}, "params": map[string]any{"retry": true}}, &ans))
		require.Equal(t, http.StatusConflict, e.call("POST", "/api/v1/dead/replay", billops, map[string]any{"ids": []int64{mine.Dead[0].ID}}, nil))
		tok := *ans.Replayed[0].ReplayToken
		a, err := e.st.Attempts(ctx, small.ID)
		require.NoError(t, err)
		var exOfSmall int64
		for _, x := range a {
			if x.Token != tok && x.ExecutorID.Valid {
				exOfSmall = x.ExecutorID.Int64
			}
		}
		_, err = e.st.PlaceAttempts(ctx, 1, time.Hour, []store.Placement{{Token: tok, ExecutorID: exOfSmall}})
		require.NoError(t, err)
		_, err = runstate.New(e.st).FinishAttempts(ctx, []store.SlotOutcome{{ExecutorID: exOfSmall, SlotResult: protocol.SlotResult{Token: tok, Status: store.AttemptFailed, ErrorClass: protocol.ClassPermanent, Error: "still closed", FinishedAt: 30}}})
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, e.call("POST", "/api/v1/dead/replay", billops, map[string]any{"ids": []int64{mine.Dead[0].ID}, "force": true}, &ans), "forced: the slot failed again")
		require.Equal(t, 2, ans.Replayed[0].Replays)
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/dead?app=billing", view, nil, &mine))
		require.Len(t, mine.Dead, 2, "the replay that failed again is a letter of its own")
		require.Equal(t, `{"retry":true}`, mine.Dead[0].Params, "it ran with the replay's params")
	})
}
