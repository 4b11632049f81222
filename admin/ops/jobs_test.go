package ops_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/internal/clock"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/ops"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/store/storetest"
	"github.com/shardjob/shardjob/deploy/dev/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

var (
	t0       = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	operator = ops.Actor{User: store.User{Username: "olga", Role: store.RoleOperator}}
	// billingOnly may manage the jobs of app billing only.
	billingOnly = ops.Actor{User: store.User{Username: "bill", Role: store.RoleOperator, Apps: "billing"}}
)

// eachDialect runs fn on a fresh store of each dialect, with a Service on
// it whose clock stands at t0.
func eachDialect(t *testing.T, fn func(t *testing.T, ctx context.Context, st *store.Store, svc *ops.Service)) {
	storetest.EachDialect(t, func(t *testing.T, st *store.Store) {
		fn(t, context.Background(), st, ops.New(ops.Config{Store: st, Clock: clock.NewManual(t0)}))
	})
}

// spec is a valid job spec of app and name, firing every hour.
func spec(app, name string) apitypes.JobSpec {
	return apitypes.JobSpec{JobDef: apitypes.JobDef{App: app, Name: name, Handler: "demo", Cron: "0 * * * *"}}
}

// refused asserts that err is an *ops.Error of kind whose field field
// (none when "") has the message code code.
func refused(t *testing.T, err error, kind error, field string, code msg.Code) {
	t.Helper()
	_ = refusal(t, err, kind, field, code)
}

// refusal is refused, returning the refusal.
func refusal(t *testing.T, err error, kind error, field string, code msg.Code) *ops.Error {
	t.Helper()
	require.ErrorIs(t, err, kind)
	var e *ops.Error
	require.ErrorAs(t, err, &e)
	if field != "" {
		require.Equal(t, code, e.Fields[field].Code, "field %s of %v", field, e.Fields)
	}
	return e
}

func TestCreateJobRules(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, ctx context.Context, st *store.Store, svc *ops.Service) {

		j, err := svc.CreateJob(ctx, operator, spec("billing", "nightly"))
		require.NoError(t, err)
		require.NotZero(t, j.ID)
		require.Equal(t, apitypes.JobScheduled, j.State)
		// No executor of the app yet: a warning, not a refusal.
		require.Len(t, j.WarningCodes, 1)
		require.Equal(t, string(msg.JobNoExecutor), j.WarningCodes[0].Code)

		_, err = svc.CreateJob(ctx, operator, spec("billing", "nightly"))
		refused(t, err, ops.ErrConflict, "name", msg.JobNameTaken)

		_, err = svc.CreateJob(ctx, billingOnly, spec("payroll", "nightly"))
		e := refusal(t, err, ops.ErrForbidden, "app", msg.NotYourApp)
		require.Equal(t, "you may not manage jobs of app payroll", e.Error())

		bad := spec("billing", "bad")
		bad.Cron = "61 * * * *"
		_, err = svc.CreateJob(ctx, operator, bad)
		e = refusal(t, err, ops.ErrInvalid, "", "")
		require.Contains(t, e.Fields, "cron")
		require.True(t, strings.HasPrefix(e.Error(), "invalid job: cron: "), e.Error())

		// A child of an app the actor may not see does not exist for them.
		other, err := svc.CreateJob(ctx, operator, spec("payroll", "monthly"))
		require.NoError(t, err)
		withChild := spec("billing", "parent")
		withChild.ChildJobIDs = []int64{other.ID}
		_, err = svc.CreateJob(ctx, billingOnly, withChild)
		e = refusal(t, err, ops.ErrInvalid, "child_job_ids", msg.JobChildMissing)
		require.Equal(t, "child job does not exist", e.Error())

		waits := spec("billing", "waiting")
		waits.WaitFor = []apitypes.WorkflowWait{{Job: &apitypes.WorkflowNameRef{Name: "nowhere"}}}
		w, err := svc.CreateJob(ctx, operator, waits)
		require.NoError(t, err)
		require.Len(t, w.WarningCodes, 2)
		require.Equal(t, string(msg.JobWaitTargetMissing), w.WarningCodes[1].Code)

		// A wait for a run of an app the actor may not act on is refused,
		// whether or not that job exists (its runs would tell when that
		// app's runs succeed); one of their own app that does not exist
		// yet is a warning.
		for _, target := range []apitypes.WorkflowWait{
			{Job: &apitypes.WorkflowNameRef{App: "payroll", Name: "monthly"}},
			{Job: &apitypes.WorkflowNameRef{App: "payroll", Name: "no-such-job"}},
			{Workflow: &apitypes.WorkflowNameRef{App: "payroll", Name: "close"}},
		} {
			oracle := spec("billing", "oracle")
			oracle.WaitFor = []apitypes.WorkflowWait{{Job: &apitypes.WorkflowNameRef{Name: "nowhere"}}, target}
			_, err = svc.CreateJob(ctx, billingOnly, oracle)
			refused(t, err, ops.ErrInvalid, "wait_for[1].app", msg.NotYourApp)
		}
		ownWait := spec("billing", "own-wait")
		ownWait.WaitFor = []apitypes.WorkflowWait{{Job: &apitypes.WorkflowNameRef{Name: "later"}}}
		_, err = svc.CreateJob(ctx, billingOnly, ownWait)
		require.NoError(t, err)

		audit, err := st.AuditLog(ctx, 0, 10, store.AuditScope{All: true}, store.AuditFilter{Action: "job.create"})
		require.NoError(t, err)
		require.Len(t, audit, 4, "the refused creations wrote nothing")
		require.Equal(t, "bill", audit[0].Actor)
		require.Equal(t, "olga", audit[1].Actor)
		require.Equal(t, "billing", audit[1].App)
	})
}

