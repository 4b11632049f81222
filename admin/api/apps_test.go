package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/auth"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/store"
)

// TestAppsAPI: apps are objects. An admin creates one with a description
// and owners; a taken or bad name and bad owners are refused by field; an
// app's operator describes it with the version read (a stale one is 409);
// users see the apps they may see only; a job or an executor that names a
// new app brings its row; every change is audited under the app.
func TestAppsAPI(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		e.user("root", auth.RoleAdmin)
		e.user("ops", auth.RoleOperator)
		e.user("bill", auth.RoleOperator)
		e.user("vic", auth.RoleViewer)
		require.NoError(t, e.st.SetUserApps(t.Context(), e.userID("bill"), []string{"billing"}))
		root, ops, bill, vic := e.token("root"), e.token("ops"), e.token("bill"), e.token("vic")
		str := func(s string) *string { return &s }
		list := func(s ...string) *[]string { return &s }

		var billing apitypes.AppView
		require.Equal(t, http.StatusCreated, e.call("POST", "/api/v1/apps", root,
			apitypes.AppSpec{Name: "billing", Description: str("invoices and settlement"), Owners: list("bill", "finance-oncall@example.com", "bill")}, &billing))
		require.Equal(t, "billing", billing.Name)
		require.Equal(t, "invoices and settlement", billing.Description)
		require.Equal(t, []string{"bill", "finance-oncall@example.com"}, billing.Owners, "a repeated owner counts once")
		require.Equal(t, int64(1), billing.Version)
		require.Equal(t, "root", billing.CreatedBy)

		var refused errorAnswer
		require.Equal(t, http.StatusConflict, e.call("POST", "/api/v1/apps", root, apitypes.AppSpec{Name: "billing"}, &refused))
		require.Equal(t, "app billing exists already: change it with PATCH /api/v1/apps/billing", refused.Fields["name"])
		require.Equal(t, http.StatusBadRequest, e.call("POST", "/api/v1/apps", root, apitypes.AppSpec{Name: "bad name"}, &refused))
		require.Contains(t, refused.Fields, "name")
		require.Equal(t, http.StatusBadRequest, e.call("POST", "/api/v1/apps", root, apitypes.AppSpec{Name: "x", Owners: list("two words")}, &refused))
		require.Equal(t, msg.AppOwnerInvalid, refused.FieldCodes["owners"].Code)
		require.Equal(t, http.StatusBadRequest, e.call("POST", "/api/v1/apps", root, apitypes.AppSpec{Name: "x", Description: str(strings.Repeat("d", 1001))}, &refused))
		require.Contains(t, refused.Fields, "description")
		require.Equal(t, http.StatusForbidden, e.call("POST", "/api/v1/apps", ops, apitypes.AppSpec{Name: "payroll"}, &refused))
		require.Contains(t, refused.Error, "needs admin")

		// A job and an executor of new apps bring their rows.
		require.Equal(t, http.StatusCreated, e.call("POST", "/api/v1/jobs", ops, map[string]any{"app": "payroll", "name": "pay", "handler": "h", "cron": "0 3 * * *"}, nil))
		_, err := e.st.Heartbeat(t.Context(), store.ExecutorInfo{InstanceID: "ex", App: "search", Address: "http://127.0.0.1:1", Capacity: 2})
		require.NoError(t, err)
		var all struct{ Apps []apitypes.AppView }
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/apps", vic, nil, &all))
		var names []string
		for _, a := range all.Apps {
			names = append(names, a.Name)
		}
		require.Equal(t, []string{"billing", "payroll", "search"}, names)
		require.Equal(t, 1, all.Apps[1].Jobs)
		require.Equal(t, 1, all.Apps[2].ExecutorsOnline)
		require.Equal(t, []string{}, all.Apps[1].Owners, "an app nobody described yet")
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/apps", bill, nil, &all))
		require.Len(t, all.Apps, 1, "bill sees billing only")
		require.Equal(t, http.StatusNotFound, e.call("GET", "/api/v1/apps/payroll", bill, nil, nil), "another app does not exist for bill")
		require.Equal(t, http.StatusNotFound, e.call("PATCH", "/api/v1/apps/payroll", bill, apitypes.AppSpec{Version: 1, Description: str("mine")}, nil))
		require.Equal(t, http.StatusNotFound, e.call("GET", "/api/v1/apps/nope", root, nil, nil))

		// bill describes his app; a viewer may not; a stale version is 409.
		var changed apitypes.AppView
		require.Equal(t, http.StatusOK, e.call("PATCH", "/api/v1/apps/billing", bill, apitypes.AppSpec{Version: 1, Description: str("invoices, settlement, dunning")}, &changed))
		require.Equal(t, "invoices, settlement, dunning", changed.Description)
		require.Equal(t, []string{"bill", "finance-oncall@example.com"}, changed.Owners, "owners left out keep their value")
		require.Equal(t, int64(2), changed.Version)
		require.Equal(t, "bill", changed.UpdatedBy)
		require.Equal(t, http.StatusConflict, e.call("PATCH", "/api/v1/apps/billing", bill, apitypes.AppSpec{Version: 1, Owners: list()}, &refused))
		require.Contains(t, refused.Error, "version 1 is stale, it is at 2")
		require.Equal(t, http.StatusBadRequest, e.call("PATCH", "/api/v1/apps/billing", bill, apitypes.AppSpec{Owners: list()}, &refused))
		require.Contains(t, refused.Fields, "version")
		require.Equal(t, http.StatusBadRequest, e.call("PATCH", "/api/v1/apps/billing", bill, apitypes.AppSpec{Name: "other", Version: 2}, &refused))
		require.Contains(t, refused.Fields, "name")
		require.Equal(t, http.StatusForbidden, e.call("PATCH", "/api/v1/apps/billing", vic, apitypes.AppSpec{Version: 2, Owners: list()}, nil))
		var got apitypes.AppView
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/apps/billing", vic, nil, &got))
		require.Equal(t, changed.Description, got.Description)

		require.Equal(t, []string{"app.create", "app.update"}, e.auditActionsIn("billing", "app/billing"))
	})
}
