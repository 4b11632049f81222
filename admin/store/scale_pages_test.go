package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/store/storetest"
	sqlfiles "github.com/shardjob/shardjob/sql"
)

// listCases are the queries of the console's job and run pages (GET
// /api/v1/jobs, /api/v1/runs), each called as the API calls it, on the
// scale fixture (TestScaleQueriesExamineOnlyTheirWork/ListPages: every
// query of the console's job and run pages examines O(its page) rows, a
// count up to its cap of 10,000, a substring search up to its window).
func listCases(s *store.Store) []scaleCase {
	jobs := func(q store.JobQuery) func(ctx context.Context) (int, error) {
		return func(ctx context.Context) (int, error) {
			p, err := s.JobPage(ctx, q)
			return len(p.Jobs), err
		}
	}
	runs := func(f store.RunFilter) func(ctx context.Context) (int, error) {
		return func(ctx context.Context) (int, error) {
			r, err := s.Runs(ctx, f)
			return len(r), err
		}
	}
	jobCount := func(q store.JobQuery) func(ctx context.Context) (int, error) {
		return func(ctx context.Context) (int, error) {
			n, _, _, err := s.CountJobs(ctx, q, store.DefaultListCountCap)
			return int(n), err
		}
	}
	runCount := func(f store.RunFilter) func(ctx context.Context) (int, error) {
		return func(ctx context.Context) (int, error) {
			n, _, err := s.CountRuns(ctx, f, store.DefaultListCountCap)
			return int(n), err
		}
	}
	dead := func(f store.DeadFilter) func(ctx context.Context) (int, error) {
		return func(ctx context.Context) (int, error) {
			d, err := s.DeadLetters(ctx, f)
			return len(d), err
		}
	}
	// The fixture's app3 holds jobs 375,001-500,000 (job-0375001 ...), 5 % paused.
	second := store.JobCursor{ID: 375_050, Name: "job-0375050"}
	return []scaleCase{
		{"JobPageByName (first page)", "GET /jobs: the console's first page", "2n + 100", linear(2, 100),
			jobs(store.JobQuery{Limit: 50})},
		{"JobPageByName (page 2, app)", "GET /jobs?app=&cursor=", "2n + 100", linear(2, 100),
			jobs(store.JobQuery{App: "app3", After: second, Limit: 50})},
		{"JobPageByName (name prefix)", "GET /jobs?q=job-00012", "2n + 100", linear(2, 100),
			jobs(store.JobQuery{Name: "job-00012", Limit: 50})},
		{"JobPageByName (app)", "GET /jobs?app=app3", "2n + 100", linear(2, 100),
			jobs(store.JobQuery{App: "app3", Limit: 50})},
		{"JobPageByName (app, state)", "GET /jobs?app=app3&state=paused", "2n + 100", linear(2, 100),
			jobs(store.JobQuery{App: "app3", State: "paused", Limit: 50})},
		{"JobPageByName (state)", "GET /jobs?state=disabled", "2n + 100", linear(2, 100),
			jobs(store.JobQuery{State: "disabled", Limit: 50})},
		{"JobPageByNext (first page)", "GET /jobs?sort=next_fire", "2n + 100", linear(2, 100),
			jobs(store.JobQuery{Sort: store.JobSortNext, Limit: 50})},
		{"JobPageByID (after)", "GET /jobs?after= (the first API)", "2n + 100", linear(2, 100),
			jobs(store.JobQuery{Sort: store.JobSortID, After: store.JobCursor{ID: 500_000}, Limit: 50})},
		{"JobScanByName (substring, bounded)", "GET /jobs?q=4999&match=contains", "2 × 5,000 + 2n + 100",
			func(n int) int { return 2*store.DefaultJobScanLimit + 2*n + 100 },
			jobs(store.JobQuery{Name: "4999", Contains: true, Limit: 50})},
		{"AppJobCountSum (no filter)", "GET /jobs: count of every job", "100", linear(0, 100),
			jobCount(store.JobQuery{})},
		{"JobCountCapped (app, state)", "GET /jobs?app=&state=: count up to 10,000", "2n + 100", linear(2, 100),
			jobCount(store.JobQuery{App: "app3", State: "paused"})},
		{"JobCountCapped (name prefix)", "GET /jobs?q=: count up to 10,000", "2n + 100", linear(2, 100),
			jobCount(store.JobQuery{Name: "job-00012"})},
		{"RunList (job)", "GET /runs?job_id=: one job's runs", "4n + 100", linear(4, 100),
			runs(store.RunFilter{JobID: 9, Limit: 50})},
		{"RunList (status)", "GET /runs?status=failed", "4n + 100", linear(4, 100),
			runs(store.RunFilter{Status: store.RunFailed, Limit: 50})},
		{"RunList (trigger)", "GET /runs?trigger=manual", "4n + 100", linear(4, 100),
			runs(store.RunFilter{Trigger: store.TriggerManual, Limit: 50})},
		{"RunList (app)", "GET /runs?app=app3", "4n + 100", linear(4, 100),
			runs(store.RunFilter{App: "app3", Limit: 50})},
		{"RunCountCapped (status)", "GET /runs?status=failed: count up to 10,000", "2n + 100", linear(2, 100),
			runCount(store.RunFilter{Status: store.RunFailed})},
		{"BreakersOfJobs (a page)", "GET /jobs: the breakers of a page of 50 jobs (n: the page)", "2n + 100", linear(2, 100),
			func(ctx context.Context) (int, error) {
				ids := make([]int64, 50)
				for i := range ids {
					ids[i] = int64(9_990 + i) // job 10,000 has a breaker
				}
				b, err := s.BreakersOfJobs(ctx, ids)
				if len(b) != 1 {
					return 0, fmt.Errorf("the page has %d breakers, want 1", len(b))
				}
				return len(ids), err
			}},
		{"DeadLetterList (first page)", "GET /dead: the console's first page", "2n + 100", linear(2, 100),
			dead(store.DeadFilter{Limit: 100})},
		{"DeadLetterList (class)", "GET /dead?class=permanent", "2n + 100", linear(2, 100),
			dead(store.DeadFilter{Class: "permanent", Limit: 100})},
		{"DeadLetterList (app)", "GET /dead?app=app4", "2n + 100", linear(2, 100),
			dead(store.DeadFilter{App: "app4", Limit: 100})},
		{"DeadLetterList (job)", "GET /dead?job_id=", "2n + 100", linear(2, 100),
			dead(store.DeadFilter{JobID: 500_000, Limit: 100})},
		{"DeadLetterList (class, page 2)", "GET /dead?class=retryable&cursor=", "2n + 100", linear(2, 100),
			dead(store.DeadFilter{Class: "retryable", BeforeID: 40_000, Limit: 100})},
		{"DeadLetterList (app, class, page 2)", "GET /dead?app=app4&class=retryable&cursor= (n: the app's letters read, 3 per retryable one)", "3n + 100", linear(3, 100),
			dead(store.DeadFilter{App: "app4", Class: "retryable", BeforeID: 40_000, Limit: 100})},
		{"DeadLetterCount (class)", "GET /dead?class=retryable: count up to 10,000", "2n + 100", linear(2, 100),
			func(ctx context.Context) (int, error) {
				n, _, err := s.CountDeadLetters(ctx, store.DeadFilter{Class: "retryable"}, store.DefaultListCountCap)
				return int(n), err
			}},
	}
}

