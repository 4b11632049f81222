package ops

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/store"
)

// The reads of runs, their slots and logs, the executors, the apps and
// the leader, for the actor's apps; and an alarm acknowledged or resolved.

func optTime(v sql.NullInt64) *time.Time {
	if !v.Valid {
		return nil
	}
	t := msTime(v.Int64)
	return &t
}

func optID(v sql.NullInt64) *int64 {
	if !v.Valid {
		return nil
	}
	return &v.Int64
}

// optJSON is a stored JSON text as a raw message, nil when NULL or empty.
func optJSON(v sql.NullString) json.RawMessage {
	if !v.Valid || v.String == "" {
		return nil
	}
	return json.RawMessage(v.String)
}

func actualMS(r store.Run) *int64 {
	if !r.StartedAt.Valid || !r.FinishedAt.Valid {
		return nil
	}
	d := r.FinishedAt.Int64 - r.StartedAt.Int64
	return &d
}

// RunView is run r as the API returns it.
func RunView(r store.Run) apitypes.Run {
	return apitypes.Run{
		ID: r.ID, JobID: r.JobID, JobName: r.JobName, App: r.App, JobDeleted: r.JobDeleted, ScheduledAt: msTime(r.ScheduledAt),
		Trigger: r.TriggerKind, Status: r.Status, Params: r.Params, SlotCount: r.SlotCount,
		SlotsSucceeded: r.SlotsSucceeded, SlotsFailed: r.SlotsFailed, Epoch: r.Epoch, CreatedAt: msTime(r.CreatedAt),
		StartedAt: optTime(r.StartedAt), FinishedAt: optTime(r.FinishedAt), Error: r.Error,
		ErrorCode: string(r.ErrorMsg.Code), ErrorArgs: r.ErrorMsg.Args,
		ParentRunID: optID(r.ParentRunID), PredictedMS: optID(r.PredictedMS), ActualMS: actualMS(r),
		FirstSlotStartedAt: optTime(r.FirstStartedAt),
		StartDeadlineAt:    optTime(r.StartDeadlineAt), FinishDeadlineAt: optTime(r.FinishDeadlineAt), DeadlineAction: r.DeadlineAction,
		CalendarID: r.CalendarID, CalendarVersion: r.CalendarVersion, ShiftedFrom: optTime(r.ShiftedFrom),
		TimeZone:   r.TimeZone,
		StartAfter: optTime(sql.NullInt64{Int64: r.StartAfter, Valid: r.StartAfter != 0}),
		Workflow:   optJSON(r.Workflow),
	}
}

// AttemptView is attempt a as the API returns it.
func AttemptView(a store.Attempt) apitypes.Attempt {
	v := apitypes.Attempt{
		Token: a.Token, Slot: a.Slot, Attempt: a.Attempt, Status: store.SlotState(a), Current: a.Current,
		StartedAt: optTime(a.StartedAt), FinishedAt: optTime(a.FinishedAt),
		Processed: a.Processed, Skipped: a.Skipped, Failed: a.Failed, Uncertain: a.Uncertain, Error: a.Error,
		ErrorCode: string(a.ErrorMsg.Code), ErrorArgs: a.ErrorMsg.Args, Executor: a.ExecutorInstance,
		ErrorClass: a.ErrorClass,
	}
	if a.ExecutorID.Valid {
		id := a.ExecutorID.Int64
		v.ExecutorID = &id
	}
	return v
}

// ExecutorView is executor e as the API returns it.
func ExecutorView(e store.Executor) apitypes.ExecutorView {
	return apitypes.ExecutorView{
		ID: e.ID, InstanceID: e.InstanceID, App: e.App, Address: e.Address, Capacity: e.Capacity,
		Version: e.Version, Handlers: e.Handlers, State: e.State,
		RegisteredAt: msTime(e.RegisteredAt), LastHeartbeat: msTime(e.LastHeartbeat), DrainRequested: e.DrainRequested,
		Protocol: e.Protocol,
	}
}

