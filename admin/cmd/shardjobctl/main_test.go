package main_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/cli"
	"github.com/shardjob/shardjob/deploy/dev/testenv"
	harness "github.com/shardjob/shardjob/deploy/dev/testenv/cluster"
	"github.com/shardjob/shardjob/sdk/protocol"
)

func TestMain(m *testing.M) { testenv.Main(m) }

const ctlPkg = "github.com/shardjob/shardjob/admin/cmd/shardjobctl"

// ctl runs the shardjobctl binary to its end and returns its exit status
// and output.
func ctl(t *testing.T, bin string, env []string, args ...string) (int, string) {
	t.Helper()
	p := testenv.StartProcess(t, bin, args, env)
	<-p.Done() // a CLI call ends by itself; the test timeout bounds it
	return p.ExitCode(), p.Output()
}

// TestCLIAgainstTheRealAdmin runs the shardjobctl binary against the
// shardjob-admin binary on a MariaDB database of its own: apply twice (no
// change the second time), a changed field in the diff, and a revoked
// token refused with a clear message and exit status 3.
func TestCLIAgainstTheRealAdmin(t *testing.T) {
	t.Parallel()
	dsn := testenv.MySQL(t)
	ctlBin := testenv.BuildBinary(t, ctlPkg)

	admin := harness.StartAdmin(t, harness.AdminOpts{
		ID: "ctl-e2e-{port}", Args: []string{"--db-driver", "mysql", "--db-dsn", dsn},
		Secret: protocol.NewSecret(), StartTimeout: 60 * time.Second,
	})
	c := admin.Login(t)
	var tok struct {
		Token  struct{ ID int64 }
		Secret string
	}
	code, err := c.Call(context.Background(), http.MethodPost, "/api/v1/tokens", map[string]any{"name": "e2e", "role": "operator"}, &tok)
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, code)

	dir := t.TempDir()
	env := []string{"SHARDJOB_SERVER=" + c.Base, "SHARDJOB_TOKEN=" + tok.Secret, "HOME=" + dir}
	file := filepath.Join(dir, "jobs.yaml")
	jobs := `- app: e2e
  name: nightly
  handler: demo.hello
  cron: "0 3 * * *"
  time_zone: Europe/Berlin
  slots: 6
  params: records=10
- app: e2e
  name: hourly
  handler: demo.hello
  cron: "@hourly"
`
	require.NoError(t, os.WriteFile(file, []byte(jobs), 0o600))

	status, out := ctl(t, ctlBin, env, "apply", "-f", file)
	require.Equal(t, cli.ExitOK, status, out)
	require.Contains(t, out, "+ create e2e/nightly")
	require.Contains(t, out, "applied: 2 created, 0 updated, 0 unchanged")

	status, out = ctl(t, ctlBin, env, "apply", "-f", file)
	require.Equal(t, cli.ExitOK, status, out)
	require.Contains(t, out, "plan: 0 to create, 0 to update, 2 unchanged")
	require.NotContains(t, out, "~ update")

	require.NoError(t, os.WriteFile(file, []byte(strings.Replace(jobs, `"0 3 * * *"`, `"30 4 * * *"`, 1)), 0o600))
	status, out = ctl(t, ctlBin, env, "apply", "-f", file, "--dry-run")
	require.Equal(t, cli.ExitOK, status, out)
	require.Contains(t, out, "~ update e2e/nightly")
	require.Contains(t, out, `cron: "0 3 * * *" -> "30 4 * * *"`)
	require.Contains(t, out, "dry run: nothing was changed")
	status, out = ctl(t, ctlBin, env, "apply", "-f", file)
	require.Equal(t, cli.ExitOK, status, out)
	require.Contains(t, out, "version 2")

	status, out = ctl(t, ctlBin, env, "get", "jobs")
	require.Equal(t, cli.ExitOK, status, out)
	require.Regexp(t, `e2e\s+nightly\s+demo.hello\s+30 4 \* \* \*\s+Europe/Berlin\s+6\s+scheduled`, out)

	status, out = ctl(t, ctlBin, env, "trigger", "e2e/hourly", "--param", "records=2")
	require.Equal(t, cli.ExitOK, status, out)
	require.Contains(t, out, `(params "records=2")`)

	code, err = c.Call(context.Background(), http.MethodDelete, "/api/v1/tokens/"+strconv.FormatInt(tok.Token.ID, 10), nil, nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, code)
	status, out = ctl(t, ctlBin, env, "get", "jobs")
	require.Equal(t, cli.ExitAuth, status, out)
	require.Contains(t, out, `("e2e") was revoked at`)
	require.Contains(t, out, "create a new key")
}
