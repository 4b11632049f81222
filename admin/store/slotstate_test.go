package store_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/runstate"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/sdk/protocol"
)

// TestSlotState: an attempt stored as assigned reads as pending (no
// executor), assigned (sent, not acknowledged) or queued (acknowledged,
// waiting for capacity); every other status reads as itself.
func TestSlotState(t *testing.T) {
	t.Parallel()
	on := sql.NullInt64{Int64: 7, Valid: true}
	for _, c := range []struct {
		a    store.Attempt
		want string
	}{
		{store.Attempt{Status: store.AttemptAssigned}, store.SlotPending},
		{store.Attempt{Status: store.AttemptAssigned, ExecutorID: on}, store.AttemptAssigned},
		{store.Attempt{Status: store.AttemptAssigned, ExecutorID: on, Acked: true}, store.SlotQueued},
		{store.Attempt{Status: store.AttemptRunning, ExecutorID: on, Acked: true}, store.AttemptRunning},
		{store.Attempt{Status: store.AttemptSucceeded, ExecutorID: on}, store.AttemptSucceeded},
		{store.Attempt{Status: store.AttemptFailed}, store.AttemptFailed},
		{store.Attempt{Status: store.AttemptCancelled}, store.AttemptCancelled},
		{store.Attempt{Status: store.AttemptLost, ExecutorID: on, Acked: true}, store.AttemptLost},
		{store.Attempt{Status: store.AttemptMoved, ExecutorID: on, Acked: true}, store.AttemptMoved},
	} {
		require.Equal(t, c.want, store.SlotState(c.a), "%+v", c.a)
	}
}

// TestResultBeforeStartKeepsTheExecutorsTimes: a result that arrives before
// the start was recorded (the push answer or heartbeat saying "started" is
// still on its way) gives the attempt the executor's start and finish
// times, and the late start changes nothing: started_at is set and not
// after finished_at.
func TestResultBeforeStartKeepsTheExecutorsTimes(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		_, err := s.ClaimEpoch(ctx, 1, "me")
		require.NoError(t, err)
		ex := heartbeat(t, s, "early-result", 1, 2)
		jobID, err := s.CreateJob(ctx, newJob("a", "early-result", 0))
		require.NoError(t, err)
		run, atts := startRunAt(t, s, 1, jobID, 1, ex.ID)
		began, ended := time.Now().Add(-time.Hour).UnixMilli(), time.Now().Add(-time.Hour+time.Second).UnixMilli()
		ok, err := runstate.New(s).FinishAttempt(ctx, store.SlotOutcome{SlotResult: protocol.SlotResult{Token: atts[0].Token, Status: store.AttemptSucceeded, StartedAt: began, FinishedAt: ended}, ExecutorID: ex.ID})
		require.NoError(t, err)
		require.True(t, ok)
		require.NoError(t, s.RecordAccepted(ctx, ex.ID, nil, []int64{atts[0].Token}, 1)) // the late "started"

		got, err := s.Attempts(ctx, run.ID)
		require.NoError(t, err)
		require.Len(t, got, 1)
		require.Equal(t, store.AttemptSucceeded, got[0].Status)
		require.True(t, got[0].StartedAt.Valid)
		require.Equal(t, began, got[0].StartedAt.Int64)
		require.Equal(t, ended, got[0].FinishedAt.Int64)
	})
}
