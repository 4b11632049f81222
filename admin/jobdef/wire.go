package jobdef

import (
	"database/sql"
	"strings"
	"time"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/executor/builtin"
	"github.com/shardjob/shardjob/sdk/protocol"
)

// The one mapping each way between a job on the wire (admin/apitypes) and
// its row (store.Job). A new job field is added to both functions.

// row is the row of spec s, with its parsed policies, created at createdAt.
// It does not validate: Validate does, and calls it. NextFireAt is left
// for the caller.
func row(s apitypes.JobSpec, misfirePolicy, overlapPolicy string, createdAt time.Time) store.Job {
	enabled := s.Enabled == nil || *s.Enabled
	return store.Job{
		App: s.App, Name: s.Name, Description: s.Description, Handler: s.Handler,
		CronExpr: s.Cron, TimeZone: s.TimeZone, TimeZones: strings.Join(s.TimeZones, ","), MisfirePolicy: misfirePolicy, OverlapPolicy: overlapPolicy,
		MisfireMS: s.MisfireThresholdMS, MaxCatchUp: s.MaxCatchUp,
		SlotCount: s.SlotCount, SlotParams: s.SlotParams, Params: s.Params, TimeoutMS: s.TimeoutMS,
		RetryMax: s.RetryMax, RetryBackoffMS: s.RetryBackoffMS, Enabled: enabled,
		ChildJobIDs: FormatIDList(s.ChildJobIDs), Version: s.Version, CreatedAt: createdAt.UnixMilli(),
		RecordsPolicy: store.RecordsPolicy{DedupScope: s.DedupScope, UncertainPolicy: s.UncertainPolicy, RecordMaxAttempts: s.RecordMaxAttempts},
		JobBreaker: store.JobBreaker{RetryBackoffMax: s.RetryBackoffMax, RetryBudgetPercent: s.RetryBudgetPercent, RetryBudgetWindow: s.RetryBudgetWindow,
			BreakerThreshold: s.BreakerThreshold, BreakerCooldown: s.BreakerCooldown},
		JobDeadlines:    store.JobDeadlines{StartDeadline: s.StartDeadline, FinishDeadline: s.FinishDeadline, DeadlineAction: s.DeadlineAction},
		JobCalendar:     store.JobCalendar{CalendarID: s.CalendarID, CalendarRule: s.CalendarRule, CalendarShift: s.CalendarShift},
		JobWindow:       windowRow(s.JobDef),
		JitterWindow:    jitterRow(s.JitterWindow),
		MaxRunningSlots: sql.NullInt64{Int64: int64(s.MaxRunningSlots), Valid: s.MaxRunningSlots > 0},
		Priority:        int(parsedPriority(s.Priority)),
		JobWaits:        waitsRow(s.JobDef),
	}
}

