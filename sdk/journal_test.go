package sdk

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/sdk/protocol"
)

func TestResultsSurviveARestartWithResultsDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fa := newFakeAdmin(t, testSecret)
	fa.update(func(f *fakeAdmin) { f.failResult = true }) // no admin takes results
	tweak := func(c *Config) {
		c.ResultsDir = dir
		c.InstanceID = "stable-instance"
		c.DrainTimeout = 100 * time.Millisecond
	}
	first := buildExecutor(t, []string{fa.URL()}, map[string]Handler{"work": noop}, tweak)
	require.NoError(t, first.Start(context.Background()))
	fa.assignPush(t, first, run("work", 1701), run("work", 1702))
	waitExec(t, first, "both slots to finish", func(s Stats) bool { return s.Succeeded == 2 })
	require.ErrorIs(t, first.Stop(context.Background()), ErrResultsUndelivered)

	// A new process with the same dir and instance delivers them.
	fa.update(func(f *fakeAdmin) { f.failResult = false })
	second := buildExecutor(t, []string{fa.URL()}, map[string]Handler{"work": noop}, tweak)
	require.NoError(t, second.Start(context.Background()))
	t.Cleanup(func() { _ = second.Stop(context.Background()) })
	require.Equal(t, protocol.SlotSucceeded, fa.waitResult(t, 1701).Status)
	require.Equal(t, protocol.SlotSucceeded, fa.waitResult(t, 1702).Status)
	waitExec(t, second, "the results acknowledged", func(s Stats) bool { return s.PendingResults == 0 })

	// Redelivery of a finished token does not run it again.
	fa.assignPush(t, second, run("work", 1701))
	require.Zero(t, second.Stats().Started)

	// The journal now holds nothing unacknowledged.
	pending, err := readJournal(filepath.Join(dir, journalFile))
	require.NoError(t, err)
	require.Empty(t, pending)
}

func TestJournalToleratesATornLineAndCompacts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	j, pending, err := openJournal(dir, 1000)
	require.NoError(t, err)
	require.Empty(t, pending)
	for tok := int64(1); tok <= 1500; tok++ {
		require.NoError(t, j.add(protocol.SlotResult{Token: tok, Status: protocol.SlotSucceeded}))
	}
	left := func() []protocol.SlotResult {
		return []protocol.SlotResult{{Token: 1500, Status: protocol.SlotSucceeded}}
	}
	acked := make([]int64, 0, 1499)
	for tok := int64(1); tok < 1500; tok++ {
		acked = append(acked, tok)
	}
	require.NoError(t, j.ack(acked, left))
	require.NoError(t, j.close())
	info, err := os.Stat(filepath.Join(dir, journalFile))
	require.NoError(t, err)
	require.Less(t, info.Size(), int64(200), "compacted to the one unacknowledged result")

	// A crash mid-write leaves a torn last line: everything before it counts.
	f, err := os.OpenFile(filepath.Join(dir, journalFile), os.O_APPEND|os.O_WRONLY, 0o600)
	require.NoError(t, err)
	_, err = f.WriteString(`{"r":{"token":16`)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	j, pending, err = openJournal(dir, 1000)
	require.NoError(t, err)
	require.NoError(t, j.close())
	require.Len(t, pending, 1)
	require.Equal(t, int64(1500), pending[0].Token)
}
