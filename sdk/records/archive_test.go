package records

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/deploy/dev/testenv"
)

// archiveRows is the number of dedup rows the archive tests start with:
// RECORDS_ARCHIVE_ROWS (e.g. 3000000 for the large form), default 300000.
func archiveRows(t testing.TB, def int) int {
	if v := os.Getenv("RECORDS_ARCHIVE_ROWS"); v != "" {
		n, err := strconv.Atoi(v)
		require.NoError(t, err, "RECORDS_ARCHIVE_ROWS")
		return n
	}
	return def
}

const day = 24 * time.Hour

// seedSpec describes the rows seedDedup writes: jobs archJobs, groups of
// groupSize keys (scope "run:<g>"; every 7th group of a job is its "job"
// scope). In every group, per key index i: i%10 == 0 done 1 day ago (newer
// than every horizon), i%10 == 1 pending 40 days ago, i%10 == 2 failed 40
// days ago, others done 40 days ago (older than the default 30-day
// horizon), except for job archKeepJob whose horizon is 60 days in the
// tests (nothing of it goes).
type seedSpec struct {
	rows      int
	groupSize int
}

var archJobs = []int64{101, 102, 103, 104}

const archKeepJob = 104

// seeded is what seedDedup wrote.
type seeded struct {
	total   int // rows
	old     int // done rows older than the test's horizons: what Archive takes
	keepSum int64
}

// seedDedup writes spec.rows dedup rows, spread round-robin over archJobs.
func seedDedup(t testing.TB, e *env, spec seedSpec) seeded {
	t.Helper()
	ctx := context.Background()
	var now int64
	require.NoError(t, e.db.QueryRowContext(ctx, "SELECT "+dialectMacros[e.dialect]["{{now_ms}}"]).Scan(&now))
	var s seeded
	const chunk = 1000 // rows per INSERT (10 parameters a row)
	tuple := "(?, ?, ?, ?, 1, 7, 7, '', ?, ?)"
	args := make([]any, 0, chunk*6)
	flush := func() {
		if len(args) == 0 {
			return
		}
		n := len(args) / 6
		q := "INSERT INTO dedup_record (job_id, scope, record_key, status, attempts, token, run_id, error, created_at, updated_at) VALUES " +
			strings.TrimSuffix(strings.Repeat(tuple+", ", n), ", ")
		_, err := e.db.ExecContext(ctx, q, args...)
		require.NoError(t, err)
		args = args[:0]
	}
	groups := (spec.rows + spec.groupSize - 1) / spec.groupSize
	for g := range groups {
		job := archJobs[g%len(archJobs)]
		scope := "run:" + strconv.Itoa(g)
		if g/len(archJobs) == 3 {
			scope = "job"
		}
		for i := 0; i < spec.groupSize && s.total < spec.rows; i++ {
			status, at := statusDone, now-40*day.Milliseconds()-int64(i)
			switch i % 10 {
			case 0:
				at = now - day.Milliseconds()
			case 1:
				status = statusPending
			case 2:
				status = statusFailed
			default:
				if job != archKeepJob {
					s.old++
				}
			}
			args = append(args, job, e.arg(scope), e.arg(fmt.Sprintf("key-%07d", i)), status, at-1000, at)
			s.total++
			if len(args) == chunk*6 {
				flush()
			}
		}
	}
	flush()
	s.keepSum = e.keptChecksum(t)
	return s
}

func (e *env) arg(s string) any {
	if e.dialect == DialectSQLite {
		return s
	}
	return []byte(s)
}

// keptChecksum sums over the rows Archive must not touch: all but the old
// done rows of the jobs other than archKeepJob, and rows of scopes that
// the tests' concurrent processing writes ("new:…").
func (e *env) keptChecksum(t testing.TB) int64 {
	var sum, n int64
	require.NoError(t, e.db.QueryRow(`SELECT COALESCE(SUM(updated_at % 1000003 + attempts + LENGTH(record_key)), 0), COUNT(*) FROM dedup_record
		WHERE job_id IN (101, 102, 103, 104) AND scope NOT LIKE 'new:%' AND (status <> 'done' OR updated_at > ? OR job_id = ?)`,
		time.Now().Add(-30*day).UnixMilli(), archKeepJob).Scan(&sum, &n))
	return sum*1000 + n
}

