package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/api"
	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/auth"
	"github.com/shardjob/shardjob/admin/store"
)

// TestCloneAppsAndSlots: clone copies a definition (disabled, audited; a
// taken name is a 409 on the field), apps lists the apps with their counts,
// and a run's slots come one per slot with their current attempt.
func TestCloneAppsAndSlots(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		e.user("ops", auth.RoleOperator)
		e.user("watcher", auth.RoleViewer)
		ops, viewer := e.token("ops"), e.token("watcher")
		var job apitypes.Job
		require.Equal(t, http.StatusCreated, e.call("POST", "/api/v1/jobs", ops, validJob, &job))

		var cp apitypes.Job
		require.Equal(t, http.StatusForbidden, e.call("POST", "/api/v1/jobs/"+itoa(job.ID)+"/clone", viewer, map[string]any{"name": "copy"}, nil))
		require.Equal(t, http.StatusCreated, e.call("POST", "/api/v1/jobs/"+itoa(job.ID)+"/clone", ops, map[string]any{"name": "settle-copy"}, &cp))
		require.Equal(t, "settle-copy", cp.Name)
		require.Equal(t, job.Cron, cp.Cron)
		require.Equal(t, job.SlotCount, cp.SlotCount)
		require.Equal(t, job.TimeZone, cp.TimeZone)
		require.NotNil(t, cp.Enabled)
		require.False(t, *cp.Enabled, "a copy starts disabled")
		var conflict struct{ Fields map[string]string }
		require.Equal(t, http.StatusConflict, e.call("POST", "/api/v1/jobs/"+itoa(job.ID)+"/clone", ops, map[string]any{"name": "settle-copy"}, &conflict))
		require.Contains(t, conflict.Fields["name"], "exists")
		require.Equal(t, http.StatusBadRequest, e.call("POST", "/api/v1/jobs/"+itoa(job.ID)+"/clone", ops, map[string]any{"name": "bad name!"}, nil))
		require.Equal(t, http.StatusNotFound, e.call("POST", "/api/v1/jobs/999999/clone", ops, map[string]any{"name": "x"}, nil))
		require.Equal(t, 2, e.countJobs())

		var apps struct{ Apps []apitypes.AppView }
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/apps", viewer, nil, &apps))
		require.Len(t, apps.Apps, 1)
		require.Equal(t, "billing", apps.Apps[0].Name)
		require.Equal(t, 2, apps.Apps[0].Jobs)
		require.Equal(t, int64(1), apps.Apps[0].Version, "the app came with its first job")

		var trig struct{ Run apitypes.Run }
		require.Equal(t, http.StatusCreated, e.call("POST", "/api/v1/jobs/"+itoa(job.ID)+"/trigger", ops, nil, &trig))
		var slots struct{ Slots []apitypes.Slot }
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/runs/"+itoa(trig.Run.ID)+"/slots", viewer, nil, &slots))
		require.Empty(t, slots.Slots, "a pending run has no attempts yet (no executor)")
		require.Equal(t, http.StatusNotFound, e.call("GET", "/api/v1/runs/999999/slots", viewer, nil, nil))

		var audit struct{ Entries []map[string]any }
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/audit", ops, nil, &audit))
		require.Equal(t, "job.clone", audit.Entries[1]["action"], "newest first: trigger, then clone")

		// Runs filtered by scheduled time.
		var rl struct{ Runs []apitypes.Run }
		at := trig.Run.ScheduledAt
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/runs?from="+at.Add(-time.Minute).Format(time.RFC3339)+"&to="+at.Add(time.Minute).Format(time.RFC3339), viewer, nil, &rl))
		require.Len(t, rl.Runs, 1)
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/runs?from="+at.Add(time.Minute).Format(time.RFC3339), viewer, nil, &rl))
		require.Empty(t, rl.Runs)
		var bad struct{ Error string }
		require.Equal(t, http.StatusBadRequest, e.call("GET", "/api/v1/runs?from=yesterday", viewer, nil, &bad))
		require.Contains(t, bad.Error, "RFC 3339")
		require.Equal(t, http.StatusBadRequest, e.call("GET", "/api/v1/runs?from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z", viewer, nil, nil))
	})
}

// TestDrainExecutor: an operator drains and undrains an executor (audited);
// a viewer cannot; an unknown one is 404; the list shows the flag.
func TestDrainExecutor(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		e.user("ops", auth.RoleOperator)
		e.user("watcher", auth.RoleViewer)
		ops, viewer := e.token("ops"), e.token("watcher")
		ex, err := e.st.Heartbeat(t.Context(), store.ExecutorInfo{InstanceID: "ex-1", App: "billing", Address: "http://127.0.0.1:1", Capacity: 2})
		require.NoError(t, err)
		path := "/api/v1/executors/" + itoa(ex.ID)
		require.Equal(t, http.StatusForbidden, e.call("POST", path+"/drain", viewer, nil, nil))
		require.Equal(t, http.StatusNotFound, e.call("POST", "/api/v1/executors/999999/drain", ops, nil, nil))
		var v apitypes.ExecutorView
		for range 2 { // idempotent
			require.Equal(t, http.StatusOK, e.call("POST", path+"/drain", ops, nil, &v))
			require.True(t, v.DrainRequested)
		}
		var list struct{ Executors []apitypes.ExecutorView }
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/executors", viewer, nil, &list))
		require.Len(t, list.Executors, 1)
		require.True(t, list.Executors[0].DrainRequested)
		// A heartbeat does not undo it.
		_, err = e.st.Heartbeat(t.Context(), store.ExecutorInfo{InstanceID: "ex-1", App: "billing", Address: "http://127.0.0.1:1", Capacity: 2})
		require.NoError(t, err)
		online, err := e.st.OnlineExecutors(t.Context(), "billing", 60_000)
		require.NoError(t, err)
		require.Empty(t, online)
		require.Equal(t, http.StatusOK, e.call("POST", path+"/undrain", ops, nil, &v))
		require.False(t, v.DrainRequested)
		online, err = e.st.OnlineExecutors(t.Context(), "billing", 60_000)
		require.NoError(t, err)
		require.Len(t, online, 1)
		var audit struct{ Entries []map[string]any }
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/audit", ops, nil, &audit))
		require.Equal(t, "executor.undrain", audit.Entries[0]["action"])
		require.Equal(t, "executor.drain", audit.Entries[1]["action"])
	})
}

// TestSessionCookiesSecureBehindTLS: the session cookies get the Secure flag
// when the request came through a TLS-terminating proxy, and not over plain
// HTTP; always HttpOnly (session) and SameSite=Strict.
func TestSessionCookiesSecureBehindTLS(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		e.user("ops", auth.RoleOperator)
		login := func(proto string) []*http.Cookie {
			header := http.Header{"Content-Type": {"application/json"}}
			if proto != "" {
				header.Set("X-Forwarded-Proto", proto)
			}
			res, err := e.client("").Send(context.Background(), http.MethodPost, "/api/v1/login", strings.NewReader(`{"username":"ops","password":"password-ops"}`), header)
			require.NoError(t, err)
			require.Equal(t, http.StatusOK, res.Status)
			return res.Cookies()
		}
		for _, c := range login("") {
			require.False(t, c.Secure, "plain HTTP: %s", c.Name)
			require.Equal(t, http.SameSiteStrictMode, c.SameSite)
		}
		cookies := login("https")
		require.NotEmpty(t, cookies)
		for _, c := range cookies {
			require.True(t, c.Secure, "behind TLS: %s", c.Name)
			if c.Name == api.SessionCookie {
				require.True(t, c.HttpOnly)
			}
		}
	})
}
