package api_test

import (
	"context"
	"database/sql"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
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
		var list struct{ Groups []struct{ Latest alarmOut } }
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/alarms", ops, nil, &list))
		require.Len(t, list.Groups, 2)
		for _, g := range list.Groups {
			require.Equal(t, "ops", g.Latest.ResolvedBy, "the list shows who resolved it: %+v", g.Latest)
		}
	})
}

type bulkOut struct {
	Changed int64 `json:"changed"`
}

// TestBulkResolveOfAThousandAlarmsIsOneRequest is the report that 1,025
// alarms had to be resolved one by one: 1,000 alarms of one run (one group)
// and 20 of other runs are acknowledged by selection and resolved "all
// matching the filter", each in one request, audited once with the count;
// the rows change in the database. A user limited to another app changes
// nothing; bad requests are 400s that name the field.
func TestBulkResolveOfAThousandAlarmsIsOneRequest(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		e.user("ops", auth.RoleOperator)
		e.user("view", auth.RoleViewer)
		e.user("other-ops", auth.RoleOperator)
		e.limitTo("other-ops", "other")
		ops := e.token("ops")
		raise := func(run int64, n int, sev string) {
			alarms := make([]store.Alarm, n)
			for i := range alarms {
				alarms[i] = store.Alarm{Kind: store.AlarmSlotDead, Severity: sev, App: "billing", RunID: sql.NullInt64{Int64: run, Valid: true},
					DedupKey: "bulk:" + itoa(run) + ":" + itoa(int64(i)), Message: "slot dead"}
			}
			require.NoError(t, e.st.Tx(ctx, func(tx *store.Tx) error { return tx.RaiseAlarms(ctx, alarms...) }))
		}
		raise(1, 1000, "critical")
		for run := int64(2); run <= 21; run++ {
			raise(run, 1, "warning")
		}
		openCount := func() int {
			var n int
			require.NoError(t, e.st.DB().Get(&n, `SELECT COUNT(*) FROM alarm_event WHERE resolved_at IS NULL`))
			return n
		}
		require.Equal(t, 1020, openCount())
		var list struct {
			Groups         []apitypes.AlarmGroupView
			MatchingAlarms int64 `json:"matching_alarms"`
		}
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/alarms?open=1&severity=critical", ops, nil, &list))
		require.Len(t, list.Groups, 1)
		require.Equal(t, 1000, list.Groups[0].Count)
		require.Equal(t, int64(1000), list.MatchingAlarms)
		big := list.Groups[0].ID

		// Bad requests name the field and change nothing.
		for body, field := range map[string]string{
			`{"action":"close","group_ids":[1]}`:                                "action",
			`{"action":"resolve"}`:                                              "ids",
			`{"action":"resolve","ids":[1],"all_matching":true}`:                "all_matching",
			`{"action":"resolve","ids":[0]}`:                                    "ids[0]",
			`{"action":"ack","all_matching":true,"filter":{"severity":"loud"}}`: "filter.severity",
		} {
			var bad struct{ Fields map[string]string }
			require.Equal(t, http.StatusBadRequest, e.call("POST", "/api/v1/alarms/bulk", ops, body, &bad), body)
			require.Contains(t, bad.Fields, field, body)
		}
		require.Equal(t, http.StatusForbidden, e.call("POST", "/api/v1/alarms/bulk", e.token("view"), map[string]any{"action": "ack", "group_ids": []int64{big}}, nil))
		var out bulkOut
		require.Equal(t, http.StatusOK, e.call("POST", "/api/v1/alarms/bulk", e.token("other-ops"), map[string]any{"action": "resolve", "all_matching": true}, &out))
		require.Zero(t, out.Changed, "not of the user's apps")
		require.Equal(t, 1020, openCount())

		// Acknowledge the group by selection: one request, 1,000 rows.
		require.Equal(t, http.StatusOK, e.call("POST", "/api/v1/alarms/bulk", ops, map[string]any{"action": "ack", "group_ids": []int64{big}}, &out))
		require.Equal(t, int64(1000), out.Changed)
		var acked int
		require.NoError(t, e.st.DB().Get(&acked, `SELECT COUNT(*) FROM alarm_event WHERE acked_by = 'ops' AND resolved_at IS NULL`))
		require.Equal(t, 1000, acked)

		// Resolve all matching the filter (open, any severity): 1,020 rows.
		require.Equal(t, http.StatusOK, e.call("POST", "/api/v1/alarms/bulk", ops, map[string]any{"action": "resolve", "all_matching": true, "filter": map[string]any{"open": true}}, &out))
		require.Equal(t, int64(1020), out.Changed)
		require.Zero(t, openCount())
		require.Equal(t, []string{"alarm.bulk_resolve", "alarm.bulk_ack", "alarm.bulk_resolve"}, e.auditActions("alarms"), "audited once per request")
		var detail string
		require.NoError(t, e.st.DB().Get(&detail, `SELECT detail FROM audit_log WHERE action = 'alarm.bulk_resolve' ORDER BY id DESC LIMIT 1`))
		require.Contains(t, detail, `"count":1020`)

		var members struct {
			Alarms []alarmOut
			Total  int
			More   bool
		}
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/alarm-groups/"+itoa(big)+"/alarms?limit=300", ops, nil, &members))
		require.Len(t, members.Alarms, 300)
		require.Equal(t, 1000, members.Total)
		require.True(t, members.More)
		require.Equal(t, "ops", members.Alarms[0].ResolvedBy)
	})
}
