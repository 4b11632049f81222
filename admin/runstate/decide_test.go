package runstate

import (
	"database/sql"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/sdk/protocol"
)

func out(token, executor int64, status string) store.SlotOutcome {
	return store.SlotOutcome{ExecutorID: executor, SlotResult: protocol.SlotResult{Token: token, Status: status}}
}

func att(token int64, status string, current bool, executor int64) store.AttemptState {
	return store.AttemptState{Token: token, RunID: 100, Status: status, Current: current, ExecutorID: sql.NullInt64{Int64: executor, Valid: executor > 0}}
}

func TestAccept(t *testing.T) {
	t.Parallel()
	ok, fail := store.AttemptSucceeded, store.AttemptFailed
	cases := []struct {
		name     string
		cur      []store.AttemptState
		outcomes []store.SlotOutcome
		accepted []bool
		applied  []store.SlotOutcome
	}{
		{"unknown token", nil, []store.SlotOutcome{out(1, 7, ok)}, []bool{false}, nil},
		{"current assigned attempt of the executor", []store.AttemptState{att(1, store.AttemptAssigned, true, 7)},
			[]store.SlotOutcome{out(1, 7, ok)}, []bool{true}, []store.SlotOutcome{out(1, 7, ok)}},
		{"current running attempt", []store.AttemptState{att(1, store.AttemptRunning, true, 7)},
			[]store.SlotOutcome{out(1, 7, fail)}, []bool{true}, []store.SlotOutcome{out(1, 7, fail)}},
		{"another executor's token", []store.AttemptState{att(1, store.AttemptRunning, true, 7)},
			[]store.SlotOutcome{out(1, 8, ok)}, []bool{false}, nil},
		{"unplaced attempt", []store.AttemptState{att(1, store.AttemptAssigned, true, 0)},
			[]store.SlotOutcome{out(1, 0, ok)}, []bool{false}, nil},
		{"superseded attempt", []store.AttemptState{att(1, store.AttemptLost, false, 7)},
			[]store.SlotOutcome{out(1, 7, ok)}, []bool{false}, nil},
		{"superseded attempt with the same status", []store.AttemptState{att(1, ok, false, 7)},
			[]store.SlotOutcome{out(1, 7, ok)}, []bool{false}, nil},
		{"re-delivery of the recorded outcome", []store.AttemptState{att(1, ok, true, 7)},
			[]store.SlotOutcome{out(1, 7, ok)}, []bool{true}, nil},
		{"another outcome after the recorded one", []store.AttemptState{att(1, ok, true, 7)},
			[]store.SlotOutcome{out(1, 7, fail)}, []bool{false}, nil},
		{"re-delivery by another executor", []store.AttemptState{att(1, ok, true, 7)},
			[]store.SlotOutcome{out(1, 8, ok)}, []bool{false}, nil},
		{"twice in one batch: applied once, accepted twice", []store.AttemptState{att(1, store.AttemptRunning, true, 7)},
			[]store.SlotOutcome{out(1, 7, ok), out(1, 7, ok)}, []bool{true, true}, []store.SlotOutcome{out(1, 7, ok)}},
		{"twice in one batch, another outcome second", []store.AttemptState{att(1, store.AttemptRunning, true, 7)},
			[]store.SlotOutcome{out(1, 7, ok), out(1, 7, fail)}, []bool{true, false}, []store.SlotOutcome{out(1, 7, ok)}},
		{"an active status first is replaced by the final one", []store.AttemptState{att(1, store.AttemptAssigned, true, 7)},
			[]store.SlotOutcome{out(1, 7, store.AttemptRunning), out(1, 7, ok)}, []bool{true, true}, []store.SlotOutcome{out(1, 7, ok)}},
		{"a batch keeps its order", []store.AttemptState{att(1, store.AttemptRunning, true, 7), att(2, store.AttemptRunning, true, 7)},
			[]store.SlotOutcome{out(2, 7, fail), out(3, 7, ok), out(1, 7, ok)}, []bool{true, false, true},
			[]store.SlotOutcome{out(2, 7, fail), out(1, 7, ok)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cur := map[int64]store.AttemptState{}
			for _, a := range c.cur {
				cur[a.Token] = a
			}
			before := len(cur)
			accepted, applied := accept(c.outcomes, cur)
			require.Equal(t, c.accepted, accepted)
			require.Equal(t, c.applied, applied)
			require.Len(t, cur, before, "the locked attempts are not changed")
			for _, a := range c.cur {
				require.Equal(t, a, cur[a.Token])
			}
		})
	}
}

