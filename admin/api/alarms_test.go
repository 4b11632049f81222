package api_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/auth"
	"github.com/shardjob/shardjob/admin/store"
)

type alarmOut struct {
	ID         int64   `json:"id"`
	App        string  `json:"app"`
	AckedAt    *string `json:"acked_at"`
	AckedBy    string  `json:"acked_by"`
	ResolvedAt *string `json:"resolved_at"`
	ResolvedBy string  `json:"resolved_by"`
}

// TestAlarmsAreAcknowledgedThenResolved: an operator acknowledges an open
// alarm and resolves it, each once (a second time is 409 naming who did
// it), each audited; resolving an open alarm acknowledges it too; a viewer
// may not; a user limited to other apps cannot see (404) another app's
// alarm nor a platform alarm.
func TestAlarmsAreAcknowledgedThenResolved(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		e.user("ops", auth.RoleOperator)
		e.user("view", auth.RoleViewer)
		e.user("other-ops", auth.RoleOperator)
		e.limitTo("other-ops", "other")
		ops, view, other := e.token("ops"), e.token("view"), e.token("other-ops")
		raise := func(key, app string) int64 {
			_, err := e.st.RaiseAlarm(ctx, store.Alarm{Kind: store.AlarmRunFailed, Severity: "critical", DedupKey: key, Message: key, App: app})
			require.NoError(t, err)
			var id int64
			require.NoError(t, e.st.DB().Get(&id, e.st.DB().Rebind(`SELECT id FROM alarm_event WHERE dedup_key = ?`), key))
			return id
		}
		billing, platform := raise("a1", "billing"), raise("a2", "")
		path := func(id int64, what string) string { return "/api/v1/alarms/" + itoa(id) + "/" + what }

		require.Equal(t, http.StatusForbidden, e.call("POST", path(billing, "ack"), view, nil, nil), "a viewer may not")
		for _, id := range []int64{billing, platform} {
			var out struct{ Error string }
			require.Equal(t, http.StatusNotFound, e.call("POST", path(id, "ack"), other, nil, &out), "not of the user's apps")
			require.Contains(t, out.Error, "does not exist")
		}
		require.Equal(t, http.StatusNotFound, e.call("POST", path(999999, "resolve"), ops, nil, nil))

		var a alarmOut
		require.Equal(t, http.StatusOK, e.call("POST", path(billing, "ack"), ops, nil, &a))
		require.Equal(t, "ops", a.AckedBy)
		require.NotNil(t, a.AckedAt)
		require.Nil(t, a.ResolvedAt)
		var conflict struct{ Error string }
		require.Equal(t, http.StatusConflict, e.call("POST", path(billing, "ack"), ops, nil, &conflict))
		require.Contains(t, conflict.Error, "was acknowledged already, by ops at ")
		require.Equal(t, http.StatusOK, e.call("POST", path(billing, "resolve"), ops, nil, &a))
		require.Equal(t, "ops", a.ResolvedBy)
		require.Equal(t, http.StatusConflict, e.call("POST", path(billing, "ack"), ops, nil, &conflict))
		require.Contains(t, conflict.Error, "was resolved already, by ops")
		require.Equal(t, http.StatusConflict, e.call("POST", path(billing, "resolve"), ops, nil, &conflict))

		require.Equal(t, http.StatusOK, e.call("POST", path(platform, "resolve"), ops, nil, &a), "resolving an open alarm")
		require.Equal(t, "ops", a.AckedBy, "acknowledges it too")
		require.NotNil(t, a.AckedAt)

		require.Equal(t, []string{"alarm.ack", "alarm.resolve"}, e.auditActions("alarm/"+itoa(billing)))
		require.Equal(t, []string{"alarm.resolve"}, e.auditActions("alarm/"+itoa(platform)))
		var list struct{ Alarms []alarmOut }
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/alarms", ops, nil, &list))
		for _, l := range list.Alarms {
			require.Equal(t, "ops", l.ResolvedBy, "the list shows who resolved it: %+v", l)
		}
	})
}
