package chaos

import (
	"database/sql"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/deploy/dev/testenv"
)

// TestChaosCalendarShiftAcrossFailover: a firing that a business calendar
// moves (rule shift) is keyed by the moved instant, so a leader killed with
// kill -9 around that instant and its successor create exactly one run for
// it between them. Tomorrow is a holiday of a calendar whose every weekday
// works; the job fires tomorrow a few seconds after now's clock time, so
// shift previous moves the firing to today, seconds from now. The owner of
// the job's partition is killed 3s before it; its successor takes the
// partition over after the ZooKeeper session (6s), when the firing is
// late but within the misfire threshold. The log says which owner created
// the run.
func TestChaosCalendarShiftAcrossFailover(t *testing.T) {
	c := newCluster(t)
	c.startAdmins()
	c.monitor()
	defer c.stopMon()
	// Jobs firing every second: evidence of who fires, in every admin's
	// partitions (40 jobs leave an admin with 86 of 256 partitions none
	// with a chance of 1 in 10^7).
	c.createJobs(40)
	epoch, leader := c.waitActiveLeader()

	// A moment far enough from midnight (UTC) that today and tomorrow stay
	// what they are for the whole test.
	now := func() time.Time {
		ms, err := c.dbNowMS()
		require.NoError(t, err)
		return time.UnixMilli(ms).UTC()
	}
	if n := now(); n.Hour() == 23 && n.Minute() >= 57 {
		pause(time.Until(n.Truncate(24 * time.Hour).Add(24*time.Hour + 5*time.Second)))
	}
	at := now().Truncate(time.Second).Add(15 * time.Second) // the moved firing, today
	tomorrow := at.AddDate(0, 0, 1)                         // the cron's candidate, a holiday

	var cal struct {
		ID      int64  `json:"id"`
		Version string `json:"version"`
	}
	code, err := c.call(leader, http.MethodPost, "/api/v1/calendars", map[string]any{"name": "chaos", "week": "SUN-SAT",
		"days": []map[string]string{{"date": tomorrow.Format("2006-01-02"), "kind": "holiday", "name": "Chaos day"}}}, &cal)
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, code)
	var job struct {
		ID         int64     `json:"id"`
		NextFireAt time.Time `json:"next_fire_at"`
	}
	cron := fmt.Sprintf("%d %d %d %d %d *", tomorrow.Second(), tomorrow.Minute(), tomorrow.Hour(), tomorrow.Day(), int(tomorrow.Month()))
	code, err = c.call(leader, http.MethodPost, "/api/v1/jobs", map[string]any{"app": jobApp, "name": "shifted", "handler": "demo.hello",
		"cron": cron, "time_zone": "UTC", "calendar_id": cal.ID, "calendar_rule": "shift", "calendar_shift": "previous"}, &job)
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, code)
	require.Equal(t, at, job.NextFireAt.UTC(), "tomorrow's firing moved to today")
	t.Logf("chaos: job %d (%q) fires at %s, moved from %s", job.ID, cron, at.Format(time.TimeOnly), tomorrow.Format(time.DateTime))

	// Kill the owner of the job's partition 3s before the moved instant.
	// Its pre-read window (adaptive) may have created the run already;
	// otherwise the successor plans the firing on the calendar. Either way
	// there is one run.
	owner := c.ownerOf(job.ID)
	pause(time.Until(at.Add(-3 * time.Second)))
	p := c.killReplica("kill -9 the job's owner", owner, epoch)
	t.Logf("chaos: %s", p)

	// Wait until a leader ticked well past the instant, then count.
	testenv.WaitFor(t, 60*time.Second, func() (bool, error) {
		var n int
		err := c.sql.QueryRow(`SELECT COUNT(*) FROM job_run WHERE epoch >= ? AND created_at > ?`, p.newEpoch, at.Add(2*time.Second).UnixMilli()).Scan(&n)
		return n > 0, err
	}, "the successor fires after the moved instant")
	type row struct {
		ScheduledAt, ShiftedFrom int64
		Status, Version          string
		Epoch                    int64
	}
	var rows []row
	r, err := c.sql.Query(`SELECT scheduled_at, COALESCE(shifted_from, 0), status, calendar_version, epoch FROM job_run WHERE job_id = ?`, job.ID)
	require.NoError(t, err)
	for r.Next() {
		var x row
		require.NoError(t, r.Scan(&x.ScheduledAt, &x.ShiftedFrom, &x.Status, &x.Version, &x.Epoch))
		rows = append(rows, x)
	}
	require.NoError(t, r.Err())
	require.Len(t, rows, 1, "DEFECT: the moved firing must have exactly one run across the failover: %+v", rows)
	require.Equal(t, at.UnixMilli(), rows[0].ScheduledAt, "keyed by the moved instant")
	require.Equal(t, tomorrow.UnixMilli(), rows[0].ShiftedFrom, "the cron's instant kept")
	require.Equal(t, "pending", rows[0].Status, "no executor runs: it waits")
	require.Equal(t, cal.Version, rows[0].Version)
	var next sql.NullInt64
	require.NoError(t, c.sql.QueryRow(`SELECT next_fire_at FROM job WHERE id = ?`, job.ID).Scan(&next))
	require.True(t, !next.Valid || next.Int64 > tomorrow.UnixMilli(), "planned past tomorrow's candidate")
	t.Logf("chaos: one run (epoch %d; old leader epoch %d, successor %d)", rows[0].Epoch, p.oldEpoch, p.newEpoch)
	c.stopAdmins()
}
