package api_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/auth"
	"github.com/shardjob/shardjob/admin/store"
)

// utilizationSeed is history to read back: billing sampled every 30 s for
// the last 7 days (busy, queued and capacity varying), search for the last
// hour only, and billing once 8 days ago.
func utilizationSeed(t *testing.T, e *env, now int64) []store.UtilizationSample {
	t.Helper()
	var samples []store.UtilizationSample
	for k := int64(0); k < 7*24*120; k++ {
		samples = append(samples, store.UtilizationSample{At: now - k*30_000 - 7, App: "billing", Executors: 2 - int(k%2), Capacity: 8 - 4*int(k%2), Busy: int(k % 10), Queued: int(k % 3)})
		if k < 120 {
			samples = append(samples, store.UtilizationSample{At: now - k*30_000 - 11, App: "search", Executors: 1, Capacity: 4, Busy: 4})
		}
	}
	samples = append(samples, store.UtilizationSample{At: now - 8*24*3_600_000, App: "billing", Executors: 9, Capacity: 9, Busy: 9})
	require.NoError(t, e.st.AddUtilizationSamples(context.Background(), samples))
	return samples
}

// expectedPoints downsamples samples of app in [from, to) as the API
// documents it: buckets of width ms aligned on the epoch, the largest busy
// and queued, the mean capacity and executors.
func expectedPoints(samples []store.UtilizationSample, app string, from, to, width int64) map[int64]apitypes.UtilizationPoint {
	type acc struct{ busy, queued, n, capacity, executors int }
	by := map[int64]*acc{}
	for _, x := range samples {
		if x.App != app || x.At < from || x.At >= to {
			continue
		}
		b := x.At - x.At%width
		a := by[b]
		if a == nil {
			a = &acc{}
			by[b] = a
		}
		a.busy, a.queued = max(a.busy, x.Busy), max(a.queued, x.Queued)
		a.n++
		a.capacity += x.Capacity
		a.executors += x.Executors
	}
	out := map[int64]apitypes.UtilizationPoint{}
	for b, a := range by {
		out[b] = apitypes.UtilizationPoint{At: time.UnixMilli(b).UTC(), Busy: a.busy, Queued: a.queued, Samples: a.n,
			Capacity: float64(a.capacity) / float64(a.n), Executors: float64(a.executors) / float64(a.n)}
	}
	return out
}

func utilizationPath(q url.Values) string { return "/api/v1/stats/utilization?" + q.Encode() }

func rfc(ms int64) string { return time.UnixMilli(ms).UTC().Format(time.RFC3339) }

// TestUtilizationStats: GET /stats/utilization answers the samples of the
// range downsampled per app (largest busy and queued, mean capacity, at
// most 300 points, buckets at least twice the sample interval), by
// default the last 6 hours; app-limited users see their apps only.
func TestUtilizationStats(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		dbNow, err := e.st.Now(ctx)
		require.NoError(t, err)
		now := dbNow.Truncate(time.Second).UnixMilli()
		samples := utilizationSeed(t, e, now)
		e.user("watch", auth.RoleViewer)
		viewer := e.token("watch")

		check := func(got apitypes.UtilizationView, app string, from, to int64, width time.Duration) {
			t.Helper()
			require.Equal(t, int64(width/time.Second), got.BucketSeconds)
			want := expectedPoints(samples, app, from, to, width.Milliseconds())
			var points []apitypes.UtilizationPoint
			for _, a := range got.Apps {
				if a.App == app {
					points = a.Points
				}
			}
			require.Len(t, points, len(want), "%s: one point per bucket with samples", app)
			require.LessOrEqual(t, len(points), 300)
			for i, p := range points {
				if i > 0 {
					require.True(t, p.At.After(points[i-1].At), "oldest first")
				}
				w, ok := want[p.At.UnixMilli()]
				require.True(t, ok, "%s: a bucket at %s", app, p.At)
				require.Equal(t, w.Busy, p.Busy, "%s at %s: the largest busy", app, p.At)
				require.Equal(t, w.Queued, p.Queued)
				require.Equal(t, w.Samples, p.Samples)
				require.InDelta(t, w.Capacity, p.Capacity, 1e-6, "%s at %s: the mean capacity", app, p.At)
				require.InDelta(t, w.Executors, p.Executors, 1e-6)
				require.NotNil(t, p.Utilization)
				require.InDelta(t, float64(w.Busy)/w.Capacity, *p.Utilization, 1e-6)
			}
		}

		// Explicit range: 6 hours in 2-minute buckets (72 s rounded up).
		from, to := now-6*3_600_000, now
		var got apitypes.UtilizationView
		require.Equal(t, http.StatusOK, e.call("GET", utilizationPath(url.Values{"from": {rfc(from)}, "to": {rfc(to)}}), viewer, nil, &got))
		require.Equal(t, rfc(from), got.From.Format(time.RFC3339))
		require.Equal(t, rfc(to), got.To.Format(time.RFC3339))
		require.EqualValues(t, 30, got.SampleSeconds)
		require.Len(t, got.Apps, 2)
		check(got, "billing", from, to, 2*time.Minute)
		check(got, "search", from, to, 2*time.Minute)

		// One hour: 1-minute buckets, twice the sample interval.
		from = now - 3_600_000
		require.Equal(t, http.StatusOK, e.call("GET", utilizationPath(url.Values{"from": {rfc(from)}, "to": {rfc(to)}}), viewer, nil, &got))
		check(got, "billing", from, to, time.Minute)
		// Seven days: hours; the sample of 8 days ago is outside.
		from = now - 7*24*3_600_000
		require.Equal(t, http.StatusOK, e.call("GET", utilizationPath(url.Values{"from": {rfc(from)}, "to": {rfc(to)}}), viewer, nil, &got))
		check(got, "billing", from, to, time.Hour)
		for _, p := range got.Apps[0].Points {
			require.Less(t, p.Busy, 10, "the old sample is not in the range")
		}

		// Defaults: to is now, from 6 hours before it.
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/stats/utilization", viewer, nil, &got))
		require.Equal(t, 6*time.Hour, got.To.Sub(got.From))
		require.WithinDuration(t, dbNow, got.To, time.Minute)
		require.EqualValues(t, 120, got.BucketSeconds)
		require.Len(t, got.Apps, 2)
		require.Equal(t, http.StatusOK, e.call("GET", utilizationPath(url.Values{"to": {rfc(now - 3_600_000)}}), viewer, nil, &got))
		require.Equal(t, 6*time.Hour, got.To.Sub(got.From))
		require.Len(t, got.Apps, 1, "search has no samples before the last hour")

		// One app.
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/stats/utilization?app=search", viewer, nil, &got))
		require.Len(t, got.Apps, 1)
		require.Equal(t, "search", got.Apps[0].App)
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/stats/utilization?app=nothing-here", viewer, nil, &got))
		require.Empty(t, got.Apps)
		require.NotNil(t, got.Apps, "an empty list, not null")
	})
}

