package cli_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/cli"
	"github.com/shardjob/shardjob/admin/store"
)

const settlementExample = "../../docs/examples/eod-settlement.yaml"

// closeExample is the finance example of docs/workflows.md: a calendar,
// waits on two upstream loads of other apps, inline nodes.
const closeExample = "../../docs/examples/eod-close.yaml"

func (a *admin) job(app, name string) {
	a.t.Helper()
	_, err := a.st.CreateJob(context.Background(), store.Job{App: app, Name: name, Handler: "noop", CronExpr: "0 3 * * *", TimeZone: "UTC",
		MisfirePolicy: "run_once", OverlapPolicy: "allow", SlotCount: 1, Params: "{}", Enabled: true})
	require.NoError(a.t, err)
}

// TestApplyTheSettlementExample applies the workflow file of
// docs/workflows.md: created, then unchanged; an edit shows its diff and
// bumps the version; a cycle is refused before anything is sent; the
// workflow lists and deletes.
func TestApplyTheSettlementExample(t *testing.T) {
	a := startAdmin(t)
	a.job("billing", "load-trades")
	a.job("market-data", "load-fx")
	a.job("billing", "eod-report")
	example, err := os.ReadFile(settlementExample)
	require.NoError(t, err)
	dir := t.TempDir()
	file := writeFile(t, dir, "eod.yaml", string(example))

	code, out, errs := a.ctl("apply", "-f", file, "--dry-run")
	require.Equal(t, cli.ExitOK, code, errs)
	require.Equal(t, "+ create workflow billing/eod-settlement (5 nodes)\nplan: 1 to create, 0 to update, 0 unchanged\ndry run: nothing was changed\n", out)
	code, out, errs = a.ctl("get", "workflows")
	require.Equal(t, cli.ExitOK, code, errs)
	require.Equal(t, 1, strings.Count(out, "\n"), "a dry run writes nothing: %s", out)

	code, out, errs = a.ctl("apply", "-f", settlementExample)
	require.Equal(t, cli.ExitOK, code, errs)
	require.Equal(t, "+ create workflow billing/eod-settlement (5 nodes)\nplan: 1 to create, 0 to update, 0 unchanged\n"+
		"created workflow billing/eod-settlement (id 1, 5 nodes)\napplied: 1 created, 0 updated, 0 unchanged\n", out)
	code, out, errs = a.ctl("apply", "-f", file)
	require.Equal(t, cli.ExitOK, code, errs)
	require.Equal(t, "= unchanged workflow billing/eod-settlement (id 1)\nplan: 0 to create, 0 to update, 1 unchanged\napplied: 0 created, 0 updated, 1 unchanged\n", out)

	code, out, errs = a.ctl("get", "workflows")
	require.Equal(t, cli.ExitOK, code, errs)
	require.Regexp(t, `(?m)^ID\s+APP\s+NAME\s+CRON\s+ZONE\s+NODES\s+ON FAILURE\s+STATE\s+VERSION\s+NEXT FIRE \(UTC\)$`, out)
	require.Regexp(t, `(?m)^1\s+billing\s+eod-settlement\s+0 18 \* \* MON-FRI\s+Europe/London\s+5\s+continue\s+scheduled\s+1\s+20\d\d-`, out)
	code, out, _ = a.ctl("get", "workflows", "-o", "json")
	require.Equal(t, cli.ExitOK, code)
	var listed []map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &listed))
	require.Len(t, listed, 1)
	require.Equal(t, "eod-settlement", listed[0]["name"])
	require.Equal(t, "scheduled", listed[0]["state"], "a job's word for a workflow that fires, as the console shows")

	// An edit: a new node and edge, another time; the plan names them.
	edited := strings.Replace(string(example), `cron: "0 18 * * MON-FRI"`, `cron: "30 18 * * MON-FRI"`, 1) +
		"    - {from: report, to: notify}\n"
	edited = strings.Replace(edited, "  edges:\n", "    - key: notify\n      handler: notify.mail\n      start: all_done\n  edges:\n", 1)
	writeFile(t, dir, "eod.yaml", edited)
	code, out, errs = a.ctl("apply", "-f", file)
	require.Equal(t, cli.ExitOK, code, errs)
	require.Equal(t, "~ update workflow billing/eod-settlement (id 1)\n"+
		"    cron: \"0 18 * * MON-FRI\" -> \"30 18 * * MON-FRI\"\n"+
		"    nodes: 5 -> 6 (+notify)\n"+
		"    edges: 4 -> 5 (+report→notify)\n"+
		"plan: 0 to create, 1 to update, 0 unchanged\n"+
		"updated workflow billing/eod-settlement (id 1, version 2)\n"+
		"applied: 0 created, 1 updated, 0 unchanged\n", out)

	// A cycle: refused with its line and the cycle, before any change.
	cyclic := edited + "    - {from: report, to: settle}\n"
	writeFile(t, dir, "cycle.yaml", cyclic)
	code, _, errs = a.ctl("apply", "-f", filepath.Join(dir, "cycle.yaml"))
	require.Equal(t, cli.ExitUsage, code)
	require.Contains(t, errs, "cycle.yaml:9: workflow billing/eod-settlement: edges: a cycle: settle → report → settle (remove one of its edges)")
	require.Contains(t, errs, "nothing was changed")

	// A job the admin does not know: its answer names the node.
	writeFile(t, dir, "unknown.yaml", strings.Replace(edited, "name: load-trades", "name: load-bonds", 1))
	code, _, errs = a.ctl("apply", "-f", filepath.Join(dir, "unknown.yaml"))
	require.Equal(t, cli.ExitFailure, code)
	require.Contains(t, errs, "nodes[0].job: no job billing/load-bonds in the apps you may manage")

	// Disabled: STATE says so, in a job's word (not "enabled").
	writeFile(t, dir, "off.yaml", strings.Replace(edited, "  name: eod-settlement\n", "  name: eod-settlement\n  enabled: false\n", 1))
	code, out, errs = a.ctl("apply", "-f", filepath.Join(dir, "off.yaml"))
	require.Equal(t, cli.ExitOK, code, errs)
	require.Contains(t, out, "    enabled: true -> false\n")
	code, out, _ = a.ctl("get", "workflows")
	require.Equal(t, cli.ExitOK, code)
	require.Regexp(t, `(?m)^1\s+billing\s+eod-settlement\s+.*\s+continue\s+disabled\s+3\s`, out)
	require.NotContains(t, out, "enabled")

	code, out, errs = a.ctl("delete", "workflow", "billing/eod-settlement")
	require.Equal(t, cli.ExitOK, code, errs)
	require.Equal(t, "workflow billing/eod-settlement (id 1) deleted\n", out)
	code, _, errs = a.ctl("delete", "workflow", "billing/eod-settlement")
	require.Equal(t, cli.ExitNotFound, code)
	require.Contains(t, errs, "workflow billing/eod-settlement does not exist")
	code, _, _ = a.ctl("delete", "workflow", "1")
	require.Equal(t, cli.ExitNotFound, code)
	code, _, errs = a.ctl("delete", "job", "billing/load-trades")
	require.Equal(t, cli.ExitUsage, code)
	require.Contains(t, errs, `expected "delete workflow WORKFLOW"`)
}

