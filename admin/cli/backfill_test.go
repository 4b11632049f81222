package cli_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/cli"
)

// TestBackfillCommand: shardjobctl backfill job lists a dry run (each
// date's run instant: the job's 03:00 Shanghai firing, 19:00 UTC the day
// before), creates the runs, and a second time finds them (exists); a
// backwards range is a usage error naming the field, and writes nothing.
func TestBackfillCommand(t *testing.T) {
	a := startAdmin(t)
	code, _, errs := a.ctl("apply", "-f", writeFile(t, t.TempDir(), "jobs.yaml", jobsV1))
	require.Equal(t, cli.ExitOK, code, errs)
	runs := func() int {
		var n int
		require.NoError(t, a.st.DB().Get(&n, `SELECT COUNT(*) FROM job_run`))
		return n
	}

	code, out, errs := a.ctl("backfill", "job", "billing/settle", "--from", "2026-03-01", "--to", "2026-03-03", "--dry-run", "--newest-first")
	require.Equal(t, cli.ExitOK, code, errs)
	require.Regexp(t, `(?m)^DATE\s+ACTION\s+RUN\s+SCHEDULED AT\n2026-03-03\s+create\s+-\s+2026-03-02T19:00:00Z\n2026-03-02\s+create\s+-\s+2026-03-01T19:00:00Z\n2026-03-01\s+create\s+-\s+2026-02-28T19:00:00Z\n`, out)
	require.Contains(t, out, "dry run: 3 of 3 dates would get a run; nothing was created\n")
	require.Zero(t, runs(), "a dry run creates nothing")

	code, out, errs = a.ctl("backfill", "job", "billing/settle", "--from", "2026-03-01", "--to", "2026-03-03", "--parallel", "2")
	require.Equal(t, cli.ExitOK, code, errs)
	require.Regexp(t, `(?m)^2026-03-01\s+create\s+[0-9]+\s+2026-02-28T19:00:00Z$`, out)
	require.Regexp(t, `backfill [0-9]+ of job billing/settle: 3 runs created of 3 dates, at most 2 running at once\n$`, out)
	require.Equal(t, 3, runs())

	code, out, errs = a.ctl("backfill", "job", "1", "--from", "2026-03-01", "--to", "2026-03-04", "-o", "json")
	require.Equal(t, cli.ExitOK, code, errs)
	var plan apitypes.JobBackfillPlan
	require.NoError(t, json.Unmarshal([]byte(out), &plan))
	require.Equal(t, 1, plan.Created, "only 2026-03-04 is new")
	require.Len(t, plan.Dates, 4)
	for _, d := range plan.Dates[:3] {
		require.Equal(t, "exists", d.Action, d.Date)
		require.NotZero(t, d.RunID)
	}
	require.Equal(t, 4, runs())

	code, _, errs = a.ctl("backfill", "job", "billing/settle", "--from", "2026-03-05", "--to", "2026-03-01")
	require.Equal(t, cli.ExitFailure, code, "the admin refuses it (400)")
	require.Contains(t, errs, "to: ")
	code, _, errs = a.ctl("backfill", "billing/settle", "--from", "2026-03-01", "--to", "2026-03-02")
	require.Equal(t, cli.ExitUsage, code)
	require.Contains(t, errs, "'job JOB' or 'workflow WORKFLOW'")
	code, _, errs = a.ctl("backfill", "job", "billing/settle", "--to", "2026-03-02")
	require.Equal(t, cli.ExitUsage, code)
	require.Contains(t, errs, "--from and --to are required")
	require.Equal(t, 4, runs(), "refused requests create nothing")

	// A workflow: its runs are keyed by their date, no instant is listed.
	code, _, errs = a.ctl("apply", "-f", writeFile(t, t.TempDir(), "wf.yaml", `- kind: workflow
  app: billing
  name: nightly
  nodes:
    - {key: settle, job: {name: settle}}
`))
	require.Equal(t, cli.ExitOK, code, errs)
	code, out, errs = a.ctl("backfill", "workflow", "billing/nightly", "--from", "2026-03-01", "--to", "2026-03-02", "--parallel", "2", "--only-missing")
	require.Equal(t, cli.ExitOK, code, errs)
	require.Regexp(t, `(?m)^DATE\s+ACTION\s+RUN\n2026-03-01\s+create\s+[0-9]+\n2026-03-02\s+create\s+[0-9]+\n`, out)
	require.Regexp(t, `backfill [0-9]+ of workflow billing/nightly: 2 runs created of 2 dates, at most 2 running at once\n$`, out)
	var wfRuns int
	require.NoError(t, a.st.DB().Get(&wfRuns, `SELECT COUNT(*) FROM workflow_run`))
	require.Equal(t, 2, wfRuns)
}
