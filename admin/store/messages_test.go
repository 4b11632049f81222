package store_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/runstate"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/store/storetest"
	"github.com/shardjob/shardjob/sdk/protocol"
)

// TestMessagesAreStoredAsCodes: a run's reason, an attempt ended by the
// admin and an alarm keep their message as a code with arguments next to
// the English text; a handler's own error has no code.
func TestMessagesAreStoredAsCodes(t *testing.T) {
	t.Parallel()
	storetest.EachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		_, err := s.ClaimEpoch(ctx, 1, "me")
		require.NoError(t, err)
		ex := heartbeat(t, s, "ex-codes", 1, 4)
		jobID, err := s.CreateJob(ctx, newJob("a", "codes", 0))
		require.NoError(t, err)

		// A skipped run, inserted with its reason.
		skipped, _, err := s.InsertRun(ctx, 1, store.NewRun{JobID: jobID, ScheduledAt: 5, TriggerKind: store.TriggerCron, Status: store.RunSkipped,
			SlotCount: 1, Reason: msg.New(msg.RunSkippedMisfire, "policy", "skip", "threshold_ms", 5000)})
		require.NoError(t, err)
		got, err := s.Run(ctx, skipped.ID)
		require.NoError(t, err)
		require.Equal(t, "misfire policy skip: firing was late by more than 5000ms", got.Error)
		require.Equal(t, msg.RunSkippedMisfire, got.ErrorMsg.Code)
		require.Equal(t, map[string]any{"policy": "skip", "threshold_ms": "5000"}, got.ErrorMsg.Args)

		// Two slots: one ends with a handler's error, one by the admin.
		run, attempts := startRunAt(t, s, 1, jobID, 10, ex.ID, ex.ID)
		reason := msg.New(msg.AttemptNotAcked, "executor", "ex-codes", "timeout", "30s")
		_, err = runstate.New(s).FinishAttempts(ctx, []store.SlotOutcome{
			{ExecutorID: ex.ID, SlotResult: protocol.SlotResult{Token: attempts[0].Token, Status: store.AttemptFailed, FinishedAt: 20, Error: "boom"}},
			{ExecutorID: ex.ID, SlotResult: protocol.SlotResult{Token: attempts[1].Token, Status: store.AttemptFailed, FinishedAt: 20}, Reason: reason},
		})
		require.NoError(t, err)
		atts, err := s.Attempts(ctx, run.ID)
		require.NoError(t, err)
		require.Len(t, atts, 2)
		require.Equal(t, "boom", atts[0].Error)
		require.True(t, atts[0].ErrorMsg.IsZero(), "a handler's text has no code")
		require.Equal(t, reason.String(), atts[1].Error)
		require.Equal(t, msg.AttemptNotAcked, atts[1].ErrorMsg.Code)

		// The run ended failed: its reason and its alarm, the alarm's
		// reason nested.
		got, err = s.Run(ctx, run.ID)
		require.NoError(t, err)
		require.Equal(t, store.RunFailed, got.Status)
		require.Equal(t, "2 slots failed", got.Error)
		require.Equal(t, msg.New(msg.RunSlotsFailed, "failed", 2), got.ErrorMsg)
		alarms, err := s.Alarms(ctx, 0, 50)
		require.NoError(t, err)
		var found bool
		for _, a := range alarms {
			if a.Kind == store.AlarmRunFailed && a.RunID.Int64 == run.ID {
				found = true
				require.Equal(t, "run "+itoa(int(run.ID))+" failed: 2 slots failed", a.Message)
				require.Equal(t, msg.AlarmRunFailed, a.Msg.Code)
				require.Equal(t, map[string]any{"code": string(msg.RunSlotsFailed), "args": map[string]any{"failed": "2"}}, a.Msg.Args["reason"])
				require.Equal(t, a.Message, a.Msg.String(), "read back, the code renders the same English")
			}
		}
		require.True(t, found, "run_failed alarm of run %d in %+v", run.ID, alarms)
	})
}