// TestApplyJobsAndWorkflowsTogether: the jobs of a file are written first,
// so a workflow may name a job the same file creates.
func TestApplyJobsAndWorkflowsTogether(t *testing.T) {
	a := startAdmin(t)
	file := writeFile(t, t.TempDir(), "all.yaml", jobsV1+`- kind: workflow
  app: billing
  name: nightly
  nodes:
    - {key: settle, job: {name: settle}}
    - {key: report, job: {name: report}}
  edges:
    - {from: settle, to: report}
`)
	code, out, errs := a.ctl("apply", "-f", file)
	require.Equal(t, cli.ExitOK, code, errs)
	require.Contains(t, out, "+ create billing/settle\n+ create billing/report\n+ create workflow billing/nightly (2 nodes)\nplan: 3 to create, 0 to update, 0 unchanged\n")
	require.Contains(t, out, "created workflow billing/nightly (id 1, 2 nodes)\napplied: 3 created, 0 updated, 0 unchanged\n")
	code, out, errs = a.ctl("apply", "-f", file)
	require.Equal(t, cli.ExitOK, code, errs)
	require.Contains(t, out, "applied: 0 created, 0 updated, 3 unchanged\n")
}

// TestApplyAWorkflowThatWaits: a node's wait_for, wait_timeout and
// on_timeout travel from a file; applying the same file again (the
// defaults 24h and fail left out) changes nothing, a changed timeout is a
// changed node, and a wait on a job that does not exist is refused with
// its field.
func TestApplyAWorkflowThatWaits(t *testing.T) {
	a := startAdmin(t)
	a.job("billing", "load-trades")
	a.job("billing", "load-positions")
	dir := t.TempDir()
	doc := `- kind: workflow
  app: billing
  name: eod
  nodes:
    - key: load_trades
      job: {name: load-trades}
    - key: settle
      handler: settle.eod
      wait_for:
        - job: {name: load-positions}
`
	file := writeFile(t, dir, "eod.yaml", doc)
	code, out, errs := a.ctl("apply", "-f", file)
	require.Equal(t, cli.ExitOK, code, errs)
	require.Contains(t, out, "created workflow billing/eod")
	code, out, errs = a.ctl("apply", "-f", file)
	require.Equal(t, cli.ExitOK, code, errs)
	require.Contains(t, out, "= unchanged workflow billing/eod", "the defaults (24h, fail) make no difference")

	writeFile(t, dir, "eod.yaml", doc+"      wait_timeout: 2h\n      on_timeout: skip\n")
	code, out, errs = a.ctl("apply", "-f", file)
	require.Equal(t, cli.ExitOK, code, errs)
	require.Contains(t, out, "~settle")
	w, err := a.st.WorkflowByName(context.Background(), "billing", "eod")
	require.NoError(t, err)
	require.Contains(t, w.Definition, `"wait_for":[{"job":{"name":"load-positions"}}],"wait_timeout":"2h","on_timeout":"skip"`)

	// On a calendar: the rule's default (business_days_only) is what the
	// admin stores, so the file is unchanged when applied again.
	_, err = a.st.CreateCalendar(context.Background(), store.Calendar{App: "billing", Name: "uk", Week: "MON,TUE,WED,THU,FRI", Version: "v"})
	require.NoError(t, err)
	onCal := strings.Replace(doc, "  name: eod\n", "  name: eod\n  cron: \"0 18 * * *\"\n  calendar: uk\n", 1)
	writeFile(t, dir, "eod.yaml", onCal)
	code, out, errs = a.ctl("apply", "-f", file)
	require.Equal(t, cli.ExitOK, code, errs)
	require.Contains(t, out, "calendar_rule")
	code, out, errs = a.ctl("apply", "-f", file)
	require.Equal(t, cli.ExitOK, code, errs)
	require.Contains(t, out, "= unchanged workflow billing/eod")

	writeFile(t, dir, "eod.yaml", strings.Replace(doc, "load-positions", "load-nothing", 1))
	code, _, errs = a.ctl("apply", "-f", file)
	require.NotEqual(t, cli.ExitOK, code)
	require.Contains(t, errs, "nodes[1].wait_for[0]")
	require.Contains(t, errs, "no job billing/load-nothing")
}

