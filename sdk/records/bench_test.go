package records

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/shardjob/shardjob/deploy/dev/testenv"
)

// benchIDs gives every benchmark run its own job, so that claims insert
// fresh rows as in production.
var benchIDs atomic.Int64

func init() { benchIDs.Store(time.Now().UnixNano() % 1_000_000 * 1000) }

// BenchmarkRecords measures the record throughput on a private MariaDB
// (testenv.StartMariaDB, so that the tests of other packages running on the
// shared server do not disturb it) sized like a production server
// (benchServer: durable commits), one op = one record, no-op effect, default
// Concurrency:
//
//	naive-per-record        textbook: per record INSERT IGNORE + SELECT + UPDATE, autocommit
//	external-1              External mode, one Processor, one slot (two row writes per
//	                        record: pending before the effect, done after); also reports
//	                        x-naive (its rate / naive's; needs naive-per-record in the same
//	                        run: go test -bench Records)
//	external-4-parallel     4 Processors on 4 slots at once: aggregate rate
//	transactional-1         Transactional mode (one row write per record: inserted done in
//	                        the transaction of the effect), one Processor; x-naive
//	transactional-4-parallel  4 Processors at once: aggregate rate
//	transactional-4-parallel-N-tx-each  the same with Concurrency 4 and 8 (8: the former default)
//	lock-check              External mode, the cost of the fencing check: chunks of records
//	                        processed alternately with and without it (alternating, so that
//	                        a change of the machine's load affects both); reports
//	                        lock-check-% (time added)
func BenchmarkRecords(b *testing.B) { benchRecords(b, privateMariaDB(b)) }

// BenchmarkRecordsPostgres is BenchmarkRecords with a PostgreSQL business
// database: the machine's PostgreSQL (its own settings: durable commits),
// a database of its own, pgx's database/sql driver as a service would use.
func BenchmarkRecordsPostgres(b *testing.B) { benchRecords(b, newEnv(b, DialectPostgres)) }

func benchRecords(b *testing.B, e *env) {
	e.db.SetMaxOpenConns(64)
	e.db.SetMaxIdleConns(64)
	cfg := Config{Mode: External, Uncertain: Retry, BatchSize: benchBatch}

	var naive float64
	b.Run("naive-per-record", func(b *testing.B) {
		naive = benchNaive(b, e)
	})
	for _, mode := range []Mode{External, Transactional} {
		cfg := cfg
		cfg.Mode = mode
		b.Run(mode.String()+"-1", func(b *testing.B) {
			rate := benchProcess(b, []*Processor{e.processor(b, cfg)})
			if naive > 0 {
				b.ReportMetric(rate/naive, "x-naive")
			}
		})
		b.Run(mode.String()+"-4-parallel", func(b *testing.B) {
			benchParallel(b, e, cfg)
		})
	}
	// More write transactions per Processor than the default (8 was the
	// default before DefaultTransactionalConcurrency): 16 and 32 at once.
	for _, n := range []int{4, 8} {
		b.Run(fmt.Sprintf("transactional-4-parallel-%d-tx-each", n), func(b *testing.B) {
			c := cfg
			c.Mode, c.Concurrency = Transactional, n
			benchParallel(b, e, c)
		})
	}
	b.Run("lock-check", func(b *testing.B) {
		with := e.processor(b, cfg)
		without := e.processor(b, cfg)
		without.noLockCheck = true
		const chunks = 20 // 10 with, 10 without
		var elapsed [2]time.Duration
		var records [2]int
		b.ResetTimer()
		for i := range chunks {
			n := b.N / chunks
			if i < b.N%chunks {
				n++
			}
			if n == 0 {
				continue
			}
			p := with
			if i%2 == 1 {
				p = without
			}
			start := time.Now()
			processRange(b, p, benchIDs.Add(1), 0, 1, int64(n))
			elapsed[i%2] += time.Since(start)
			records[i%2] += n
		}
		b.StopTimer()
		if records[0] > 0 && records[1] > 0 {
			perWith := elapsed[0].Seconds() / float64(records[0])
			perWithout := elapsed[1].Seconds() / float64(records[1])
			b.ReportMetric((perWith/perWithout-1)*100, "lock-check-%")
		}
	})
}

// benchParallel runs 4 Processors of configuration cfg at once, each with
// a connection pool of its own and on its own slot: 4 executors of one app
// sharing the business database.
func benchParallel(b *testing.B, e *env, cfg Config) {
	ps := make([]*Processor, 4)
	for i := range ps {
		db, err := sql.Open(e.driverName(), e.dsn)
		if err != nil {
			b.Fatal(err)
		}
		db.SetMaxIdleConns(16)
		b.Cleanup(func() { _ = db.Close() })
		c := cfg
		c.DB, c.Dialect, c.Logger = db, e.dialect, testLogger(b)
		p, err := New(c)
		if err != nil {
			b.Fatal(err)
		}
		ps[i] = p
	}
	benchProcess(b, ps)
}