// archiveConfig is the configuration of the tests: default 30-day horizon,
// archKeepJob kept 60 days.
func archiveConfig(t testing.TB, e *env) ArchiveConfig {
	return ArchiveConfig{
		Dialect:     e.dialect,
		JobHorizons: map[int64]time.Duration{archKeepJob: 60 * day},
		BatchSize:   1000,
		Pause:       -1,
		Logger:      testLogger(t),
	}
}

// checkArchived checks the end state: every old done row moved, the rest
// untouched, archived + remaining = initial (+ rows written since).
func checkArchived(t *testing.T, e *env, s seeded, mode ArchiveMode) {
	t.Helper()
	// Rows written by the concurrent processing, counted in the database:
	// a Process call cancelled at the end committed batches it did not
	// return.
	added := e.count(t, "SELECT COUNT(*) FROM dedup_record WHERE scope LIKE 'new:%'")
	remaining := e.count(t, "SELECT COUNT(*) FROM dedup_record")
	archived := e.count(t, "SELECT COUNT(*) FROM dedup_record_archive")
	t.Logf("%s: initial %d, old done %d, remaining %d, archived %d, added meanwhile %d", e.dialect, s.total, s.old, remaining, archived, added)
	require.Equal(t, s.total-s.old+added, remaining, "remaining rows")
	if mode == ArchiveMove {
		require.Equal(t, s.old, archived, "archived rows")
		require.Equal(t, 0, e.count(t, "SELECT COUNT(*) FROM dedup_record_archive WHERE status <> 'done' OR job_id = ?", archKeepJob))
	} else {
		require.Equal(t, 0, archived)
	}
	require.Equal(t, 0, e.count(t, "SELECT COUNT(*) FROM dedup_record WHERE status = 'done' AND updated_at < ? AND job_id <> ?",
		time.Now().Add(-30*day).UnixMilli(), archKeepJob), "old done rows left")
	require.Equal(t, s.keepSum, e.keptChecksum(t), "rows that must stay were changed")
}

func TestArchiveConfig(t *testing.T) {
	t.Parallel()
	c := ArchiveConfig{Dialect: DialectMySQL}.WithDefaults()
	require.NoError(t, c.Validate())
	require.Equal(t, DefaultArchiveHorizon, c.Horizon)
	require.Equal(t, ArchiveMove, c.Mode)
	require.Equal(t, 1, c.SlotCount)
	require.Equal(t, DefaultLockHorizon, c.LockHorizon)
	err := ArchiveConfig{Dialect: "pg", Horizon: time.Minute, Slot: 3, SlotCount: 2, BatchSize: MaxBatchSize + 1, Mode: 9,
		JobHorizons: map[int64]time.Duration{5: time.Second}, LockHorizon: time.Minute}.Validate()
	require.ErrorIs(t, err, ErrInvalidConfig)
	for _, want := range []string{"Dialect", "Mode 9", "Horizon is 1m0s", "JobHorizons[5]", "Slot 3 of SlotCount 2", "BatchSize", "LockHorizon is 1m0s"} {
		require.ErrorContains(t, err, want)
	}
	require.NoError(t, ArchiveConfig{Dialect: DialectSQLite, JobHorizons: map[int64]time.Duration{5: KeepForever}, LockHorizon: KeepForever}.WithDefaults().Validate())
}

// TestGroupSlotSpreads: the groups of run scopes spread over the slots.
func TestGroupSlotSpreads(t *testing.T) {
	t.Parallel()
	const total, groups = 8, 8000
	var per [total]int
	for g := range groups {
		per[groupSlot(int64(g%5+1), "run:"+strconv.Itoa(g), total)]++
	}
	for s, n := range per {
		require.InDelta(t, groups/total, n, groups/total/5, "slot %d", s)
	}
	require.Equal(t, 0, groupSlot(42, "job", 1))
}

