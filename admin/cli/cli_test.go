package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"golang.org/x/crypto/bcrypt"

	"github.com/shardjob/shardjob/admin/api"
	"github.com/shardjob/shardjob/admin/auth"
	"github.com/shardjob/shardjob/admin/cli"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/sdk/protocol"
	sqlfiles "github.com/shardjob/shardjob/sql"
)

func TestMain(m *testing.M) {
	auth.HashCost = bcrypt.MinCost // no test here measures the cost of a hash (auth.HashCost)
	goleak.VerifyTestMain(m)
}

// admin is an in-process admin API on a SQLite store with one operator and
// an API token of theirs.
type admin struct {
	t      *testing.T
	srv    *httptest.Server
	st     *store.Store
	token  string
	tokID  int64
	envMap map[string]string
}

func startAdmin(t *testing.T) *admin {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, store.Config{Driver: sqlfiles.SQLite, DSN: filepath.Join(t.TempDir(), "sj.db")})
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	_, err = st.Migrate(ctx)
	require.NoError(t, err)
	h, err := api.New(api.Config{Store: st, ExecutorSecret: protocol.NewSecret()})
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	hash, err := auth.HashPassword("password-ops")
	require.NoError(t, err)
	_, err = st.CreateUser(ctx, "ops", hash, auth.RoleOperator)
	require.NoError(t, err)

	a := &admin{t: t, srv: srv, st: st}
	var login struct{ Token string }
	a.call("POST", "/api/v1/login", "", map[string]string{"username": "ops", "password": "password-ops"}, &login, http.StatusOK)
	var created struct {
		Token  struct{ ID int64 }
		Secret string
	}
	a.call("POST", "/api/v1/tokens", login.Token, map[string]any{"name": "cli test"}, &created, http.StatusCreated)
	a.token, a.tokID = created.Secret, created.Token.ID
	a.envMap = map[string]string{"SHARDJOB_SERVER": srv.URL, "SHARDJOB_TOKEN": a.token, "HOME": t.TempDir()}
	return a
}

func (a *admin) call(method, path, token string, in, out any, want int) {
	a.t.Helper()
	c := &cli.Client{Base: a.srv.URL, Token: token, HTTP: a.srv.Client()}
	code, err := c.Call(context.Background(), method, path, in, out)
	require.NoError(a.t, err)
	require.Equal(a.t, want, code)
}

// ctl runs the CLI and returns its exit status, stdout and stderr.
func (a *admin) ctl(args ...string) (int, string, string) {
	a.t.Helper()
	var out, errb bytes.Buffer
	code := cli.Main(args, cli.Env{
		Stdout: &out, Stderr: &errb, Stdin: strings.NewReader(""), HTTP: a.srv.Client(),
		Getenv: func(k string) string { return a.envMap[k] },
	})
	return code, out.String(), errb.String()
}

func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte(text), 0o600))
	return p
}

const jobsV1 = `- app: billing
  name: settle
  handler: settle.v1
  cron: "0 3 * * *"
  time_zone: Asia/Shanghai
  slots: 4
  params: records=10
- app: billing
  name: report
  handler: report.v1
  cron: "@hourly"
`

