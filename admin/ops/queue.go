package ops

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/sdk/protocol"
)

// QueueLimit is how many due pending runs, and how many waiting slots, the
// queue view reads at most (oldest first).
const QueueLimit = 100_000

// Queue says what waits to start in the apps a may see: due runs that have
// not started, by priority and reason, slots of started runs that wait for
// an executor, and each capped app's cap and slots placed now.
func (s *Service) Queue(ctx context.Context, a Actor) (apitypes.QueueView, error) {
	now := s.cfg.Clock.Now()
	runs, runsRead, err := s.st.QueueRuns(ctx, now.UnixMilli(), QueueLimit)
	if err != nil {
		return apitypes.QueueView{}, err
	}
	slots, slotsRead, err := s.st.QueueSlots(ctx, QueueLimit)
	if err != nil {
		return apitypes.QueueView{}, err
	}
	caps, err := s.st.AppCaps(ctx)
	if err != nil {
		return apitypes.QueueView{}, err
	}
	u := a.User
	apps := map[string]*queueApp{}
	get := func(name string) *queueApp {
		q := apps[name]
		if q == nil {
			q = &queueApp{QueueApp: apitypes.QueueApp{App: name}, prio: map[protocol.Priority]*apitypes.QueuePriority{}, reasons: map[string]int64{}}
			apps[name] = q
		}
		return q
	}
	for _, g := range runs {
		if u.AppAllowed(g.App) {
			q := get(g.App)
			q.WaitingRuns += g.Runs
			q.priority(g.Priority).Runs += g.Runs
			q.reasons[g.Reason] += g.Runs
			q.since(g.Oldest)
		}
	}
	for _, g := range slots {
		if u.AppAllowed(g.App) {
			q := get(g.App)
			q.WaitingSlots += g.Slots
			q.priority(g.Priority).Slots += g.Slots
			q.since(g.Oldest)
		}
	}
	var capped []string
	for app, l := range caps {
		if l.MaxRunningSlots > 0 && u.AppAllowed(app) {
			get(app)
			capped = append(capped, app)
		}
	}
	slices.Sort(capped)
	placed, err := s.st.PlacedSlotsOfApps(ctx, capped)
	if err != nil {
		return apitypes.QueueView{}, err
	}
	out := apitypes.QueueView{Apps: []apitypes.QueueApp{}, Limit: QueueLimit, At: now.UTC(),
		Partial: runsRead >= QueueLimit || slotsRead >= QueueLimit}
	for name, q := range apps {
		if l := caps[name]; l.MaxRunningSlots > 0 {
			m, n := l.MaxRunningSlots, placed[name]
			q.MaxRunningSlots, q.RunningSlots = &m, &n
		}
		out.Apps = append(out.Apps, q.view())
	}
	slices.SortFunc(out.Apps, func(x, y apitypes.QueueApp) int {
		return cmp.Or(cmp.Compare(y.WaitingRuns+y.WaitingSlots, x.WaitingRuns+x.WaitingSlots), cmp.Compare(x.App, y.App))
	})
	return out, nil
}

// queueApp gathers an app's queue.
type queueApp struct {
	apitypes.QueueApp
	prio    map[protocol.Priority]*apitypes.QueuePriority
	reasons map[string]int64
	oldest  int64
}

func (q *queueApp) priority(p int) *apitypes.QueuePriority {
	v := q.prio[protocol.Priority(p)]
	if v == nil {
		v = &apitypes.QueuePriority{Priority: protocol.Priority(p).String()}
		q.prio[protocol.Priority(p)] = v
	}
	return v
}

func (q *queueApp) since(ms int64) {
	if ms > 0 && (q.oldest == 0 || ms < q.oldest) {
		q.oldest = ms
	}
}

// view is the app's queue with its priorities most urgent first and its
// reasons by runs.
func (q *queueApp) view() apitypes.QueueApp {
	v := q.QueueApp
	v.Priorities, v.Reasons = []apitypes.QueuePriority{}, []apitypes.QueueReason{}
	for p := protocol.PriorityCritical; p >= protocol.PriorityLow; p-- {
		if g := q.prio[p]; g != nil {
			v.Priorities = append(v.Priorities, *g)
		}
	}
	for r, n := range q.reasons {
		v.Reasons = append(v.Reasons, apitypes.QueueReason{Reason: r, Runs: n})
	}
	slices.SortFunc(v.Reasons, func(x, y apitypes.QueueReason) int {
		return cmp.Or(cmp.Compare(y.Runs, x.Runs), cmp.Compare(x.Reason, y.Reason))
	})
	if q.oldest > 0 {
		t := time.UnixMilli(q.oldest).UTC()
		v.OldestSince = &t
	}
	return v
}