func TestUpdateJobRefusesACycleOfChildJobs(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, ctx context.Context, st *store.Store, svc *ops.Service) {
		a, err := svc.CreateJob(ctx, operator, spec("billing", "a"))
		require.NoError(t, err)
		b := spec("billing", "b")
		b.ChildJobIDs = []int64{a.ID}
		bj, err := svc.CreateJob(ctx, operator, b)
		require.NoError(t, err)

		loop := a.JobSpec
		loop.ChildJobIDs = []int64{bj.ID}
		_, err = svc.UpdateJob(ctx, operator, a.ID, loop)
		e := refusal(t, err, ops.ErrInvalid, "child_job_ids", msg.JobChildCycle)
		require.Equal(t, "child jobs would form a cycle", e.Error())

		// The same edit without the loop is saved; a stale version is not.
		loop.ChildJobIDs = nil
		loop.Description = "edited"
		saved, err := svc.UpdateJob(ctx, operator, a.ID, loop)
		require.NoError(t, err)
		require.Equal(t, "edited", saved.Description)
		_, err = svc.UpdateJob(ctx, operator, a.ID, loop)
		refused(t, err, ops.ErrConflict, "", "")

		noVersion := saved.JobSpec
		noVersion.Version = 0
		_, err = svc.UpdateJob(ctx, operator, a.ID, noVersion)
		refused(t, err, ops.ErrInvalid, "version", msg.JobVersionRequired)
		renamed := saved.JobSpec
		renamed.Name = "c"
		_, err = svc.UpdateJob(ctx, operator, a.ID, renamed)
		refused(t, err, ops.ErrInvalid, "name", msg.MustStay)
	})
}

