package cli

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/sdk/names"
)

const sampleJobs = `# jobs of the billing team
- app: billing
  name: settle
  handler: settle.v1
  cron: "0 3 * * *"
  time_zone: Asia/Shanghai
  slots: 16
  params: '{"batch": 500}'
  enabled: false

- app: billing
  name: report
  description: |
    Monthly report.
  handler: report.v1
  cron: "@every 1h"
  overlap_policy: Skip
`

func TestLoadJobs(t *testing.T) {
	defs, err := LoadJobs("jobs.yaml", []byte(sampleJobs))
	require.NoError(t, err)
	require.Len(t, defs, 2)
	require.Equal(t, "billing/settle", defs[0].Key())
	require.Equal(t, 2, defs[0].Line())
	require.Equal(t, 16, defs[0].SlotCount)
	require.Equal(t, `{"batch": 500}`, defs[0].Params)
	require.NotNil(t, defs[0].Enabled)
	require.False(t, *defs[0].Enabled)
	require.Equal(t, 11, defs[1].Line())
	require.Equal(t, "Monthly report.\n", defs[1].Description)
	require.Nil(t, defs[1].Enabled)

	for _, empty := range []string{"", "# nothing yet\n", "---\n", "[]\n"} {
		defs, err := LoadJobs("jobs.yaml", []byte(empty))
		require.NoError(t, err, "%q", empty)
		require.Empty(t, defs)
	}
}

func TestLoadJobsRefusesWithTheLine(t *testing.T) {
	cases := []struct {
		name, src string
		line      int
		want      string
	}{
		{"unknown field", "- app: a\n  name: n\n  handler: h\n  cron: '@hourly'\n  shards: 4\n", 5, `unknown field "shards"`},
		{"wrong type", "- app: a\n  name: n\n  handler: h\n  cron: '@hourly'\n  slots: many\n", 5, "cannot unmarshal"},
		{"yes is not a bool", "- app: a\n  name: n\n  handler: h\n  cron: '@hourly'\n  enabled: yes\n", 5, "cannot unmarshal"},
		{"duplicate key", "- app: a\n  name: n\n  name: m\n", 3, `mapping key "name" already defined`},
		{"duplicate job", "- {app: a, name: n, handler: h, cron: '@hourly'}\n- {app: b, name: n, handler: h, cron: '@hourly'}\n- {app: a, name: n, handler: h, cron: '@daily'}\n", 3, "job a/n is already defined at line 1"},
		{"missing fields", "- app: a\n  name: n\n", 1, "missing handler, cron"},
		{"bad name", "- {app: a, name: 'has space', handler: h, cron: '@hourly'}\n", 1, `name "has space"`},
		{"not a list", "app: a\nname: n\n", 1, "must be a YAML list"},
		{"item not a mapping", "- just a string\n", 1, "must be a mapping"},
		{"two documents", "- {app: a, name: n, handler: h, cron: '@hourly'}\n---\n- {app: b, name: n, handler: h, cron: '@hourly'}\n", 3, "more than one YAML document"},
		{"syntax", "- app: 'a\n", 1, "single-quoted"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadJobs("jobs.yaml", []byte(tc.src))
			require.Error(t, err)
			var fe *FileError
			require.True(t, errors.As(err, &fe), "%T %v", err, err)
			require.Equal(t, tc.line, fe.Line, err.Error())
			require.Contains(t, err.Error(), tc.want)
			require.True(t, strings.HasPrefix(err.Error(), "jobs.yaml:"), err.Error())
			require.Equal(t, ExitUsage, ExitCode(err))
		})
	}
	_, err := LoadJobs("jobs.yaml", []byte("- app: a\n  name: n\n  handler: h\n  cron: '@hourly'\n  shards: 4\n"))
	require.ErrorContains(t, err, "jobs.yaml:5:3: unknown field \"shards\" (a job has the fields app, name,")
}

// FuzzLoadJobs: any input gives jobs or an error, never a panic, and the
// jobs it accepts are complete and unique.
func FuzzLoadJobs(f *testing.F) {
	f.Add([]byte(sampleJobs))
	f.Add([]byte("- {app: a, name: n, handler: h, cron: '@hourly'}\n"))
	f.Add([]byte("- &x {app: a}\n- *x\n"))
	f.Add([]byte("- app: a\n  app: b\n"))
	f.Add([]byte("---\n- []\n---\n"))
	f.Add([]byte("- {app: a, name: n, handler: h, cron: x, slots: 99999999999999999999}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		defs, err := LoadJobs("f.yaml", data)
		if err != nil {
			require.NotEmpty(t, err.Error())
			return
		}
		seen := map[string]bool{}
		for _, d := range defs {
			require.True(t, names.Valid(d.App), d.App)
			require.True(t, names.Valid(d.Name), d.Name)
			require.NotEmpty(t, strings.TrimSpace(d.Handler))
			require.NotEmpty(t, strings.TrimSpace(d.Cron))
			require.False(t, seen[d.Key()], "duplicate %s accepted", d.Key())
			seen[d.Key()] = true
			require.Positive(t, d.Line())
		}
	})
}

