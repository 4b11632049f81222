package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/workflow"
	"github.com/shardjob/shardjob/sdk/names"
)

// FileWorkflow is one workflow of a jobs file (an item with "kind:
// workflow"): the API's workflow definition (apitypes.WorkflowDef) and the
// line it starts at. A workflow is identified by App and Name; omitted
// fields take the server's defaults, so applying a file twice changes
// nothing.
type FileWorkflow struct {
	apitypes.WorkflowDef

	line int
}

// Line is the line of the file the workflow starts at (0 when not from a
// file).
func (d FileWorkflow) Line() int { return d.line }

// workflowFields lists the fields of a workflow in a file, for the message
// about an unknown one.
var workflowFields = func() string {
	t := reflect.TypeFor[apitypes.WorkflowDef]()
	out := []string{"kind"}
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		out = append(out, name)
	}
	return strings.Join(out, ", ")
}()

func workflowYAMLError(file string, err error) error {
	return yamlErrorHint(file, err, " (a workflow has the fields "+workflowFields+
		"; a node key, job {id | app, name}, handler, params, slots, start; an edge from, to)")
}

func checkWorkflowDef(d apitypes.WorkflowDef) error {
	var missing []string
	if strings.TrimSpace(d.App) == "" {
		missing = append(missing, "app")
	}
	if strings.TrimSpace(d.Name) == "" {
		missing = append(missing, "name")
	}
	if len(d.Nodes) == 0 {
		missing = append(missing, "nodes")
	}
	if len(missing) > 0 {
		return fmt.Errorf("workflow %q is missing %s", d.Key(), strings.Join(missing, ", "))
	}
	for _, f := range []struct{ name, v string }{{"app", d.App}, {"name", d.Name}} {
		if !names.Valid(f.v) {
			return fmt.Errorf("workflow %s %q: %s", f.name, f.v, names.Rule)
		}
	}
	return nil
}

// WorkflowChange is what apply does with one workflow of the file.
type WorkflowChange struct {
	Action  Action
	Want    FileWorkflow       // normalised definition from the file
	Current *apitypes.Workflow // the workflow on the server, with its nodes; nil for Create
	Fields  []FieldChange
}

// DiffWorkflow returns what differs between two workflow definitions
// (normalised first): each scalar field that changed, then the nodes (their
// count, and which were added, removed or changed, by key) and the edges
// (added and removed). App and name identify the workflow and are not
// compared.
func DiffWorkflow(have, want apitypes.WorkflowDef) []FieldChange {
	have, want = have.WithDefaults(), want.WithDefaults()
	var out []FieldChange
	for _, f := range []struct{ name, old, new string }{
		{"description", strconv.Quote(have.Description), strconv.Quote(want.Description)},
		{"cron", strconv.Quote(have.Cron), strconv.Quote(want.Cron)},
		{"time_zone", strconv.Quote(have.TimeZone), strconv.Quote(want.TimeZone)},
		{"calendar", strconv.Quote(have.Calendar), strconv.Quote(want.Calendar)},
		{"calendar_rule", strconv.Quote(have.CalendarRule), strconv.Quote(want.CalendarRule)},
		{"calendar_shift", strconv.Quote(have.CalendarShift), strconv.Quote(want.CalendarShift)},
		{"enabled", strconv.FormatBool(*have.Enabled), strconv.FormatBool(*want.Enabled)},
		{"failure_policy", strconv.Quote(have.FailurePolicy), strconv.Quote(want.FailurePolicy)},
	} {
		if f.old != f.new {
			out = append(out, FieldChange{Field: f.name, Old: f.old, New: f.new})
		}
	}
	old := map[string]apitypes.WorkflowNode{}
	for _, n := range have.Nodes {
		old[n.Key] = n
	}
	var nodes []string
	kept := map[string]bool{}
	for _, n := range want.Nodes {
		o, ok := old[n.Key]
		kept[n.Key] = ok
		switch {
		case !ok:
			nodes = append(nodes, "+"+n.Key)
		case !reflect.DeepEqual(o, n):
			nodes = append(nodes, "~"+n.Key)
		}
	}
	for _, n := range have.Nodes {
		if !kept[n.Key] {
			nodes = append(nodes, "-"+n.Key)
		}
	}
	if len(nodes) == 0 && !sameOrder(have.Nodes, want.Nodes) {
		nodes = append(nodes, "reordered")
	}
	if len(nodes) > 0 {
		out = append(out, FieldChange{Field: "nodes", Old: strconv.Itoa(len(have.Nodes)),
			New: fmt.Sprintf("%d (%s)", len(want.Nodes), strings.Join(nodes, " "))})
	}
	edge := func(e apitypes.WorkflowEdge) string { return e.From + "→" + e.To }
	had := map[string]bool{}
	for _, e := range have.Edges {
		had[edge(e)] = true
	}
	var edges []string
	wanted := map[string]bool{}
	for _, e := range want.Edges {
		wanted[edge(e)] = true
		if !had[edge(e)] {
			edges = append(edges, "+"+edge(e))
		}
	}
	for _, e := range have.Edges {
		if !wanted[edge(e)] {
			edges = append(edges, "-"+edge(e))
		}
	}
	if len(edges) == 0 && !reflect.DeepEqual(have.Edges, want.Edges) {
		edges = append(edges, "reordered")
	}
	if len(edges) > 0 {
		out = append(out, FieldChange{Field: "edges", Old: strconv.Itoa(len(have.Edges)),
			New: fmt.Sprintf("%d (%s)", len(want.Edges), strings.Join(edges, " "))})
	}
	return out
}

