package store_test

import (
	"context"
	"database/sql"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/store/storetest"
)

// TestJobPage: the job list pages through every match once, in its order,
// with each filter, a prefix or bounded substring search, and every sort;
// counts come from app_job_count or a capped count.
func TestJobPage(t *testing.T) {
	t.Parallel()
	storetest.EachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		// 30 jobs: a0 gets even i, a1 odd; every 3rd @every, every 5th
		// paused; job 7 disabled; the last ten have no next firing.
		ids := map[string]int64{}
		for i := range 30 {
			app := fmt.Sprintf("a%d", i%2)
			j := newJob(app, fmt.Sprintf("n%02d", 29-i), int64(1_000_000+i*10))
			if i >= 20 {
				j.NextFireAt = sql.NullInt64{}
			}
			if i%3 == 0 {
				j.CronExpr = "@every 1m"
			}
			id, err := s.CreateJob(ctx, j)
			require.NoError(t, err)
			ids[j.Name] = id
			if i%5 == 0 {
				require.NoError(t, s.SetJobPaused(ctx, id, true, j.NextFireAt))
			}
			if i == 7 {
				require.NoError(t, s.SetJobEnabled(ctx, id, false, sql.NullInt64{}))
			}
		}
		all := func(q store.JobQuery) ([]string, int) {
			var names []string
			pages := 0
			for {
				p, err := s.JobPage(ctx, q)
				require.NoError(t, err)
				pages++
				for _, j := range p.Jobs {
					names = append(names, j.Name)
				}
				if p.Next == nil {
					return names, pages
				}
				q.After = *p.Next
				require.Less(t, pages, 100, "the list does not end")
			}
		}
		names, pages := all(store.JobQuery{Limit: 7})
		require.Len(t, names, 30)
		require.Equal(t, "n00", names[0])
		require.Equal(t, "n29", names[29])
		require.Equal(t, 5, pages)

		names, _ = all(store.JobQuery{App: "a0", State: "paused", Limit: 2})
		require.Equal(t, []string{"n09", "n19", "n29"}, names) // i = 20, 10, 0

		names, _ = all(store.JobQuery{State: "disabled", Limit: 2})
		require.Equal(t, []string{"n22"}, names)

		names, _ = all(store.JobQuery{Name: "n1", Limit: 4})
		require.Len(t, names, 10)

		// A substring, 4 jobs examined a call: partial pages, then all.
		p, err := s.JobPage(ctx, store.JobQuery{Name: "9", Contains: true, Limit: 5, ScanLimit: 4})
		require.NoError(t, err)
		require.True(t, p.Partial)
		require.Equal(t, 4, p.Scanned)
		require.NotNil(t, p.Next)
		names, _ = all(store.JobQuery{Name: "9", Contains: true, Limit: 5, ScanLimit: 4})
		require.Equal(t, []string{"n09", "n19", "n29"}, names)

		names, _ = all(store.JobQuery{Schedule: store.ScheduleEvery, Limit: 3, ScanLimit: 7})
		require.Len(t, names, 10)

		// By next firing: soonest first (i = 0 is n29), then those with
		// none by id (the disabled i = 7, n22, lost its next firing).
		names, _ = all(store.JobQuery{Sort: store.JobSortNext, Limit: 6})
		require.Len(t, names, 30)
		require.Equal(t, "n29", names[0])
		require.Equal(t, "n10", names[18])
		require.Equal(t, "n22", names[19])
		require.Equal(t, "n09", names[20])
		names, _ = all(store.JobQuery{Sort: store.JobSortNext, Schedule: store.ScheduleCron, Limit: 4, ScanLimit: 5})
		require.Len(t, names, 20)

		names, _ = all(store.JobQuery{Sort: store.JobSortID, Apps: []string{"a1"}, Limit: 4})
		require.Len(t, names, 15)
		require.Equal(t, "n28", names[0])

		n, exact, ok, err := s.CountJobs(ctx, store.JobQuery{App: "a1"}, 10)
		require.NoError(t, err)
		require.True(t, ok && exact)
		require.EqualValues(t, 15, n)
		n, exact, ok, err = s.CountJobs(ctx, store.JobQuery{State: "scheduled"}, 10)
		require.NoError(t, err)
		require.True(t, ok)
		require.False(t, exact, "more than 10")
		require.EqualValues(t, 10, n)
		_, _, ok, err = s.CountJobs(ctx, store.JobQuery{Name: "1", Contains: true}, 10)
		require.NoError(t, err)
		require.False(t, ok, "a bounded search is not counted")
	})
}
