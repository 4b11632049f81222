package ops

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/waits"
	"github.com/shardjob/shardjob/admin/workflow"
)

// The boundary between apps at run time (docs/security.md, "Apps"): a
// workflow may run jobs of other apps in its nodes, a job may have child
// jobs in other apps, and both may wait for jobs and workflows of other
// apps. Whoever saves such a reference must be allowed on the app it
// names (checked at save). Whoever then acts on the referencing object so
// that runs start, stop or are read — triggers it, backfills it, reruns or
// cancels its run — acts on the referenced apps too, so they must be
// allowed on every app the object reaches, and the action is audited under
// each of those apps as well. What reaches an app is its reach.

// reached is one app an object reaches beyond its own, with the first
// reference that reaches it (the words of a refusal and of the audit).
type reached struct {
	App string
	Via string // "node load_fx_rates runs job market-data/load-fx", …
}

// reachSet collects the apps reached, in the order first met, each once.
type reachSet struct {
	own  string
	list []reached
}

func (r *reachSet) add(app, via string) {
	if app == "" || app == r.own || slices.ContainsFunc(r.list, func(x reached) bool { return x.App == app }) {
		return
	}
	r.list = append(r.list, reached{App: app, Via: via})
}

func (r *reachSet) addWaits(who, owner string, refs []waits.Ref) {
	for _, w := range refs {
		app, _, _ := w.Target(owner)
		r.add(app, who+" waits for "+w.Label(owner))
	}
}

// workflowReach returns the apps other than app, the workflow's own,
// that a workflow definition (its stored JSON) reaches: the apps of the
// jobs its nodes run (a job by id that no longer exists reaches nothing)
// and of what its nodes wait for.
func (s *Service) workflowReach(ctx context.Context, app, definition string) ([]reached, error) {
	var def workflow.Definition
	if err := json.Unmarshal([]byte(definition), &def); err != nil {
		return nil, fmt.Errorf("stored workflow definition: %w", err)
	}
	var ids []int64
	for _, n := range def.Nodes {
		if n.Job != nil && n.Job.ID != 0 {
			ids = append(ids, n.Job.ID)
		}
	}
	apps := map[int64]store.JobKey{}
	if len(ids) > 0 {
		keys, err := s.st.JobKeys(ctx, ids, nil)
		if err != nil {
			return nil, err
		}
		for _, k := range keys {
			apps[k.ID] = k
		}
	}
	set := reachSet{own: app}
	for _, n := range def.Nodes {
		switch {
		case n.Job != nil && n.Job.ID != 0:
			if k, ok := apps[n.Job.ID]; ok {
				set.add(k.App, "node "+n.Key+" runs job "+k.App+"/"+k.Name)
			}
		case n.Job != nil && n.Job.App != "":
			set.add(n.Job.App, "node "+n.Key+" runs job "+n.Job.App+"/"+n.Job.Name)
		}
		set.addWaits("node "+n.Key, app, n.WaitFor)
	}
	return set.list, nil
}

// jobReach returns the apps other than j's own that a run of j reaches:
// those of its child jobs and of theirs, down the child graph, and of the
// jobs and workflows j waits for.
func (s *Service) jobReach(ctx context.Context, j store.Job) ([]reached, error) {
	set := reachSet{own: j.App}
	if j.WaitFor.Valid {
		refs, err := waits.Parse(j.WaitFor.String)
		if err != nil {
			return nil, fmt.Errorf("job %d: stored waits: %w", j.ID, err)
		}
		set.addWaits("the job", j.App, refs)
	}
	if j.ChildJobIDs == "" {
		return set.list, nil
	}
	graph, err := s.st.ChildGraphFrom(ctx, []int64{j.ID})
	if err != nil {
		return nil, err
	}
	var ids []int64
	for _, children := range graph {
		ids = append(ids, children...)
	}
	keys, err := s.st.JobKeys(ctx, ids, nil)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(keys, func(a, b store.JobKey) int { return int(a.ID - b.ID) })
	for _, k := range keys {
		set.add(k.App, "child job "+k.App+"/"+k.Name+" (id "+strconv.FormatInt(k.ID, 10)+") runs after it")
	}
	return set.list, nil
}

// jobActing checks that a may start runs of job j (a trigger, a backfill,
// a retry): ErrForbidden when j reaches an app a may not act on. It
// returns the apps reached, for the audit.
func (s *Service) jobActing(ctx context.Context, a Actor, j store.Job) ([]reached, error) {
	reach, err := s.jobReach(ctx, j)
	if err != nil {
		return nil, err
	}
	return reach, mayReach(a, "job "+j.App+"/"+j.Name, reach)
}

// mayReach refuses (ErrForbidden) when a is not allowed on one of the
// apps reached: the refusal names the app, the reference and the way out.
func mayReach(a Actor, what string, rs []reached) error {
	for _, r := range rs {
		if !a.User.AppAllowed(r.App) {
			return refuse(ErrForbidden, what+" reaches app "+r.App+" ("+r.Via+") and you may not act on app "+r.App+
				": ask a user of both apps, or an admin, to do it, or remove the reference",
				map[string]msg.Msg{"app": msg.New(msg.ReachesApp, "app", r.App, "via", r.Via)})
		}
	}
	return nil
}

// auditReach writes the audit entry of an action on an object that
// reaches other apps under each of them too, so that each app's audit log
// shows what others started, stopped or changed in it.
func (s *Service) auditReach(ctx context.Context, a Actor, rs []reached, action, object string, detail map[string]any) {
	for _, r := range rs {
		d := make(map[string]any, len(detail)+1)
		for k, v := range detail {
			d[k] = v
		}
		d["reached_by"] = r.Via
		s.audit(ctx, a, r.App, action, object, d)
	}
}
