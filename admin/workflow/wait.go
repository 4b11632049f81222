package workflow

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	"github.com/shardjob/shardjob/internal/names"
)

// Limits and defaults of a node's waits on other jobs and workflows.
const (
	// MaxWaits bounds the runs one node waits for.
	MaxWaits = 20
	// DefaultWaitTimeout is a waiting node's timeout when wait_timeout is
	// omitted.
	DefaultWaitTimeout = "24h"
	// MaxWaitTimeout bounds wait_timeout: a week.
	MaxWaitTimeout = 7 * 24 * time.Hour
)

// OnTimeout says what a node whose waits timed out does.
type OnTimeout string

// The timeout settings.
const (
	// TimeoutFail (the default): the node fails, as if its job had failed.
	TimeoutFail OnTimeout = "fail"
	// TimeoutSkip: the node is skipped; its children follow their start
	// rules as for any skipped parent.
	TimeoutSkip OnTimeout = "skip"
)

// WaitRef names a run a node waits for: the run of the same business date
// of another job or of another workflow, by name in App (default: the
// workflow's app). Exactly one of Job and Workflow is set.
type WaitRef struct {
	Job      *NameRef `json:"job,omitempty"`
	Workflow *NameRef `json:"workflow,omitempty"`
}

// NameRef names a job or a workflow in App (default: the workflow's app).
type NameRef struct {
	App  string `json:"app,omitempty"`
	Name string `json:"name"`
}

// Target is the app and name of what r waits for, app defaulted to app,
// and whether it is a workflow (else a job).
func (r WaitRef) Target(app string) (refApp, name string, isWorkflow bool) {
	ref := r.Job
	if r.Workflow != nil {
		ref, isWorkflow = r.Workflow, true
	}
	if ref == nil {
		return app, "", isWorkflow
	}
	refApp = ref.App
	if refApp == "" {
		refApp = app
	}
	return refApp, ref.Name, isWorkflow
}

// Label names r for people, app defaulted to app: "billing/load-trades"
// for a job, "workflow market-data/fx-close" for a workflow.
func (r WaitRef) Label(app string) string {
	a, n, wf := r.Target(app)
	if wf {
		return "workflow " + a + "/" + n
	}
	return a + "/" + n
}

// Timeout is the node's wait timeout (DefaultWaitTimeout when omitted); 0
// when it does not parse (Validate refuses such a node).
func (n Node) Timeout() time.Duration {
	s := n.WaitTimeout
	if s == "" {
		s = DefaultWaitTimeout
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0
	}
	return d
}

// checkWaits checks node i's waits: each names a job or a workflow (not
// both) by a valid name, none twice, none the workflow itself or the
// node's own job (a run that would wait for itself); the timeout is a
// duration in (0, MaxWaitTimeout]; on_timeout is fail or skip; neither
// without a wait.
func checkWaits(errs FieldErrors, d Definition, i int, n Node) {
	at := func(field string) string { return fmt.Sprintf("nodes[%d].%s", i, field) }
	if len(n.WaitFor) == 0 {
		if n.WaitTimeout != "" {
			errs[at("wait_timeout")] = "only with wait_for"
		}
		if n.OnTimeout != "" {
			errs[at("on_timeout")] = "only with wait_for"
		}
		return
	}
	if len(n.WaitFor) > MaxWaits {
		errs[at("wait_for")] = fmt.Sprintf("%d waits: at most %d", len(n.WaitFor), MaxWaits)
		return
	}
	seen := map[string]int{}
	for j, w := range n.WaitFor {
		field := fmt.Sprintf("nodes[%d].wait_for[%d]", i, j)
		ref := w.Job
		if w.Workflow != nil {
			ref = w.Workflow
		}
		switch {
		case (w.Job == nil) == (w.Workflow == nil):
			errs[field] = `a job or a workflow to wait for, not both: {"job": {"app": …, "name": …}} or {"workflow": {…}}`
			continue
		case !names.Valid(ref.Name):
			errs[field+".name"] = "required; " + names.Rule
			continue
		case ref.App != "" && !names.Valid(ref.App):
			errs[field+".app"] = names.Rule
			continue
		}
		app, name, wf := w.Target(d.App)
		label := w.Label(d.App)
		switch {
		case wf && app == d.App && name == d.Name:
			errs[field] = "a workflow cannot wait for its own run of the same date"
		case !wf && n.Job != nil && n.Job.ID == 0 && name == n.Job.Name && app == cmp.Or(n.Job.App, d.App):
			errs[field] = "a node cannot wait for a run of its own job " + label + ": the node's run would be that run"
		}
		if k, dup := seen[label]; dup {
			errs[field] = fmt.Sprintf("%s is wait_for[%d] already", label, k)
		}
		seen[label] = j
	}
	if n.WaitTimeout != "" {
		t, err := time.ParseDuration(n.WaitTimeout)
		switch {
		case err != nil:
			errs[at("wait_timeout")] = fmt.Sprintf("%q is not a duration such as 90m or 2h30m", n.WaitTimeout)
		case t <= 0 || t > MaxWaitTimeout:
			errs[at("wait_timeout")] = fmt.Sprintf("%s is outside 1ms-%s", n.WaitTimeout, MaxWaitTimeout)
		}
	}
	switch n.OnTimeout {
	case TimeoutFail, TimeoutSkip:
	default:
		errs[at("on_timeout")] = fmt.Sprintf("%q is not a timeout setting: fail (default) or skip", n.OnTimeout)
	}
}

// WaitAction is what a waiting node does now.
type WaitAction string

// The actions of DecideWait.
const (
	// WaitStart: every awaited run succeeded; the node starts.
	WaitStart WaitAction = "start"
	// WaitKeep: the node keeps waiting.
	WaitKeep WaitAction = "wait"
	// WaitTimedOut: the timeout has passed with a run still missing; the
	// node fails or is skipped per its OnTimeout.
	WaitTimedOut WaitAction = "timed_out"
)

// WaitDecision is what DecideWait found.
type WaitDecision struct {
	Action WaitAction
	// Missing are the labels (WaitRef.Label) of the awaited runs that have
	// not succeeded, in wait_for order; empty for WaitStart.
	Missing []string
	// Deadline is when the wait times out.
	Deadline time.Time
	// OnTimeout is the node's setting (for WaitTimedOut).
	OnTimeout OnTimeout
}

// Reason is "billing/load-trades, workflow market-data/fx-close": the
// missing runs, for the node's reason.
func (w WaitDecision) Reason() string { return strings.Join(w.Missing, ", ") }

// DecideWait decides for a node that waits (its start rule met at since):
// succeeded[i] says whether the run of the business date of the node's
// WaitFor[i] has succeeded. Once every one has, the node starts, even
// after its deadline (a start is never taken back); otherwise it keeps
// waiting until since + its timeout, and times out at that instant. Pure.
func (g *Graph) DecideWait(key string, succeeded []bool, since, now time.Time) WaitDecision {
	n, _ := g.Node(key)
	out := WaitDecision{Deadline: since.Add(n.Timeout()), OnTimeout: n.OnTimeout}
	for i, w := range n.WaitFor {
		if i >= len(succeeded) || !succeeded[i] {
			out.Missing = append(out.Missing, w.Label(g.def.App))
		}
	}
	switch {
	case len(out.Missing) == 0:
		out.Action = WaitStart
	case !now.Before(out.Deadline):
		out.Action = WaitTimedOut
	default:
		out.Action = WaitKeep
	}
	return out
}
