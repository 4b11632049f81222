package store_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/jobrules"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/store/storetest"
)

// TestRunDeadlines: a run keeps its job's deadlines as instants (a local
// time in the job's zone, across a DST change), the leader's query finds
// it once a deadline passed, and marking it checked moves it on to its
// next deadline, then out of the query.
func TestRunDeadlines(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		j := newJob("a", "nightly", 0)
		j.TimeZone = "Europe/Berlin"
		j.JobDeadlines = store.JobDeadlines{StartDeadline: "10m", FinishDeadline: "06:00", DeadlineAction: store.DeadlineCancel}
		id, err := s.CreateJob(ctx, j)
		require.NoError(t, err)
		j, err = s.Job(ctx, id)
		require.NoError(t, err)
		require.Equal(t, store.JobDeadlines{StartDeadline: "10m", FinishDeadline: "06:00", DeadlineAction: store.DeadlineCancel}, j.JobDeadlines)

		// 23:00 CET on 28 March 2026; the clocks go forward that night.
		at := time.Date(2026, 3, 28, 22, 0, 0, 0, time.UTC)
		startAt, finishAt := at.Add(10*time.Minute).UnixMilli(), time.Date(2026, 3, 29, 4, 0, 0, 0, time.UTC).UnixMilli()
		run, created, err := s.InsertRun(ctx, 1, jobrules.NewRun(j, at.UnixMilli(), store.TriggerCron, store.RunPending))
		require.NoError(t, err)
		require.True(t, created)
		skipped, _, err := s.InsertRun(ctx, 1, jobrules.NewRun(j, at.Add(time.Hour).UnixMilli(), store.TriggerCron, store.RunSkipped))
		require.NoError(t, err)

		r, err := s.Run(ctx, run.ID)
		require.NoError(t, err)
		require.Equal(t, sql.NullInt64{Int64: startAt, Valid: true}, r.StartDeadlineAt)
		require.Equal(t, sql.NullInt64{Int64: finishAt, Valid: true}, r.FinishDeadlineAt, "06:00 CEST")
		require.Equal(t, store.DeadlineCancel, r.DeadlineAction)
		r, err = s.Run(ctx, skipped.ID)
		require.NoError(t, err)
		require.False(t, r.StartDeadlineAt.Valid || r.FinishDeadlineAt.Valid, "a skipped firing has no deadlines")
		require.Empty(t, r.DeadlineAction)

		due, err := s.DeadlinesDue(ctx, startAt-1, 100)
		require.NoError(t, err)
		require.Empty(t, due, "no deadline has passed")
		due, err = s.DeadlinesDue(ctx, startAt, 100)
		require.NoError(t, err)
		require.Len(t, due, 1)
		d := due[0]
		require.Equal(t, run.ID, d.ID)
		require.Equal(t, "a", d.App)
		require.Equal(t, "nightly", d.JobName)
		require.Equal(t, store.RunPending, d.Status)
		require.Equal(t, sql.NullInt64{Int64: startAt, Valid: true}, d.DeadlineCheckAt)
		require.False(t, d.FirstStartedAt.Valid)
		require.False(t, d.FinishedAt.Valid)

		require.NoError(t, s.MarkDeadlinesChecked(ctx, []store.DeadlineChecked{{RunID: run.ID, Next: d.FinishDeadlineAt}}))
		due, err = s.DeadlinesDue(ctx, finishAt-1, 100)
		require.NoError(t, err)
		require.Empty(t, due, "the start deadline is checked")
		due, err = s.DeadlinesDue(ctx, finishAt, 100)
		require.NoError(t, err)
		require.Len(t, due, 1)
		require.Equal(t, sql.NullInt64{Int64: finishAt, Valid: true}, due[0].DeadlineCheckAt)
		require.NoError(t, s.MarkDeadlinesChecked(ctx, []store.DeadlineChecked{{RunID: run.ID}}))
		due, err = s.DeadlinesDue(ctx, finishAt+int64(time.Hour/time.Millisecond), 100)
		require.NoError(t, err)
		require.Empty(t, due, "both are checked")
		r, err = s.Run(ctx, run.ID)
		require.NoError(t, err)
		require.Equal(t, sql.NullInt64{Int64: finishAt, Valid: true}, r.FinishDeadlineAt, "the run still shows its deadlines")

		// Migration 0020 goes down and up again.
		if !storetest.Stepped(s.Dialect()) {
			return // no step of its own on PostgreSQL
		}
		require.NoError(t, s.MigrateDown(ctx, 19))
		_, err = s.Migrate(ctx)
		require.NoError(t, err)
		j, err = s.Job(ctx, id)
		require.NoError(t, err)
		require.Equal(t, store.JobDeadlines{DeadlineAction: store.DeadlineAlarm}, j.JobDeadlines, "an existing job gets no deadlines and the default action")
	})
}

// TestDeadlinesDueUsesItsIndex: the leader's query per tick reads runs by
// idx_run_deadline_check, whose range holds only unchecked deadlines. The
// tables are empty: PostgreSQL's planner, which would scan an empty table
// whole, is told to use an index where it can (what it chooses on a table
// of any size), so that the plan shows whether the index serves the query.
func TestDeadlinesDueUsesItsIndex(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, s *store.Store) {
		explain := "EXPLAIN "
		if s.Dialect() == "sqlite" {
			explain = "EXPLAIN QUERY PLAN "
		}
		tx, err := s.DB().Beginx()
		require.NoError(t, err)
		defer tx.Rollback() //nolint:errcheck // read only
		if s.Dialect() == "postgres" {
			_, err = tx.Exec("SET LOCAL enable_seqscan = off")
			require.NoError(t, err)
		}
		rows, err := tx.Queryx(explain+s.DeadlinesDueQuery(), int64(1), 10)
		require.NoError(t, err)
		defer rows.Close()
		var plan strings.Builder
		for rows.Next() {
			cols, err := rows.SliceScan()
			require.NoError(t, err)
			for _, c := range cols {
				fmt.Fprintf(&plan, "%s ", c)
			}
			plan.WriteString("\n")
		}
		require.NoError(t, rows.Err())
		require.Contains(t, plan.String(), "idx_run_deadline_check", plan.String())
	})
}
