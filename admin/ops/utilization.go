package ops

import (
	"context"
	"time"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/store"
)

// Bounds of Utilization.
const (
	// utilizationDefaultRange is the range answered without from.
	utilizationDefaultRange = 6 * time.Hour
	// utilizationMaxRange is the longest range answered: the default
	// retention of the samples (retention.DefaultSamples).
	utilizationMaxRange = 7 * 24 * time.Hour
	// utilizationMaxBuckets bounds the points per app.
	utilizationMaxBuckets = 300
)

// bucketWidths are the widths a bucket may take: the first one at least as
// wide as asked.
var bucketWidths = []time.Duration{
	time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 15 * time.Second, 30 * time.Second,
	time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute,
	time.Hour, 2 * time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour,
}

// utilizationWidth is the bucket width for a range: the smallest of
// bucketWidths that cuts it into fewer than utilizationMaxBuckets buckets
// (aligned on the epoch, the range then touches at most that many) and is
// at least twice the sample interval, so that a bucket is rarely empty
// while the leader samples.
func utilizationWidth(span, sampleInterval time.Duration) time.Duration {
	least := max(span/(utilizationMaxBuckets-1)+1, 2*sampleInterval)
	for _, w := range bucketWidths {
		if w >= least {
			return w
		}
	}
	return bucketWidths[len(bucketWidths)-1]
}

// Utilization answers the samples of the actor's apps (or of app, given:
// the query parameter was sent) in [from, to) (Unix ms), downsampled to at
// most 300 buckets per app. to defaults to now (the database clock, which
// stamps the samples), from to 6 hours before to; at most 7 days.
func (s *Service) Utilization(ctx context.Context, a Actor, from, to int64, app string, given bool) (apitypes.UtilizationView, error) {
	if err := checkAppParam(app, given); err != nil {
		return apitypes.UtilizationView{}, err
	}
	if to == 0 {
		now, err := s.st.Now(ctx)
		if err != nil {
			return apitypes.UtilizationView{}, err
		}
		to = now.UnixMilli()
	}
	if from == 0 {
		from = to - utilizationDefaultRange.Milliseconds()
	}
	if to <= from {
		return apitypes.UtilizationView{}, refuse(ErrInvalid, "from must be before to (default now): got from "+msTime(from).Format(time.RFC3339)+", to "+msTime(to).Format(time.RFC3339), nil)
	}
	span := time.Duration(to-from) * time.Millisecond
	if span > utilizationMaxRange {
		return apitypes.UtilizationView{}, refuse(ErrInvalid, "from: the range from "+msTime(from).Format(time.RFC3339)+" to "+msTime(to).Format(time.RFC3339)+
			" spans "+span.String()+"; at most 7 days (168h) can be asked for at once, the samples' default retention: move from or to closer", nil)
	}
	width := utilizationWidth(span, s.cfg.SampleInterval)
	rows, err := s.st.Utilization(ctx, store.UtilizationFilter{FromMS: from, ToMS: to, WidthMS: width.Milliseconds(), Apps: appsOfView(a, app)})
	if err != nil {
		return apitypes.UtilizationView{}, err
	}
	out := apitypes.UtilizationView{
		From: msTime(from), To: msTime(to), BucketSeconds: int64(width / time.Second), SampleSeconds: int64(s.cfg.SampleInterval / time.Second),
		Apps: []apitypes.AppUtilization{},
	}
	for _, r := range rows { // by app, then time
		if n := len(out.Apps); n == 0 || out.Apps[n-1].App != r.App {
			out.Apps = append(out.Apps, apitypes.AppUtilization{App: r.App})
		}
		p := apitypes.UtilizationPoint{At: msTime(r.Start), Busy: r.Busy, Queued: r.Queued, Capacity: r.Capacity, Executors: r.Executors, Samples: r.Samples}
		if r.Capacity > 0 {
			u := float64(r.Busy) / r.Capacity
			p.Utilization = &u
		}
		ap := &out.Apps[len(out.Apps)-1]
		ap.Points = append(ap.Points, p)
	}
	return out, nil
}