func sameOrder(a, b []apitypes.WorkflowNode) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Key != b[i].Key {
			return false
		}
	}
	return true
}

// listWorkflows reads every workflow the token may see (without nodes),
// page by page.
func listWorkflows(ctx context.Context, cl *Client) ([]json.RawMessage, []apitypes.Workflow, error) {
	const page = 500
	var raws []json.RawMessage
	var out []apitypes.Workflow
	var after int64
	for {
		var body struct {
			Workflows []json.RawMessage `json:"workflows"`
		}
		if err := cl.Do(ctx, http.MethodGet, "/api/v1/workflows?limit="+strconv.Itoa(page)+"&after="+strconv.FormatInt(after, 10), nil, &body); err != nil {
			return nil, nil, err
		}
		for _, raw := range body.Workflows {
			var w apitypes.Workflow
			if err := json.Unmarshal(raw, &w); err != nil {
				return nil, nil, fmt.Errorf("decode workflow: %w", err)
			}
			raws, out, after = append(raws, raw), append(out, w), w.ID
		}
		if len(body.Workflows) < page {
			return raws, out, nil
		}
	}
}

// planWorkflows compares the workflows of a file with the server's, and
// checks each graph here (admin/workflow.Validate: a cycle, an unknown
// edge end, the limits) so that a wrong one stops apply before any change.
// It returns the plan and the problems, "file:line: workflow app/name:
// fields".
func planWorkflows(ctx context.Context, cl *Client, file string, want []FileWorkflow) ([]WorkflowChange, []string, error) {
	if len(want) == 0 {
		return nil, nil, nil
	}
	var problems []string
	for _, w := range want {
		if _, err := workflow.Validate(workflow.FromWire(w.WorkflowDef)); err != nil {
			var fe workflow.FieldErrors
			if !errors.As(err, &fe) {
				return nil, nil, err
			}
			problems = append(problems, fmt.Sprintf("%s:%d: workflow %s: %s", file, w.Line(), w.Key(), fieldProblems(&APIError{Fields: fe})))
		}
	}
	_, have, err := listWorkflows(ctx, cl)
	if err != nil {
		return nil, nil, err
	}
	ids := map[string]int64{}
	for _, h := range have {
		ids[h.Key()] = h.ID
	}
	plan := make([]WorkflowChange, 0, len(want))
	for _, w := range want {
		ch := WorkflowChange{Action: Create, Want: w}
		ch.Want.WorkflowDef = w.WithDefaults()
		if id, ok := ids[w.Key()]; ok {
			var cur apitypes.Workflow
			if err := cl.Do(ctx, http.MethodGet, "/api/v1/workflows/"+strconv.FormatInt(id, 10), nil, &cur); err != nil {
				return nil, nil, err
			}
			ch.Current = &cur
			ch.Fields = DiffWorkflow(cur.WorkflowDef, w.WorkflowDef)
			ch.Action = Unchanged
			if len(ch.Fields) > 0 {
				ch.Action = Update
			}
		}
		plan = append(plan, ch)
	}
	return plan, problems, nil
}

