package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/shardjob/shardjob/admin/apitypes"
)

// invalidJobsError lists the jobs of a file that the admin refused as
// invalid, and the workflows whose graph is wrong (exit 2); nothing was
// changed.
type invalidJobsError struct{ problems []string }

func (e *invalidJobsError) Error() string {
	return fmt.Sprintf("%d definition(s) are invalid; nothing was changed:\n  %s",
		len(e.problems), strings.Join(e.problems, "\n  "))
}

func cmdApply(ctx context.Context, args []string, env Env, c conn) error {
	fs := newFlagSet("apply", env, &c)
	file := fs.String("f", "", "jobs file (YAML list of jobs and workflows); - reads stdin")
	dryRun := fs.Bool("dry-run", false, "print what would change and change nothing")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("apply: unexpected arguments %v (the file goes after -f)", pos)
	}
	if *file == "" {
		return usagef("apply: -f FILE is required")
	}
	var data []byte
	if *file == "-" {
		data, err = io.ReadAll(io.LimitReader(env.Stdin, MaxJobsFileBytes+1))
	} else {
		data, err = os.ReadFile(*file)
	}
	if err != nil {
		return fmt.Errorf("read jobs file: %w", err)
	}
	name := *file
	if name == "-" {
		name = "<stdin>"
	}
	f, err := LoadFile(name, data)
	if err != nil {
		return err
	}
	cl, err := c.client(env)
	if err != nil {
		return err
	}
	return ApplyFile(ctx, cl, name, f, *dryRun, env.Stdout)
}

// Apply brings the jobs of a file to the admin (ApplyFile with jobs only).
func Apply(ctx context.Context, cl *Client, file string, defs []FileJob, dryRun bool, out io.Writer) error {
	return ApplyFile(ctx, cl, file, File{Jobs: defs}, dryRun, out)
}