// Runs lists the runs f selects among those of the apps a may see.
func (s *Service) Runs(ctx context.Context, a Actor, f store.RunFilter) ([]store.Run, error) {
	f.Apps = a.User.AppList()
	return s.st.Runs(ctx, f)
}

// CountRuns counts the runs f selects among those of the apps a may see,
// up to the store's default cap (exact false past it).
func (s *Service) CountRuns(ctx context.Context, a Actor, f store.RunFilter) (n int64, exact bool, err error) {
	f.Apps = a.User.AppList()
	return s.st.CountRuns(ctx, f, store.DefaultListCountCap)
}

// RunDetail returns run id with every attempt and its result.
func (s *Service) RunDetail(ctx context.Context, a Actor, id int64) (apitypes.RunDetail, error) {
	r, err := s.StoredRun(ctx, a, id)
	if err != nil {
		return apitypes.RunDetail{}, err
	}
	atts, err := s.st.Attempts(ctx, id)
	if err != nil {
		return apitypes.RunDetail{}, err
	}
	results, err := s.st.RunResults(ctx, []int64{id})
	if err != nil {
		return apitypes.RunDetail{}, err
	}
	out := apitypes.RunDetail{Run: RunView(r), Attempts: make([]apitypes.Attempt, 0, len(atts)), Result: results[id]}
	for _, at := range atts {
		out.Attempts = append(out.Attempts, AttemptView(at))
	}
	return out, nil
}

// RunSlots lists the slots of run id, each with its current attempt, in
// slot order (the run detail's grid; RunDetail has every attempt).
func (s *Service) RunSlots(ctx context.Context, a Actor, id int64) ([]apitypes.Slot, error) {
	if _, err := s.StoredRun(ctx, a, id); err != nil {
		return nil, err
	}
	atts, err := s.st.Attempts(ctx, id)
	if err != nil {
		return nil, err
	}
	bySlot := map[int]*apitypes.Slot{}
	var order []int
	for _, at := range atts { // by slot, then attempt
		v, ok := bySlot[at.Slot]
		if !ok {
			v = &apitypes.Slot{Slot: at.Slot}
			bySlot[at.Slot] = v
			order = append(order, at.Slot)
		}
		v.Attempts++
		if at.Current {
			v.Current = AttemptView(at)
		}
	}
	out := make([]apitypes.Slot, 0, len(order))
	for _, slot := range order {
		out = append(out, *bySlot[slot])
	}
	return out, nil
}

// RunLogs returns a page of the log lines of run id that f selects, by
// seq (keyset), with where the next page starts.
func (s *Service) RunLogs(ctx context.Context, a Actor, id int64, f store.RunLogFilter) (apitypes.RunLogsView, error) {
	r, err := s.StoredRun(ctx, a, id)
	if err != nil {
		return apitypes.RunLogsView{}, err
	}
	lines, st, err := s.st.RunLogs(ctx, id, f)
	if err != nil {
		return apitypes.RunLogsView{}, err
	}
	out := apitypes.RunLogsView{RunID: id, RunStatus: r.Status, Lines: make([]apitypes.LogLineView, 0, len(lines)), StoredLines: st.StoredLines, NextAfterSeq: f.AfterSeq}
	out.Dropped.Executor, out.Dropped.Cap, out.Dropped.Quota = st.DroppedExecutor, st.DroppedCap, st.DroppedQuota
	for _, l := range lines {
		v := apitypes.LogLineView{Seq: l.Seq, Slot: l.Slot, Token: l.Token, Attempt: l.Attempt, At: msTime(l.At),
			Level: slog.Level(l.Level).String(), Message: l.Message}
		if l.Attrs != "" {
			v.Attrs = json.RawMessage(l.Attrs)
		}
		out.Lines = append(out.Lines, v)
		out.NextAfterSeq = l.Seq
	}
	out.HasMore = len(lines) == f.Limit
	if !out.HasMore {
		// Every matching line below the state's next seq was returned: skip
		// the non-matching ones next time.
		out.NextAfterSeq = max(out.NextAfterSeq, st.NextSeq-1)
	}
	return out, nil
}