func TestApplyIsIdempotentAndShowsTheDiff(t *testing.T) {
	a := startAdmin(t)
	dir := t.TempDir()
	file := writeFile(t, dir, "jobs.yaml", jobsV1)

	code, out, errs := a.ctl("apply", "-f", file, "--dry-run")
	require.Equal(t, cli.ExitOK, code, errs)
	require.Contains(t, out, "+ create billing/settle\n+ create billing/report\nplan: 2 to create, 0 to update, 0 unchanged\n")
	// Issue 30: the dry run shows the warnings apply would print.
	require.Contains(t, out, "  warning: billing/settle: no executor of app billing has registered yet")
	require.Contains(t, out, "  warning: billing/report: no executor of app billing has registered yet")
	require.True(t, strings.HasSuffix(out, "dry run: nothing was changed\n"), out)
	var n int
	require.NoError(t, a.st.DB().Get(&n, `SELECT COUNT(*) FROM job`))
	require.Zero(t, n, "a dry run writes nothing")

	code, out, errs = a.ctl("apply", "-f", file)
	require.Equal(t, cli.ExitOK, code, errs)
	require.Contains(t, out, "created billing/settle (id 1)\n  warning: billing/settle: no executor of app billing has registered yet",
		"saved, with the admin's warning: no executor could run it yet")
	require.Contains(t, out, "applied: 2 created, 0 updated, 0 unchanged")

	code, out, errs = a.ctl("apply", "-f", file)
	require.Equal(t, cli.ExitOK, code, errs)
	require.Equal(t, "= unchanged billing/settle (id 1)\n= unchanged billing/report (id 2)\nplan: 0 to create, 0 to update, 2 unchanged\napplied: 0 created, 0 updated, 2 unchanged\n", out)

	// Change one field: the diff names it, the update uses the version.
	writeFile(t, dir, "jobs.yaml", strings.Replace(jobsV1, "slots: 4", "slots: 8", 1))
	code, out, errs = a.ctl("apply", "-f", file)
	require.Equal(t, cli.ExitOK, code, errs)
	require.Contains(t, out, "~ update billing/settle (id 1)\n    slots: 4 -> 8\n= unchanged billing/report (id 2)\n")
	require.Contains(t, out, "updated billing/settle (id 1, version 2)")
	code, out, _ = a.ctl("apply", "-f", file, "--dry-run")
	require.Equal(t, cli.ExitOK, code)
	require.Contains(t, out, "plan: 0 to create, 0 to update, 2 unchanged")

	// An invalid job is reported with its line and nothing is written.
	bad := jobsV1 + "- app: billing\n  name: broken\n  handler: h\n  cron: \"0 25 * * *\"\n"
	writeFile(t, dir, "bad.yaml", strings.Replace(bad, "slots: 4", "slots: 5", 1))
	code, _, errs = a.ctl("apply", "-f", filepath.Join(dir, "bad.yaml"))
	require.Equal(t, cli.ExitUsage, code)
	require.Contains(t, errs, "bad.yaml:12: job billing/broken: cron:")
	require.Contains(t, errs, "nothing was changed")
	var slots int
	require.NoError(t, a.st.DB().Get(&slots, `SELECT slot_count FROM job WHERE id = 1`))
	require.Equal(t, 8, slots, "the valid change in the same file was not applied either")

	// Unknown fields are refused locally, with the line.
	writeFile(t, dir, "typo.yaml", "- app: billing\n  name: settle\n  handler: h\n  cron: '@hourly'\n  slot: 3\n")
	code, _, errs = a.ctl("apply", "-f", filepath.Join(dir, "typo.yaml"))
	require.Equal(t, cli.ExitUsage, code)
	require.Contains(t, errs, "typo.yaml:5:3: unknown field \"slot\"")
}

