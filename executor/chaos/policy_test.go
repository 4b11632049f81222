package chaos

import (
	"context"
	"net/http"
	"time"

	"github.com/stretchr/testify/require"
)

// jobPolicyRun is the last phase: the records policy of a job's definition
// reaches the handler's Processor through the admin and the executor. A job
// of demo.ledger (whose own scope would be per run) says dedup_scope
// "settle:{date}" in Asia/Shanghai: two runs scheduled on the same Shanghai
// day share one scope (the second books nothing), a run of the next day
// books everything again.
func (c *cluster) jobPolicyRun(sum *summary) {
	t := c.t
	const records = 2000
	enabled := false
	var job struct {
		ID         int64  `json:"id"`
		DedupScope string `json:"dedup_scope"`
	}
	code, err := c.API.Call(context.Background(), http.MethodPost, "/api/v1/jobs", map[string]any{
		"app": app, "name": "ledger-policy", "handler": "demo.ledger", "cron": "0 0 1 1 *",
		"time_zone": "Asia/Shanghai", "slots": slots, "params": "records=2000;batch=100",
		"enabled": &enabled, "dedup_scope": "settle:{date}", "uncertain_policy": "retry", "record_max_attempts": 5,
	}, &job)
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, code)
	require.Equal(t, "settle:{date}", job.DedupScope)

	runAt := func(at time.Time) (processed, skipped int64) {
		t.Helper()
		run, created := c.trigger(job.ID, &at)
		require.True(t, created)
		r, atts := c.WaitRunEnded(run.ID, nil)
		require.Equal(t, "succeeded", r.Status, "run %d: %s", r.ID, r.Error)
		for _, a := range atts {
			if a.Current {
				processed += a.Processed
				skipped += a.Skipped
			}
		}
		return processed, skipped
	}
	// Past instants (a run scheduled in the future waits for its time):
	// 20:00 UTC is 04:00 on 11 January in Shanghai; 03:00 UTC the next
	// morning is 11:00 the same Shanghai day; 17:00 UTC is 01:00 on 12 January.
	day1a := time.Date(2026, 1, 10, 20, 0, 0, 0, time.UTC)
	day1b := time.Date(2026, 1, 11, 3, 0, 0, 0, time.UTC)
	day2 := time.Date(2026, 1, 11, 17, 0, 0, 0, time.UTC)

	p, s := runAt(day1a)
	require.Equal(t, [2]int64{records, 0}, [2]int64{p, s}, "first run of the day: (processed, skipped)")
	d := c.dedupState(job.ID, "settle:2026-01-11")
	requireAllKeys(t, d, records, "scope settle:2026-01-11")
	require.Equal(t, map[string]int64{"done": records}, d.ByStatus)
	require.Equal(t, int64(records), d.LedgerRows)

	p, s = runAt(day1b)
	require.Equal(t, [2]int64{0, records}, [2]int64{p, s}, "second run of the same Shanghai day: everything skipped")
	require.Equal(t, int64(records), c.dedupState(job.ID, "settle:2026-01-11").LedgerRows, "no ledger row booked twice")

	p, s = runAt(day2)
	require.Equal(t, [2]int64{records, 0}, [2]int64{p, s}, "the next day is a scope of its own")
	d = c.dedupState(job.ID, "settle:2026-01-12")
	requireAllKeys(t, d, records, "scope settle:2026-01-12")
	require.Equal(t, int64(2*records), d.LedgerRows)
	require.Zero(t, c.count("SELECT COUNT(*) FROM dedup_record WHERE job_id = ? AND scope LIKE 'run:%'", job.ID),
		"the handler's own per-run scope was not used")
	sum.add("job policy: dedup_scope settle:{date} (Asia/Shanghai) → 3 runs booked %d, 0, %d records", records, records)
}
