package ops

import (
	"context"
	"strconv"
	"time"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/sdk/names"
)

// dashboardWindow is a window of Dashboard and the width of its buckets
// (60, 72, 96 and 84 buckets).
type dashboardWindow struct {
	span, bucket time.Duration
}

// dashboardWindows are the windows Dashboard answers.
var dashboardWindows = map[string]dashboardWindow{
	"1h":  {time.Hour, time.Minute},
	"6h":  {6 * time.Hour, 5 * time.Minute},
	"24h": {24 * time.Hour, 15 * time.Minute},
	"7d":  {7 * 24 * time.Hour, 2 * time.Hour},
}

// checkAppParam refuses an app query parameter that is given (given) and
// not an app name.
func checkAppParam(app string, given bool) error {
	if given && !names.Valid(app) {
		return refuse(ErrInvalid, "app must be an app name ("+names.Rule+"), got "+strconv.Quote(app), nil)
	}
	return nil
}

// appsOfView are the apps a read of the actor covers: theirs (nil: every
// app), or app alone when given; another app's rows do not exist for them
// (an empty list).
func appsOfView(a Actor, app string) []string {
	apps := a.User.AppList()
	if app != "" {
		if a.User.AppAllowed(app) {
			apps = []string{app}
		} else {
			apps = []string{}
		}
	}
	return apps
}

// Dashboard answers the runs of the actor's apps (or of app, given: the
// query parameter was sent) in the window (1h, 6h, 24h, 7d) that ends
// where the per-minute rollup is complete (admin/runstats), per bucket and
// in total. It reads the window's minutes × apps rows, never the runs.
func (s *Service) Dashboard(ctx context.Context, a Actor, window, app string, given bool) (apitypes.Dashboard, error) {
	w, ok := dashboardWindows[window]
	if !ok {
		return apitypes.Dashboard{}, refuse(ErrInvalid, "invalid dashboard window",
			map[string]msg.Msg{"window": msg.New(msg.DashboardWindowInvalid, "value", strconv.Quote(window))})
	}
	if err := checkAppParam(app, given); err != nil {
		return apitypes.Dashboard{}, err
	}
	apps := appsOfView(a, app)
	until, folded, err := s.st.RunStatsFoldedUntil(ctx)
	if err != nil {
		return apitypes.Dashboard{}, err
	}
	to := until
	if !folded { // nothing folded yet: an empty window ending now
		now, err := s.st.Now(ctx)
		if err != nil {
			return apitypes.Dashboard{}, err
		}
		to = now.Truncate(time.Minute).UnixMilli()
	}
	from := to - w.span.Milliseconds()
	rows, err := s.st.RunStats(ctx, store.RunStatFilter{FromMS: from, ToMS: to, Apps: apps})
	if err != nil {
		return apitypes.Dashboard{}, err
	}
	width := w.bucket.Milliseconds()
	sums := make([]store.RunStat, w.span/w.bucket)
	var total store.RunStat
	for _, r := range rows {
		sums[(r.Minute-from)/width].Add(r)
		total.Add(r)
	}
	out := apitypes.Dashboard{
		Window: window, From: msTime(from), To: msTime(to), BucketSeconds: int64(w.bucket / time.Second),
		LagBoundsMS: store.LagBoundsMS[:], Totals: dashboardBucket(from, total), Buckets: make([]apitypes.DashboardBucket, len(sums)),
	}
	if folded {
		t := msTime(until)
		out.CompleteUntil = &t
	}
	for i, b := range sums {
		out.Buckets[i] = dashboardBucket(from+int64(i)*width, b)
	}
	return out, nil
}

// dashboardBucket is the wire form of the sums of a bucket starting at at.
func dashboardBucket(at int64, r store.RunStat) apitypes.DashboardBucket {
	b := apitypes.DashboardBucket{At: msTime(at), Started: r.Started, Succeeded: r.Succeeded, Failed: r.Failed,
		Cancelled: r.Cancelled, Skipped: r.Skipped, StartLag: apitypes.StartLag{Runs: r.LagRuns()}}
	if n := r.Succeeded + r.Failed; n > 0 {
		rate := float64(r.Succeeded) / float64(n)
		b.SuccessRate = &rate
	}
	pct := func(q float64) *apitypes.LagPercentile {
		ms, above, ok := r.LagPercentile(q)
		if !ok {
			return nil
		}
		return &apitypes.LagPercentile{MS: ms, Above: above}
	}
	b.StartLag.P50, b.StartLag.P95, b.StartLag.P99 = pct(0.50), pct(0.95), pct(0.99)
	return b
}
