package ops

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/jobdef"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/store"
)

// KeepIdentity fills the app and name of an update from the object read
// (oldApp, oldName) when the request omits them, and refuses when they
// differ (ErrInvalid naming both): they identify what says what it is, and
// what to do instead.
func KeepIdentity(what string, app, name *string, oldApp, oldName string) error {
	if *app == "" {
		*app = oldApp
	}
	if *name == "" {
		*name = oldName
	}
	if *app == oldApp && *name == oldName {
		return nil
	}
	return refuse(ErrInvalid, "app and name identify "+what,
		map[string]msg.Msg{"name": msg.New(msg.MustStay, "value", oldName), "app": msg.New(msg.MustStay, "value", oldApp)})
}

// VersionGiven refuses an update that does not say which version it read
// (the optimistic lock), naming the current one.
func VersionGiven(version, current int64) error {
	if version > 0 {
		return nil
	}
	return refuse(ErrInvalid, "version is required",
		map[string]msg.Msg{"version": msg.New(msg.JobVersionRequired, "version", current)})
}

// pausedNext is the pause rule of an edit: the next firing of the new
// definition of job old. A job paused until resumed stays paused: it has
// no next firing, resuming computes one. A job paused until an instant
// keeps the new definition's next firing after now, which waits for the
// pause to end (the leader resumes it).
func pausedNext(old store.Job, next sql.NullInt64) sql.NullInt64 {
	if old.Paused && !old.PauseUntil.Valid {
		next.Valid = false
	}
	return next
}

// checkChildren verifies that the child jobs exist (for a: in apps a may
// see) and that giving job id (0 for a new job) these children creates no
// cycle; ErrInvalid naming child_job_ids otherwise.
func (s *Service) checkChildren(ctx context.Context, a Actor, id int64, children []int64) error {
	if len(children) == 0 {
		return nil
	}
	for _, child := range children {
		if j, err := s.st.Job(ctx, child); errors.Is(err, store.ErrNotFound) || (err == nil && !a.User.AppAllowed(j.App)) {
			return refuse(ErrInvalid, "child job does not exist", map[string]msg.Msg{"child_job_ids": msg.New(msg.JobChildMissing, "id", child)})
		} else if err != nil {
			return err
		}
	}
	if id == 0 {
		return nil // a new job has no parents yet: no cycle possible
	}
	graph, err := s.st.ChildGraphFrom(ctx, children)
	if err != nil {
		return err
	}
	if cycle := jobdef.FindCycle(graph, id, children); cycle != nil {
		parts := make([]string, len(cycle))
		for i, n := range cycle {
			parts[i] = strconv.FormatInt(n, 10)
		}
		return refuse(ErrInvalid, "child jobs would form a cycle",
			map[string]msg.Msg{"child_job_ids": msg.New(msg.JobChildCycle, "path", strings.Join(parts, " → "))})
	}
	return nil
}

// WithWarnings adds to v what a person saving the job should know but that
// does not make it invalid (handlerWarnings, waitWarnings): in English
// (Warnings) and as codes (WarningCodes).
func (s *Service) WithWarnings(ctx context.Context, a Actor, v apitypes.Job) apitypes.Job {
	for _, w := range append(s.handlerWarnings(ctx, v.App, v.Handler), s.waitWarnings(ctx, a, v.App, v.WaitFor)...) {
		v.Warnings = append(v.Warnings, w.String())
		v.WarningCodes = append(v.WarningCodes, apitypes.Message{Code: string(w.Code), Args: w.Args})
	}
	return v
}

// checkWaitApps refuses a job that waits (wait_for) for a job or workflow
// of an app a may not act on (ErrInvalid naming wait_for[i].app), whether
// or not it exists: the job's runs would tell a when that app's runs
// succeed (docs/security.md, "Apps"). A target of an app a may act on
// that does not exist yet is a warning (waitWarnings).
func checkWaitApps(a Actor, app string, waitFor []apitypes.WorkflowWait) error {
	for i, w := range waitFor {
		var owner string
		switch {
		case w.Job != nil:
			owner = cmp.Or(w.Job.App, app)
		case w.Workflow != nil:
			owner = cmp.Or(w.Workflow.App, app)
		default:
			continue
		}
		if !a.User.AppAllowed(owner) {
			field := fmt.Sprintf("wait_for[%d].app", i)
			return refuse(ErrInvalid, "a job may wait only for runs of apps you may act on: "+field+" names app "+owner,
				map[string]msg.Msg{field: msg.New(msg.NotYourApp, "apps", a.User.Apps)})
		}
	}
	return nil
}

// waitWarnings names the runs a job waits for (wait_for) whose job or
// workflow does not exist, or is in an app a may not manage (the same
// words for both): the job's runs would wait for them until their wait
// timeout. A warning, not a refusal, unlike a workflow node's waits: a
// jobs file may create the awaited job after the one that waits for it.
func (s *Service) waitWarnings(ctx context.Context, a Actor, app string, waitFor []apitypes.WorkflowWait) []msg.Msg {
	if len(waitFor) == 0 {
		return nil
	}
	u := a.User
	var byName []store.JobKey
	for _, w := range waitFor {
		if w.Job != nil {
			byName = append(byName, store.JobKey{App: cmp.Or(w.Job.App, app), Name: w.Job.Name})
		}
	}
	jobs := map[[2]string]bool{}
	if len(byName) > 0 {
		found, err := s.st.JobKeys(ctx, nil, byName)
		if err != nil {
			s.log.Warn("cannot read the awaited jobs for the job's warnings", "err", err)
			return nil
		}
		for _, k := range found {
			jobs[[2]string{k.App, k.Name}] = u.AppAllowed(k.App)
		}
	}
	var out []msg.Msg
	for _, w := range waitFor {
		switch {
		case w.Job != nil:
			owner := cmp.Or(w.Job.App, app)
			if !jobs[[2]string{owner, w.Job.Name}] {
				out = append(out, msg.New(msg.JobWaitTargetMissing, "target", owner+"/"+w.Job.Name))
			}
		case w.Workflow != nil:
			owner := cmp.Or(w.Workflow.App, app)
			_, err := s.st.WorkflowByName(ctx, owner, w.Workflow.Name)
			switch {
			case errors.Is(err, store.ErrNotFound) || (err == nil && !u.AppAllowed(owner)):
				out = append(out, msg.New(msg.JobWaitTargetMissing, "target", "workflow "+owner+"/"+w.Workflow.Name))
			case err != nil:
				s.log.Warn("cannot read an awaited workflow for the job's warnings", "err", err)
			}
		}
	}
	return out
}

// handlerWarnings says when no executor of app has shown handler yet: the
// job's runs will wait, then fail after the leader's unplaceable timeout,
// unless one comes. Answered on save and on validation (the console's form
// shows it while the user types).
func (s *Service) handlerWarnings(ctx context.Context, app, handler string) []msg.Msg {
	execs, err := s.st.Executors(ctx)
	if err != nil {
		s.log.Warn("cannot read executors for the job's warnings", "err", err)
		return nil
	}
	seen, registered := false, false
	for _, e := range execs {
		if e.App != app || e.State == store.ExecutorGone {
			continue
		}
		registered = true
		if e.Handlers == "" || slices.Contains(strings.Split(e.Handlers, ","), handler) {
			seen = true
			break
		}
	}
	switch {
	case !registered:
		return []msg.Msg{msg.New(msg.JobNoExecutor, "app", app, "handler", handler)}
	case !seen:
		return []msg.Msg{msg.New(msg.JobHandlerNotSeen, "app", app, "handler", handler)}
	}
	return nil
}