// TestListPagesSearchOnSQLite: on SQLite no query of the job and run pages
// scans job or job_run, nor sorts them (USE TEMP B-TREE FOR ORDER BY):
// each reads an index range in its page's order.
func TestListPagesSearchOnSQLite(t *testing.T) {
	t.Parallel()
	s := storetest.Open(t, sqlfiles.SQLite)
	type plan struct {
		name string
		text string
		args []any
	}
	var plans []plan
	job := func(name string, q store.JobQuery, noNext bool) {
		text, args := s.JobPageSQL(q, noNext)
		plans = append(plans, plan{name, text, args})
	}
	cur := store.JobCursor{ID: 10, Name: "b", Next: 5}
	job("first page", store.JobQuery{Limit: 50}, false)
	job("page 2", store.JobQuery{After: cur, Limit: 50}, false)
	job("name prefix", store.JobQuery{Name: "job-1", Limit: 50}, false)
	job("name prefix, page 2", store.JobQuery{Name: "job-1", After: cur, Limit: 50}, false)
	job("app", store.JobQuery{App: "a", After: cur, Limit: 50}, false)
	job("app, state", store.JobQuery{App: "a", State: "paused", After: cur, Limit: 50}, false)
	job("state", store.JobQuery{State: "disabled", After: cur, Limit: 50}, false)
	job("by next fire", store.JobQuery{Sort: store.JobSortNext, After: cur, Limit: 50}, false)
	job("by next fire, none", store.JobQuery{Sort: store.JobSortNext, After: cur, Limit: 50}, true)
	job("by id", store.JobQuery{Sort: store.JobSortID, After: cur, Limit: 50}, false)
	job("handler by id", store.JobQuery{Sort: store.JobSortID, Handler: "h", After: cur, Limit: 50}, false)
	text, args := s.CountJobsSQL(store.JobQuery{App: "a", State: "paused"}, 10_000)
	plans = append(plans, plan{"count app, state", text, args})
	run := func(name string, f store.RunFilter) {
		f.BeforeAt, f.BeforeID, f.Limit = 1000, 10, 50
		text, args := s.RunListSQL(f)
		plans = append(plans, plan{name, text, args})
	}
	run("runs", store.RunFilter{})
	run("runs of a job", store.RunFilter{JobID: 9})
	run("runs by status", store.RunFilter{Status: store.RunFailed})
	run("runs by trigger", store.RunFilter{Trigger: store.TriggerManual})
	run("runs of an app", store.RunFilter{App: "a"})
	for _, p := range plans {
		steps := sqlitePlan(t, s, p.name, p.text, p.args...)
		for _, step := range steps {
			f := strings.Fields(step)
			// The first page walks an index in its order from the start
			// (LIMIT stops it); any other SCAN reads what it may not.
			walk := p.name == "first page" && strings.Contains(step, "USING INDEX")
			if len(f) >= 2 && f[0] == "SCAN" && (f[1] == "job" || f[1] == "r" || f[1] == "job_run") && !walk {
				t.Errorf("%s scans %s on SQLite: %s", p.name, f[1], strings.Join(steps, "; "))
			}
			if strings.Contains(step, "TEMP B-TREE FOR ORDER BY") && !strings.HasPrefix(p.name, "count") {
				t.Errorf("%s sorts on SQLite: %s", p.name, strings.Join(steps, "; "))
			}
		}
		t.Logf("%s: %s", p.name, strings.Join(steps, "; "))
	}
}
