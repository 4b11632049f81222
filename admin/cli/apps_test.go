package cli_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/cli"
	"github.com/shardjob/shardjob/admin/store"
)

// TestGetApps: get apps lists the apps with their counts, owners and a
// description on one line; -o json is the API's view.
func TestGetApps(t *testing.T) {
	a := startAdmin(t)
	a.job("billing", "settle")
	a.job("billing", "report")
	_, err := a.st.Heartbeat(context.Background(), store.ExecutorInfo{InstanceID: "ex", App: "search", Address: "http://127.0.0.1:1", Capacity: 1})
	require.NoError(t, err)
	app, err := a.st.App(context.Background(), "billing")
	require.NoError(t, err)
	app.Description, app.Owners, app.UpdatedBy = "invoices\nand   settlement", "bill,finance@example.com", "ops"
	require.NoError(t, a.st.UpdateApp(context.Background(), app))

	code, out, errs := a.ctl("get", "apps")
	require.Equal(t, cli.ExitOK, code, errs)
	require.Equal(t, "NAME     JOBS  EXECUTORS ONLINE/ALL  OWNERS                    DESCRIPTION\n"+
		"billing  2     0/0                   bill,finance@example.com  invoices and settlement\n"+
		"search   0     1/1                   -                         -\n", out)

	code, out, errs = a.ctl("get", "apps", "-o", "json")
	require.Equal(t, cli.ExitOK, code, errs)
	var apps []apitypes.AppView
	require.NoError(t, json.Unmarshal([]byte(out), &apps))
	require.Len(t, apps, 2)
	require.Equal(t, []string{"bill", "finance@example.com"}, apps[0].Owners)
	require.Equal(t, int64(2), apps[0].Version)
}
