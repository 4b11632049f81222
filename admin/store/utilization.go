package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// UtilizationSample is the load of one app's executors at one instant
// (table utilization_sample, migration 0019).
type UtilizationSample struct {
	At        int64  `db:"at"` // Unix ms, the database clock
	App       string `db:"app"`
	Executors int    `db:"executors"` // online executors
	Capacity  int    `db:"capacity"`  // their slots
	Busy      int    `db:"busy"`      // slots running, or dispatched and not yet acknowledged
	Queued    int    `db:"queued"`    // slots acknowledged and waiting for a free slot
}

// SampleUtilization records one UtilizationSample per app that has
// executors (gone ones aside), in one INSERT … SELECT, and returns how many
// rows it wrote. atMS 0 stamps them with the database clock, as the
// sampler does; tests pass a fixed instant.
func (s *Store) SampleUtilization(ctx context.Context, atMS int64) (int64, error) {
	at := sql.NullInt64{Int64: atMS, Valid: atMS != 0}
	n, err := s.q.UtilizationSample(ctx, s.db, at)
	if err != nil {
		return 0, fmt.Errorf("record utilization samples: %w", err)
	}
	return n, nil
}

// utilizationPerStatement bounds the rows of one UtilizationInsert.
const utilizationPerStatement = 500

// AddUtilizationSamples writes samples as they are (tests seed history
// with it; tools may import some).
func (s *Store) AddUtilizationSamples(ctx context.Context, samples []UtilizationSample) error {
	for start := 0; start < len(samples); start += utilizationPerStatement {
		chunk := samples[start:min(start+utilizationPerStatement, len(samples))]
		ps := make([]utilizationInsertParams, len(chunk))
		for i, x := range chunk {
			ps[i] = utilizationInsertParams(x)
		}
		if _, err := s.q.UtilizationInsert(ctx, s.db, ps); err != nil {
			return fmt.Errorf("insert %d utilization samples: %w", len(chunk), err)
		}
	}
	return nil
}

// UtilizationBucket is the samples of one app within one bucket of time:
// the largest busy and queued counts (a peak between two samples of a
// bucket is not lost to an average), the mean capacity and online
// executors.
type UtilizationBucket struct {
	App       string
	Start     int64 // Unix ms, a multiple of the bucket width
	Executors float64
	Capacity  float64
	Busy      int
	Queued    int
	Samples   int
}

// bucketRow is a row of UtilizationBuckets.
type bucketRow struct {
	App          string `db:"app"`
	Start        int64  `db:"bucket"`
	ExecutorsSum int64  `db:"executors_sum"`
	CapacitySum  int64  `db:"capacity_sum"`
	Busy         int    `db:"busy"`
	Queued       int    `db:"queued"`
	Samples      int    `db:"samples"`
}

// UtilizationFilter selects the samples of Utilization.
type UtilizationFilter struct {
	FromMS, ToMS int64 // [FromMS, ToMS), Unix ms
	// WidthMS is the width of a bucket; buckets start at multiples of it.
	WidthMS int64
	// Apps limits the answer to these apps; nil: every app, empty: none.
	Apps []string
}

// Utilization returns the samples of f downsampled into buckets, by app and
// then time; a bucket without samples is absent.
func (s *Store) Utilization(ctx context.Context, f UtilizationFilter) ([]UtilizationBucket, error) {
	if f.WidthMS <= 0 || f.ToMS <= f.FromMS {
		return nil, errors.New("utilization: the bucket width must be positive and to after from")
	}
	if f.Apps != nil && len(f.Apps) == 0 {
		return nil, nil
	}
	rows, err := s.q.UtilizationBuckets(ctx, s.db, utilizationBucketsParams{WidthMS: f.WidthMS, FromMS: f.FromMS, ToMS: f.ToMS, AllApps: f.Apps == nil, Apps: orNone(f.Apps)})
	if err != nil {
		return nil, fmt.Errorf("utilization from %d to %d: %w", f.FromMS, f.ToMS, err)
	}
	out := make([]UtilizationBucket, len(rows))
	for i, r := range rows {
		n := float64(max(r.Samples, 1))
		out[i] = UtilizationBucket{App: r.App, Start: r.Start, Executors: float64(r.ExecutorsSum) / n, Capacity: float64(r.CapacitySum) / n,
			Busy: r.Busy, Queued: r.Queued, Samples: r.Samples}
	}
	return out, nil
}