func TestSlotAlarms(t *testing.T) {
	t.Parallel()
	info := map[int64]store.AttemptInfo{
		1: {Token: 1, RunID: 10, Slot: 0, JobID: 5, Failures: 2, RetryMax: 2, JobName: "nightly", App: "billing"},
		2: {Token: 2, RunID: 10, Slot: 1, JobID: 5, Failures: 0, RetryMax: 2, JobName: "nightly", App: "billing"},
		3: {Token: 3, RunID: 11, Slot: 0, JobID: 0, Failures: 0, RetryMax: 0, JobName: "", App: "ops"},
	}
	failed := func(tok int64, msg string) store.SlotOutcome {
		o := out(tok, 7, store.AttemptFailed)
		o.Error = msg
		return o
	}
	permanent := failed(2, "account closed")
	permanent.ErrorClass = protocol.ClassPermanent
	uncertain := out(2, 7, store.AttemptSucceeded)
	uncertain.Uncertain = 3
	cases := []struct {
		name    string
		applied []store.SlotOutcome
		want    []store.Alarm
	}{
		{"success raises nothing", []store.SlotOutcome{out(2, 7, store.AttemptSucceeded)}, nil},
		{"failure with retries left raises nothing", []store.SlotOutcome{failed(2, "x")}, nil},
		{"cancelled raises nothing", []store.SlotOutcome{out(1, 7, store.AttemptCancelled)}, nil},
		{"failure on the last allowed attempt: slot_dead", []store.SlotOutcome{failed(1, "boom")}, []store.Alarm{{
			Kind: store.AlarmSlotDead, Severity: "critical", JobID: sql.NullInt64{Int64: 5, Valid: true}, RunID: sql.NullInt64{Int64: 10, Valid: true},
			App: "billing", DedupKey: "slot_dead:1",
			Message: "job nightly run 10: slot 0 failed on its last allowed attempt (3 failure(s), retry_max 2): boom",
		}}},
		{"permanent failure with retries left: slot_dead", []store.SlotOutcome{permanent}, []store.Alarm{{
			Kind: store.AlarmSlotDead, Severity: "critical", JobID: sql.NullInt64{Int64: 5, Valid: true}, RunID: sql.NullInt64{Int64: 10, Valid: true},
			App: "billing", DedupKey: "slot_dead:2",
			Message: "job nightly run 10: slot 1 failed permanently (not retried): account closed",
		}}},
		{"deleted job, no retries: slot_dead without a job", []store.SlotOutcome{failed(3, "gone")}, []store.Alarm{{
			Kind: store.AlarmSlotDead, Severity: "critical", RunID: sql.NullInt64{Int64: 11, Valid: true},
			App: "ops", DedupKey: "slot_dead:3",
			Message: "job  run 11: slot 0 failed on its last allowed attempt (1 failure(s), retry_max 0): gone",
		}}},
		{"uncertain records skipped: records_uncertain", []store.SlotOutcome{uncertain}, []store.Alarm{{
			Kind: store.AlarmRecordsUncertain, Severity: "critical", JobID: sql.NullInt64{Int64: 5, Valid: true}, RunID: sql.NullInt64{Int64: 10, Valid: true},
			App: "billing", DedupKey: "records_uncertain:2",
			Message: "job nightly run 10 slot 1: 3 record(s) left pending by a crashed attempt were skipped (policy skip): their effect may or may not have happened; check them in the dedup table",
		}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got := slotAlarms(c.applied, info)
			for i := range got { // compared in English: the code's text
				require.NotEmpty(t, got[i].Msg.Code)
				got[i].Message, got[i].Msg = got[i].Msg.String(), msg.Msg{}
			}
			require.Equal(t, c.want, got)
		})
	}
}

// TestOutcome: how a run without active slots ends, and its reason in
// proper English ("1 slot failed", "8 slots failed"; issue 30: not "8
// slot(s) failed").
func TestOutcome(t *testing.T) {
	t.Parallel()
	cases := []struct {
		succeeded, failed int
		status, errText   string
	}{
		{3, 0, store.RunSucceeded, ""},
		{0, 0, store.RunSucceeded, ""}, // no current attempt
		{0, 1, store.RunFailed, "1 slot failed"},
		{0, 8, store.RunFailed, "8 slots failed"},
		{1, 1, store.RunPartiallyFailed, "1 of 2 slots failed"},
		{1, 2, store.RunPartiallyFailed, "2 of 3 slots failed"},
	}
	for _, c := range cases {
		status, reason := outcome(store.SlotCounts{Succeeded: c.succeeded, Failed: c.failed})
		require.Equal(t, c.status, status, "%d succeeded, %d failed", c.succeeded, c.failed)
		require.Equal(t, c.errText, reason.String())
	}
}