// TestArchiveUnderLoad archives a large table (RECORDS_ARCHIVE_ROWS) while
// Processors process records of the same jobs, and checks the exact end
// state and that the processing never failed nor waited out a lock.
func TestArchiveUnderLoad(t *testing.T) {
	t.Parallel()
	for _, mode := range []ArchiveMode{ArchiveMove, ArchiveDelete} {
		for _, d := range dialects {
			t.Run(d+"/"+mode.String(), func(t *testing.T) {
				t.Parallel()
				rows := archiveRows(t, 300_000)
				if mode == ArchiveDelete || d != DialectMySQL {
					rows /= 10 // the same code path: the large form once is enough
				}
				e := newEnv(t, d, "innodb_lock_wait_timeout", "5")
				s := seedDedup(t, e, seedSpec{rows: rows, groupSize: 1000})
				cfg := archiveConfig(t, e)
				cfg.Mode = mode

				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				load := startLoad(t, e, ctx)
				var batches atomic.Int64
				cfg.OnBatch = func(int64) { batches.Add(1) }
				res, err := Archive(context.Background(), e.db, cfg)
				require.NoError(t, err)
				load.stop(t, cancel)
				require.EqualValues(t, s.old, res.Moved)
				require.Equal(t, res.Batches, batches.Load())
				t.Logf("%s: moved %d rows in %d batches over %d groups; load: %d records in %d Process calls, p50 %s p99 %s, retries %d",
					d, res.Moved, res.Batches, res.Groups, load.records.Load(), load.n(), load.pct(0.5), load.pct(0.99), load.retries.Load())
				checkArchived(t, e, s, mode)

				// A second pass finds nothing more.
				res, err = Archive(context.Background(), e.db, cfg)
				require.NoError(t, err)
				require.Zero(t, res.Moved)
			})
		}
	}
}

// load processes records of the archived jobs, in new scopes interleaved
// with the archived groups, until stopped.
type load struct {
	wg        sync.WaitGroup
	mu        sync.Mutex
	latencies []time.Duration
	records   atomic.Int64
	retries   atomic.Int64
	errs      chan error
}

func startLoad(t *testing.T, e *env, ctx context.Context) *load {
	l := &load{errs: make(chan error, 16)}
	var lockWaits atomic.Int64
	for w := range 2 {
		p := e.processor(t, Config{Mode: Transactional, BatchSize: 200})
		p.hooks = &testHooks{retried: func(err error) {
			l.retries.Add(1)
			var me *mysql.MySQLError
			if errors.As(err, &me) && me.Number == mysqlLockWaitTimeout {
				lockWaits.Add(1)
			}
		}}
		l.wg.Go(func() {
			for i := 0; ctx.Err() == nil; i++ {
				job := archJobs[(w+i)%len(archJobs)]
				task := newTask(job, int64(1_000_000+w*1_000_000+i), 0, 1)
				start := time.Now()
				res, err := p.WithScope(Scope(fmt.Sprintf("new:%d:%d", w, i))).Process(ctx, task, KeysOf(keys(200)), insertEffect(1))
				if ctx.Err() != nil {
					return
				}
				if err == nil {
					err = res.Err()
				}
				if err == nil && lockWaits.Load() > 0 {
					err = errors.New("a claim waited out innodb_lock_wait_timeout")
				}
				if err != nil {
					l.errs <- err
					return
				}
				l.mu.Lock()
				l.latencies = append(l.latencies, time.Since(start))
				l.mu.Unlock()
				l.records.Add(res.Processed)
			}
		})
	}
	return l
}

// stop ends the load and checks that no claim failed.
func (l *load) stop(t *testing.T, cancel context.CancelFunc) {
	cancel()
	l.wg.Wait()
	close(l.errs)
	for err := range l.errs {
		require.NoError(t, err, "record processing during the archive")
	}
}

func (l *load) n() int { return len(l.latencies) }

func (l *load) pct(p float64) time.Duration {
	if len(l.latencies) == 0 {
		return 0
	}
	s := slices.Clone(l.latencies)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

// TestArchiveSlotsShareTheWork: three slots at once move everything, each
// its own groups, the sum exact.
func TestArchiveSlotsShareTheWork(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		s := seedDedup(t, e, seedSpec{rows: 60_000, groupSize: 500})
		const total = 3
		moved := make([]int64, total)
		groups := make([]int64, total)
		var wg sync.WaitGroup
		errs := make([]error, total)
		for slot := range total {
			wg.Go(func() {
				cfg := archiveConfig(t, e)
				cfg.Slot, cfg.SlotCount = slot, total
				res, err := Archive(context.Background(), e.db, cfg)
				moved[slot], groups[slot], errs[slot] = res.Moved, res.Groups, err
			})
		}
		wg.Wait()
		require.NoError(t, errors.Join(errs...))
		t.Logf("moved per slot %v, groups per slot %v", moved, groups)
		var sum int64
		for slot := range total {
			require.NotZero(t, moved[slot], "slot %d did nothing", slot)
			sum += moved[slot]
		}
		require.EqualValues(t, s.old, sum)
		checkArchived(t, e, s, ArchiveMove)
	})
}

