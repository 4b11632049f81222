package cli

import (
	"bytes"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/jobdef"
)

func def(app, name string) FileJob {
	return FileJob{JobDef: apitypes.JobDef{App: app, Name: name, Handler: "h.v1", Cron: "0 3 * * *"}}
}

func remote(id int64, d FileJob) apitypes.Job {
	return apitypes.Job{ID: id, JobSpec: apitypes.JobSpec{JobDef: Normalize(d.JobDef), Version: 7}}
}

func TestNormalizeMatchesTheAdminDefaults(t *testing.T) {
	// The admin stores these values for omitted fields; the plan must
	// compare a file's job with what the admin stored for it as equal.
	v, err := jobdef.Validate(apitypes.JobSpec{JobDef: apitypes.JobDef{App: "a", Name: "n", Handler: "h", Cron: "@hourly", MisfirePolicy: "Catch-Up"}}, time.Now())
	require.NoError(t, err)
	j := v.Job
	n := Normalize(apitypes.JobDef{App: "a", Name: "n", Handler: "h", Cron: "@hourly", MisfirePolicy: "Catch-Up"})
	require.Equal(t, j.TimeZone, n.TimeZone)
	require.Equal(t, j.SlotCount, n.SlotCount)
	require.Equal(t, j.MisfirePolicy, n.MisfirePolicy)
	require.Equal(t, j.OverlapPolicy, n.OverlapPolicy)
	require.Equal(t, j.MisfireMS, n.MisfireThresholdMS)
	require.Equal(t, j.MaxCatchUp, n.MaxCatchUp)
	require.Equal(t, j.RetryBackoffMS, n.RetryBackoffMS)
	require.Equal(t, j.Enabled, *n.Enabled)
}

func TestMakePlan(t *testing.T) {
	same := def("billing", "same")
	changed := def("billing", "changed")
	have := []apitypes.Job{remote(1, same), remote(2, changed), remote(3, def("billing", "not-in-file"))}
	changed.Cron = "0 4 * * *"
	changed.SlotCount = 8
	off := false
	changed.Enabled = &off
	// Spelling and explicit defaults are not changes.
	same.OverlapPolicy = "ALLOW"
	same.TimeZone = "UTC"
	same.SlotCount = 1
	plan := MakePlan([]FileJob{def("billing", "new"), same, changed}, have)
	require.Len(t, plan, 3, "jobs absent from the file are left alone")
	require.Equal(t, Create, plan[0].Action)
	require.Nil(t, plan[0].Current)
	require.Equal(t, Unchanged, plan[1].Action)
	require.Empty(t, plan[1].Fields)
	require.Equal(t, Update, plan[2].Action)
	require.Equal(t, []FieldChange{
		{"cron", `"0 3 * * *"`, `"0 4 * * *"`},
		{"slots", "1", "8"},
		{"enabled", "true", "false"},
	}, plan[2].Fields)
	cr, up, un := plan.Counts()
	require.Equal(t, [3]int{1, 1, 1}, [3]int{cr, up, un})

	var b bytes.Buffer
	plan.Print(&b)
	require.Equal(t, `+ create billing/new
= unchanged billing/same (id 1)
~ update billing/changed (id 2)
    cron: "0 3 * * *" -> "0 4 * * *"
    slots: 1 -> 8
    enabled: true -> false
plan: 1 to create, 1 to update, 1 unchanged
`, b.String())

	// An update carries the version read and keeps the server's child jobs.
	plan[2].Current.ChildJobIDs = []int64{5}
	body := plan[2].requestBody()
	require.Equal(t, int64(7), body.Version)
	require.Equal(t, []int64{5}, body.ChildJobIDs)
	require.Zero(t, plan[0].requestBody().Version)
}

