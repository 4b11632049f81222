package cli

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"text/tabwriter"

	"github.com/shardjob/shardjob/admin/apitypes"
)

// cmdBackfill creates (or, with --dry-run, lists) the runs of a job or a
// workflow for every business date of a range: POST
// /api/v1/jobs/{id}/backfill or /api/v1/workflows/{id}/backfill
// (docs/workflows.md, "Backfill" and "Backfill of a plain job"). It prints
// each date in the order its run starts, with what the backfill does with
// it.
func cmdBackfill(ctx context.Context, args []string, env Env, c conn) error {
	fs := newFlagSet("backfill", env, &c)
	from := fs.String("from", "", "first business date, YYYY-MM-DD (required)")
	to := fs.String("to", "", "last business date, YYYY-MM-DD (required; at most 366 dates)")
	parallel := fs.Int("parallel", 1, "runs of the backfill running at once (1-20)")
	newest := fs.Bool("newest-first", false, "start with the newest date (default: the oldest)")
	missing := fs.Bool("only-missing", false, "only the dates without a succeeded run")
	dry := fs.Bool("dry-run", false, "list what would be created, create nothing")
	params := fs.String("params", "", "a JSON object replacing the params of every run (default: the job's or the workflow's)")
	output := outputFlag(fs)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 || (pos[0] != "job" && pos[0] != "workflow") {
		return usagef("backfill: want 'job JOB' or 'workflow WORKFLOW' (an id or app/name), then --from and --to")
	}
	if *from == "" || *to == "" {
		return usagef("backfill: --from and --to are required (YYYY-MM-DD)")
	}
	if err := checkOutput(*output); err != nil {
		return err
	}
	cl, err := c.client(env)
	if err != nil {
		return err
	}
	kind, ref := pos[0], pos[1]
	resolve, path := resolveJob, "/api/v1/jobs/"
	if kind == "workflow" {
		resolve, path = resolveWorkflow, "/api/v1/workflows/"
	}
	id, err := resolve(ctx, cl, ref)
	if err != nil {
		return err
	}
	req := apitypes.JobBackfill{From: *from, To: *to, Parallel: *parallel, NewestFirst: *newest, OnlyMissing: *missing, DryRun: *dry, Params: *params}
	// The job's answer has each date's run instant; a workflow's has not
	// (its runs are keyed by their date).
	var out apitypes.JobBackfillPlan
	if err := cl.Do(ctx, http.MethodPost, path+strconv.FormatInt(id, 10)+"/backfill", req, &out); err != nil {
		return err
	}
	if *output == "json" {
		return printJSON(env.Stdout, out)
	}
	w := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	if kind == "job" {
		fmt.Fprintln(w, "DATE\tACTION\tRUN\tSCHEDULED AT")
	} else {
		fmt.Fprintln(w, "DATE\tACTION\tRUN")
	}
	for _, d := range out.Dates {
		run := "-"
		if d.RunID != 0 {
			run = strconv.FormatInt(d.RunID, 10)
		}
		if kind == "job" {
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", d.Date, d.Action, run, d.ScheduledAt.UTC().Format("2006-01-02T15:04:05Z"))
		} else {
			fmt.Fprintf(w, "%s\t%s\t%s\n", d.Date, d.Action, run)
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	switch {
	case out.DryRun:
		fmt.Fprintf(env.Stdout, "dry run: %d of %d dates would get a run; nothing was created\n", countCreate(out.Dates), len(out.Dates))
	default:
		fmt.Fprintf(env.Stdout, "backfill %d of %s %s: %d runs created of %d dates, at most %d running at once\n",
			out.BackfillID, kind, ref, out.Created, len(out.Dates), *parallel)
	}
	return nil
}

// countCreate counts the dates a backfill creates a run for.
func countCreate(dates []apitypes.JobBackfillDate) int {
	n := 0
	for _, d := range dates {
		if d.Action == "create" {
			n++
		}
	}
	return n
}
