package cli_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/auth"
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

// TestApplyApps: a jobs file may describe apps (kind: app). apply plans
// them first and creates or describes them before the jobs; a second apply
// changes nothing; an edit shows its diff and carries the version read; a
// field left out keeps the server's value; an operator's file that would
// create an app is refused by the admin, naming the role it needs.
func TestApplyApps(t *testing.T) {
	a := startAdmin(t)
	hash, err := auth.HashPassword("password-root")
	require.NoError(t, err)
	_, err = a.st.CreateUser(context.Background(), "root", hash, auth.RoleAdmin)
	require.NoError(t, err)
	var login struct{ Token string }
	a.call("POST", "/api/v1/login", "", map[string]string{"username": "root", "password": "password-root"}, &login, http.StatusOK)
	var key struct{ Secret string }
	a.call("POST", "/api/v1/api-keys", login.Token, map[string]any{"name": "root cli"}, &key, http.StatusCreated)
	opsToken := a.envMap["SHARDJOB_TOKEN"]
	a.envMap["SHARDJOB_TOKEN"] = key.Secret

	dir := t.TempDir()
	v1 := `- kind: app
  name: billing
  description: invoices and settlement
  owners: [bill, finance-oncall@example.com]
- app: billing
  name: settle
  handler: settle.v1
  cron: "0 3 * * *"
`
	file := writeFile(t, dir, "apps.yaml", v1)
	code, out, errs := a.ctl("apply", "-f", file, "--dry-run")
	require.Equal(t, cli.ExitOK, code, errs)
	require.True(t, strings.HasPrefix(out, "+ create app billing\n+ create billing/settle\nplan: 2 to create, 0 to update, 0 unchanged\n"), out)
	code, out, errs = a.ctl("apply", "-f", file)
	require.Equal(t, cli.ExitOK, code, errs)
	require.Contains(t, out, "created app billing\ncreated billing/settle")
	code, out, errs = a.ctl("apply", "-f", file)
	require.Equal(t, cli.ExitOK, code, errs)
	require.Contains(t, out, "= unchanged app billing\n= unchanged billing/settle (id 1)\nplan: 0 to create, 0 to update, 2 unchanged\n")

	v2 := strings.Replace(v1, "description: invoices and settlement\n", "description: invoices, settlement and dunning\n  max_jobs: 50\n"+
		"  max_running_slots: 64\n  max_starts_per_second: 20\n  weight: 3\n  max_log_bytes_per_day: 1048576\n", 1)
	v2 = strings.Replace(v2, "  cron: \"0 3 * * *\"\n", "  cron: \"0 3 * * *\"\n  priority: high\n  max_running_slots: 8\n", 1)
	v2 = strings.Replace(v2, "  owners: [bill, finance-oncall@example.com]\n", "", 1) // left out: kept
	file = writeFile(t, dir, "apps.yaml", v2)
	code, out, errs = a.ctl("apply", "-f", file)
	require.Equal(t, cli.ExitOK, code, errs)
	require.Contains(t, out, "~ update app billing\n    description: \"invoices and settlement\" -> \"invoices, settlement and dunning\"\n    max_jobs: none -> 50\n"+
		"    max_running_slots: none -> 64\n    max_starts_per_second: none -> 20\n    max_log_bytes_per_day: none -> 1048576\n    weight: 1 -> 3\n")
	require.Contains(t, out, "updated app billing (version 2)\n")
	app, err := a.st.App(context.Background(), "billing")
	require.NoError(t, err)
	require.Equal(t, "bill,finance-oncall@example.com", app.Owners)
	require.Equal(t, int64(50), app.MaxJobs.Int64, "an admin's file sets the quota")
	require.Equal(t, int64(64), app.MaxRunningSlots.Int64)
	require.Equal(t, int64(20), app.MaxStartsPerSecond.Int64)
	require.Equal(t, int64(3), app.Weight.Int64)
	require.Equal(t, int64(1<<20), app.MaxLogBytesPerDay.Int64)
	job, err := a.st.Job(context.Background(), 1)
	require.NoError(t, err)
	require.Equal(t, 2, job.Priority, "high")
	require.Equal(t, int64(8), job.MaxRunningSlots.Int64)
	code, out, errs = a.ctl("apply", "-f", file)
	require.Equal(t, cli.ExitOK, code, errs)
	require.Contains(t, out, "plan: 0 to create, 0 to update, 2 unchanged\n", "the limits read back as written")

	a.envMap["SHARDJOB_TOKEN"] = opsToken
	file = writeFile(t, dir, "new.yaml", "- kind: app\n  name: payroll\n")
	code, _, errs = a.ctl("apply", "-f", file)
	require.NotEqual(t, cli.ExitOK, code)
	require.Contains(t, errs, "create app payroll")
	require.Contains(t, errs, "needs admin")
	_, err = a.st.App(context.Background(), "payroll")
	require.ErrorIs(t, err, store.ErrNotFound, "nothing created")
}
