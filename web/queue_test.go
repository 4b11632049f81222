package web_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestQueueInBrowser: in the standalone console an admin caps the demo app
// at one running slot; a 3-slot run of a slow job holds it and a second
// run waits (as do the demo job's own firings). The Queue page shows the
// app's cap full (1 / 1), the waiting runs and the two waiting slots by
// priority, and the runs' reason.
func TestQueueInBrowser(t *testing.T) {
	t.Parallel() // beside TestConsoleInBrowser's wait for its first folded minute
	_, api, b := consoleSession(t)
	defer b.checkConsole()
	var app struct {
		Version int64 `json:"version"`
	}
	require.Equal(t, http.StatusOK, api.call(http.MethodGet, "/api/v1/apps/demo", nil, &app))
	require.Equal(t, http.StatusOK, api.call(http.MethodPatch, "/api/v1/apps/demo", map[string]any{"version": app.Version, "max_running_slots": 1}, nil))
	var slow, quick struct {
		ID int64 `json:"id"`
	}
	require.Equal(t, http.StatusCreated, api.call(http.MethodPost, "/api/v1/jobs", map[string]any{
		"app": "demo", "name": "slow", "handler": "demo.sleep", "cron": "0 3 1 1 *", "params": "ms=60000", "slots": 3, "priority": "high"}, &slow))
	require.Equal(t, http.StatusCreated, api.call(http.MethodPost, "/api/v1/jobs", map[string]any{
		"app": "demo", "name": "quick", "handler": "demo.sleep", "cron": "0 3 1 1 *", "params": "ms=10", "priority": "low"}, &quick))
	require.Equal(t, http.StatusCreated, api.call(http.MethodPost, fmt.Sprintf("/api/v1/jobs/%d/trigger", slow.ID), map[string]any{}, nil))
	require.Equal(t, http.StatusCreated, api.call(http.MethodPost, fmt.Sprintf("/api/v1/jobs/%d/trigger", quick.ID), map[string]any{}, nil))

	b.menu("queue")
	b.waitJS(30*time.Second, `(() => {
		const tr = [...document.querySelectorAll("#queue-table tbody tr")].find(tr => tr.querySelector('[data-app="demo"]'));
		return tr && tr.children[1].textContent === "1 / 1" && Number(tr.children[2].textContent) >= 1 && tr.children[3].textContent === "2" &&
			tr.querySelector('[data-priority="high"]') && tr.querySelector('[data-priority="low"]') &&
			tr.textContent.includes("waiting: app demo runs 1 of its 1 slots (max_running_slots)");
	})()`, "the demo app's full cap, its waiting run and slots by priority, and why")
	require.True(t, b.evalBool(`document.querySelector("#queue-partial").hidden`), "not partial")
	b.screenshot("q1-queue")
}
