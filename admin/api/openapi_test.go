package api_test

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/goccy/go-yaml"
	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/api"
	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/store/storetest"
	"github.com/shardjob/shardjob/sdk/protocol"
	sqlfiles "github.com/shardjob/shardjob/sql"
)

const openAPIPath = "../../docs/openapi.yaml"

var ginParam = regexp.MustCompile(`[:*]([A-Za-z0-9_]+)`)

// openAPIOperations returns "METHOD /path" of every operation in the
// document, and the document itself.
func openAPIDocument(t *testing.T) (map[string]bool, map[string]any) {
	t.Helper()
	data, err := os.ReadFile(filepath.FromSlash(openAPIPath))
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, yaml.UnmarshalWithOptions(data, &doc, yaml.Strict()), "docs/openapi.yaml must be valid YAML")
	require.Regexp(t, `^3\.0\.\d+$`, doc["openapi"])
	paths, ok := doc["paths"].(map[string]any)
	require.True(t, ok, "paths")
	ops := map[string]bool{}
	methods := map[string]bool{"get": true, "put": true, "post": true, "delete": true, "patch": true, "head": true, "options": true}
	for p, item := range paths {
		m, ok := item.(map[string]any)
		require.True(t, ok, "path item %s", p)
		for k, op := range m {
			if !methods[k] {
				require.Contains(t, []string{"parameters", "summary", "description"}, k, "unexpected key in path %s", p)
				continue
			}
			o, ok := op.(map[string]any)
			require.True(t, ok, "%s %s", k, p)
			require.NotEmpty(t, o["summary"], "%s %s needs a summary", k, p)
			require.NotEmpty(t, o["responses"], "%s %s needs responses", k, p)
			ops[strings.ToUpper(k)+" "+p] = true
		}
	}
	return ops, doc
}

// TestOpenAPIDocumentsEveryRoute walks the routes gin serves and fails when
// one under /api/v1 is missing from docs/openapi.yaml, or when the document
// lists an operation the admin does not serve.
func TestOpenAPIDocumentsEveryRoute(t *testing.T) {
	t.Parallel()
	h, err := api.New(api.Config{Store: storetest.Open(t, sqlfiles.SQLite), ExecutorSecret: protocol.NewSecret()})
	require.NoError(t, err)
	engine, ok := h.(*gin.Engine)
	require.True(t, ok, "api.New returns a *gin.Engine")

	served := map[string]bool{}
	for _, r := range engine.Routes() {
		served[r.Method+" "+ginParam.ReplaceAllString(r.Path, "{$1}")] = true
	}
	documented, _ := openAPIDocument(t)

	var missing, extra []string
	for op := range served {
		if strings.Contains(op, " /api/v1/") && !documented[op] {
			missing = append(missing, op)
		}
	}
	for op := range documented {
		if !served[op] {
			extra = append(extra, op)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	require.Empty(t, missing, "routes the admin serves that docs/openapi.yaml does not describe: add them")
	require.Empty(t, extra, "operations in docs/openapi.yaml that the admin does not serve: remove or fix them")
}

// TestOpenAPIReferencesResolve checks that every local $ref names something
// the document defines.
func TestOpenAPIReferencesResolve(t *testing.T) {
	t.Parallel()
	_, doc := openAPIDocument(t)
	var refs []string
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, vv := range x {
				if s, ok := vv.(string); ok && k == "$ref" {
					refs = append(refs, s)
				}
				walk(vv)
			}
		case []any:
			for _, vv := range x {
				walk(vv)
			}
		}
	}
	walk(doc)
	require.NotEmpty(t, refs)
	for _, ref := range refs {
		require.True(t, strings.HasPrefix(ref, "#/"), "only local references: %s", ref)
		var node any = doc
		for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
			m, ok := node.(map[string]any)
			require.True(t, ok, "%s does not resolve", ref)
			node, ok = m[part]
			require.True(t, ok, "%s does not resolve (no %q)", ref, part)
		}
	}
}

