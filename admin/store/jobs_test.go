package store_test

import (
	"context"
	"database/sql"
	"fmt"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/store"
)

// notWritten are the columns of job that CreateJob and UpdateJob do not
// take from the caller: the database sets them, or other calls do
// (workflow_id: the workflows' writes of their inline nodes' jobs; see
// TestInlineJobsFollowTheWorkflow).
var notWritten = map[string]bool{"id": true, "paused": true, "pause_until": true, "created_at": true, "updated_at": true, "version": true,
	"workflow_id": true}

// fillJob sets every column of j that CreateJob and UpdateJob write
// (all but notWritten) to a value of its own for round, and returns their
// columns.
func fillJob(t *testing.T, j *store.Job, round int) []string {
	t.Helper()
	var cols []string
	v := reflect.ValueOf(j).Elem()
	for i, f := range reflect.VisibleFields(v.Type()) {
		col := f.Tag.Get("db")
		if f.Anonymous || col == "" || notWritten[col] || col == "app" || col == "name" {
			continue
		}
		cols = append(cols, col)
		n := int64(round*100 + i + 1)
		switch fv := v.FieldByIndex(f.Index); fv.Interface().(type) {
		case string:
			fv.SetString(fmt.Sprintf("v%d", n))
		case int, int64:
			fv.SetInt(n)
		case bool:
			fv.SetBool(round%2 == 1)
		case sql.NullInt64:
			fv.Set(reflect.ValueOf(sql.NullInt64{Int64: n, Valid: true}))
		case sql.NullString:
			fv.Set(reflect.ValueOf(sql.NullString{String: fmt.Sprintf("v%d", n), Valid: true}))
		case msg.Msg:
			fv.Set(reflect.ValueOf(msg.New(msg.Text, "text", fmt.Sprint("v", n))))
		default:
			t.Fatalf("store.Job.%s: a %s column: add it to fillJob", f.Name, f.Type)
		}
	}
	return cols
}

// TestJobEveryColumnRoundTrips sets every column of a job's definition
// (store.Job's db-tagged fields, those of embedded structs included),
// creates and updates the job and reads it back: a field added to store.Job
// without its column in the fragment JobDefinition of sql/queries.sql (or
// the reverse) fails here.
func TestJobEveryColumnRoundTrips(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		want := store.Job{App: "a", Name: "every-column"}
		cols := fillJob(t, &want, 1)
		require.Contains(t, cols, "record_max_attempts", "columns of embedded structs count")
		id, err := s.CreateJob(ctx, want)
		require.NoError(t, err)
		check := func(want store.Job) {
			t.Helper()
			got, err := s.Job(ctx, id)
			require.NoError(t, err)
			gv, wv := reflect.ValueOf(got), reflect.ValueOf(want)
			for _, f := range reflect.VisibleFields(gv.Type()) {
				if col := f.Tag.Get("db"); !f.Anonymous && col != "" && !notWritten[col] {
					require.Equal(t, wv.FieldByIndex(f.Index).Interface(), gv.FieldByIndex(f.Index).Interface(), "column %s", col)
				}
			}
			list, err := s.JobsOfApps(ctx, id-1, 1, []string{"a"})
			require.NoError(t, err)
			require.Equal(t, []store.Job{got}, list, "JobListOfApps reads what JobByID reads")
		}
		check(want)

		got, err := s.Job(ctx, id)
		require.NoError(t, err)
		want = got
		fillJob(t, &want, 2)
		require.NoError(t, s.UpdateJob(ctx, want))
		check(want)
	})
}

// TestAppJobCounts: app_job_count follows CreateJob and DeleteJob (a taken
// name or a missing job changes nothing), and apps with no job left are
// not listed.
func TestAppJobCounts(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		counts := func() map[string]int64 {
			c, err := s.AppJobCounts(ctx)
			require.NoError(t, err)
			out := map[string]int64{}
			for _, n := range c {
				out[n.App] = n.Jobs
			}
			return out
		}
		a1, err := s.CreateJob(ctx, newJob("a", "one", 0))
		require.NoError(t, err)
		_, err = s.CreateJob(ctx, newJob("a", "two", 0))
		require.NoError(t, err)
		b1, err := s.CreateJob(ctx, newJob("b", "one", 0))
		require.NoError(t, err)
		_, err = s.CreateJob(ctx, newJob("a", "one", 0))
		require.ErrorIs(t, err, store.ErrConflict)
		require.Equal(t, map[string]int64{"a": 2, "b": 1}, counts())

		require.NoError(t, s.DeleteJob(ctx, a1))
		require.NoError(t, s.DeleteJob(ctx, b1))
		require.ErrorIs(t, s.DeleteJob(ctx, b1), store.ErrNotFound)
		require.Equal(t, map[string]int64{"a": 1}, counts())
	})
}
