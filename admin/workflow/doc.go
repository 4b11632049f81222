// Package workflow is the pure core of workflows (issue 22): a workflow is
// a named DAG of nodes in one app, each node a job (by id or name) or an
// inline handler with its params and slots, each edge a dependency. The
// package has no I/O — no database, no HTTP, no clock, no goroutines, no
// randomness: its decisions are functions of their inputs, table-tested
// and fuzzed. The storage (admin/store: workflows, their versions, runs
// and node runs), the API (admin/api, /api/v1/workflows) and the CLI
// (admin/cli, apply -f with a workflow kind) build on it; FromWire and
// Definition.Wire convert to and from the API's wire form; the engine
// (admin/workflowrun) applies Decide on the leader. The console is not
// written yet (see docs/workflows.md).
//
// # Definition and validation
//
// Validate checks a Definition and returns a Graph, or FieldErrors keyed
// by field path (nodes[3].key, edges[2].to): names per sdk/names,
// unique node keys, a job or an inline handler per node, known edge
// endpoints, no self-edge or duplicate edge, known start rules and failure
// policy, 1 to MaxNodes nodes and at most MaxEdges edges, and no cycle — a
// cycle is named in order, "a → b → c → a", the first one a depth-first
// search meets taking nodes and edges in definition order.
//
// # Topology
//
// A Graph gives a topological order (Order: every edge forward, ties by
// definition order), layers (Layer, Layers: the longest path from a root),
// Roots, Leaves, Parents, Children, Downstream, and the critical path for
// per-node durations (CriticalPath). Layout lays the graph out in layers
// for the console, with bend points and barycenter crossing reduction.
//
// # The state machine of a run
//
// Each node of a run is pending, running (its node run exists), or ended:
// succeeded, failed, skipped or cancelled.
//
//	pending ──start rule met──► running ──► succeeded | failed | cancelled
//	   │
//	   └──rule can no longer be met, or the failure policy stop──► skipped
//
// Decide reads the states of every node and returns the nodes that start
// now (Ready), the nodes skipped now (Skip, with reason and cause) and,
// when nothing is left pending or running, the run's Outcome: succeeded (no
// node failed or was cancelled), partially_failed (one did, but a leaf
// succeeded) or failed (one did and no leaf succeeded). Start rules:
// all_success (default), all_done, one_success; failure policies: stop
// (default: a failed or cancelled node skips every node not started; the
// running ones finish) and continue (independent branches go on).
//
// Decide is idempotent: the caller applies a decision (ready → running,
// skip → skipped) in the transaction that read the states, and deciding
// again on the result yields nothing new. That is what keeps the
// scheduler's "a node run keyed (workflow run, node) is created once"
// simple: a decision made twice — by a leader that lost its lease, or after
// a retried transaction — creates nothing twice.
//
// Rerun plans a rerun of a finished run from one or more nodes: they and
// everything downstream of them become pending again (with the nodes that
// only the failure policy stop had skipped), and it refuses a rerun whose
// nodes would be skipped at once, saying which node to re-run instead.
package workflow
