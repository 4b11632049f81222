package chaos

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/deploy/dev/testenv"
	harness "github.com/shardjob/shardjob/deploy/dev/testenv/cluster"
)

// TestChaosConcurrencyCapsAcrossFailover: three admins on ZooKeeper and
// two real executors of one app (capacity 32 each). An admin caps the app
// at 16 running slots; a job of the app caps itself at 4. A 256-slot run
// (each slot sleeps 100 ms), a 24-slot run of the capped job and a
// one-slot run are triggered together; the one-slot run waits pending
// with the cap's reason while the others hold the app's slots. Once a
// third of the wide run's slots have ended, the leader is killed with
// kill -9; a successor finishes the runs. Then the attempts are counted:
// every slot succeeded exactly once, and — by a sweep over the attempts'
// own start and finish times, not by any counter of the admin — never
// more than 16 slots of the app and 4 of the capped job ran at once,
// before, across or after the failover.
func TestChaosConcurrencyCapsAcrossFailover(t *testing.T) {
	const (
		appCap, jobCap = 16, 4
		wideSlots      = 256
		narrowSlots    = 24
	)
	c := newCluster(t)
	c.startAdmins()
	first := c.admins["admin-1"]
	code, err := c.call(first, http.MethodPost, "/api/v1/apps", map[string]any{"name": jobApp, "max_running_slots": appCap}, nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, code)
	var urls []string
	for i := 1; i <= adminCount; i++ {
		urls = append(urls, c.admins["admin-"+strconv.Itoa(i)].URL)
	}
	for _, id := range []string{"caps-a", "caps-b"} {
		harness.StartExecutor(t, harness.ExecutorOpts{App: jobApp, InstanceID: id, Admins: strings.Join(urls, ","), Capacity: 32,
			Heartbeat: 500 * time.Millisecond, Secret: c.secret, StartTimeout: 60 * time.Second})
	}

	create := func(name string, slots, capSlots int) int64 {
		var j apitypes.Job
		code, err := c.call(first, http.MethodPost, "/api/v1/jobs", map[string]any{
			"app": jobApp, "name": name, "handler": "demo.sleep", "cron": "0 3 1 1 *", "params": "ms=100", "slots": slots, "max_running_slots": capSlots,
		}, &j)
		require.NoError(t, err)
		require.Equal(t, http.StatusCreated, code, name)
		return j.ID
	}
	wide, narrow, single := create("wide", wideSlots, 0), create("narrow", narrowSlots, jobCap), create("single", 1, 0)
	trigger := func(id int64) int64 {
		var r struct {
			Run struct {
				ID int64 `json:"id"`
			} `json:"run"`
		}
		code, err := c.call(first, http.MethodPost, "/api/v1/jobs/"+strconv.FormatInt(id, 10)+"/trigger", map[string]any{}, &r)
		require.NoError(t, err)
		require.Equal(t, http.StatusCreated, code)
		require.NotZero(t, r.Run.ID)
		return r.Run.ID
	}
	wideRun, narrowRun := trigger(wide), trigger(narrow)
	testenv.WaitFor(t, 60*time.Second, func() (bool, error) {
		var placed int
		err := c.sql.QueryRow(`SELECT COUNT(*) FROM slot_attempt WHERE run_id IN (?, ?) AND executor_id IS NOT NULL`, wideRun, narrowRun).Scan(&placed)
		return placed > 0, err
	}, "the capped runs did not start")
	singleRun := trigger(single)
	testenv.WaitFor(t, 30*time.Second, func() (bool, error) {
		var status, reason string
		err := c.sql.QueryRow(`SELECT status, error FROM job_run WHERE id = ?`, singleRun).Scan(&status, &reason)
		if status != "pending" {
			t.Logf("the one-slot run is %s before it was seen waiting (reason %q)", status, reason)
			return true, err
		}
		return strings.HasPrefix(reason, "waiting: app chaos runs 16 of its 16 slots (max_running_slots)"), err
	}, "the one-slot run did not say that it waits for the app's cap")

	ended := func() (int, error) {
		var n int
		err := c.sql.QueryRow(`SELECT COUNT(*) FROM slot_attempt WHERE run_id = ? AND status = 'succeeded'`, wideRun).Scan(&n)
		return n, err
	}
	testenv.WaitFor(t, 90*time.Second, func() (bool, error) {
		n, err := ended()
		return n >= wideSlots/3, err
	}, "a third of the wide run did not end")
	holder, epoch := killLeader(t, c)
	killed := time.Now()
	n, err := ended()
	require.NoError(t, err)
	t.Logf("chaos: killed the leader %s (epoch %d) with %d of %d slots ended", holder, epoch, n, wideSlots)

	testenv.WaitFor(t, 180*time.Second, func() (bool, error) {
		var done int
		err := c.sql.QueryRow(`SELECT COUNT(*) FROM job_run WHERE id IN (?, ?, ?) AND status = 'succeeded'`, wideRun, narrowRun, singleRun).Scan(&done)
		return done == 3, err
	}, "the runs did not succeed after the failover")
	t.Logf("chaos: the runs succeeded %s after the kill", time.Since(killed).Round(time.Millisecond))

	// Every slot succeeded exactly once.
	for run, slots := range map[int64]int{wideRun: wideSlots, narrowRun: narrowSlots, singleRun: 1} {
		var distinct, succeeded int
		require.NoError(t, c.sql.QueryRow(`SELECT COUNT(DISTINCT slot), COUNT(*) FROM slot_attempt WHERE run_id = ? AND status = 'succeeded'`, run).Scan(&distinct, &succeeded))
		require.Equal(t, slots, distinct, "run %d: every slot succeeded", run)
		require.Equal(t, slots, succeeded, "run %d: no slot succeeded twice", run)
	}

	appMost := mostSlotsAtOnce(t, c, `r.app = ?`, jobApp)
	jobMost := mostSlotsAtOnce(t, c, `r.job_id = ?`, narrow)
	t.Logf("chaos caps summary: app cap %d, most app slots at once %d; job cap %d, most job slots at once %d; leader killed after %d slots",
		appCap, appMost, jobCap, jobMost, n)
	require.LessOrEqual(t, appMost, appCap, "more slots of the app ran at once than its cap")
	require.LessOrEqual(t, jobMost, jobCap, "more slots of the job ran at once than its cap")
	require.Equal(t, appCap, appMost, "the app used its cap")
	require.Equal(t, jobCap, jobMost, "the job used its cap")
	c.stopAdmins()
}

// mostSlotsAtOnce returns the largest number of slot attempts of the runs
// matching where (on job_run r) that ran at one instant, by the attempts'
// [started_at, finished_at) intervals as their executors reported them.
func mostSlotsAtOnce(t *testing.T, c *cluster, where string, arg any) int {
	t.Helper()
	most, err := testenv.MostAtOnce(c.sql, `SELECT a.started_at, a.finished_at FROM slot_attempt a JOIN job_run r ON r.id = a.run_id
		WHERE `+where+` AND a.started_at IS NOT NULL`, arg)
	require.NoError(t, err)
	return most
}
