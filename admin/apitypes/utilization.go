package apitypes

import "time"

// UtilizationView is the answer of GET /stats/utilization.
type UtilizationView struct {
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
	// BucketSeconds is the width of a bucket; buckets start at multiples
	// of it since the Unix epoch.
	BucketSeconds int64 `json:"bucket_seconds"`
	// SampleSeconds is the leader's sample interval.
	SampleSeconds int64            `json:"sample_seconds"`
	Apps          []AppUtilization `json:"apps"`
}

// AppUtilization is the buckets of one app, oldest first; a bucket without
// samples (no leader, or no executor of the app) is absent.
type AppUtilization struct {
	App    string             `json:"app"`
	Points []UtilizationPoint `json:"points"`
}

// UtilizationPoint is one bucket of an app's samples.
type UtilizationPoint struct {
	At time.Time `json:"at"` // the bucket's start
	// Busy and Queued are the largest of the bucket's samples (a peak is not
	// averaged away), Capacity and Executors their mean.
	Busy      int     `json:"busy"`
	Queued    int     `json:"queued"`
	Capacity  float64 `json:"capacity"`
	Executors float64 `json:"executors"`
	// Utilization is Busy / Capacity (null without capacity). It can pass 1
	// in a bucket in which capacity went away.
	Utilization *float64 `json:"utilization"`
	Samples     int      `json:"samples"`
}