func printWorkflowPlan(w io.Writer, plan []WorkflowChange) {
	for _, c := range plan {
		switch c.Action {
		case Create:
			fmt.Fprintf(w, "+ create workflow %s (%d nodes)\n", c.Want.Key(), len(c.Want.Nodes))
		case Update:
			fmt.Fprintf(w, "~ update workflow %s (id %d)\n", c.Want.Key(), c.Current.ID)
			for _, f := range c.Fields {
				fmt.Fprintf(w, "    %s: %s -> %s\n", f.Field, f.Old, f.New)
			}
		default:
			fmt.Fprintf(w, "= unchanged workflow %s (id %d)\n", c.Want.Key(), c.Current.ID)
		}
	}
}

// applyWorkflow carries out one change; it returns the workflow saved
// (nil when unchanged).
func applyWorkflow(ctx context.Context, cl *Client, c WorkflowChange) (*apitypes.Workflow, error) {
	spec := apitypes.WorkflowSpec{WorkflowDef: c.Want.WorkflowDef}
	var got apitypes.Workflow
	switch c.Action {
	case Create:
		if err := cl.Do(ctx, http.MethodPost, "/api/v1/workflows", spec, &got); err != nil {
			return nil, err
		}
	case Update:
		spec.Version = c.Current.Version
		err := cl.Do(ctx, http.MethodPut, "/api/v1/workflows/"+strconv.FormatInt(c.Current.ID, 10), spec, &got)
		var ae *APIError
		if errors.As(err, &ae) && ae.Status == http.StatusConflict {
			return nil, fmt.Errorf("the workflow changed on the server after it was read (version %d); run apply again to see the new difference: %w", c.Current.Version, err)
		}
		if err != nil {
			return nil, err
		}
	default:
		return nil, nil
	}
	return &got, nil
}

// resolveWorkflow turns a workflow id or app/name into an id.
func resolveWorkflow(ctx context.Context, cl *Client, ref string) (int64, error) {
	if id, err := strconv.ParseInt(ref, 10, 64); err == nil && id > 0 {
		return id, nil
	}
	if !strings.Contains(ref, "/") {
		return 0, usagef("workflow %q: give a workflow id or app/name", ref)
	}
	_, all, err := listWorkflows(ctx, cl)
	if err != nil {
		return 0, err
	}
	for _, w := range all {
		if w.Key() == ref {
			return w.ID, nil
		}
	}
	return 0, &APIError{Method: http.MethodGet, Path: "/api/v1/workflows", Status: http.StatusNotFound, Msg: "workflow " + ref + " does not exist"}
}

// getWorkflows prints the workflows (get workflows).
func getWorkflows(ctx context.Context, cl *Client, out io.Writer, asJSON bool) error {
	raws, all, err := listWorkflows(ctx, cl)
	if err != nil {
		return err
	}
	if asJSON {
		return printJSON(out, nonNil(raws))
	}
	var rows [][]string
	for _, w := range all {
		cron := w.Cron
		if cron == "" {
			cron = "-"
		}
		rows = append(rows, []string{strconv.FormatInt(w.ID, 10), w.App, w.Name, cron, w.TimeZone, strconv.Itoa(w.NodeCount),
			w.FailurePolicy, w.State, strconv.FormatInt(w.Version, 10), timeCell(w.NextFireAt)})
	}
	return table(out, []string{"ID", "APP", "NAME", "CRON", "ZONE", "NODES", "ON FAILURE", "STATE", "VERSION", "NEXT FIRE (UTC)"}, rows)
}

// cmdDelete runs "delete workflow REF".
func cmdDelete(ctx context.Context, args []string, env Env, c conn) error {
	fs := newFlagSet("delete", env, &c)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 || (pos[0] != "workflow" && pos[0] != "workflows") {
		return usagef("delete: expected \"delete workflow WORKFLOW\" (an id or app/name)")
	}
	cl, err := c.client(env)
	if err != nil {
		return err
	}
	id, err := resolveWorkflow(ctx, cl, pos[1])
	if err != nil {
		return err
	}
	if err := cl.Do(ctx, http.MethodDelete, "/api/v1/workflows/"+strconv.FormatInt(id, 10), nil, nil); err != nil {
		return err
	}
	_, err = fmt.Fprintf(env.Stdout, "workflow %s (id %d) deleted\n", pos[1], id)
	return err
}