func TestSettle(t *testing.T) {
	t.Parallel()
	const now = 5000
	run := func(id int64, status string) store.LockedRun {
		return store.LockedRun{ID: id, JobID: 50 + id, App: "app", Status: status, Epoch: 3, Now: now}
	}
	twoFailed, oneOfTwo := msg.New(msg.RunSlotsFailed, "failed", 2), msg.New(msg.RunSlotsPartlyFailed, "failed", 1, "total", 2)
	cases := []struct {
		name    string
		runs    []store.LockedRun
		counts  map[int64]store.SlotCounts
		rows    []store.RunSettlement
		alarms  []store.Alarm
		parents []parent
	}{
		{"nothing locked", nil, nil, nil, nil, nil},
		{"active slots: counters only", []store.LockedRun{run(1, store.RunRunning)},
			map[int64]store.SlotCounts{1: {RunID: 1, Succeeded: 1, Active: 1, Children: "9"}},
			[]store.RunSettlement{{ID: 1, Succeeded: 1}}, nil, nil},
		{"succeeded without children", []store.LockedRun{run(1, store.RunRunning)},
			map[int64]store.SlotCounts{1: {RunID: 1, Succeeded: 2}},
			[]store.RunSettlement{{ID: 1, Succeeded: 2, To: store.RunSucceeded, FinishedAt: now}}, nil, nil},
		{"succeeded with children: triggers them", []store.LockedRun{run(1, store.RunRunning)},
			map[int64]store.SlotCounts{1: {RunID: 1, Succeeded: 2, Children: "9, 8,x"}},
			[]store.RunSettlement{{ID: 1, Succeeded: 2, To: store.RunSucceeded, FinishedAt: now}}, nil,
			[]parent{{RunID: 1, Epoch: 3, Children: []int64{9, 8}}}},
		{"failed: run_failed, no children", []store.LockedRun{run(2, store.RunRunning)},
			map[int64]store.SlotCounts{2: {RunID: 2, Failed: 2, Children: "9"}},
			[]store.RunSettlement{{ID: 2, Failed: 2, To: store.RunFailed, Reason: twoFailed, FinishedAt: now}},
			[]store.Alarm{{Kind: store.AlarmRunFailed, Severity: "critical", JobID: sql.NullInt64{Int64: 52, Valid: true}, RunID: sql.NullInt64{Int64: 2, Valid: true},
				App: "app", DedupKey: "run_failed:2:5000", Msg: msg.New(msg.AlarmRunFailed, "run", 2, "reason", twoFailed)}}, nil},
		{"partially failed", []store.LockedRun{run(3, store.RunRunning)},
			map[int64]store.SlotCounts{3: {RunID: 3, Succeeded: 1, Failed: 1}},
			[]store.RunSettlement{{ID: 3, Succeeded: 1, Failed: 1, To: store.RunPartiallyFailed, Reason: oneOfTwo, FinishedAt: now}},
			[]store.Alarm{{Kind: store.AlarmRunFailed, Severity: "critical", JobID: sql.NullInt64{Int64: 53, Valid: true}, RunID: sql.NullInt64{Int64: 3, Valid: true},
				App: "app", DedupKey: "run_failed:3:5000", Msg: msg.New(msg.AlarmRunPartlyFailed, "run", 3, "reason", oneOfTwo)}}, nil},
		{"a run no longer running does not end again", []store.LockedRun{run(4, store.RunCancelled)},
			map[int64]store.SlotCounts{4: {RunID: 4, Succeeded: 1}},
			[]store.RunSettlement{{ID: 4, Succeeded: 1}}, nil, nil},
		{"no current attempt: succeeded with zero counters", []store.LockedRun{run(5, store.RunRunning)}, nil,
			[]store.RunSettlement{{ID: 5, To: store.RunSucceeded, FinishedAt: now}}, nil, nil},
		{"several runs in lock order", []store.LockedRun{run(1, store.RunRunning), run(2, store.RunRunning)},
			map[int64]store.SlotCounts{1: {RunID: 1, Active: 2}, 2: {RunID: 2, Succeeded: 1}},
			[]store.RunSettlement{{ID: 1}, {ID: 2, Succeeded: 1, To: store.RunSucceeded, FinishedAt: now}}, nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			rows, alarms, parents := settle(c.runs, c.counts)
			require.Equal(t, c.rows, rows)
			require.Equal(t, c.alarms, alarms)
			require.Equal(t, c.parents, parents)
		})
	}
}

