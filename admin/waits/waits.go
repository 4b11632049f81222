// Package waits holds what a workflow node (admin/workflow) and a plain job
// (admin/jobdef, admin/scheduler) share when they wait for other jobs' or
// workflows' runs of their business date before starting (docs/workflows.md,
// "Waiting for other jobs and workflows" and "Waits of a plain job"): the
// references to what is awaited, their validation rules, and the decision
// to start, keep waiting or time out. Pure: no I/O; the store answers
// whether an awaited run succeeded (store.WaitSucceeded).
package waits

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/sdk/names"
)

// Limits and defaults of waits.
const (
	// Max bounds the runs one node or job waits for.
	Max = 20
	// DefaultTimeout is the timeout when wait_timeout is omitted.
	DefaultTimeout = "24h"
	// MaxTimeout bounds wait_timeout: a week.
	MaxTimeout = 7 * 24 * time.Hour
)

// OnTimeout says what a node or run whose waits timed out does.
type OnTimeout string

// The timeout settings.
const (
	// Fail (the default): the node or run fails.
	Fail OnTimeout = "fail"
	// Skip: the node or run is skipped.
	Skip OnTimeout = "skip"
)

// Ref names a run waited for: the run of the same business date of another
// job or of a workflow, by name in App (default: the owner's app). Exactly
// one of Job and Workflow is set.
type Ref struct {
	Job      *NameRef `json:"job,omitempty"`
	Workflow *NameRef `json:"workflow,omitempty"`
}

// NameRef names a job or a workflow in App (default: the owner's app).
type NameRef struct {
	App  string `json:"app,omitempty"`
	Name string `json:"name"`
}

// Target is the app and name of what r waits for, app defaulted to app,
// and whether it is a workflow (else a job).
func (r Ref) Target(app string) (refApp, name string, isWorkflow bool) {
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
func (r Ref) Label(app string) string {
	a, n, wf := r.Target(app)
	if wf {
		return "workflow " + a + "/" + n
	}
	return a + "/" + n
}

// Waits are the waits of a node or a job: what it waits for, how long
// (a Go duration, "" for DefaultTimeout) and what it does then ("" for
// Fail).
type Waits struct {
	For       []Ref
	Timeout   string
	OnTimeout OnTimeout
}

// TimeoutDuration is the wait timeout (DefaultTimeout when omitted); 0
// when it does not parse (Check refuses it).
func (w Waits) TimeoutDuration() time.Duration {
	d, err := time.ParseDuration(w.TimeoutOrDefault())
	if err != nil {
		return 0
	}
	return d
}

// TimeoutOrDefault is the timeout as written, or DefaultTimeout.
func (w Waits) TimeoutOrDefault() string {
	if w.Timeout == "" {
		return DefaultTimeout
	}
	return w.Timeout
}

// Self says whether an awaited target (app defaulted, name, workflow or
// job) is the owner's own run, and if so why it may not be awaited.
type Self func(app, name string, isWorkflow bool) (msg.Msg, bool)

// Check checks w, of an owner in app, calling bad for each field in error
// with the field's path relative to the owner ("wait_for",
// "wait_for[1].name", "wait_timeout", "on_timeout") and what is wrong: each
// wait names a job or a workflow (not both) by a valid name, none twice,
// none the owner itself (self); at most Max; the timeout is a duration in
// (0, MaxTimeout]; on_timeout is fail or skip; neither without a wait.
// Settings are checked as given: the caller applies no default before.
func Check(w Waits, app string, self Self, bad func(field string, m msg.Msg)) {
	if len(w.For) == 0 {
		if w.Timeout != "" {
			bad("wait_timeout", msg.New(msg.WaitOnlyWith))
		}
		if w.OnTimeout != "" {
			bad("on_timeout", msg.New(msg.WaitOnlyWith))
		}
		return
	}
	if len(w.For) > Max {
		bad("wait_for", msg.New(msg.WaitTooMany, "count", len(w.For), "max", Max))
		return
	}
	seen := map[string]int{}
	for j, r := range w.For {
		field := fmt.Sprintf("wait_for[%d]", j)
		ref := r.Job
		if r.Workflow != nil {
			ref = r.Workflow
		}
		switch {
		case (r.Job == nil) == (r.Workflow == nil):
			bad(field, msg.New(msg.WaitOneOf))
			continue
		case !names.Valid(ref.Name):
			bad(field+".name", msg.Name(ref.Name))
			continue
		case ref.App != "" && !names.Valid(ref.App):
			bad(field+".app", msg.Name(ref.App))
			continue
		}
		a, name, wf := r.Target(app)
		label := r.Label(app)
		if why, own := self(a, name, wf); own {
			bad(field, why)
		}
		if k, dup := seen[label]; dup {
			bad(field, msg.New(msg.WaitDuplicate, "ref", label, "index", k))
		}
		seen[label] = j
	}
	if w.Timeout != "" {
		t, err := time.ParseDuration(w.Timeout)
		switch {
		case err != nil:
			bad("wait_timeout", msg.New(msg.WaitTimeoutBad, "value", strconv.Quote(w.Timeout)))
		case t <= 0 || t > MaxTimeout:
			bad("wait_timeout", msg.New(msg.WaitTimeoutOutside, "value", w.Timeout, "max", MaxTimeout))
		}
	}
	switch w.OnTimeout {
	case Fail, Skip, "":
	default:
		bad("on_timeout", msg.New(msg.WaitOnTimeoutBad, "value", strconv.Quote(string(w.OnTimeout))))
	}
}

// Action is what a waiting node or run does now.
type Action string

// The actions of Decide.
const (
	// Start: every awaited run succeeded.
	Start Action = "start"
	// Keep: keep waiting.
	Keep Action = "wait"
	// TimedOut: the timeout has passed with a run still missing; the node
	// or run fails or is skipped per its OnTimeout.
	TimedOut Action = "timed_out"
)

// Decision is what Decide found.
type Decision struct {
	Action Action
	// Missing are the labels (Ref.Label) of the awaited runs that have not
	// succeeded, in wait_for order; empty for Start.
	Missing []string
	// Deadline is when the wait times out.
	Deadline time.Time
	// OnTimeout is the setting (for TimedOut; Fail when omitted).
	OnTimeout OnTimeout
}

// Reason is "billing/load-trades, workflow market-data/fx-close": the
// missing runs.
func (d Decision) Reason() string { return strings.Join(d.Missing, ", ") }

// Decide decides for an owner in app that waits since since: succeeded[i]
// says whether the run of the business date of w.For[i] has succeeded.
// Once every one has, it starts, even after its deadline (a start is never
// taken back); otherwise it keeps waiting until since + its timeout, and
// times out at that instant.
func Decide(w Waits, app string, succeeded []bool, since, now time.Time) Decision {
	out := Decision{Deadline: since.Add(w.TimeoutDuration()), OnTimeout: w.OnTimeout}
	if out.OnTimeout == "" {
		out.OnTimeout = Fail
	}
	for i, r := range w.For {
		if i >= len(succeeded) || !succeeded[i] {
			out.Missing = append(out.Missing, r.Label(app))
		}
	}
	switch {
	case len(out.Missing) == 0:
		out.Action = Start
	case !now.Before(out.Deadline):
		out.Action = TimedOut
	default:
		out.Action = Keep
	}
	return out
}
