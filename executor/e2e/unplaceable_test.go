package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/deploy/dev/testenv"
)

// TestUnplaceableRunFailsWithItsReason (issue 16, item 2), with real
// processes: a run of a job whose handler no online executor of its app
// offers waits with the reason on the run, raises a run_unplaceable alarm,
// and fails with the reason at the unplaceable deadline (5 s here); a run
// of the same app whose handler exists is not held up by it.
func TestUnplaceableRunFailsWithItsReason(t *testing.T) {
	c := newClusterWith(t, "--unplaceable-timeout", "5s")
	ex := c.startExecutor("billing", 2)
	c.WaitOnline(ex)

	enabled := false
	var job struct {
		ID       int64    `json:"id"`
		Warnings []string `json:"warnings"`
	}
	code, err := c.API.Call(context.Background(), http.MethodPost, "/api/v1/jobs", map[string]any{
		"app": "billing", "name": "settle", "handler": "settle.v9", "cron": "0 0 1 1 *", "slots": 2, "enabled": &enabled,
	}, &job)
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, code)
	require.NotEmpty(t, job.Warnings, "saving warns that no executor offers settle.v9")
	stuck := c.trigger(job.ID)

	fine := c.trigger(c.createJob("billing", "fine", 2, "records=20"))
	r, atts := c.waitRunEnded(fine.ID)
	checkRunSucceeded(t, r, atts, 2, 20)

	testenv.WaitFor(t, runDeadline, func() (bool, error) {
		r, _, err := c.Run(stuck.ID)
		if err != nil {
			return false, err
		}
		if r.Status == "pending" && r.Error != "" && !strings.HasPrefix(r.Error, "waiting: ") {
			return false, fmt.Errorf("a pending run's reason starts with 'waiting: ', got %q", r.Error)
		}
		return r.Status == "failed", fmt.Errorf("run is %s: %q", r.Status, r.Error)
	}, "the unplaceable run did not fail at its deadline")
	r, atts, err = c.Run(stuck.ID)
	require.NoError(t, err)
	require.Contains(t, r.Error, "no online executor of app billing has handler settle.v9")
	require.Contains(t, r.Error, "unplaceable timeout")
	require.Empty(t, atts, "it never started a slot")

	// Alarms are listed as groups; the group's members hold the messages.
	var groups struct {
		Groups []struct {
			ID int64 `json:"id"`
		} `json:"groups"`
	}
	require.NoError(t, c.API.Do(context.Background(), http.MethodGet, "/api/v1/alarms?kind=run_unplaceable", nil, &groups))
	var alarms struct {
		Alarms []struct {
			Kind    string `json:"kind"`
			Message string `json:"message"`
		} `json:"alarms"`
	}
	found := false
	for _, g := range groups.Groups {
		require.NoError(t, c.API.Do(context.Background(), http.MethodGet, fmt.Sprintf("/api/v1/alarm-groups/%d/alarms", g.ID), nil, &alarms))
		for _, a := range alarms.Alarms {
			found = found || a.Kind == "run_unplaceable" && strings.Contains(a.Message, "settle.v9")
		}
	}
	require.True(t, found, "a run_unplaceable alarm names the handler: groups %+v, last members %+v", groups.Groups, alarms.Alarms)
}
