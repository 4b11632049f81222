package apitypes

import "time"

// Dashboard is the answer of GET /api/v1/dashboard: the runs of a window
// from the per-minute rollup (admin/runstats), cut into buckets.
type Dashboard struct {
	// Window is the window asked for: 1h, 6h, 24h or 7d.
	Window string `json:"window"`
	// From and To are the exact window: [From, To), To being the end of
	// the last folded minute (CompleteUntil), From the window before it.
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
	// CompleteUntil is the instant up to which the rollup is complete
	// (every minute before it folded; the console says "up to HH:MM").
	// Null before the leader folded its first minute.
	CompleteUntil *time.Time `json:"complete_until"`
	// BucketSeconds is the width of a bucket: 60 for 1h, 300 for 6h, 900
	// for 24h, 7200 for 7d. Buckets start at From.
	BucketSeconds int64 `json:"bucket_seconds"`
	// LagBoundsMS are the upper bounds of the start-lag histogram's buckets
	// (ms): a percentile is reported as the bound of the bucket that holds
	// it.
	LagBoundsMS []int64 `json:"lag_bounds_ms"`
	// Totals sums the window.
	Totals DashboardBucket `json:"totals"`
	// Buckets are the window's buckets, oldest first, every one present.
	Buckets []DashboardBucket `json:"buckets"`
}

// DashboardBucket is the runs of a bucket of a Dashboard (or of its whole
// window, Totals).
type DashboardBucket struct {
	At time.Time `json:"at"` // the bucket's start
	// Started counts the runs started in the bucket; Succeeded, Failed
	// (failed and partially failed), Cancelled and Skipped the runs that
	// ended in it, whenever they were fired.
	Started   int64 `json:"started"`
	Succeeded int64 `json:"succeeded"`
	Failed    int64 `json:"failed"`
	Cancelled int64 `json:"cancelled"`
	Skipped   int64 `json:"skipped"`
	// SuccessRate is Succeeded / (Succeeded + Failed); null without either.
	SuccessRate *float64 `json:"success_rate"`
	// StartLag is the start lag (scheduled → first slot started on an
	// executor) of the runs that ended in the bucket, retries aside.
	StartLag StartLag `json:"start_lag"`
}

// StartLag is the start-lag percentiles of a set of runs, from a histogram
// with fixed buckets (Dashboard.LagBoundsMS).
type StartLag struct {
	// Runs is how many runs the percentiles are of.
	Runs int64 `json:"runs"`
	// P50, P95 and P99 are null without runs.
	P50 *LagPercentile `json:"p50"`
	P95 *LagPercentile `json:"p95"`
	P99 *LagPercentile `json:"p99"`
}

// LagPercentile is a percentile as the upper bound of its histogram bucket:
// the exact value is at most MS (and above the previous bound). Above:
// beyond the largest bound, MS.
type LagPercentile struct {
	MS    int64 `json:"ms"`
	Above bool  `json:"above,omitempty"`
}