// View is job j as the API returns it (without warnings).
func View(j store.Job) apitypes.Job {
	enabled := j.Enabled
	v := apitypes.Job{
		ID: j.ID,
		JobSpec: apitypes.JobSpec{
			JobDef: apitypes.JobDef{
				App: j.App, Name: j.Name, Description: j.Description, Handler: j.Handler, Cron: j.CronExpr,
				TimeZone: j.TimeZone, TimeZones: zonesView(j), SlotCount: j.SlotCount, SlotParams: j.SlotParams, Params: j.Params,
				MisfirePolicy: j.MisfirePolicy, MisfireThresholdMS: j.MisfireMS, MaxCatchUp: j.MaxCatchUp,
				OverlapPolicy: j.OverlapPolicy, TimeoutMS: j.TimeoutMS, RetryMax: j.RetryMax, RetryBackoffMS: j.RetryBackoffMS,
				RetryBackoffMax: j.RetryBackoffMax, RetryBudgetPercent: j.RetryBudgetPercent, RetryBudgetWindow: j.RetryBudgetWindow,
				BreakerThreshold: j.BreakerThreshold, BreakerCooldown: j.BreakerCooldown,
				DedupScope: j.DedupScope, UncertainPolicy: j.UncertainPolicy, RecordMaxAttempts: j.RecordMaxAttempts,
				StartDeadline: j.StartDeadline, FinishDeadline: j.FinishDeadline, DeadlineAction: j.DeadlineAction,
				CalendarID: j.CalendarID, CalendarRule: j.CalendarRule, CalendarShift: j.CalendarShift,
				StartAt: msTimePtr(j.StartAt), EndAt: msTimePtr(j.EndAt), MaxRuns: j.MaxRuns, JitterWindow: j.JitterWindow,
				MaxRunningSlots: int(j.MaxRunningSlots.Int64), Priority: protocol.Priority(j.Priority).String(),
				WaitFor: waitsView(j), WaitTimeout: j.WaitTimeout, OnTimeout: j.OnTimeout,
				Enabled: &enabled,
			},
			ChildJobIDs: store.ParseIDList(j.ChildJobIDs), Version: j.Version,
		},
		Paused: j.Paused, State: State(j), CreatedAt: msTime(j.CreatedAt), UpdatedAt: msTime(j.UpdatedAt),
		NextFireAt: msTimePtr(j.NextFireAt), CompletedAt: msTimePtr(j.CompletedAt), PausedUntil: msTimePtr(j.PauseUntil),
		WorkflowID: j.WorkflowID.Int64,
	}
	if j.Completed() && !j.CompletedMsg.IsZero() {
		v.CompletedReason = j.CompletedMsg.String()
		v.CompletedReasonCode = &apitypes.Message{Code: string(j.CompletedMsg.Code), Args: j.CompletedMsg.Args}
	}
	return v
}

// parsedPriority is the priority named p, normal for a name that does not
// parse (Validate refuses it).
func parsedPriority(p string) protocol.Priority {
	v, err := protocol.ParsePriority(p)
	if err != nil {
		return protocol.PriorityNormal
	}
	return v
}

// zonesView is the time_zones of job j: its zones when it has more than
// one, nil otherwise (one zone is time_zone alone).
func zonesView(j store.Job) []string {
	if j.TimeZones == "" {
		return nil
	}
	return j.Zones()
}

func msTimePtr(ms sql.NullInt64) *time.Time {
	if !ms.Valid {
		return nil
	}
	t := msTime(ms.Int64)
	return &t
}

func msTime(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

// InlineRow is the row of the job that runs a workflow's inline node
// (store.InlineJob; docs/workflows.md, "Inline nodes"): its handler,
// params, slots, retries and timeout (a node validated by admin/workflow)
// with the defaults of every other setting of a new job (no schedule). The store names it and sets its app and owner. The params
// of a built-in handler (http, sql, shell, dedup-archive) are checked as a
// job's are: the error says what is wrong with them.
func InlineRow(n apitypes.WorkflowNode) (store.Job, error) {
	s := apitypes.JobSpec{JobDef: apitypes.JobDef{Handler: n.Handler, Params: n.Params, SlotCount: n.SlotCount,
		RetryMax: n.RetryMax, RetryBackoffMS: n.RetryBackoffMS, TimeoutMS: n.TimeoutMS}}
	s.JobDef = s.WithDefaults()
	if err := builtin.ValidateParams(s.Handler, s.Params); err != nil {
		return store.Job{}, err
	}
	j := row(s, s.MisfirePolicy, s.OverlapPolicy, time.Time{})
	j.CreatedAt = 0 // the database clock
	return j, nil
}

// BreakerView is a job's circuit breaker b on the wire.
func BreakerView(b store.BreakerState) *apitypes.Breaker {
	v := &apitypes.Breaker{State: b.State, Failures: b.Failures, OpenedAt: msTimePtr(b.OpenedAt), ProbeToken: b.ProbeToken.Int64}
	if b.State == store.BreakerOpen {
		v.ProbeAt = msTimePtr(b.ProbeAt)
	}
	if b.State != store.BreakerClosed && !b.Reason.IsZero() {
		v.Reason = b.Reason.String()
		v.ReasonCode = &apitypes.Message{Code: string(b.Reason.Code), Args: b.Reason.Args}
	}
	return v
}