func TestCommandsAgainstTheAdmin(t *testing.T) {
	a := startAdmin(t)
	file := writeFile(t, t.TempDir(), "jobs.yaml", jobsV1)
	code, _, errs := a.ctl("apply", "-f", file)
	require.Equal(t, cli.ExitOK, code, errs)

	code, out, errs := a.ctl("get", "jobs")
	require.Equal(t, cli.ExitOK, code, errs)
	require.Regexp(t, `(?m)^ID\s+APP\s+NAME\s+HANDLER\s+CRON`, out)
	require.Regexp(t, `(?m)^1\s+billing\s+settle\s+settle.v1\s+0 3 \* \* \*\s+Asia/Shanghai\s+4\s+scheduled`, out)

	code, out, _ = a.ctl("get", "jobs", "-o", "json")
	require.Equal(t, cli.ExitOK, code)
	var jobs []map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &jobs))
	require.Len(t, jobs, 2)
	require.Equal(t, "settle", jobs[0]["name"])

	code, out, errs = a.ctl("pause", "billing/settle")
	require.Equal(t, cli.ExitOK, code, errs)
	require.Equal(t, "job billing/settle (id 1) paused\n", out)
	code, out, _ = a.ctl("get", "jobs")
	require.Equal(t, cli.ExitOK, code)
	require.Regexp(t, `(?m)^1\s+billing\s+settle.*paused`, out)
	// STATE says the API's word for the state (Job.state), as the console does.
	code, out, _ = a.ctl("get", "jobs", "-o", "json")
	require.Equal(t, cli.ExitOK, code)
	require.NoError(t, json.Unmarshal([]byte(out), &jobs))
	require.Equal(t, "paused", jobs[0]["state"])
	code, out, _ = a.ctl("resume", "1")
	require.Equal(t, cli.ExitOK, code)
	require.Equal(t, "job billing/settle (id 1) resumed\n", out)
	until := time.Now().Add(72 * time.Hour).UTC().Truncate(time.Second).Format(time.RFC3339)
	code, out, errs = a.ctl("pause", "1", "--until", until)
	require.Equal(t, cli.ExitOK, code, errs)
	require.Equal(t, "job billing/settle (id 1) paused until "+until+"\n", out)
	code, _, errs = a.ctl("pause", "1", "--until", "tomorrow")
	require.NotEqual(t, cli.ExitOK, code)
	require.Contains(t, errs, "until")
	code, _, _ = a.ctl("resume", "1")
	require.Equal(t, cli.ExitOK, code)

	// Flags may follow the job; --param changes one key of the job's params.
	code, out, errs = a.ctl("trigger", "billing/settle", "--param", "records=3", "--param", "batch=2")
	require.Equal(t, cli.ExitOK, code, errs)
	require.Equal(t, "run 1 of job billing/settle pending (params \"records=3;batch=2\")\n", out)

	code, out, _ = a.ctl("get", "runs", "--job", "billing/settle")
	require.Equal(t, cli.ExitOK, code)
	require.Regexp(t, `(?m)^1\s+billing/settle\s+pending\s+manual`, out)
	code, out, _ = a.ctl("get", "runs", "-o", "json", "--status", "succeeded")
	require.Equal(t, cli.ExitOK, code)
	require.Equal(t, "[]\n", out)

	code, out, errs = a.ctl("logs", "1")
	require.Equal(t, cli.ExitOK, code, errs)
	require.Contains(t, out, "run 1 of billing/settle: pending (trigger manual")
	require.Contains(t, out, "SLOT")

	code, out, _ = a.ctl("get", "executors")
	require.Equal(t, cli.ExitOK, code)
	require.Equal(t, 1, strings.Count(out, "\n"), "only the header: %s", out)

	// Not found, usage errors.
	code, _, errs = a.ctl("trigger", "billing/nope")
	require.Equal(t, cli.ExitNotFound, code)
	require.Contains(t, errs, "job billing/nope does not exist")
	code, _, _ = a.ctl("logs", "999")
	require.Equal(t, cli.ExitNotFound, code)
	code, _, errs = a.ctl("get", "things")
	require.Equal(t, cli.ExitUsage, code)
	require.Contains(t, errs, "use jobs, runs, executors, apps, calendars, workflows or dead")
	code, _, _ = a.ctl("frobnicate")
	require.Equal(t, cli.ExitUsage, code)
	code, _, _ = a.ctl("apply")
	require.Equal(t, cli.ExitUsage, code)
}

func TestRevokedTokenIsAClearError(t *testing.T) {
	a := startAdmin(t)
	code, _, errs := a.ctl("get", "jobs")
	require.Equal(t, cli.ExitOK, code, errs)
	_, _, err := a.st.RevokeAPIKey(context.Background(), a.tokID)
	require.NoError(t, err)

	code, out, errs := a.ctl("get", "jobs")
	require.Equal(t, cli.ExitAuth, code)
	require.Empty(t, out)
	require.Contains(t, errs, "401")
	require.Contains(t, errs, fmt.Sprintf("API key %s… (\"cli test\") was revoked at", a.token[:12]))

	// A token the admin never issued is refused the same way.
	a.envMap["SHARDJOB_TOKEN"] = "sjt_" + strings.Repeat("a", 52)
	code, _, errs = a.ctl("get", "jobs")
	require.Equal(t, cli.ExitAuth, code)
	require.Contains(t, errs, "unknown API key")
}