// Executors lists the executors of the apps a may see, with their loads.
// Gone executors (deregistered, or lost for longer than the leader's
// forget horizon) are left out unless all.
func (s *Service) Executors(ctx context.Context, a Actor, all bool) ([]apitypes.ExecutorView, error) {
	execs, err := s.st.Executors(ctx)
	if err != nil {
		return nil, err
	}
	loads, err := s.st.Loads(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]apitypes.ExecutorView, 0, len(execs))
	for _, e := range execs {
		if !a.User.AppAllowed(e.App) || (e.State == store.ExecutorGone && !all) {
			continue
		}
		v := ExecutorView(e)
		v.Active, v.Queued = loads[e.ID].Active, loads[e.ID].Queued
		out = append(out, v)
	}
	return out, nil
}

// Leader returns the fencing record of the current leader.
func (s *Service) Leader(ctx context.Context) (store.LeaderRecord, error) {
	return s.st.Leader(ctx)
}

// Partitions returns the fencing record of every scheduling partition ever
// claimed: its epoch, its owner and when it was claimed
// (docs/architecture.md, "Partitions").
func (s *Service) Partitions(ctx context.Context) ([]store.PartitionRecord, error) {
	return s.st.Partitions(ctx)
}

// PartitionsNextDue returns each claimed partition's earliest next firing
// (its firing lag is how far that is in the past).
func (s *Service) PartitionsNextDue(ctx context.Context) ([]store.PartitionNextDue, error) {
	return s.st.PartitionsNextDue(ctx)
}

// AckAlarm acknowledges alarm id by a (see changeAlarm).
func (s *Service) AckAlarm(ctx context.Context, a Actor, id int64) (store.Alarm, error) {
	return s.changeAlarm(ctx, a, id, "alarm.ack", "acknowledged", s.st.AckAlarm)
}

// ResolveAlarm resolves alarm id by a (see changeAlarm).
func (s *Service) ResolveAlarm(ctx context.Context, a Actor, id int64) (store.Alarm, error) {
	return s.changeAlarm(ctx, a, id, "alarm.resolve", "resolved", s.st.ResolveAlarm)
}

// changeAlarm acknowledges or resolves an alarm a may see (another app's
// alarm, or a platform alarm for an app-limited user, is ErrNotFound as if
// it did not exist); ErrConflict when it was done already, saying by whom
// and when. It returns the alarm as it is then, and audits action.
func (s *Service) changeAlarm(ctx context.Context, a Actor, id int64, action, done string, change func(context.Context, int64, string) (bool, error)) (store.Alarm, error) {
	u := a.User
	al, err := s.st.Alarm(ctx, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && u.AppList() != nil && (al.App == "" || !u.AppAllowed(al.App))) {
		return al, &Error{Kind: ErrNotFound, Msg: fmt.Sprintf("alarm %d does not exist (or is not of your apps)", id), Object: "alarm", ID: id}
	}
	if err != nil {
		return al, err
	}
	changed, err := change(ctx, id, u.Username)
	if err != nil {
		return al, err
	}
	if al, err = s.st.Alarm(ctx, id); err != nil {
		return al, err
	}
	if !changed {
		by, at := al.AckedBy, al.AckedAt
		if al.ResolvedAt.Valid {
			by, at, done = al.ResolvedBy, al.ResolvedAt, "resolved"
		}
		return al, refuse(ErrConflict, fmt.Sprintf("alarm %d was %s already, by %s at %s", id, done, by, msTime(at.Int64).Format(time.RFC3339)), nil)
	}
	s.audit(ctx, a, al.App, action, fmt.Sprintf("alarm/%d", id), map[string]any{"kind": al.Kind})
	return al, nil
}
