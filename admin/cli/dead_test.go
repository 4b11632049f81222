package cli_test

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/runstate"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/sdk/protocol"
)

// TestGetAndReplayDead: get dead lists the dead letters with their
// filters; replay dead runs them again, once unless --force.
func TestGetAndReplayDead(t *testing.T) {
	t.Parallel()
	a := startAdmin(t)
	ctx := context.Background()
	_, err := a.st.ClaimEpoch(ctx, 1, "test")
	require.NoError(t, err)
	ex, err := a.st.Heartbeat(ctx, store.ExecutorInfo{InstanceID: "ex", App: "billing", Address: "http://127.0.0.1:1", Capacity: 2})
	require.NoError(t, err)
	jobID, err := a.st.CreateJob(ctx, store.Job{App: "billing", Name: "charge", Handler: "charge.v1", CronExpr: "0 0 1 1 *", TimeZone: "UTC",
		MisfirePolicy: "run_once", OverlapPolicy: "allow", SlotCount: 2, Params: "{}", Enabled: true})
	require.NoError(t, err)
	run, _, err := a.st.InsertRun(ctx, 1, store.NewRun{JobID: jobID, ScheduledAt: 1, TriggerKind: store.TriggerManual, Status: store.RunPending, Params: "{}", SlotCount: 2})
	require.NoError(t, err)
	ok, err := a.st.StartRun(ctx, 1, run.ID, time.Hour, []store.NewAttempt{{Slot: 0, Attempt: 1, ExecutorID: ex.ID}, {Slot: 1, Attempt: 1, ExecutorID: ex.ID}})
	require.NoError(t, err)
	require.True(t, ok)
	atts, err := a.st.Attempts(ctx, run.ID)
	require.NoError(t, err)
	var outs []store.SlotOutcome
	for _, x := range atts {
		outs = append(outs, store.SlotOutcome{ExecutorID: ex.ID, SlotResult: protocol.SlotResult{Token: x.Token, Status: store.AttemptFailed,
			ErrorClass: protocol.ClassPermanent, Error: "account closed", FinishedAt: 10}})
	}
	_, err = runstate.New(a.st).FinishAttempts(ctx, outs)
	require.NoError(t, err)

	code, out, errs := a.ctl("get", "dead", "--app", "billing", "--class", "permanent", "--job", "billing/charge")
	require.Zero(t, code, errs)
	require.Contains(t, out, "CLASS")
	require.Contains(t, out, "account closed")
	code, out, _ = a.ctl("get", "dead", "--limit", "1")
	require.Zero(t, code)
	require.Contains(t, out, "(1 shown of 2", "a cut list says so")
	code, out, _ = a.ctl("get", "dead", "--class", "timeout", "-o", "json")
	require.Zero(t, code)
	require.JSONEq(t, "[]", out)
	code, out, _ = a.ctl("get", "dead", "-o", "json")
	require.Zero(t, code)
	var dead []apitypes.DeadLetter
	require.NoError(t, json.Unmarshal([]byte(out), &dead))
	require.Len(t, dead, 2)

	ids := []string{strconv.FormatInt(dead[0].ID, 10), strconv.FormatInt(dead[1].ID, 10)}
	code, out, errs = a.ctl(append([]string{"replay", "dead"}, ids...)...)
	require.Zero(t, code, errs)
	require.Contains(t, out, "runs again (token")
	code, _, errs = a.ctl("replay", "dead", ids[0])
	require.Equal(t, 1, code)
	require.Contains(t, errs, "replayed already")
	code, _, _ = a.ctl("replay", "dead", "x")
	require.Equal(t, 2, code)

	// --params: text as a job's params, or a JSON object when it starts
	// with "{" (which must then be one). The replay of slot 0 fails again
	// (a new letter); replayed with --params, failing once more, its
	// letter carries them.
	failAgain := func(tok int64) {
		t.Helper()
		_, err := a.st.PlaceAttempts(ctx, 1, time.Hour, []store.Placement{{Token: tok, ExecutorID: ex.ID}})
		require.NoError(t, err)
		_, err = runstate.New(a.st).FinishAttempts(ctx, []store.SlotOutcome{{ExecutorID: ex.ID, SlotResult: protocol.SlotResult{Token: tok,
			Status: store.AttemptFailed, ErrorClass: protocol.ClassPermanent, Error: "still closed", FinishedAt: 20}}})
		require.NoError(t, err)
	}
	newest := func() apitypes.DeadLetter {
		t.Helper()
		code, out, errs := a.ctl("get", "dead", "-o", "json")
		require.Zero(t, code, errs)
		var dead []apitypes.DeadLetter
		require.NoError(t, json.Unmarshal([]byte(out), &dead))
		return dead[0]
	}
	code, out, errs = a.ctl("get", "dead", "-o", "json")
	require.Zero(t, code, errs)
	require.NoError(t, json.Unmarshal([]byte(out), &dead))
	failAgain(*dead[0].ReplayToken)
	letter := newest()
	code, _, errs = a.ctl("replay", "dead", "--params", `{"day": `, strconv.FormatInt(letter.ID, 10))
	require.Equal(t, 2, code)
	require.Contains(t, errs, "starts like a JSON object but is not one")
	code, out, errs = a.ctl("replay", "dead", "--params", "day=2026-01-02", "-o", "json", strconv.FormatInt(letter.ID, 10))
	require.Zero(t, code, errs)
	var again []apitypes.DeadLetter // -o json: the letters as marked
	require.NoError(t, json.Unmarshal([]byte(out), &again))
	require.Len(t, again, 1)
	failAgain(*again[0].ReplayToken)
	require.Equal(t, "day=2026-01-02", newest().Params, "the replay ran with --params")
	code, out, _ = a.ctl("get", "dead")
	require.Zero(t, code)
	require.Contains(t, out, "ops ")
}