func TestConnectionSettings(t *testing.T) {
	a := startAdmin(t)
	home := a.envMap["HOME"]
	delete(a.envMap, "SHARDJOB_SERVER")
	delete(a.envMap, "SHARDJOB_TOKEN")

	code, _, errs := a.ctl("get", "jobs")
	require.Equal(t, cli.ExitUsage, code)
	require.Contains(t, errs, "no server: pass --server URL, set SHARDJOB_SERVER, or put 'server:' in "+filepath.Join(home, ".config", "shardjob", "config.yaml"))

	code, _, errs = a.ctl("--server", a.srv.URL, "get", "jobs")
	require.Equal(t, cli.ExitUsage, code)
	require.Contains(t, errs, "no token")
	code, _, errs = a.ctl("--server", a.srv.URL, "--token", a.token, "get", "jobs")
	require.Equal(t, cli.ExitOK, code, errs)
	code, _, errs = a.ctl("get", "jobs", "--server", a.srv.URL, "--token", a.token)
	require.Equal(t, cli.ExitOK, code, errs)
	code, _, errs = a.ctl("--server", "localhost:1", "--token", a.token, "get", "jobs")
	require.Equal(t, cli.ExitUsage, code)
	require.Contains(t, errs, "expected a URL")

	// The config file in the default place; flags and environment win.
	dir := filepath.Join(home, ".config", "shardjob")
	require.NoError(t, os.MkdirAll(dir, 0o700))
	writeFile(t, dir, "config.yaml", "server: "+a.srv.URL+"\ntoken: "+a.token+"\n")
	code, _, errs = a.ctl("get", "jobs")
	require.Equal(t, cli.ExitOK, code, errs)
	code, _, errs = a.ctl("--token", "sjt_"+strings.Repeat("b", 52), "get", "jobs")
	require.Equal(t, cli.ExitAuth, code, "the flag wins over the file: %s", errs)

	// A token others may read is refused, saying how to fix it.
	require.NoError(t, os.Chmod(filepath.Join(dir, "config.yaml"), 0o644))
	code, _, errs = a.ctl("get", "jobs")
	require.Equal(t, cli.ExitUsage, code)
	require.Contains(t, errs, "holds a token and others may read it (mode 0644): run 'chmod 600 "+filepath.Join(dir, "config.yaml")+"'")
	code, _, errs = a.ctl("--token", a.token, "get", "jobs")
	require.Equal(t, cli.ExitOK, code, "a token from the flag does not read the file's: %s", errs)

	writeFile(t, dir, "config.yaml", "server: "+a.srv.URL+"\ntokn: x\n")
	code, _, errs = a.ctl("get", "jobs")
	require.Equal(t, cli.ExitUsage, code)
	require.Contains(t, errs, "config.yaml:2:1: unknown field \"tokn\"")

	a.envMap["SHARDJOB_CONFIG"] = filepath.Join(home, "missing.yaml")
	code, _, errs = a.ctl("get", "jobs")
	require.Equal(t, cli.ExitFailure, code)
	require.Contains(t, errs, "missing.yaml")
}