// TestOpenAPISchemasListEveryField checks that the schemas of the API's
// answers and requests name exactly the JSON fields of the wire types
// (admin/apitypes for jobs, runs and attempts), so that a field added to a
// type (an audit entry's app, a token's parent, a job's setting) is
// documented.
func TestOpenAPISchemasListEveryField(t *testing.T) {
	t.Parallel()
	_, doc := openAPIDocument(t)
	schema := func(path ...string) map[string]any {
		var node any = doc
		for _, p := range path {
			m, ok := node.(map[string]any)
			require.True(t, ok, "docs/openapi.yaml: %v", path)
			node = m[p]
		}
		m, ok := node.(map[string]any)
		require.True(t, ok, "docs/openapi.yaml: %v", path)
		return m
	}
	named := func(name string) map[string]any { return schema("components", "schemas", name) }
	answer := func(path string) map[string]any {
		return schema("paths", path, "get", "responses", "200", "content", "application/json", "schema")
	}
	for _, c := range []struct {
		where  string
		schema map[string]any
		wire   any
	}{
		{"schema AuditEntry", named("AuditEntry"), apitypes.AuditView{}},
		{"schema Alarm", named("Alarm"), apitypes.AlarmView{}},
		{"schema AlarmGroup", named("AlarmGroup"), apitypes.AlarmGroupView{}},
		{"schema AlarmBulk", named("AlarmBulk"), apitypes.AlarmBulkRequest{}},
		{"schema AlarmBulk filter", schema("components", "schemas", "AlarmBulk", "properties", "filter"), apitypes.AlarmFilterBody{}},
		{"schema AlarmRoutes", named("AlarmRoutes"), apitypes.AlarmRoutes{}},
		{"schema AlarmRoutes, routes[]", schema("components", "schemas", "AlarmRoutes", "properties", "routes", "items"), apitypes.AlarmRoute{}},
		{"schema UtilizationPoint", named("UtilizationPoint"), apitypes.UtilizationPoint{}},
		{"GET /api/v1/stats/utilization", answer("/api/v1/stats/utilization"), apitypes.UtilizationView{}},
		{"GET /api/v1/stats/utilization, apps[]", schema("paths", "/api/v1/stats/utilization", "get", "responses", "200",
			"content", "application/json", "schema", "properties", "apps", "items"), apitypes.AppUtilization{}},
		{"schema Dashboard", named("Dashboard"), apitypes.Dashboard{}},
		{"schema DashboardBucket", named("DashboardBucket"), apitypes.DashboardBucket{}},
		{"schema StartLag", named("StartLag"), apitypes.StartLag{}},
		{"schema LagPercentile", named("LagPercentile"), apitypes.LagPercentile{}},
		{"schema Error", named("Error"), apitypes.ErrorView{}},
		{"schema APIKey", named("APIKey"), apitypes.APIKeyView{}},
		{"schema User", named("User"), apitypes.UserView{}},
		{"schema JobSpec", named("JobSpec"), apitypes.JobSpec{}},
		{"schema Job", named("Job"), apitypes.Job{}},
		{"schema Breaker", named("Breaker"), apitypes.Breaker{}},
		{"schema Run", named("Run"), apitypes.Run{}},
		{"schema Attempt", named("Attempt"), apitypes.Attempt{}},
		{"schema DeadLetter", named("DeadLetter"), apitypes.DeadLetter{}},
		{"schema ReplayRequest", named("ReplayRequest"), apitypes.ReplayRequest{}},
		{"GET /api/v1/dead", answer("/api/v1/dead"), apitypes.DeadList{}},
		{"schema Calendar", named("Calendar"), apitypes.Calendar{}},
		{"schema CalendarSpec", named("CalendarSpec"), apitypes.CalendarSpec{}},
		{"schema CalendarDay", named("CalendarDay"), apitypes.CalendarDay{}},
		{"schema CalendarImport", named("CalendarImport"), apitypes.CalendarImport{}},
		{"schema WorkflowSpec", named("WorkflowSpec"), apitypes.WorkflowSpec{}},
		{"schema Workflow", named("Workflow"), apitypes.Workflow{}},
		{"schema WorkflowNode", named("WorkflowNode"), apitypes.WorkflowNode{}},
		{"schema WorkflowJobRef", named("WorkflowJobRef"), apitypes.WorkflowJobRef{}},
		{"schema WorkflowWait", named("WorkflowWait"), apitypes.WorkflowWait{}},
		{"schema WorkflowNameRef", named("WorkflowNameRef"), apitypes.WorkflowNameRef{}},
		{"schema WorkflowEdge", named("WorkflowEdge"), apitypes.WorkflowEdge{}},
		{"schema WorkflowRun", named("WorkflowRun"), apitypes.WorkflowRun{}},
		{"schema WorkflowLayout", named("WorkflowLayout"), apitypes.WorkflowLayout{}},
		{"schema WorkflowLayoutNode", named("WorkflowLayoutNode"), apitypes.WorkflowLayoutNode{}},
		{"schema WorkflowValidation", named("WorkflowValidation"), apitypes.WorkflowValidation{}},
		{"schema WorkflowCancelled", named("WorkflowCancelled"), apitypes.WorkflowCancelled{}},
		{"schema WorkflowFiring", named("WorkflowFiring"), apitypes.WorkflowFiring{}},
		{"schema WorkflowLayoutEdge", named("WorkflowLayoutEdge"), apitypes.WorkflowLayoutEdge{}},
		{"schema WorkflowPoint", named("WorkflowPoint"), apitypes.WorkflowPoint{}},
		{"schema WorkflowBackfill", named("WorkflowBackfill"), apitypes.WorkflowBackfill{}},
		{"schema WorkflowBackfillDate", named("WorkflowBackfillDate"), apitypes.WorkflowBackfillDate{}},
		{"schema WorkflowBackfillPlan", named("WorkflowBackfillPlan"), apitypes.WorkflowBackfillPlan{}},
		{"schema JobBackfill", named("JobBackfill"), apitypes.JobBackfill{}},
		{"schema JobBackfillDate", named("JobBackfillDate"), apitypes.JobBackfillDate{}},
		{"schema JobBackfillPlan", named("JobBackfillPlan"), apitypes.JobBackfillPlan{}},
		{"schema JobBackfillView", named("JobBackfillView"), apitypes.JobBackfillView{}},
		{"schema WorkflowRerun", named("WorkflowRerun"), apitypes.WorkflowRerun{}},
		{"schema WorkflowRerunDone", named("WorkflowRerunDone"), apitypes.WorkflowRerunDone{}},
		{"schema WorkflowTrigger", named("WorkflowTrigger"), apitypes.WorkflowTrigger{}},
		{"schema WorkflowNodeRun", named("WorkflowNodeRun"), apitypes.WorkflowNodeRun{}},
		{"schema WorkflowRunDetail", named("WorkflowRunDetail"), apitypes.WorkflowRunDetail{}},
		{"GET /api/v1/runs/{id}", answer("/api/v1/runs/{id}"), apitypes.RunDetail{}},
		{"GET /api/v1/runs/{id}/slots, slots[]", schema("paths", "/api/v1/runs/{id}/slots", "get", "responses", "200",
			"content", "application/json", "schema", "properties", "slots", "items"), apitypes.Slot{}},
	} {
		props, ok := c.schema["properties"].(map[string]any)
		require.True(t, ok, "%s has properties", c.where)
		var documented []string
		for p := range props {
			documented = append(documented, p)
		}
		rt := reflect.TypeOf(c.wire)
		require.ElementsMatch(t, jsonFields(rt), documented, "docs/openapi.yaml %s against %s", c.where, rt)
	}
}

// jsonFields returns the JSON names of the fields of struct type rt, those
// of embedded structs included.
func jsonFields(rt reflect.Type) []string {
	var out []string
	for i := range rt.NumField() {
		f := rt.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case f.Anonymous && tag == "":
			out = append(out, jsonFields(f.Type)...)
		case tag != "" && tag != "-":
			out = append(out, tag)
		}
	}
	return out
}
