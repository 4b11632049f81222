package cli

import (
	"fmt"
	"io"
	"strconv"
)

// RemoteJob is a job as the admin returns it (GET /api/v1/jobs): its
// definition plus what a file does not manage.
type RemoteJob struct {
	JobDef
	ID          int64   `json:"id"`
	Version     int64   `json:"version"`
	Paused      bool    `json:"paused"`
	ChildJobIDs []int64 `json:"child_job_ids"`
	// Warnings come with the answer of a create or update (the admin saved
	// the job; e.g. no executor has shown its handler yet).
	Warnings []string `json:"warnings,omitempty"`
}

// Action of a job in a plan.
type Action string

// Actions.
const (
	Create    Action = "create"
	Update    Action = "update"
	Unchanged Action = "unchanged"
)

// FieldChange is one field that differs, in display form (values quoted
// as needed).
type FieldChange struct {
	Field, Old, New string
}

// Change is what apply does with one job of the file.
type Change struct {
	Action  Action
	Want    JobDef     // normalised definition from the file
	Current *RemoteJob // the job on the server; nil for Create
	Fields  []FieldChange
}

// Plan is the changes of one apply, in file order.
type Plan []Change

// Counts returns how many jobs are created, updated and unchanged.
func (p Plan) Counts() (create, update, unchanged int) {
	for _, c := range p {
		switch c.Action {
		case Create:
			create++
		case Update:
			update++
		default:
			unchanged++
		}
	}
	return
}

// field is one managed field: its name in files and the API, and its value
// in display form.
type field struct {
	name string
	get  func(JobDef) string
}

func str(get func(JobDef) string) func(JobDef) string {
	return func(d JobDef) string { return strconv.Quote(get(d)) }
}

func num[T int | int64](get func(JobDef) T) func(JobDef) string {
	return func(d JobDef) string { return strconv.FormatInt(int64(get(d)), 10) }
}

// fields are compared in this order (the order of a job in the docs).
var fields = []field{
	{"description", str(func(d JobDef) string { return d.Description })},
	{"handler", str(func(d JobDef) string { return d.Handler })},
	{"cron", str(func(d JobDef) string { return d.Cron })},
	{"time_zone", str(func(d JobDef) string { return d.TimeZone })},
	{"slots", num(func(d JobDef) int { return d.Slots })},
	{"slot_params", str(func(d JobDef) string { return d.SlotParams })},
	{"params", str(func(d JobDef) string { return d.Params })},
	{"misfire_policy", str(func(d JobDef) string { return d.MisfirePolicy })},
	{"misfire_threshold_ms", num(func(d JobDef) int64 { return d.MisfireThresholdMS })},
	{"max_catch_up", num(func(d JobDef) int { return d.MaxCatchUp })},
	{"overlap_policy", str(func(d JobDef) string { return d.OverlapPolicy })},
	{"timeout_ms", num(func(d JobDef) int64 { return d.TimeoutMS })},
	{"retry_max", num(func(d JobDef) int { return d.RetryMax })},
	{"retry_backoff_ms", num(func(d JobDef) int64 { return d.RetryBackoffMS })},
	{"dedup_scope", str(func(d JobDef) string { return d.DedupScope })},
	{"uncertain_policy", str(func(d JobDef) string { return d.UncertainPolicy })},
	{"record_max_attempts", num(func(d JobDef) int { return d.RecordMaxAttempts })},
	{"enabled", func(d JobDef) string { return strconv.FormatBool(d.Enabled == nil || *d.Enabled) }},
}

// Diff returns the fields in which want differs from have (both
// normalised first).
func Diff(have, want JobDef) []FieldChange {
	have, want = have.Normalize(), want.Normalize()
	var out []FieldChange
	for _, f := range fields {
		if o, n := f.get(have), f.get(want); o != n {
			out = append(out, FieldChange{Field: f.name, Old: o, New: n})
		}
	}
	return out
}

// MakePlan compares the jobs of a file with the jobs on the server. Jobs on
// the server that the file does not mention are left alone.
func MakePlan(want []JobDef, have []RemoteJob) Plan {
	byKey := make(map[string]*RemoteJob, len(have))
	for i := range have {
		byKey[have[i].Key()] = &have[i]
	}
	plan := make(Plan, 0, len(want))
	for _, w := range want {
		ch := Change{Want: w.Normalize(), Current: byKey[w.Key()]}
		switch {
		case ch.Current == nil:
			ch.Action = Create
		default:
			ch.Fields = Diff(ch.Current.JobDef, w)
			ch.Action = Unchanged
			if len(ch.Fields) > 0 {
				ch.Action = Update
			}
		}
		plan = append(plan, ch)
	}
	return plan
}

// Print writes the plan for people:
//
//   - create billing/settle
//     ~ update billing/report (id 12)
//     cron: "0 3 * * *" -> "0 4 * * *"
//     = unchanged billing/cleanup (id 13)
//     plan: 1 to create, 1 to update, 1 unchanged
func (p Plan) Print(w io.Writer) {
	for _, c := range p {
		switch c.Action {
		case Create:
			fmt.Fprintf(w, "+ create %s\n", c.Want.Key())
		case Update:
			fmt.Fprintf(w, "~ update %s (id %d)\n", c.Want.Key(), c.Current.ID)
			for _, f := range c.Fields {
				fmt.Fprintf(w, "    %s: %s -> %s\n", f.Field, f.Old, f.New)
			}
		default:
			fmt.Fprintf(w, "= unchanged %s (id %d)\n", c.Want.Key(), c.Current.ID)
		}
	}
	cr, up, un := p.Counts()
	fmt.Fprintf(w, "plan: %d to create, %d to update, %d unchanged\n", cr, up, un)
}

// spec is the body of a create or an update request (the admin's
// jobdef.Spec).
type spec struct {
	JobDef
	ChildJobIDs []int64 `json:"child_job_ids,omitempty"`
	Version     int64   `json:"version,omitempty"`
}

// requestBody returns the JSON body that carries out the change: the file's
// definition, and for an update the version read (optimistic lock) and the
// child jobs the server has.
func (c Change) requestBody() spec {
	s := spec{JobDef: c.Want}
	if c.Current != nil {
		s.Version = c.Current.Version
		s.ChildJobIDs = c.Current.ChildJobIDs
	}
	return s
}
