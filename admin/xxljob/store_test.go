package xxljob_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/runstate"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/store/storetest"
	"github.com/shardjob/shardjob/admin/xxljob"
	"github.com/shardjob/shardjob/sdk/protocol"
)

// TestStoreQueries runs the queries of sql/queries_xxljob.sql on both
// dialects.
func TestStoreQueries(t *testing.T) {
	t.Parallel()
	storetest.EachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		// A shardjob executor keeps the default protocol.
		sj, err := s.Heartbeat(ctx, store.ExecutorInfo{InstanceID: "sj-1", App: "xxl", Address: "http://127.0.0.1:7001", Capacity: 2})
		require.NoError(t, err)
		ref, err := s.ExecutorProtocol(ctx, "http://127.0.0.1:7001")
		require.NoError(t, err)
		require.Equal(t, store.ExecutorRef{ID: sj.ID, App: "xxl", Protocol: store.ProtocolShardjob}, ref)
		_, err = s.ExecutorProtocol(ctx, "http://127.0.0.1:1")
		require.ErrorIs(t, err, store.ErrNotFound)

		info := store.ExecutorInfo{InstanceID: "xxljob:xxl@http://127.0.0.1:9999/", App: "xxl", Address: "http://127.0.0.1:9999/", Capacity: 4, Version: xxljob.VersionLabel(xxljob.Gen35)}
		ex, err := s.RegisterXXLExecutor(ctx, info)
		require.NoError(t, err)
		again, err := s.RegisterXXLExecutor(ctx, info)
		require.NoError(t, err)
		require.Equal(t, ex.ID, again.ID, "registering again refreshes the same executor")
		ref, err = s.ExecutorProtocol(ctx, info.Address)
		require.NoError(t, err)
		require.Equal(t, store.ProtocolXXLJob, ref.Protocol)
		require.Equal(t, xxljob.Gen35, xxljob.GenerationOf(ref.Version), "the recorded generation is read back")
		live, err := s.XXLExecutors(ctx)
		require.NoError(t, err)
		require.Len(t, live, 1)
		require.Equal(t, ex.ID, live[0].ID)

		// A run with two slots placed on the XXL-JOB executor.
		jobID, err := s.CreateJob(ctx, store.Job{App: "xxl", Name: "j", Handler: "h", CronExpr: "0 0 1 1 *", TimeZone: "UTC",
			MisfirePolicy: "run_once", OverlapPolicy: "allow", SlotCount: 2, Enabled: true})
		require.NoError(t, err)
		ok, err := s.ClaimEpoch(ctx, 1, "test")
		require.NoError(t, err)
		require.True(t, ok)
		run, created, err := s.InsertRun(ctx, 1, store.NewRun{JobID: jobID, ScheduledAt: 1000, TriggerKind: store.TriggerManual, Status: store.RunPending, SlotCount: 2})
		require.NoError(t, err)
		require.True(t, created)
		started, err := s.StartRun(ctx, 1, run.ID, 0, []store.NewAttempt{{Slot: 0, Attempt: 1, ExecutorID: ex.ID}, {Slot: 1, Attempt: 1, ExecutorID: ex.ID}})
		require.NoError(t, err)
		require.True(t, started)
		atts, err := s.Attempts(ctx, run.ID)
		require.NoError(t, err)
		token, second := atts[0].Token, atts[1].Token

		// Not accepted yet: due for redispatch (older than -1s), claimed once.
		un, err := s.XXLUnacked(ctx, ex.ID, -1000, 10)
		require.NoError(t, err)
		require.Len(t, un, 2)
		require.Equal(t, token, un[0].Token)
		ok, err = s.ClaimRedispatch(ctx, token, ex.ID, -1000)
		require.NoError(t, err)
		require.True(t, ok)
		ok, err = s.ClaimRedispatch(ctx, token, ex.ID, 60000)
		require.NoError(t, err)
		require.False(t, ok, "just claimed: not again")

		ti, err := s.TokenInfo(ctx, token)
		require.NoError(t, err)
		require.Positive(t, ti.DispatchedAt, "just claimed again")
		ti.DispatchedAt = 0
		require.Equal(t, store.TokenInfo{Token: token, RunID: run.ID, Slot: 0, Status: store.AttemptAssigned, Current: true, ExecutorID: ex.ID,
			JobID: jobID, ScheduledAt: 1000, App: "xxl", Address: info.Address, Protocol: store.ProtocolXXLJob, Version: info.Version}, ti)
		require.Zero(t, ti.TimeoutMS, "the job has no timeout")
		slots, err := s.SlotsOfTokens(ctx, []int64{second, token, token})
		require.NoError(t, err)
		require.Equal(t, []store.JobSlot{{JobID: jobID, Slot: 0}, {JobID: jobID, Slot: 1}}, slots)

		// A second run of the job puts slot 0 on the executor again.
		run2, created, err := s.InsertRun(ctx, 1, store.NewRun{JobID: jobID, ScheduledAt: 2000, TriggerKind: store.TriggerManual, Status: store.RunPending, SlotCount: 2})
		require.NoError(t, err)
		require.True(t, created)
		started, err = s.StartRun(ctx, 1, run2.ID, 0, []store.NewAttempt{{Slot: 0, Attempt: 1, ExecutorID: ex.ID}})
		require.NoError(t, err)
		require.True(t, started)
		atts2, err := s.Attempts(ctx, run2.ID)
		require.NoError(t, err)
		third := atts2[0].Token

		// One slot per handler at a time: the smallest token's turn.
		turns, err := s.XXLHandlerTurns(ctx, ex.ID)
		require.NoError(t, err)
		require.Equal(t, map[string]int64{"h": token}, turns)

		// Accepted (started): kept alive by beats, overdue once its time passed.
		require.NoError(t, s.MarkStarted(ctx, ex.ID, []int64{token, second, third}))
		running, err := s.XXLRunningSince(ctx, ex.ID, -1000, 10)
		require.NoError(t, err)
		require.Len(t, running, 3)
		require.Equal(t, store.RunningAttempt{Token: token, RunID: run.ID, Slot: 0, JobID: jobID, Handler: "h"}, running[0])
		running, err = s.XXLRunningSince(ctx, ex.ID, 60000, 10)
		require.NoError(t, err)
		require.Empty(t, running, "none has run for a minute")
		alive, err := s.XXLBeat(ctx, ex.ID)
		require.NoError(t, err)
		require.True(t, alive)
		over, err := s.XXLOverdue(ctx, 60000, 0, 10)
		require.NoError(t, err)
		require.Empty(t, over, "not overdue within the default timeout")
		// Each slot has its own XXL-JOB job id: slots 0 and 1 of the first
		// run do not wait for each other. Slot 0 of the second run waits
		// behind slot 0 of the first (same job id, same executor): it has
		// two timeouts.
		over, err = s.XXLOverdue(ctx, 30000, -45000, 10)
		require.NoError(t, err)
		require.Equal(t, []int64{token, second}, overdueTokens(over))
		over, err = s.XXLOverdue(ctx, 30000, -75000, 10)
		require.NoError(t, err)
		require.Equal(t, []int64{token, second, third}, overdueTokens(over))
		// Once the first finished, the queued one's time starts then, alone.
		acc, err := runstate.New(s).FinishAttempts(ctx, []store.SlotOutcome{{ExecutorID: ex.ID, SlotResult: protocol.SlotResult{Token: token, Status: store.AttemptSucceeded, FinishedAt: 1 << 50}}})
		require.NoError(t, err)
		require.Equal(t, []bool{true}, acc)
		over, err = s.XXLOverdue(ctx, 30000, -45000, 10)
		require.NoError(t, err)
		require.Equal(t, []int64{second}, overdueTokens(over), "slot 0 finished later than now: the queued run's time starts over")
		_, err = runstate.New(s).FinishAttempts(ctx, []store.SlotOutcome{{ExecutorID: ex.ID, SlotResult: protocol.SlotResult{Token: second, Status: store.AttemptSucceeded, FinishedAt: 1 << 50}}})
		require.NoError(t, err)
		over, err = s.XXLOverdue(ctx, 0, 0, 10)
		require.NoError(t, err)
		require.Empty(t, over)

		// Idle on the executor with no callback: lost, and placed again.
		why := msg.New(msg.AttemptXXLIdleLost, "address", info.Address, "apart", "1s", "xxl_job_id", xxljob.SlotJobID(jobID, 0))
		lost, err := s.XXLLoseIdle(ctx, third, ex.ID, why)
		require.NoError(t, err)
		require.True(t, lost)
		lost, err = s.XXLLoseIdle(ctx, third, ex.ID, why)
		require.NoError(t, err)
		require.False(t, lost, "lost once")
		atts2, err = s.Attempts(ctx, run2.ID)
		require.NoError(t, err)
		require.Len(t, atts2, 2)
		require.Equal(t, store.AttemptLost, atts2[0].Status)
		require.Equal(t, why, atts2[0].ErrorMsg)
		require.False(t, atts2[1].ExecutorID.Valid, "the next attempt waits to be placed")
		require.Equal(t, 2, atts2[1].Attempt)
		turns, err = s.XXLHandlerTurns(ctx, ex.ID)
		require.NoError(t, err)
		require.Empty(t, turns)

		// Removed: the prober's beat no longer keeps it alive.
		require.NoError(t, s.Deregister(ctx, info.InstanceID))
		alive, err = s.XXLBeat(ctx, ex.ID)
		require.NoError(t, err)
		require.False(t, alive)
		live, err = s.XXLExecutors(ctx)
		require.NoError(t, err)
		require.Empty(t, live)
		now, err := s.NowMS(ctx)
		require.NoError(t, err)
		require.Positive(t, now)
	})
}

func overdueTokens(over []store.OverdueAttempt) []int64 {
	out := make([]int64, len(over))
	for i, o := range over {
		out[i] = o.Token
	}
	return out
}