// TestArchiveKeepsPerJobHorizons: a job's own horizon, or KeepForever,
// wins over the default.
func TestArchiveKeepsPerJobHorizons(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		s := seedDedup(t, e, seedSpec{rows: 8_000, groupSize: 100})
		cfg := archiveConfig(t, e)
		cfg.JobHorizons = map[int64]time.Duration{archKeepJob: KeepForever, 101: 50 * day}
		res, err := Archive(context.Background(), e.db, cfg)
		require.NoError(t, err)
		// Job 101's rows are 40 days old: kept under its 50-day horizon.
		require.Equal(t, 0, e.count(t, "SELECT COUNT(*) FROM dedup_record_archive WHERE job_id IN (101, ?)", archKeepJob))
		require.EqualValues(t, s.old/3*2, res.Moved)
		cfg.JobHorizons = nil // default 30 days for all: 101 and 104 go too
		res, err = Archive(context.Background(), e.db, cfg)
		require.NoError(t, err)
		require.EqualValues(t, s.old/3+s.old/3, res.Moved)
	})
}

// TestArchiveCrashResumes kills (SIGKILL) a process running Archive in the
// middle of the purge, checks that every committed batch moved its rows
// completely (archived + remaining = initial at the crash), runs it again
// and checks the exact end state.
func TestArchiveCrashResumes(t *testing.T) {
	t.Parallel()
	bin := testenv.BuildBinary(t, "github.com/shardjob/shardjob/sdk/records/internal/archiver")
	for _, d := range dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			rows := archiveRows(t, 300_000)
			if d != DialectMySQL {
				rows /= 3
			}
			e := newEnv(t, d)
			s := seedDedup(t, e, seedSpec{rows: rows, groupSize: 1000})
			args := []string{"-dialect", d, "-dsn", e.dsn, "-jobs", `{"104":"1440h"}`, "-batch", "500", "-pause", "20ms"}

			p := testenv.StartProcess(t, bin, args, nil)
			ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
			defer cancel()
			_, err := p.WaitForLine(ctx, "batch n=20 ")
			require.NoError(t, err, p.Output())
			require.NoError(t, p.Kill())

			archived := e.count(t, "SELECT COUNT(*) FROM dedup_record_archive")
			remaining := e.count(t, "SELECT COUNT(*) FROM dedup_record")
			t.Logf("killed after %d rows archived (%d printed before the kill)", archived, lastTotal(p.Stdout()))
			require.Equal(t, s.total, archived+remaining, "a batch was cut in half")
			require.Greater(t, archived, 0)
			require.Less(t, archived, s.old, "the purge ended before the kill: raise RECORDS_ARCHIVE_ROWS")
			require.GreaterOrEqual(t, int64(archived), lastTotal(p.Stdout()))

			p2 := testenv.StartProcess(t, bin, append(args[:len(args)-2], "-pause", "-1ns"), nil)
			require.NoError(t, p2.Wait(), p2.Output())
			m := regexp.MustCompile(`archive done moved=(\d+)`).FindStringSubmatch(p2.Stdout())
			require.NotNil(t, m, p2.Output())
			second, _ := strconv.Atoi(m[1])
			require.Equal(t, s.old, archived+second, "first run + second run")
			checkArchived(t, e, s, ArchiveMove)
		})
	}
}

// lastTotal returns the total of the last complete "batch" line.
func lastTotal(out string) int64 {
	all := regexp.MustCompile(`batch n=\d+ moved=\d+ total=(\d+)\n`).FindAllStringSubmatch(out, -1)
	if len(all) == 0 {
		return 0
	}
	n, _ := strconv.ParseInt(all[len(all)-1][1], 10, 64)
	return n
}