// TestCalendarImportAndExport: the real China 2026 .ics imports (created),
// again (unchanged), edited (replaced with the revision read); it lists and
// exports as CSV that imports to the same version; a file with a recurrence
// rule is refused with its line before anything is sent.
func TestCalendarImportAndExport(t *testing.T) {
	a := startAdmin(t)
	dir := t.TempDir()
	ics, err := os.ReadFile("../calendar/testdata/cn-2026.ics")
	require.NoError(t, err)
	file := writeFile(t, dir, "cn-2026.ics", string(ics))
	code, out, errs := a.ctl("calendar", "import", "--app", "billing", file)
	require.Equal(t, cli.ExitOK, code, errs)
	require.Regexp(t, `^calendar billing/cn-2026 created \(id 1\): 33 holidays, 6 extra working days, version [0-9a-f]{32}\n$`, out)
	code, out, _ = a.ctl("calendar", "import", "--app", "billing", file)
	require.Equal(t, cli.ExitOK, code)
	require.Contains(t, out, "calendar billing/cn-2026 unchanged (id 1")

	code, out, _ = a.ctl("get", "calendars")
	require.Equal(t, cli.ExitOK, code)
	require.Regexp(t, `(?m)^1\s+billing\s+cn-2026\s+MON,TUE,WED,THU,FRI\s+33\s+6\s+[0-9a-f]{32}\s+1\s`, out)

	code, csv, errs := a.ctl("calendar", "export", "billing/cn-2026")
	require.Equal(t, cli.ExitOK, code, errs)
	require.Contains(t, csv, "2026-02-14,workday")
	csvFile := writeFile(t, dir, "copy.csv", csv+"2026-12-31,holiday,year end\n")
	code, out, errs = a.ctl("calendar", "import", "--app", "billing", "--name", "cn-2026", csvFile)
	require.Equal(t, cli.ExitOK, code, errs)
	require.Contains(t, out, "calendar billing/cn-2026 replaced (id 1, revision 2): 34 holidays, 6 extra working days")

	// Issue 30: counts in proper English; a calendar of holidays only has
	// no extra working days, and one holiday is "1 holiday".
	one := writeFile(t, dir, "one.csv", "2026-01-01,holiday,New Year\n")
	code, out, errs = a.ctl("calendar", "import", "--app", "billing", "--name", "one-day", one)
	require.Equal(t, cli.ExitOK, code, errs)
	require.Contains(t, out, "calendar billing/one-day created (id 2): 1 holiday, no extra working days, version ")

	bad := writeFile(t, dir, "bad.ics", "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nDTSTART;VALUE=DATE:20260101\r\nRRULE:FREQ=YEARLY\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n")
	code, _, errs = a.ctl("calendar", "import", "--app", "billing", bad)
	require.Equal(t, cli.ExitUsage, code)
	require.Contains(t, errs, "line 4")
	require.Contains(t, errs, "RRULE")
	code, _, errs = a.ctl("calendar", "import", file)
	require.Equal(t, cli.ExitUsage, code)
	require.Contains(t, errs, "--app APP, or --global")
	code, _, errs = a.ctl("calendar", "export", "billing/nope")
	require.Equal(t, cli.ExitNotFound, code)
	require.Contains(t, errs, "calendar billing/nope does not exist")
}

// TestApplyZones: a jobs file with several zones is applied, applied again
// unchanged, listed with its zones, and a changed list is a diff of
// time_zones.
func TestApplyZones(t *testing.T) {
	a := startAdmin(t)
	dir := t.TempDir()
	const zones = `- app: desk
  name: market-open
  handler: open.v1
  cron: "0 9 * * MON-FRI"
  time_zones: [Asia/Tokyo, Europe/London, America/New_York]
`
	file := writeFile(t, dir, "jobs.yaml", zones)
	code, out, errs := a.ctl("apply", "-f", file)
	require.Equal(t, cli.ExitOK, code, errs)
	require.Contains(t, out, "applied: 1 created")
	code, out, errs = a.ctl("apply", "-f", file)
	require.Equal(t, cli.ExitOK, code, errs)
	require.Contains(t, out, "= unchanged desk/market-open (id 1)")
	code, out, errs = a.ctl("get", "jobs")
	require.Equal(t, cli.ExitOK, code, errs)
	require.Regexp(t, `(?m)^1\s+desk\s+market-open\s+open.v1\s+0 9 \* \* MON-FRI\s+Asia/Tokyo,Europe/London,America/New_York\s`, out)

	writeFile(t, dir, "jobs.yaml", strings.Replace(zones, "America/New_York", "America/Chicago", 1))
	code, out, errs = a.ctl("apply", "-f", file)
	require.Equal(t, cli.ExitOK, code, errs)
	require.Contains(t, out, `~ update desk/market-open (id 1)`+"\n"+`    time_zones: ["Asia/Tokyo", "Europe/London", "America/New_York"] -> ["Asia/Tokyo", "Europe/London", "America/Chicago"]`)
	var stored string
	require.NoError(t, a.st.DB().Get(&stored, `SELECT time_zones FROM job WHERE id = 1`))
	require.Equal(t, "Asia/Tokyo,Europe/London,America/Chicago", stored)

	// A refused list names the job's line and the field.
	writeFile(t, dir, "bad.yaml", strings.Replace(zones, "America/New_York", "Asia/Tokyo", 1))
	code, _, errs = a.ctl("apply", "-f", filepath.Join(dir, "bad.yaml"))
	require.Equal(t, cli.ExitUsage, code)
	require.Contains(t, errs, "bad.yaml:1: job desk/market-open: time_zones: Asia/Tokyo is listed twice")
}