// benchBatch is the batch size of the benchmarks: larger batches measured
// no faster (within the noise), smaller ones pay more per statement.
const benchBatch = 1000

// benchProcess processes b.N records split over the processors, each on its
// own slot of one run, and reports the aggregate records/s.
func benchProcess(b *testing.B, ps []*Processor) float64 {
	job := benchIDs.Add(1)
	b.ResetTimer()
	var wg sync.WaitGroup
	lo := int64(1)
	for i, p := range ps {
		n := b.N / len(ps)
		if i < b.N%len(ps) {
			n++
		}
		from, to := lo, lo+int64(n)-1
		lo += int64(n)
		wg.Go(func() { processRange(b, p, job, i, from, to) })
	}
	wg.Wait()
	b.StopTimer()
	rate := float64(b.N) / b.Elapsed().Seconds()
	b.ReportMetric(rate, "records/s")
	return rate
}

// processRange processes the records from..to of one slot, or stops b.
func processRange(b *testing.B, p *Processor, job int64, slot int, from, to int64) {
	res, err := p.Process(context.Background(), newTask(job, 1, slot, 1), IDRangeSource(from, to), func(context.Context, Record) error { return nil })
	if err == nil && res.Processed != to-from+1 {
		err = fmt.Errorf("processed %d of %d records", res.Processed, to-from+1)
	}
	if err != nil {
		b.Error(err)
	}
}

// benchNaive is the textbook dedup loop: per record, claim with INSERT
// IGNORE, read back who owns it, apply, mark done; every statement in
// autocommit (same pool, same client-side interpolation).
func benchNaive(b *testing.B, e *env) float64 {
	db := e.db
	insert := "INSERT IGNORE INTO dedup_record (job_id, scope, record_key, status, attempts, token, run_id, error, created_at, updated_at) VALUES (?, ?, ?, 'pending', 1, ?, ?, '', ?, ?)"
	if e.dialect == DialectPostgres {
		insert = "INSERT INTO dedup_record (job_id, scope, record_key, status, attempts, token, run_id, error, created_at, updated_at) VALUES (?, ?, ?, 'pending', 1, ?, ?, '', ?, ?) ON CONFLICT DO NOTHING"
	}
	job := benchIDs.Add(1)
	ctx := context.Background()
	const token, run = 1, 1
	scope := []byte("run:1")
	b.ResetTimer()
	for i := range b.N {
		key := []byte(strconv.Itoa(i))
		now := time.Now().UnixMilli()
		if _, err := db.ExecContext(ctx, insert, job, scope, key, token, run, now, now); err != nil {
			b.Fatal(err)
		}
		var status string
		var owner int64
		if err := db.QueryRowContext(ctx, "SELECT status, token FROM dedup_record WHERE job_id = ? AND scope = ? AND record_key = ?",
			job, scope, key).Scan(&status, &owner); err != nil {
			b.Fatal(err)
		}
		if status != statusPending || owner != token {
			continue // done, or someone else's
		}
		// (the effect)
		if _, err := db.ExecContext(ctx, "UPDATE dedup_record SET status = 'done', updated_at = ? WHERE job_id = ? AND scope = ? AND record_key = ? AND token = ?",
			time.Now().UnixMilli(), job, scope, key, token); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	rate := float64(b.N) / b.Elapsed().Seconds()
	b.ReportMetric(rate, "records/s")
	return rate
}

// benchServer sizes the benchmark's MariaDB like a production server holding
// the dedup table (the test defaults are 64 MB of buffer pool and a 32 MB
// redo log, which make InnoDB flush pages all the time under this write
// rate), with durable commits (a log write and fsync per commit).
var benchServer = []string{
	"innodb-buffer-pool-size=2G",
	"innodb-log-file-size=1G",
	"innodb-flush-log-at-trx-commit=1",
}

// privateMariaDB starts a MariaDB for the benchmark alone (benchServer).
func privateMariaDB(b *testing.B) *env {
	m := testenv.StartMariaDB(b, benchServer...)
	admin, err := sql.Open("mysql", m.DSN(""))
	if err != nil {
		b.Fatal(err)
	}
	defer admin.Close()
	for _, stmt := range []string{
		"CREATE DATABASE bench CHARACTER SET utf8mb4",
	} {
		if _, err := admin.Exec(stmt); err != nil {
			b.Fatal(err)
		}
	}
	cfg, err := mysql.ParseDSN(m.DSN("bench"))
	if err != nil {
		b.Fatal(err)
	}
	cfg.InterpolateParams = true
	cfg.MultiStatements = false
	return openEnv(b, DialectMySQL, cfg.FormatDSN())
}
