package e2e

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite" // the test reads the sql node's data source

	"github.com/shardjob/shardjob/admin/apitypes"
	harness "github.com/shardjob/shardjob/deploy/dev/testenv/cluster"
)

// TestWorkflowRunsBuiltinHandlers (issue 30), with real processes: a
// workflow whose nodes use the built-in http, sql and shell handlers runs
// on a real executor whose operator opened them (--http-allow,
// --sql-datasource, --shell-enable/--shell-allow). Their params, decoded
// strictly, hold only what the user wrote: the workflow context (run,
// node, business date, the parents' results) comes apart from them, and
// each handler passes it on — the http handler in the URL's placeholders
// and headers, the sql handler as :business_date, :workflow_node and
// :workflow_run_id, the shell handler in its arguments and environment,
// with a demo.sum parent's result in SHARDJOB_WORKFLOW. Before, every
// such node failed with `unknown field "business_date"`.
func TestWorkflowRunsBuiltinHandlers(t *testing.T) {
	dir := t.TempDir()

	var mu sync.Mutex
	var hits []*http.Request
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits = append(hits, r.Clone(r.Context()))
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(hook.Close)

	dbPath := filepath.Join(dir, "wf.db")
	db, err := sql.Open("sqlite", dbPath)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	_, err = db.Exec("CREATE TABLE seen (business_date TEXT, node TEXT, workflow_run INTEGER, slot INTEGER)")
	require.NoError(t, err)

	out := filepath.Join(dir, "shell.out")
	script := filepath.Join(dir, "node.sh")
	require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\n"+
		`printf '%s|%s|%s|%s\n' "$SHARDJOB_BUSINESS_DATE" "$SHARDJOB_WORKFLOW_NODE" "$1" "$SHARDJOB_WORKFLOW" > "$2"`+"\n"), 0o755))

	c := newCluster(t)
	ex := c.StartExecutor(harness.ExecutorOpts{App: "billing", Capacity: 4, InstanceID: "billing-builtin", LogDir: logDir(t),
		Args: []string{"--http-allow", "127.0.0.1", "--sql-datasource", "wf=sqlite:" + dbPath,
			"--shell-enable", "--shell-allow", script}})
	c.WaitOnline(ex)

	params := func(v any) string {
		b, err := json.Marshal(v)
		require.NoError(t, err)
		return string(b)
	}
	var wf apitypes.Workflow
	code, err := c.API.Call(context.Background(), http.MethodPost, "/api/v1/workflows", apitypes.WorkflowSpec{WorkflowDef: apitypes.WorkflowDef{
		App: "billing", Name: "builtins",
		Nodes: []apitypes.WorkflowNode{
			{Key: "notify", Handler: "http", Params: params(map[string]any{
				"url": hook.URL + "/hook?date={business_date}&node={workflow_node}&run={workflow_run_id}", "method": "POST"})},
			{Key: "record", Handler: "sql", Params: params(map[string]any{"datasource": "wf",
				"statement": "INSERT INTO seen VALUES (:business_date, :workflow_node, :workflow_run_id, :slot)"})},
			{Key: "sum", Handler: "demo.sum", Params: `{"add":2}`},
			{Key: "report", Handler: "shell", Params: params(map[string]any{"command": script, "args": []string{"{workflow_run_id}", out}})},
		},
		Edges: []apitypes.WorkflowEdge{{From: "notify", To: "record"}, {From: "record", To: "report"}, {From: "sum", To: "report"}},
	}}, &wf)
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, code, "a workflow of built-in nodes saves")

	var trig struct {
		Run apitypes.WorkflowRun `json:"run"`
	}
	code, err = c.API.Call(context.Background(), http.MethodPost, fmt.Sprintf("/api/v1/workflows/%d/trigger", wf.ID), apitypes.WorkflowTrigger{BusinessDate: "2026-03-02"}, &trig)
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, code)
	runID := trig.Run.ID

	view := c.waitWorkflowRun(runID, "succeeded")
	require.Len(t, view.Nodes, 4)

	// http: the URL's placeholders and the headers carry the context.
	mu.Lock()
	require.Len(t, hits, 1)
	hit := hits[0]
	mu.Unlock()
	run := strconv.FormatInt(runID, 10)
	require.Equal(t, "date=2026-03-02&node=notify&run="+run, hit.URL.RawQuery)
	require.Equal(t, "2026-03-02", hit.Header.Get("X-Shardjob-Business-Date"))
	require.Equal(t, "notify", hit.Header.Get("X-Shardjob-Workflow-Node"))
	require.Equal(t, run, hit.Header.Get("X-Shardjob-Workflow-Run-Id"))

	// sql: the context's names bound as arguments.
	var date, node string
	var wfRun, slot int64
	require.NoError(t, db.QueryRow("SELECT business_date, node, workflow_run, slot FROM seen").Scan(&date, &node, &wfRun, &slot))
	require.Equal(t, []any{"2026-03-02", "record", runID, int64(0)}, []any{date, node, wfRun, slot})

	// shell: arguments and environment, the parents' results included.
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	parts := strings.SplitN(strings.TrimSpace(string(b)), "|", 4)
	require.Len(t, parts, 4, "%s", b)
	require.Equal(t, []string{"2026-03-02", "report", run}, parts[:3])
	require.JSONEq(t, fmt.Sprintf(`{"run_id":%d,"node":"report","business_date":"2026-03-02","upstream":{"sum":{"sum":2}}}`, runID), parts[3])

	// The job runs' params are the user's own; the context is apart.
	for _, n := range view.Nodes {
		var r apitypes.RunDetail
		require.NoError(t, c.API.Do(context.Background(), http.MethodGet, fmt.Sprintf("/api/v1/runs/%d", n.JobRunID), nil, &r))
		var own map[string]any
		require.NoError(t, json.Unmarshal([]byte(r.Run.Params), &own), n.NodeKey)
		for _, k := range []string{"business_date", "workflow_node", "workflow_run_id", "upstream"} {
			require.NotContains(t, own, k, n.NodeKey)
		}
		var w struct {
			RunID int64  `json:"run_id"`
			Node  string `json:"node"`
		}
		require.NoError(t, json.Unmarshal(r.Run.Workflow, &w), n.NodeKey)
		require.Equal(t, runID, w.RunID, n.NodeKey)
		require.Equal(t, n.NodeKey, w.Node)
	}
}
