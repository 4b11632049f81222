package e2e

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	harness "github.com/shardjob/shardjob/deploy/dev/testenv/cluster"
)

// Error classes (issue 37) with real processes: an SDK handler (demo.fail)
// returns sdk.Permanent on slot 0 and a plain error on the first attempt of
// slot 1, then succeeds there. Although the job allows 3 retries, slot 0
// has exactly one attempt (class permanent) and slot 1 two (the first
// retryable, the second succeeded); the run ends with the permanent
// failure counted (partially_failed: one slot failed, one succeeded, the
// rule of docs/architecture.md, "Run states").
func TestPermanentFailureIsNotRetried(t *testing.T) {
	c := newCluster(t)
	ex := c.startExecutor("payments", 4)
	c.WaitOnline(ex)
	enabled := false
	job := c.CreateJob(apitypes.JobSpec{JobDef: apitypes.JobDef{
		App: "payments", Name: "settle", Handler: "demo.fail", Cron: "0 0 1 1 *",
		SlotCount: 2, Params: "permanent=0;slots=1;fail_attempts=1", RetryMax: 3, RetryBackoffMS: 100, Enabled: &enabled,
	}})
	run := c.trigger(job)
	r, atts := c.waitRunEnded(run.ID)

	bySlot := map[int][]apitypes.Attempt{}
	for _, a := range atts {
		bySlot[a.Slot] = append(bySlot[a.Slot], a)
	}
	require.Len(t, bySlot[0], 1, "slot 0 failed permanently: one attempt, no retry: %v", bySlot[0])
	p := bySlot[0][0]
	require.Equal(t, "failed", p.Status, harness.AttemptString(p))
	require.Equal(t, "permanent", p.ErrorClass, harness.AttemptString(p))
	require.Contains(t, p.Error, "fails permanently on purpose")

	require.Len(t, bySlot[1], 2, "slot 1 failed once (retryable), then succeeded: %v", bySlot[1])
	first, second := bySlot[1][0], bySlot[1][1]
	require.Equal(t, 1, first.Attempt)
	require.Equal(t, "failed", first.Status, harness.AttemptString(first))
	require.Equal(t, "retryable", first.ErrorClass, harness.AttemptString(first))
	require.False(t, first.Current)
	require.Equal(t, "succeeded", second.Status, harness.AttemptString(second))
	require.Empty(t, second.ErrorClass)
	require.Greater(t, second.Token, first.Token)

	require.Len(t, atts, 3, "attempt rows of the run")
	require.Equal(t, "partially_failed", r.Status, "run %d: %s", r.ID, r.Error)
	require.Equal(t, 1, r.SlotsFailed)
	require.Equal(t, 1, r.SlotsSucceeded)
}
