package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/shardjob/shardjob/admin/apitypes"
)

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
	Want    FileJob       // normalised definition from the file
	Current *apitypes.Job // the job on the server; nil for Create
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

// defFields returns the JSON names of the fields of a job definition
// (apitypes.JobDef), in their order (the order of a job in the docs).
func defFields() []string {
	t := reflect.TypeFor[apitypes.JobDef]()
	out := make([]string, 0, t.NumField())
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		out = append(out, name)
	}
	return out
}

// display is the value of field i of a job definition for people: strings
// quoted, numbers in decimal, enabled as true or false (omitted: true),
// instants in RFC 3339 and UTC (omitted: null), lists of zones in
// brackets ([] for none), waits as JSON ([] for none).
func display(d apitypes.JobDef, i int) string {
	switch v := reflect.ValueOf(d).Field(i); v.Kind() {
	case reflect.String:
		return strconv.Quote(v.String())
	case reflect.Int, reflect.Int64:
		return strconv.FormatInt(v.Int(), 10)
	case reflect.Slice:
		zones, ok := v.Interface().([]string) // time_zones
		if !ok {                              // wait_for: as JSON
			if v.Len() == 0 {
				return "[]"
			}
			b, err := json.Marshal(v.Interface())
			if err != nil {
				panic(fmt.Sprintf("cli: job field %s: %v", defFields()[i], err))
			}
			return string(b)
		}
		quoted := make([]string, len(zones))
		for i, z := range zones {
			quoted[i] = strconv.Quote(z)
		}
		return "[" + strings.Join(quoted, ", ") + "]"
	case reflect.Pointer:
		if t, ok := v.Interface().(*time.Time); ok { // start_at, end_at
			if t == nil {
				return "null"
			}
			return t.UTC().Format(time.RFC3339)
		}
		return strconv.FormatBool(v.IsNil() || v.Elem().Bool())
	default:
		panic(fmt.Sprintf("cli: no display form for job field %s of kind %s", defFields()[i], v.Kind()))
	}
}

// Diff returns the fields in which want differs from have (both
// normalised first), in the order of apitypes.JobDef. App and name
// identify the job and are not compared.
func Diff(have, want apitypes.JobDef) []FieldChange {
	have, want = Normalize(have), Normalize(want)
	var out []FieldChange
	for i, name := range defFields() {
		if name == "app" || name == "name" {
			continue
		}
		if o, n := display(have, i), display(want, i); o != n {
			out = append(out, FieldChange{Field: name, Old: o, New: n})
		}
	}
	return out
}

// MakePlan compares the jobs of a file with the jobs on the server. Jobs on
// the server that the file does not mention are left alone.
func MakePlan(want []FileJob, have []apitypes.Job) Plan {
	byKey := make(map[string]*apitypes.Job, len(have))
	for i := range have {
		byKey[have[i].Key()] = &have[i]
	}
	plan := make(Plan, 0, len(want))
	for _, w := range want {
		ch := Change{Want: w, Current: byKey[w.Key()]}
		ch.Want.JobDef = Normalize(w.JobDef)
		switch {
		case ch.Current == nil:
			ch.Action = Create
		default:
			ch.Fields = Diff(ch.Current.JobDef, w.JobDef)
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
	p.printChanges(w)
	cr, up, un := p.Counts()
	fmt.Fprintf(w, "plan: %d to create, %d to update, %d unchanged\n", cr, up, un)
}

// printChanges writes one line per job (and its changed fields).
func (p Plan) printChanges(w io.Writer) {
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
}

// requestBody returns the JSON body that carries out the change: the file's
// definition, and for an update the version read (optimistic lock) and the
// child jobs the server has.
func (c Change) requestBody() apitypes.JobSpec {
	s := apitypes.JobSpec{JobDef: c.Want.JobDef}
	if c.Current != nil {
		s.Version = c.Current.Version
		s.ChildJobIDs = c.Current.ChildJobIDs
	}
	return s
}