func TestLoadFileKinds(t *testing.T) {
	f, err := LoadFile("all.yaml", []byte(`- app: billing
  name: settle
  handler: h
  cron: '@hourly'
- kind: workflow
  app: billing
  name: nightly
  nodes:
    - {key: a, job: {name: settle}}
    - {key: b, handler: h, slots: 2, start: all_done}
  edges:
    - {from: a, to: b}
- kind: job
  app: billing
  name: nightly
  handler: h
  cron: '@daily'
`))
	require.NoError(t, err)
	require.Len(t, f.Jobs, 2)
	require.Len(t, f.Workflows, 1)
	w := f.Workflows[0]
	require.Equal(t, 5, w.Line())
	require.Equal(t, "billing/nightly", w.Key())
	require.Equal(t, "settle", w.Nodes[0].Job.Name)
	require.Equal(t, 2, w.Nodes[1].SlotCount)
	require.Equal(t, "all_done", w.Nodes[1].Start)
	require.Equal(t, "b", w.Edges[0].To)
	require.Equal(t, "billing/nightly", f.Jobs[1].Key(), "a job and a workflow may share a name")
	jobs, err := LoadJobs("all.yaml", []byte("- kind: workflow\n  app: a\n  name: w\n  nodes: [{key: a, handler: h}]\n"))
	require.NoError(t, err)
	require.Empty(t, jobs)

	cases := []struct {
		name, src string
		want      string
	}{
		{"unknown kind", "- kind: pipeline\n  app: a\n", `all.yaml:1: kind "pipeline": an item is a job (kind: job, the default), a workflow (kind: workflow) or an app (kind: app)`},
		{"unknown workflow field", "- kind: workflow\n  app: a\n  name: w\n  steps: []\n", `all.yaml:4:3: unknown field "steps" (a workflow has the fields kind, app, name,`},
		{"unknown node field", "- kind: workflow\n  app: a\n  name: w\n  nodes:\n    - {key: a, handlr: h}\n", `unknown field "handlr"`},
		{"no nodes", "- kind: workflow\n  app: a\n  name: w\n", `all.yaml:1: workflow "a/w" is missing nodes`},
		{"bad name", "- kind: workflow\n  app: a\n  name: w w\n  nodes: [{key: a, handler: h}]\n", "workflow name \"w w\": " + names.Rule},
		{"twice", "- kind: workflow\n  app: a\n  name: w\n  nodes: [{key: a, handler: h}]\n- kind: workflow\n  app: a\n  name: w\n  nodes: [{key: a, handler: h}]\n",
			"all.yaml:5: workflow a/w is already defined at line 1"},
	}
	for _, c := range cases {
		_, err := LoadFile("all.yaml", []byte(c.src))
		require.ErrorContains(t, err, c.want, c.name)
		var fe *FileError
		require.True(t, errors.As(err, &fe), c.name)
	}
}

// A job on a business calendar in a file: the fields load, and the default
// direction of shift (next) makes the file's job equal to the server's.
func TestLoadJobsWithCalendar(t *testing.T) {
	defs, err := LoadJobs("jobs.yaml", []byte(`- app: billing
  name: month-end
  handler: close.v1
  cron: "0 18 BDL * *"
  calendar_id: 3
  calendar_rule: shift
`))
	require.NoError(t, err)
	require.Len(t, defs, 1)
	require.Equal(t, int64(3), defs[0].CalendarID)
	require.Equal(t, "shift", defs[0].CalendarRule)
	n := Normalize(defs[0].JobDef)
	require.Equal(t, "next", n.CalendarShift, "as the server stores it")
	_, err = LoadJobs("jobs.yaml", []byte("- app: a\n  name: n\n  handler: h\n  cron: \"0 9 * * *\"\n  calendar: cn\n"))
	require.ErrorContains(t, err, `unknown field "calendar"`)
}

func TestLoadJobsWithZones(t *testing.T) {
	defs, err := LoadJobs("jobs.yaml", []byte(`- app: desk
  name: open
  handler: open.v1
  cron: "0 9 * * MON-FRI"
  time_zones: [Asia/Tokyo, Europe/London, America/New_York]
`))
	require.NoError(t, err)
	require.Len(t, defs, 1)
	require.Equal(t, []string{"Asia/Tokyo", "Europe/London", "America/New_York"}, defs[0].TimeZones)
	n := Normalize(defs[0].JobDef)
	require.Equal(t, "Asia/Tokyo", n.TimeZone)
	require.Equal(t, defs[0].TimeZones, n.TimeZones)
}