// The pause rule of an edit: a job paused until resumed stays without a
// next firing; a job paused until an instant gets the new definition's.
func TestUpdateJobKeepsItPaused(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, ctx context.Context, st *store.Store, svc *ops.Service) {
		create := func(name string) apitypes.Job {
			j, err := svc.CreateJob(ctx, operator, spec("billing", name))
			require.NoError(t, err)
			return j
		}
		edit := func(j apitypes.Job) store.Job {
			s := j.JobSpec
			s.Cron = "30 * * * *"
			_, err := svc.UpdateJob(ctx, operator, j.ID, s)
			require.NoError(t, err)
			row, err := st.Job(ctx, j.ID)
			require.NoError(t, err)
			return row
		}

		paused, err := svc.PauseJob(ctx, operator, create("paused").ID)
		require.NoError(t, err)
		row := edit(paused)
		require.True(t, row.Paused)
		require.False(t, row.NextFireAt.Valid, "stays paused; resume computes the next firing")
		resumed, err := svc.ResumeJob(ctx, operator, row.ID)
		require.NoError(t, err)
		require.Equal(t, apitypes.JobScheduled, resumed.State)
		row, err = st.Job(ctx, row.ID)
		require.NoError(t, err)
		require.Equal(t, t0.Add(30*time.Minute).UnixMilli(), row.NextFireAt.Int64)

		_, err = svc.PauseJobUntil(ctx, operator, row.ID, t0.Add(-time.Minute))
		refused(t, err, ops.ErrInvalid, "until", msg.JobPauseUntilPast)

		until, err := svc.PauseJobUntil(ctx, operator, create("until").ID, t0.Add(3*time.Hour))
		require.NoError(t, err)
		row = edit(until)
		require.True(t, row.Paused)
		require.Equal(t, t0.Add(30*time.Minute).UnixMilli(), row.NextFireAt.Int64, "the leader decides it when the pause ends")
	})
}

func TestJobOfAnotherAppDoesNotExist(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, ctx context.Context, st *store.Store, svc *ops.Service) {
		j, err := svc.CreateJob(ctx, operator, spec("payroll", "monthly"))
		require.NoError(t, err)
		_, err = svc.Job(ctx, billingOnly, j.ID)
		e := refusal(t, err, ops.ErrNotFound, "", "")
		require.Equal(t, "job", e.Object)
		require.ErrorIs(t, svc.DeleteJob(ctx, billingOnly, j.ID), ops.ErrNotFound)
		_, _, err = svc.TriggerJob(ctx, billingOnly, j.ID, apitypes.TriggerRequest{})
		require.ErrorIs(t, err, ops.ErrNotFound)
		_, err = svc.Job(ctx, operator, j.ID+100)
		require.ErrorIs(t, err, ops.ErrNotFound)
	})
}

func TestTriggerAndDeleteJob(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, ctx context.Context, st *store.Store, svc *ops.Service) {
		_, err := st.ClaimEpoch(ctx, 1, "test")
		require.NoError(t, err)
		j, err := svc.CreateJob(ctx, operator, spec("billing", "nightly"))
		require.NoError(t, err)

		big := strings.Repeat("x", 1<<17)
		_, _, err = svc.TriggerJob(ctx, operator, j.ID, apitypes.TriggerRequest{Params: &big})
		refused(t, err, ops.ErrInvalid, "params", msg.ValueMaxBytes)

		at := t0.Add(-time.Hour)
		params := "p=1"
		req := apitypes.TriggerRequest{Params: &params, ScheduledAt: &at}
		run, created, err := svc.TriggerJob(ctx, operator, j.ID, req)
		require.NoError(t, err)
		require.True(t, created)
		require.Equal(t, store.TriggerAPI, run.TriggerKind)
		require.Equal(t, "p=1", run.Params)
		again, created, err := svc.TriggerJob(ctx, operator, j.ID, req)
		require.NoError(t, err)
		require.False(t, created, "the run key makes a repeat idempotent")
		require.Equal(t, run.ID, again.ID)

		ok, err := st.StartRun(ctx, 1, run.ID, time.Hour, []store.NewAttempt{{Slot: 0, Attempt: 1}})
		require.NoError(t, err)
		require.True(t, ok)
		err = svc.DeleteJob(ctx, operator, j.ID)
		refused(t, err, ops.ErrConflict, "id", msg.JobDeleteRunning)
	})
}