func TestDiffEveryField(t *testing.T) {
	// Every field of the definition but app and name (the job's identity)
	// is compared, under its JSON name.
	base := def("a", "n").JobDef
	compared := 0
	for i, name := range defFields() {
		want := base
		switch f := reflect.ValueOf(&want).Elem().Field(i); f.Kind() {
		case reflect.String:
			f.SetString("changed")
		case reflect.Int, reflect.Int64:
			f.SetInt(7)
		case reflect.Slice:
			if f.Type() == reflect.TypeFor[[]apitypes.WorkflowWait]() { // wait_for
				f.Set(reflect.ValueOf([]apitypes.WorkflowWait{{Workflow: &apitypes.WorkflowNameRef{Name: "close"}}}))
				break
			}
			f.Set(reflect.ValueOf([]string{base.WithDefaults().TimeZone, "Europe/London"})) // time_zones
		case reflect.Pointer:
			if f.Type() == reflect.TypeFor[*time.Time]() { // start_at, end_at
				at := time.Date(2026, 12, 24, 18, 0, 0, 0, time.FixedZone("", 8*3600))
				f.Set(reflect.ValueOf(&at))
				break
			}
			off := false // enabled
			f.Set(reflect.ValueOf(&off))
		default:
			t.Fatalf("field %s: kind %s has no display form", name, f.Kind())
		}
		got := Diff(base, want)
		if name == "app" || name == "name" {
			require.Empty(t, got, name)
			continue
		}
		if name == "wait_for" { // waits bring their defaults along
			require.Equal(t, []FieldChange{
				{"wait_for", "[]", `[{"workflow":{"name":"close"}}]`},
				{"wait_timeout", `""`, `"24h"`},
				{"on_timeout", `""`, `"fail"`},
			}, got)
			compared++
			continue
		}
		if with, ok := map[string]FieldChange{ // a budget or breaker brings its default window or cool-down along
			"retry_budget_percent": {"retry_budget_window", `""`, `"10m"`},
			"breaker_threshold":    {"breaker_cooldown", `""`, `"1m"`},
		}[name]; ok {
			require.Equal(t, []FieldChange{{name, "0", "7"}, with}, got, name)
			compared++
			continue
		}
		require.Len(t, got, 1, name)
		require.Equal(t, name, got[0].Field)
		compared++
	}
	require.Equal(t, len(defFields())-2, compared)
	on := true
	want := base
	want.Enabled = &on
	require.Empty(t, Diff(base, want), "enabled: true is the default")

	// An instant is compared as an instant, shown in UTC.
	a, b := time.Date(2026, 12, 24, 18, 0, 0, 0, time.FixedZone("", 8*3600)), time.Date(2026, 12, 24, 10, 0, 0, 0, time.UTC)
	have, want := base, base
	have.EndAt, want.EndAt = &a, &b
	require.Empty(t, Diff(have, want))
	want.EndAt = nil
	require.Equal(t, []FieldChange{{"end_at", "2026-12-24T10:00:00Z", "null"}}, Diff(have, want))
}

func TestDiffZones(t *testing.T) {
	base := def("a", "n").JobDef
	base.TimeZone = "Asia/Tokyo"
	// One zone in the list is time_zone alone; the first of a list may
	// stand for an omitted time_zone.
	one := base
	one.TimeZone, one.TimeZones = "", []string{"Asia/Tokyo"}
	require.Empty(t, Diff(base, one))
	have, want := base, base
	have.TimeZones = []string{"Asia/Tokyo", "Europe/London"}
	want.TimeZone, want.TimeZones = "", []string{"Asia/Tokyo", "Europe/London"}
	require.Empty(t, Diff(have, want))
	want.TimeZones = []string{"Asia/Tokyo", "America/New_York"}
	require.Equal(t, []FieldChange{{"time_zones", `["Asia/Tokyo", "Europe/London"]`, `["Asia/Tokyo", "America/New_York"]`}}, Diff(have, want))
	require.Equal(t, []FieldChange{{"time_zones", `[]`, `["Asia/Tokyo", "America/New_York"]`}}, Diff(base, want))
}
