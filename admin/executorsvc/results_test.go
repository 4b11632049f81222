package executorsvc_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/store/storetest"
	"github.com/shardjob/shardjob/sdk/protocol"
)

// A succeeded slot keeps its handler's result and the run's result is
// composed from them; a result over protocol.MaxResultBytes, or one that
// is not JSON, fails its slot with the reason (nothing cut); a failed
// slot's result is not kept; an older executor's result without one
// stores none.
func TestSlotResultsKeptAndCapped(t *testing.T) {
	t.Parallel()
	storetest.EachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		svc := newService(st)
		hb, err := svc.Heartbeat(ctx, protocol.HeartbeatRequest{InstanceID: "ex-1", App: "fin", Address: "http://127.0.0.1:1", Capacity: 8})
		require.NoError(t, err)
		db := st.DB()
		exec := func(q string, args ...any) {
			t.Helper()
			_, err := db.ExecContext(ctx, q, args...)
			require.NoError(t, err)
		}
		exec(`INSERT INTO job (app, name, handler, cron_expr, slot_params, params, created_at, updated_at) VALUES ('fin', 'load', 'h', '', '', '', 1, 1)`)
		var jobID int64
		require.NoError(t, db.QueryRowContext(ctx, `SELECT id FROM job WHERE name = 'load'`).Scan(&jobID))
		// run 1: one slot; run 2: five slots.
		runs := map[int]int64{}
		tokens := map[[2]int]int64{}
		for _, rs := range [][2]int{{1, 1}, {2, 5}} { // in order: the attempts are read back by id
			r, slots := rs[0], rs[1]
			exec(`INSERT INTO job_run (job_id, scheduled_at, trigger_kind, status, params, slot_count, epoch, created_at, app) VALUES (?, ?, 'manual', 'running', '', ?, 1, 1, 'fin')`, jobID, r, slots)
			var runID int64
			require.NoError(t, db.QueryRowContext(ctx, `SELECT id FROM job_run WHERE scheduled_at = ?`, r).Scan(&runID))
			runs[r] = runID
			for s := range slots {
				exec(`INSERT INTO slot_attempt (run_id, slot, attempt, executor_id, status, current, dispatched_at, acked, lease_until) VALUES (?, ?, 1, ?, 'running', 1, 1, 1, 2)`,
					runID, s, hb.ExecutorID)
				var tok int64
				require.NoError(t, db.QueryRowContext(ctx, `SELECT id FROM slot_attempt WHERE run_id = ? AND slot = ?`, runID, s).Scan(&tok))
				tokens[[2]int{r, s}] = tok
			}
		}
		atCap := json.RawMessage(`"` + strings.Repeat("x", protocol.MaxResultBytes-2) + `"`)
		over := json.RawMessage(`"` + strings.Repeat("x", protocol.MaxResultBytes-1) + `"`)
		results := []protocol.SlotResult{
			{Token: tokens[[2]int{1, 0}], Status: protocol.SlotSucceeded, Result: json.RawMessage(`{"rows":42}`)},
			{Token: tokens[[2]int{2, 0}], Status: protocol.SlotSucceeded, Result: atCap},
			{Token: tokens[[2]int{2, 1}], Status: protocol.SlotSucceeded, Result: over},
			{Token: tokens[[2]int{2, 2}], Status: protocol.SlotSucceeded, Result: json.RawMessage(`{"rows":`)},
			{Token: tokens[[2]int{2, 3}], Status: protocol.SlotFailed, Error: "boom", Result: json.RawMessage(`1`)},
			{Token: tokens[[2]int{2, 4}], Status: protocol.SlotSucceeded},
		}
		for i := range results {
			results[i].StartedAt, results[i].FinishedAt = 1, 2
		}
		resp, err := svc.Results(ctx, protocol.ResultsRequest{InstanceID: "ex-1", Results: results})
		require.NoError(t, err)
		require.Len(t, resp.Accepted, 6, "every result is final for the executor")

		type attempt struct {
			Status string  `db:"status"`
			Result *string `db:"result"`
			Error  string  `db:"error"`
			Msg    msg.Msg `db:"error_msg"`
		}
		var got []attempt
		require.NoError(t, db.SelectContext(ctx, &got, `SELECT status, result, error, error_msg FROM slot_attempt ORDER BY id`))
		require.Len(t, got, 6)
		require.Equal(t, "succeeded", got[0].Status)
		require.JSONEq(t, `{"rows":42}`, *got[0].Result)
		require.Equal(t, "succeeded", got[1].Status, "a result of exactly 16 KiB is kept")
		require.Equal(t, string(atCap), *got[1].Result)
		require.Equal(t, "failed", got[2].Status)
		require.Nil(t, got[2].Result)
		require.Equal(t, msg.AttemptResultTooLarge, got[2].Msg.Code)
		require.Equal(t, "the handler's result is 16385 bytes, more than the 16384 bytes a slot's result may have", got[2].Error)
		require.Equal(t, "failed", got[3].Status)
		require.Equal(t, msg.AttemptResultNotJSON, got[3].Msg.Code)
		require.Nil(t, got[3].Result)
		require.Equal(t, "failed", got[4].Status)
		require.Nil(t, got[4].Result, "a failed slot keeps no result")
		require.Equal(t, "succeeded", got[5].Status)
		require.Nil(t, got[5].Result)

		res, err := st.RunResults(ctx, []int64{runs[1], runs[2]})
		require.NoError(t, err)
		require.JSONEq(t, `{"rows":42}`, string(res[runs[1]]), "one slot: its value")
		require.JSONEq(t, `{"0":`+string(atCap)+`}`, string(res[runs[2]]), "several slots: by slot, those with a result")
	})
}