// TestUtilizationStatsRBAC: a user limited to apps sees the samples of
// those apps only; another app's do not exist for them.
func TestUtilizationStatsRBAC(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		dbNow, err := e.st.Now(ctx)
		require.NoError(t, err)
		utilizationSeed(t, e, dbNow.UnixMilli())
		h, err := auth.HashPassword("password-billing-view")
		require.NoError(t, err)
		id, err := e.st.CreateUser(ctx, "billing-view", h, auth.RoleViewer)
		require.NoError(t, err)
		require.NoError(t, e.st.SetUserApps(ctx, id, []string{"billing"}))
		limited := e.token("billing-view")

		var got apitypes.UtilizationView
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/stats/utilization", limited, nil, &got))
		require.Len(t, got.Apps, 1)
		require.Equal(t, "billing", got.Apps[0].App)
		require.NotEmpty(t, got.Apps[0].Points)
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/stats/utilization?app=search", limited, nil, &got))
		require.Empty(t, got.Apps, "another app's samples do not exist for them")
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/stats/utilization?app=billing", limited, nil, &got))
		require.Len(t, got.Apps, 1)

		require.Equal(t, http.StatusUnauthorized, e.call("GET", "/api/v1/stats/utilization", "", nil, nil))
	})
}

// TestUtilizationStatsBadInput: a time that is not RFC 3339, to not after
// from, or a range over 7 days is a 400 that names the parameter.
func TestUtilizationStatsBadInput(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		e.user("watch", auth.RoleViewer)
		viewer := e.token("watch")
		for _, c := range []struct {
			query url.Values
			says  string
		}{
			{url.Values{"from": {"yesterday"}}, "from must be an RFC 3339 time"},
			{url.Values{"to": {"2026-13-01T00:00:00Z"}}, "to must be an RFC 3339 time"},
			{url.Values{"from": {"2026-11-30T10:00:00Z"}, "to": {"2026-11-30T09:00:00Z"}}, "to must be after from"},
			{url.Values{"from": {"2026-11-30T10:00:00Z"}, "to": {"2026-11-30T10:00:00Z"}}, "to must be after from"},
			{url.Values{"from": {"2999-01-01T00:00:00Z"}}, "from must be before to"},
			{url.Values{"from": {"2026-11-01T00:00:00Z"}, "to": {"2026-11-08T00:00:01Z"}}, "from: the range"},
			{url.Values{"to": {"2026-11-08T00:00:00Z"}, "from": {"2026-10-01T00:00:00+08:00"}}, "at most 7 days"},
			{url.Values{"app": {"bad app!"}}, "app must be an app name"},
			{url.Values{"app": {""}}, "app must be an app name"},
		} {
			var out struct{ Error string }
			require.Equal(t, http.StatusBadRequest, e.call("GET", utilizationPath(c.query), viewer, nil, &out), "%v", c.query)
			require.Contains(t, out.Error, c.says, "%v", c.query)
		}
		// Exactly 7 days is allowed.
		require.Equal(t, http.StatusOK, e.call("GET", utilizationPath(url.Values{"from": {"2026-11-01T00:00:00Z"}, "to": {"2026-11-08T00:00:00Z"}}), viewer, nil, nil))
	})
}