// TestApplyTheCloseExample applies docs/examples/eod-close.yaml as the docs
// say: the calendar imported first, the upstream jobs existing in their
// apps. The workflow is created with its four nodes, its calendar and its
// waits as written, and applying the file again changes nothing.
func TestApplyTheCloseExample(t *testing.T) {
	a := startAdmin(t)
	a.job("trading", "load-trades")
	a.job("market-data", "load-fx")
	a.job("billing", "eod-report")
	dir := t.TempDir()
	cal := writeFile(t, dir, "uk-2026.csv", "date,kind,name\n2026-12-25,holiday,Christmas Day\n2026-12-28,holiday,Boxing Day (substitute)\n")
	code, out, errs := a.ctl("calendar", "import", "--app", "billing", "--name", "uk-2026", cal)
	require.Equal(t, cli.ExitOK, code, errs)
	require.Contains(t, out, "calendar billing/uk-2026 created")

	code, out, errs = a.ctl("apply", "-f", closeExample)
	require.Equal(t, cli.ExitOK, code, errs)
	require.Contains(t, out, "created workflow billing/eod-close (id 1, 4 nodes)")
	w, err := a.st.WorkflowByName(context.Background(), "billing", "eod-close")
	require.NoError(t, err)
	require.Equal(t, "uk-2026", w.Calendar)
	require.Equal(t, "business_days_only", w.CalendarRule)
	require.True(t, w.NextFireAt.Valid, "it fires on the calendar's business days")
	require.Contains(t, w.Definition, `"wait_for":[{"job":{"app":"trading","name":"load-trades"}},{"job":{"app":"market-data","name":"load-fx"}}],"wait_timeout":"2h","on_timeout":"fail"`)

	code, out, errs = a.ctl("apply", "-f", closeExample)
	require.Equal(t, cli.ExitOK, code, errs)
	require.Contains(t, out, "= unchanged workflow billing/eod-close")
}

