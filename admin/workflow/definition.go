package workflow

import "github.com/shardjob/shardjob/admin/internal/fielderr"

// Limits of a workflow definition. A definition beyond them is refused by
// Validate with a field error; every algorithm of the package is linear or
// near-linear in them, so they also bound its time and memory (see the
// benchmarks in bench_test.go).
const (
	// MaxNodes bounds the nodes of one workflow. The scheduling benchmark of
	// issue 22 runs a 1,000-node DAG; 2,000 leaves room above it while a
	// whole run's node states still fit one page of the console.
	MaxNodes = 2000
	// MaxEdges bounds the edges of one workflow: 10 per node at MaxNodes.
	MaxEdges = 20000
	// MaxSlots and MaxParamsBytes are a job's limits (admin/jobdef), for
	// the inline handler of a node.
	MaxSlots       = 1024
	MaxParamsBytes = 64 << 10
	// MaxTotalParamsBytes bounds the inline params of all nodes together, so
	// that a definition stays a small document.
	MaxTotalParamsBytes = 1 << 20
	// MaxWaitTargets bounds the distinct jobs and workflows that the nodes
	// of one workflow wait for together, and MaxReferencedApps the distinct
	// other apps its nodes run jobs of or wait in: saving a workflow looks
	// each of them up, and one request must not turn into thousands of
	// queries (2,000 nodes × 20 waits).
	MaxWaitTargets    = 200
	MaxReferencedApps = 20
	// MaxHandlerLen bounds an inline handler's name, as for jobs.
	MaxHandlerLen = 128
	// MaxRetries bounds an inline node's retry_max: a job's limit.
	MaxRetries = 100
)

// StartRule says when a node starts, from the states of its parents. A
// node without parents starts as soon as the run starts, whatever its rule.
type StartRule string

// The start rules.
const (
	// AllSuccess (the default): every parent succeeded. Skipped as soon as
	// one parent ended without success (failed, cancelled or skipped).
	AllSuccess StartRule = "all_success"
	// AllDone: every parent ended, however (succeeded, failed, cancelled or
	// skipped) — for clean-up and reporting nodes. Never skipped by its rule.
	AllDone StartRule = "all_done"
	// OneSuccess: as soon as one parent succeeded, without waiting for the
	// others. Skipped when every parent ended without success.
	OneSuccess StartRule = "one_success"
)

// FailurePolicy says what a failed (or cancelled) node does to the rest of
// the run.
type FailurePolicy string

// The failure policies.
const (
	// Stop (the default): the whole run stops at the first failed or
	// cancelled node — every node not started yet is skipped, the running
	// ones finish.
	Stop FailurePolicy = "stop"
	// Continue: independent branches go on; only the nodes whose start rule
	// can no longer be met are skipped.
	Continue FailurePolicy = "continue"
)

// Definition is a workflow: a named DAG of nodes in one app.
type Definition struct {
	// Name and App follow sdk/names; a workflow's name is unique in
	// its app (checked by the store, not here).
	Name string `json:"name"`
	App  string `json:"app"`
	// FailurePolicy defaults to Stop.
	FailurePolicy FailurePolicy `json:"failure_policy,omitempty"`
	// Nodes in definition order: the order that breaks every tie of the
	// package (topological order, layout, critical path, cycle search).
	Nodes []Node `json:"nodes"`
	// Edges are dependencies: To starts after From, per To's start rule.
	Edges []Edge `json:"edges,omitempty"`
}

// Node is one step of a workflow: a job referenced by id or name, or an
// inline handler with its params and slots.
type Node struct {
	// Key names the node in its workflow (sdk/names rule); edges,
	// node runs and reruns refer to it.
	Key string `json:"key"`
	// Job references an existing job; nil for an inline node. Whether it
	// exists and whether the user may manage it is checked where the jobs
	// are (not here).
	Job *JobRef `json:"job,omitempty"`
	// Handler, Params and SlotCount define an inline node (no Job): the
	// handler registered on the app's executors, its params (at most
	// MaxParamsBytes) and its slot count (JSON "slots": default 1, at most
	// MaxSlots).
	Handler   string `json:"handler,omitempty"`
	Params    string `json:"params,omitempty"`
	SlotCount int    `json:"slots,omitempty"`
	// RetryMax, RetryBackoffMS and TimeoutMS are an inline node's retry
	// and timeout policy, a job's settings of those names (0: no retry,
	// the job default backoff, no timeout of its own).
	RetryMax       int   `json:"retry_max,omitempty"`
	RetryBackoffMS int64 `json:"retry_backoff_ms,omitempty"`
	TimeoutMS      int64 `json:"timeout_ms,omitempty"`
	// Start defaults to AllSuccess.
	Start StartRule `json:"start,omitempty"`
	// WaitFor are the runs of the same business date, of other jobs or
	// workflows, that must have succeeded before the node starts (once its
	// start rule is met it is Waiting until then); at most MaxWaits.
	WaitFor []WaitRef `json:"wait_for,omitempty"`
	// WaitTimeout bounds the wait (a Go duration, default
	// DefaultWaitTimeout, at most MaxWaitTimeout); OnTimeout (default
	// TimeoutFail) says what the node does then. Only with WaitFor.
	WaitTimeout string    `json:"wait_timeout,omitempty"`
	OnTimeout   OnTimeout `json:"on_timeout,omitempty"`
}

// JobRef references a job by id, or by name in App (default: the
// workflow's app).
type JobRef struct {
	ID   int64  `json:"id,omitempty"`
	App  string `json:"app,omitempty"`
	Name string `json:"name,omitempty"`
}

// Edge is a dependency between two nodes, by key.
type Edge struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// WithDefaults returns d with its omitted fields set: the failure policy
// Stop, each node's start rule AllSuccess and an inline node's slots 1. The
// node and edge slices are copied; d is not changed. A node that waits
// gets the wait timeout DefaultWaitTimeout and the setting TimeoutFail.
func (d Definition) WithDefaults() Definition {
	if d.FailurePolicy == "" {
		d.FailurePolicy = Stop
	}
	nodes := make([]Node, len(d.Nodes))
	for i, n := range d.Nodes {
		if n.Start == "" {
			n.Start = AllSuccess
		}
		if n.Job == nil && n.SlotCount == 0 {
			n.SlotCount = 1
		}
		if n.Job != nil {
			ref := *n.Job
			n.Job = &ref
		}
		if len(n.WaitFor) > 0 {
			n.WaitFor = append([]WaitRef(nil), n.WaitFor...)
			if n.WaitTimeout == "" {
				n.WaitTimeout = DefaultWaitTimeout
			}
			if n.OnTimeout == "" {
				n.OnTimeout = TimeoutFail
			}
		}
		nodes[i] = n
	}
	d.Nodes = nodes
	d.Edges = append([]Edge(nil), d.Edges...)
	return d
}

// FieldErrors maps a field path (name, nodes[3].key, edges[2].to) to what
// is wrong with it, like admin/jobdef.FieldErrors.
type FieldErrors map[string]string

func (f FieldErrors) Error() string { return fielderr.Format("invalid workflow", f) }