// ApplyFile brings the jobs and workflows of a file to the admin: it reads
// the server's, prints the plan, has the admin validate every job to create
// or update and checks every workflow's graph (any invalid one stops
// everything before a change), and unless dryRun creates and updates them:
// the jobs in file order, then the workflows (whose nodes may name the
// jobs just created). An update carries the version it read, so a job or
// workflow changed by someone else in between is refused (409) rather than
// overwritten.
func ApplyFile(ctx context.Context, cl *Client, file string, f File, dryRun bool, out io.Writer) error {
	var plan Plan
	if len(f.Jobs) > 0 || (len(f.Workflows) == 0 && len(f.Apps) == 0) {
		_, have, err := listJobs(ctx, cl, url.Values{"sort": {"id"}})
		if err != nil {
			return err
		}
		plan = MakePlan(f.Jobs, have)
	}
	var problems []string
	warnings := map[string][]string{} // by job key: what the admin would say on saving it
	for _, ch := range plan {
		if ch.Action == Unchanged {
			continue
		}
		var valid struct {
			Warnings []string `json:"warnings"`
		}
		err := cl.Do(ctx, http.MethodPost, "/api/v1/jobs/validate", ch.requestBody(), &valid)
		var ae *APIError
		if errors.As(err, &ae) && ae.Status == http.StatusBadRequest {
			problems = append(problems, fmt.Sprintf("%s:%d: job %s: %s", file, ch.Want.Line(), ch.Want.Key(), fieldProblems(ae)))
			continue
		}
		if err != nil {
			return err
		}
		warnings[ch.Want.Key()] = valid.Warnings
	}
	wplan, wproblems, err := planWorkflows(ctx, cl, file, f.Workflows)
	if err != nil {
		return err
	}
	aplan, err := planApps(ctx, cl, f.Apps)
	if err != nil {
		return err
	}
	problems = append(problems, wproblems...)
	if len(problems) > 0 {
		return &invalidJobsError{problems: problems}
	}
	printAppPlan(out, aplan)
	plan.printChanges(out)
	printWorkflowPlan(out, wplan)
	cr, up, un := plan.Counts()
	for _, ch := range aplan {
		switch ch.Action {
		case Create:
			cr++
		case Update:
			up++
		default:
			un++
		}
	}
	for _, ch := range wplan {
		switch ch.Action {
		case Create:
			cr++
		case Update:
			up++
		default:
			un++
		}
	}
	fmt.Fprintf(out, "plan: %d to create, %d to update, %d unchanged\n", cr, up, un)
	if dryRun {
		// The warnings apply would print after saving (no executor of the
		// app has shown the handler yet, …), from the validation.
		for _, ch := range plan {
			printJobWarnings(out, ch.Want.Key(), warnings[ch.Want.Key()])
		}
		fmt.Fprintln(out, "dry run: nothing was changed")
		return nil
	}
	created, updated := 0, 0
	// The apps first: the jobs and workflows that follow land in apps that
	// are described already.
	for _, ch := range aplan {
		got, err := applyApp(ctx, cl, ch)
		if err != nil {
			return fmt.Errorf("%s app %s (after %d created, %d updated): %w", ch.Action, ch.Want.Key(), created, updated, err)
		}
		switch ch.Action {
		case Create:
			created++
			fmt.Fprintf(out, "created app %s\n", got.Name)
		case Update:
			updated++
			fmt.Fprintf(out, "updated app %s (version %d)\n", got.Name, got.Version)
		}
	}
	for _, ch := range plan {
		var got apitypes.Job
		switch ch.Action {
		case Create:
			if err := cl.Do(ctx, http.MethodPost, "/api/v1/jobs", ch.requestBody(), &got); err != nil {
				return fmt.Errorf("create %s (after %d created, %d updated): %w", ch.Want.Key(), created, updated, err)
			}
			created++
			fmt.Fprintf(out, "created %s (id %d)\n", got.Key(), got.ID)
			printWarnings(out, got)
		case Update:
			err := cl.Do(ctx, http.MethodPut, "/api/v1/jobs/"+strconv.FormatInt(ch.Current.ID, 10), ch.requestBody(), &got)
			var ae *APIError
			if errors.As(err, &ae) && ae.Status == http.StatusConflict {
				return fmt.Errorf("update %s (after %d created, %d updated): the job changed on the server after it was read (version %d); run apply again to see the new difference: %w",
					ch.Want.Key(), created, updated, ch.Current.Version, err)
			}
			if err != nil {
				return fmt.Errorf("update %s (after %d created, %d updated): %w", ch.Want.Key(), created, updated, err)
			}
			updated++
			fmt.Fprintf(out, "updated %s (id %d, version %d)\n", got.Key(), got.ID, got.Version)
			printWarnings(out, got)
		}
	}
	for _, ch := range wplan {
		got, err := applyWorkflow(ctx, cl, ch)
		if err != nil {
			return fmt.Errorf("%s workflow %s (after %d created, %d updated): %w", ch.Action, ch.Want.Key(), created, updated, err)
		}
		switch ch.Action {
		case Create:
			created++
			fmt.Fprintf(out, "created workflow %s (id %d, %d nodes)\n", got.Key(), got.ID, got.NodeCount)
		case Update:
			updated++
			fmt.Fprintf(out, "updated workflow %s (id %d, version %d)\n", got.Key(), got.ID, got.Version)
		}
	}
	fmt.Fprintf(out, "applied: %d created, %d updated, %d unchanged\n", created, updated, un)
	return nil
}

func fieldProblems(ae *APIError) string {
	if len(ae.Fields) == 0 {
		return ae.Msg
	}
	keys := make([]string, 0, len(ae.Fields))
	for k := range ae.Fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + ": " + ae.Fields[k]
	}
	return strings.Join(parts, "; ")
}

// printWarnings prints what the admin said about a job it saved.
func printWarnings(out io.Writer, j apitypes.Job) {
	printJobWarnings(out, j.Key(), j.Warnings)
}

// printJobWarnings prints the warnings of the job key, one a line.
func printJobWarnings(out io.Writer, key string, warnings []string) {
	for _, w := range warnings {
		fmt.Fprintf(out, "  warning: %s: %s\n", key, w)
	}
}