// TestTriggerWorkflow (issue 30): `trigger workflow WORKFLOW` starts a
// workflow run with its business date and params; `trigger NAME` of a
// name that is a workflow's, not a job's, says so and how to trigger it
// (exit 4); the flags a workflow does not take are refused.
func TestTriggerWorkflow(t *testing.T) {
	a := startAdmin(t)
	a.job("billing", "load-trades")
	a.job("market-data", "load-fx")
	a.job("billing", "eod-report")
	code, _, errs := a.ctl("apply", "-f", settlementExample)
	require.Equal(t, cli.ExitOK, code, errs)

	code, out, errs := a.ctl("trigger", "workflow", "billing/eod-settlement", "--business-date", "2026-03-02", "--param", "region=eu")
	require.Equal(t, cli.ExitOK, code, errs)
	require.Equal(t, "workflow run 1 of workflow billing/eod-settlement pending (business date 2026-03-02)\n", out)
	runs, err := a.st.WorkflowRuns(context.Background(), 1, 0, 10)
	require.NoError(t, err)
	require.Len(t, runs, 1)
	require.Equal(t, "2026-03-02", runs[0].BusinessDate)
	require.JSONEq(t, `{"region":"eu"}`, runs[0].Params)

	code, _, errs = a.ctl("trigger", "billing/eod-settlement")
	require.Equal(t, cli.ExitNotFound, code)
	require.Contains(t, errs, "job billing/eod-settlement does not exist, but a workflow of that name does: "+
		"trigger it with 'shardjobctl trigger workflow billing/eod-settlement'")
	code, _, errs = a.ctl("trigger", "billing/nightly-close")
	require.Equal(t, cli.ExitNotFound, code)
	require.Contains(t, errs, "job billing/nightly-close does not exist")
	require.NotContains(t, errs, "workflow")
	code, _, errs = a.ctl("trigger", "workflow", "billing/nightly-close")
	require.Equal(t, cli.ExitNotFound, code)
	require.Contains(t, errs, "workflow billing/nightly-close does not exist")

	code, _, errs = a.ctl("trigger", "billing/load-trades", "--business-date", "2026-03-02")
	require.Equal(t, cli.ExitUsage, code)
	require.Contains(t, errs, "--business-date is for a workflow")
	code, _, errs = a.ctl("trigger", "flow", "billing/eod-settlement")
	require.Equal(t, cli.ExitUsage, code)
	require.Contains(t, errs, "want JOB, 'job JOB' or 'workflow WORKFLOW'")
	code, out, errs = a.ctl("trigger", "job", "billing/load-trades")
	require.Equal(t, cli.ExitOK, code, errs)
	require.Contains(t, out, "of job billing/load-trades pending")
}
