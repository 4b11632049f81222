package workflow

import (
	"cmp"
	"fmt"
	"time"

	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/waits"
)

// Limits and defaults of a node's waits on other jobs and workflows: those
// of admin/waits, which a plain job's waits share.
const (
	// MaxWaits bounds the runs one node waits for.
	MaxWaits = waits.Max
	// DefaultWaitTimeout is a waiting node's timeout when wait_timeout is
	// omitted.
	DefaultWaitTimeout = waits.DefaultTimeout
	// MaxWaitTimeout bounds wait_timeout: a week.
	MaxWaitTimeout = waits.MaxTimeout
)

// OnTimeout says what a node whose waits timed out does.
type OnTimeout = waits.OnTimeout

// The timeout settings.
const (
	// TimeoutFail (the default): the node fails, as if its job had failed.
	TimeoutFail = waits.Fail
	// TimeoutSkip: the node is skipped; its children follow their start
	// rules as for any skipped parent.
	TimeoutSkip = waits.Skip
)

// WaitRef names a run a node waits for: the run of the same business date
// of another job or of another workflow, by name in App (default: the
// workflow's app). Exactly one of Job and Workflow is set.
type WaitRef = waits.Ref

// NameRef names a job or a workflow in App (default: the workflow's app).
type NameRef = waits.NameRef

// waits are the node's waits in the form admin/waits checks and decides.
func (n Node) waits() waits.Waits {
	return waits.Waits{For: n.WaitFor, Timeout: n.WaitTimeout, OnTimeout: n.OnTimeout}
}

// Timeout is the node's wait timeout (DefaultWaitTimeout when omitted); 0
// when it does not parse (Validate refuses such a node).
func (n Node) Timeout() time.Duration { return n.waits().TimeoutDuration() }

// checkWaits checks node i's waits (waits.Check): each names a job or a
// workflow (not both) by a valid name, none twice, none the workflow
// itself or the node's own job (a run that would wait for itself); the
// timeout is a duration in (0, MaxWaitTimeout]; on_timeout is fail or
// skip; neither without a wait.
func checkWaits(errs FieldErrors, d Definition, i int, n Node) {
	self := func(app, name string, wf bool) (msg.Msg, bool) {
		switch {
		case wf && app == d.App && name == d.Name:
			return msg.New(msg.WaitSelfWorkflow), true
		case !wf && n.Job != nil && n.Job.ID == 0 && name == n.Job.Name && app == cmp.Or(n.Job.App, d.App):
			return msg.New(msg.WaitSelfNodeJob, "job", app+"/"+name), true
		}
		return msg.Msg{}, false
	}
	waits.Check(n.waits(), d.App, self, func(field string, m msg.Msg) {
		errs[fmt.Sprintf("nodes[%d].%s", i, field)] = m.String()
	})
}

// WaitAction is what a waiting node does now.
type WaitAction = waits.Action

// The actions of DecideWait.
const (
	// WaitStart: every awaited run succeeded; the node starts.
	WaitStart = waits.Start
	// WaitKeep: the node keeps waiting.
	WaitKeep = waits.Keep
	// WaitTimedOut: the timeout has passed with a run still missing; the
	// node fails or is skipped per its OnTimeout.
	WaitTimedOut = waits.TimedOut
)

// WaitDecision is what DecideWait found.
type WaitDecision = waits.Decision

// DecideWait decides for a node that waits (its start rule met at since):
// succeeded[i] says whether the run of the business date of the node's
// WaitFor[i] has succeeded (waits.Decide). Once every one has, the node
// starts, even after its deadline (a start is never taken back); otherwise
// it keeps waiting until since + its timeout, and times out at that
// instant. Pure.
func (g *Graph) DecideWait(key string, succeeded []bool, since, now time.Time) WaitDecision {
	n, _ := g.Node(key)
	return waits.Decide(n.waits(), g.def.App, succeeded, since, now)
}

// checkReferences bounds what saving d looks up: at most MaxWaitTargets
// distinct runs waited for and MaxReferencedApps distinct apps other than
// d's own named by job nodes and waits.
func checkReferences(errs FieldErrors, d Definition) {
	targets := map[[3]string]bool{}
	apps := map[string]bool{}
	for _, n := range d.Nodes {
		if n.Job != nil && n.Job.App != "" && n.Job.App != d.App {
			apps[n.Job.App] = true
		}
		for _, w := range n.WaitFor {
			app, name, wf := w.Target(d.App)
			kind := "job"
			if wf {
				kind = "workflow"
			}
			targets[[3]string{kind, app, name}] = true
			if app != d.App {
				apps[app] = true
			}
		}
	}
	if len(targets) > MaxWaitTargets {
		errs["nodes"] = fmt.Sprintf("the nodes wait for %d distinct jobs and workflows together: at most %d", len(targets), MaxWaitTargets)
	}
	if len(apps) > MaxReferencedApps {
		errs["nodes"] = fmt.Sprintf("the nodes run jobs of or wait in %d other apps: at most %d", len(apps), MaxReferencedApps)
	}
}
