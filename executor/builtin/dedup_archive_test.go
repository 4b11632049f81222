package builtin_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/executor/builtin"
	"github.com/shardjob/shardjob/sdk/records"
)

// TestDedupArchiveHandler runs the handler's 4 slots over a business
// database with old and new dedup rows: together they move exactly the old
// done rows, each counting its own as processed.
func TestDedupArchiveHandler(t *testing.T) {
	t.Parallel()
	allDrivers(t, func(t *testing.T, e *sqlEnv) {
		rp, err := records.New(records.Config{DB: e.db, Dialect: driverOf(e), Mode: records.Transactional})
		require.NoError(t, err)
		require.NoError(t, rp.EnsureSchema(context.Background()))
		now := time.Now().UnixMilli()
		old, recent := now-40*24*3600*1000, now-3600*1000
		want := 0
		for job := int64(1); job <= 3; job++ {
			for run := range 10 {
				for k := range 20 {
					status, at := "done", old
					switch k % 4 {
					case 0:
						at = recent
					case 1:
						status = "failed"
					default:
						if job != 3 { // job 3 is kept for 60 days
							want++
						}
					}
					_, err := e.db.Exec(e.q("INSERT INTO dedup_record (job_id, scope, record_key, status, attempts, token, run_id, error, created_at, updated_at) VALUES (?, ?, ?, ?, 1, 1, 1, '', ?, ?)"),
						job, fmt.Sprintf("run:%d", run), fmt.Sprintf("k%02d", k), status, at, at)
					require.NoError(t, err)
				}
			}
		}
		// Shard locks: two whose lease ended 2 days ago (released, or of a
		// dead attempt), one 2 hours ago, one live.
		for i, ended := range []int64{now - 48*3600*1000, now - 47*3600*1000, now - 2*3600*1000, now + 60_000} {
			_, err := e.db.Exec(e.q("INSERT INTO shard_lock (job_id, run_id, slot, token, holder, lease_until, acquired_at, released_at) VALUES (1, 1, ?, ?, 'h', ?, ?, NULL)"),
				i, i+1, ended, ended-1000)
			require.NoError(t, err)
		}
		var total int64
		for _, slot := range []int{3, 2, 1, 0} { // slot 0 last: only it purges locks
			if slot == 0 {
				var n int
				require.NoError(t, e.db.QueryRow("SELECT COUNT(*) FROM shard_lock").Scan(&n))
				require.Equal(t, 4, n, "slots 1-3 leave the locks alone")
			}
			task, log := newTask(`{"datasource": "biz", "horizon": "720h", "jobs": {"3": "1440h"}, "batch_size": 7, "pause_ms": 0}`)
			task.Slot, task.SlotCount = slot, 4
			require.NoError(t, e.h2().Handle(context.Background(), task))
			processed, _, _, _ := task.Counts()
			total += processed
			require.Contains(t, log.String(), "dedup archive done")
		}
		require.EqualValues(t, want, total)
		var archived, left int
		require.NoError(t, e.db.QueryRow("SELECT COUNT(*) FROM dedup_record_archive").Scan(&archived))
		require.NoError(t, e.db.QueryRow("SELECT COUNT(*) FROM dedup_record").Scan(&left))
		require.Equal(t, want, archived)
		require.Equal(t, 3*10*20-want, left)
		var locks []int
		rows, err := e.db.Query("SELECT slot FROM shard_lock ORDER BY slot")
		require.NoError(t, err)
		for rows.Next() {
			var s int
			require.NoError(t, rows.Scan(&s))
			locks = append(locks, s)
		}
		require.NoError(t, rows.Err())
		require.NoError(t, rows.Close())
		require.Equal(t, []int{2, 3}, locks, "slot 0 purged the locks whose lease ended more than 24h ago")

		task, _ := newTask(`{"datasource": "nope"}`)
		require.ErrorIs(t, e.h2().Handle(context.Background(), task), builtin.ErrRefused)
	})
}

// driverOf is the driver of the env's data source: mysql, postgres or
// sqlite.
func driverOf(e *sqlEnv) string { return e.driver }

// h2 is the dedup-archive handler on the env's data sources.
func (e *sqlEnv) h2() *builtin.DedupArchive { return builtin.NewDedupArchive(e.h) }

func TestDedupArchiveParams(t *testing.T) {
	t.Parallel()
	require.NoError(t, builtin.ValidateParams(builtin.NameDedupArchive, `{"datasource": "biz"}`))
	require.NoError(t, builtin.ValidateParams(builtin.NameDedupArchive, `{"datasource": "biz", "mode": "delete", "horizon": "2160h", "jobs": {"42": "keep", "7": "24h"}, "batch_size": 4000, "pause_ms": 50, "lock_horizon": "72h"}`))
	require.NoError(t, builtin.ValidateParams(builtin.NameDedupArchive, `{"datasource": "biz", "lock_horizon": "keep"}`))
	for params, want := range map[string]string{
		`{}`:                                    "datasource: required",
		`{"datasource": "biz", "mode": "move"}`: `mode: "move"`,
		`{"datasource": "biz", "horizon": "30d"}`:     `horizon: "30d": want a duration`,
		`{"datasource": "biz", "horizon": "10m"}`:     "horizon: 10m0s: at least 1h0m0s",
		`{"datasource": "biz", "jobs": {"x": "1h"}}`:  `jobs: key "x": want a job id`,
		`{"datasource": "biz", "jobs": {"5": "1s"}}`:  "jobs.5: 1s: at least",
		`{"datasource": "biz", "batch_size": 5000}`:   "batch_size: 5000",
		`{"datasource": "biz", "pause_ms": -1}`:       "pause_ms: -1",
		`{"datasource": "biz", "lock_horizon": "5m"}`: `lock_horizon: "5m": want a duration of at least 1h`,
		`{"datasource": "biz", "lock_horizon": "x"}`:  `lock_horizon: "x"`,
		`{"datasource": "biz", "other": 1}`:           "unknown field",
	} {
		err := builtin.ValidateParams(builtin.NameDedupArchive, params)
		require.ErrorContains(t, err, want, params)
		var pe *builtin.ParamsError
		require.ErrorAs(t, err, &pe)
	}
}
