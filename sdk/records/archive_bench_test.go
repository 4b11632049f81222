package records

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"
)

// BenchmarkArchive measures the dedup purge on a private MariaDB (durable
// commits), one op = one dedup row seeded (70% of them old done rows):
//
//	batched-move          Archive, ArchiveMove (copy + delete), no pause: rows/s moved
//	batched-delete        Archive, ArchiveDelete, no pause: rows/s deleted
//	…-4000                the same with batches of 4000 rows instead of 2000
//	naive-single-delete   one DELETE … WHERE status = 'done' AND updated_at < ?: rows/s
//	claim-latency         p99 of claim batches (Process calls of 500 new records,
//	                      External mode, no-op effect) alone, during a batched purge
//	                      (default 5ms pause) and during a naive single DELETE of the
//	                      same table (-benchtime 1x: each op is the whole measurement)
func BenchmarkArchive(b *testing.B) { benchArchive(b, privateMariaDB(b)) }

// BenchmarkArchivePostgres is BenchmarkArchive on the machine's
// PostgreSQL (a database of its own).
func BenchmarkArchivePostgres(b *testing.B) { benchArchive(b, newEnv(b, DialectPostgres)) }

func benchArchive(b *testing.B, e *env) {
	e.db.SetMaxOpenConns(32)
	e.db.SetMaxIdleConns(32)
	ctx := context.Background()
	reset := func(b *testing.B) {
		for _, q := range []string{"TRUNCATE TABLE dedup_record", "TRUNCATE TABLE dedup_record_archive"} {
			if _, err := e.db.Exec(q); err != nil {
				b.Fatal(err)
			}
		}
	}
	purge := func(b *testing.B, run func() (int64, error)) {
		reset(b)
		s := seedDedup(b, e, seedSpec{rows: b.N, groupSize: 1000})
		b.ResetTimer()
		moved, err := run()
		b.StopTimer()
		if err != nil {
			b.Fatal(err)
		}
		if moved != int64(s.old) {
			b.Fatalf("moved %d rows, want %d", moved, s.old)
		}
		b.ReportMetric(float64(moved)/b.Elapsed().Seconds(), "rows/s")
	}
	batched := func(mode ArchiveMode, batch int) func(b *testing.B) {
		return func(b *testing.B) {
			purge(b, func() (int64, error) {
				cfg := archiveConfig(b, e)
				cfg.Mode, cfg.BatchSize = mode, batch
				res, err := Archive(ctx, e.db, cfg)
				return res.Moved, err
			})
		}
	}
	b.Run("batched-move", batched(ArchiveMove, 2000))
	b.Run("batched-delete", batched(ArchiveDelete, 2000))
	b.Run("batched-move-4000", batched(ArchiveMove, 4000))
	b.Run("batched-delete-4000", batched(ArchiveDelete, 4000))
	b.Run("naive-single-delete", func(b *testing.B) {
		purge(b, func() (int64, error) { return naiveDelete(ctx, e) })
	})
	b.Run("claim-latency", func(b *testing.B) {
		p := e.processor(b, Config{Mode: External, Uncertain: Retry, BatchSize: 500})
		for range b.N {
			reset(b)
			seedDedup(b, e, seedSpec{rows: 300_000, groupSize: 1000})
			idle := claimLatencies(b, p, nil)
			during := claimLatencies(b, p, func() {
				cfg := archiveConfig(b, e)
				cfg.Pause = 0 // the default pause, as the archive job runs (the rows/s benchmarks above run without)
				if _, err := Archive(ctx, e.db, cfg); err != nil {
					b.Error(err)
				}
			})
			reset(b)
			seedDedup(b, e, seedSpec{rows: 300_000, groupSize: 1000})
			naive := claimLatencies(b, p, func() {
				if _, err := naiveDelete(ctx, e); err != nil {
					b.Error(err)
				}
			})
			ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
			b.ReportMetric(ms(p99(idle)), "p99-idle-ms")
			b.ReportMetric(ms(p99(during)), "p99-purge-ms")
			b.ReportMetric(ms(p99(naive)), "p99-naive-ms")
			b.ReportMetric(float64(p99(during))/float64(p99(idle)), "x-idle")
			b.ReportMetric(float64(len(during)), "claims-during-purge")
		}
	})
}

// naiveDelete is the one-statement purge.
func naiveDelete(ctx context.Context, e *env) (int64, error) {
	r, err := e.db.ExecContext(ctx, "DELETE FROM dedup_record WHERE status = 'done' AND updated_at < ? AND job_id <> ?",
		time.Now().Add(-DefaultArchiveHorizon).UnixMilli(), archKeepJob)
	if err != nil {
		return 0, err
	}
	return r.RowsAffected()
}

// claimLatencies runs claim batches (Process calls of 500 fresh records of
// the purged jobs) one after the other: 100 of them when during is nil,
// else for as long as during runs (at least 10).
func claimLatencies(b *testing.B, p *Processor, during func()) []time.Duration {
	stop := make(chan struct{})
	var wg sync.WaitGroup
	if during != nil {
		wg.Go(func() { defer close(stop); during() })
	}
	var out []time.Duration
	for i := 0; ; i++ {
		if during == nil && i == 100 {
			break
		}
		if during != nil && i >= 10 {
			select {
			case <-stop:
				wg.Wait()
				return out
			default:
			}
		}
		job := archJobs[i%len(archJobs)]
		start := time.Now()
		res, err := p.WithScope(Scope(fmt.Sprintf("new:%d:%d", time.Now().UnixNano(), i))).Process(context.Background(),
			newTask(job, 1, 0, 1), IDRangeSource(1, 500), func(context.Context, Record) error { return nil })
		if err == nil {
			err = res.Err()
		}
		if err != nil {
			b.Fatal(err)
		}
		out = append(out, time.Since(start))
	}
	wg.Wait()
	return out
}

func p99(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*99/100)]
}
