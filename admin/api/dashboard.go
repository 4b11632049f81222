package api

import (
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/sdk/names"
)

// dashboardWindow is a window of GET /dashboard and the width of its
// buckets (60, 72, 96 and 84 buckets).
type dashboardWindow struct {
	span, bucket time.Duration
}

// dashboardWindows are the windows GET /dashboard answers.
var dashboardWindows = map[string]dashboardWindow{
	"1h":  {time.Hour, time.Minute},
	"6h":  {6 * time.Hour, 5 * time.Minute},
	"24h": {24 * time.Hour, 15 * time.Minute},
	"7d":  {7 * 24 * time.Hour, 2 * time.Hour},
}

// dashboard answers GET /dashboard?window=1h|6h|24h|7d&app=: the runs of
// the user's apps (or of app) in the window that ends where the per-minute
// rollup is complete (admin/runstats), per bucket and in total. It reads the
// window's minutes × apps rows, never the runs.
func (s *Server) dashboard(c *gin.Context) {
	ctx := c.Request.Context()
	name := c.DefaultQuery("window", "1h")
	w, ok := dashboardWindows[name]
	if !ok {
		c.AbortWithStatusJSON(http.StatusBadRequest, errorBody{Error: "invalid dashboard window",
			Fields: map[string]msg.Msg{"window": msg.New(msg.DashboardWindowInvalid, "value", strconv.Quote(name))}})
		return
	}
	app := c.Query("app")
	if _, given := c.GetQuery("app"); given && !names.Valid(app) {
		fail(c, http.StatusBadRequest, "app must be an app name ("+names.Rule+"), got "+strconv.Quote(app))
		return
	}
	apps := currentUser(c).AppList() // nil: every app
	if app != "" {
		if currentUser(c).AppAllowed(app) {
			apps = []string{app}
		} else {
			apps = []string{} // another app's runs do not exist for this user
		}
	}
	until, folded, err := s.st.RunStatsFoldedUntil(ctx)
	if err != nil {
		s.internal(c, err)
		return
	}
	to := until
	if !folded { // nothing folded yet: an empty window ending now
		now, err := s.st.Now(ctx)
		if err != nil {
			s.internal(c, err)
			return
		}
		to = now.Truncate(time.Minute).UnixMilli()
	}
	from := to - w.span.Milliseconds()
	rows, err := s.st.RunStats(ctx, store.RunStatFilter{FromMS: from, ToMS: to, Apps: apps})
	if err != nil {
		s.internal(c, err)
		return
	}
	width := w.bucket.Milliseconds()
	sums := make([]store.RunStat, w.span/w.bucket)
	var total store.RunStat
	for _, r := range rows {
		sums[(r.Minute-from)/width].Add(r)
		total.Add(r)
	}
	out := apitypes.Dashboard{
		Window: name, From: msTime(from), To: msTime(to), BucketSeconds: int64(w.bucket / time.Second),
		LagBoundsMS: store.LagBoundsMS[:], Totals: dashboardBucket(from, total), Buckets: make([]apitypes.DashboardBucket, len(sums)),
	}
	if folded {
		t := msTime(until)
		out.CompleteUntil = &t
	}
	for i, b := range sums {
		out.Buckets[i] = dashboardBucket(from+int64(i)*width, b)
	}
	c.JSON(http.StatusOK, out)
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