func TestChildRun(t *testing.T) {
	t.Parallel()
	p := parent{RunID: 7, Epoch: 3}
	job := store.ChildJob{ID: 9, App: "a", SlotCount: 4, Params: "x=1", Enabled: true, TimeZone: "Asia/Shanghai",
		RecordsPolicy: store.RecordsPolicy{DedupScope: "job", UncertainPolicy: "skip", RecordMaxAttempts: 5}}
	r, ok := childRun(p, job, 1234)
	require.True(t, ok)
	require.Equal(t, store.NewRun{JobID: 9, App: "a", ScheduledAt: 1234, TriggerKind: store.TriggerChild, Status: store.RunPending, Params: "x=1",
		SlotCount: 4, ParentRunID: 7, TimeZone: "Asia/Shanghai",
		RecordsPolicy: store.RecordsPolicy{DedupScope: "job", UncertainPolicy: "skip", RecordMaxAttempts: 5}}, r)
	job.Enabled = false
	_, ok = childRun(p, job, 1234)
	require.False(t, ok, "a disabled child is not triggered")
}

func TestTransition(t *testing.T) {
	t.Parallel()
	at := sql.NullInt64{Int64: 42, Valid: true}
	cases := []struct {
		to                string
		started, finished sql.NullInt64
	}{
		{store.RunRunning, at, sql.NullInt64{}},
		{store.RunPending, sql.NullInt64{}, sql.NullInt64{}},
		{store.RunSucceeded, sql.NullInt64{}, at},
		{store.RunFailed, sql.NullInt64{}, at},
		{store.RunPartiallyFailed, sql.NullInt64{}, at},
		{store.RunCancelled, sql.NullInt64{}, at},
		{store.RunSkipped, sql.NullInt64{}, at},
	}
	for _, c := range cases {
		why := msg.New(msg.RunJobDeleted)
		got := transition(1, store.RunPending, c.to, 42, why)
		require.Equal(t, store.RunTransition{ID: 1, From: store.RunPending, To: c.to, StartedAt: c.started, FinishedAt: c.finished, Reason: why}, got, c.to)
	}
}

// TestBreakerCounts: what applied outcomes count for their jobs' circuit
// breakers: retryable, timeout and lost failures one each, a success starts
// the count again (then the failures after it), a permanent failure and a
// cancel nothing; jobs without a breaker are left out; by job id.
func TestBreakerCounts(t *testing.T) {
	t.Parallel()
	info := map[int64]store.AttemptInfo{
		1: {Token: 1, JobID: 20, App: "a", BreakerThreshold: 3},
		2: {Token: 2, JobID: 20, App: "a", BreakerThreshold: 3},
		3: {Token: 3, JobID: 20, App: "a", BreakerThreshold: 3},
		4: {Token: 4, JobID: 10, App: "b", BreakerThreshold: 1},
		5: {Token: 5, JobID: 10, App: "b", BreakerThreshold: 1},
		6: {Token: 6, JobID: 30, App: "c"},
		7: {Token: 7, JobID: 40, App: "d", BreakerThreshold: 2},
	}
	out := func(tok int64, status, class string) store.SlotOutcome {
		return store.SlotOutcome{SlotResult: protocol.SlotResult{Token: tok, Status: status, ErrorClass: class, Error: "e"}}
	}
	got := breakerCounts([]store.SlotOutcome{
		out(1, store.AttemptFailed, protocol.ClassRetryable),
		out(2, store.AttemptSucceeded, ""),
		out(3, store.AttemptFailed, protocol.ClassTimeout),
		out(4, store.AttemptFailed, protocol.ClassPermanent),
		out(5, store.AttemptFailed, protocol.ClassLost),
		out(6, store.AttemptFailed, protocol.ClassRetryable),
		out(7, store.AttemptCancelled, ""),
	}, info)
	require.Equal(t, []store.BreakerCount{
		{JobID: 10, App: "b", Failures: 1, LastError: "lost: e"},
		{JobID: 20, App: "a", Reset: true, Failures: 1, LastError: "timeout: e"},
	}, got)
}
