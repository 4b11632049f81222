package store_test

import (
	"database/sql"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/store"
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
