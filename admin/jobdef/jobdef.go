package jobdef

import (
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/internal/fielderr"
	"github.com/shardjob/shardjob/admin/jobrules"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/schedule"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/executor/builtin"
	"github.com/shardjob/shardjob/sdk/protocol"
)

// Limits of a job definition.
const (
	MaxSlots       = 1024
	MaxParamsBytes = 64 << 10
	MaxRetries     = 100
	// MaxRunningSlots is the largest concurrency cap of a job or an app.
	MaxRunningSlots = 1_000_000
)

// MaxChildren bounds the child jobs of one job.
const MaxChildren = 20

// FieldErrors maps a JSON field name to what is wrong with it, in English.
type FieldErrors map[string]string

func (f FieldErrors) Error() string { return fielderr.Format("invalid job", f) }

// FieldMsgs maps a JSON field name to what is wrong with it as a message
// code with arguments (admin/msg), which the console shows in the reader's
// language: the error Validate returns. Its English is FieldErrors, what
// API clients read, which errors.As finds in it too.
type FieldMsgs map[string]msg.Msg

func (f FieldMsgs) Error() string { return f.English().Error() }

// Unwrap is the English of f, so that errors.As finds a FieldErrors in it.
func (f FieldMsgs) Unwrap() error { return f.English() }

// English is f in English.
func (f FieldMsgs) English() FieldErrors {
	out := make(FieldErrors, len(f))
	for k, m := range f {
		out[k] = m.String()
	}
	return out
}

// Validated is a valid definition with its parsed schedule. A job on a
// business calendar (Job.CalendarID) is valid as far as it can be told
// without the calendar: the caller checks that the calendar exists and that
// the job's app may use it, and calls WithCalendar, which sets NextFireAt.
type Validated struct {
	Job store.Job
	// Schedule is the schedule in the job's time_zone; Zones the union of
	// its schedules in every zone of the job (one for most jobs), which
	// the firings and the preview follow.
	Schedule *schedule.Schedule
	Zones    *schedule.MultiZone
}

// Validate checks a new job's spec and returns the job row (without id) and
// its schedule, or FieldMsgs (in English: FieldErrors). now is the job's
// creation time: it anchors @every schedules and is the instant the first
// firing follows.
func Validate(s apitypes.JobSpec, now time.Time) (Validated, error) {
	return validate(s, now, now)
}

// ValidateUpdate is Validate for a new definition of an existing job created
// at createdAt (the @every anchor stays the job's creation).
func ValidateUpdate(s apitypes.JobSpec, now, createdAt time.Time) (Validated, error) {
	return validate(s, now, createdAt)
}

func validate(s apitypes.JobSpec, now, anchor time.Time) (Validated, error) {
	s.JobDef = s.WithDefaults()
	errs := FieldMsgs{}
	if m := msg.Name(s.App); !m.IsZero() {
		errs["app"] = m
	}
	if m := msg.Name(s.Name); !m.IsZero() {
		errs["name"] = m
	}
	if len(s.Description) > 1024 {
		errs["description"] = msg.New(msg.ValueMaxChars, "max", 1024)
	}
	if s.Handler == "" || len(s.Handler) > 128 || strings.ContainsAny(s.Handler, " ,\t\n") {
		errs["handler"] = msg.New(msg.JobHandlerRule)
	}
	if s.SlotCount < 1 || s.SlotCount > MaxSlots {
		errs["slots"] = msg.New(msg.ValueOutside, "value", s.SlotCount, "min", 1, "max", MaxSlots)
	}
	if len(s.Params) > MaxParamsBytes {
		errs["params"] = msg.New(msg.ValueMaxBytes, "max", MaxParamsBytes)
	} else if err := builtin.ValidateParams(s.Handler, s.Params); err != nil {
		errs["params"] = paramsMsg(err) // the built-in handlers (http, sql, shell, dedup-archive) parse their params the same way
	}
	if _, err := jobrules.ParseSlotParams(s.SlotParams, s.SlotCount); err != nil {
		errs["slot_params"] = msg.Of(err)
	}
	mp, err := schedule.ParseMisfirePolicy(s.MisfirePolicy)
	if err != nil {
		errs["misfire_policy"] = msg.Of(err)
	}
	op, err := schedule.ParseOverlapPolicy(s.OverlapPolicy)
	if err != nil {
		errs["overlap_policy"] = msg.Of(err)
	}
	if s.MisfireThresholdMS < 1000 || s.MisfireThresholdMS > 7*24*3600*1000 {
		errs["misfire_threshold_ms"] = msg.New(msg.JobMisfireThreshold)
	}
	if s.MaxCatchUp < 1 || s.MaxCatchUp > 1000 {
		errs["max_catch_up"] = msg.New(msg.ValueBetween, "min", 1, "max", 1000)
	}
	if s.TimeoutMS < 0 {
		errs["timeout_ms"] = msg.New(msg.JobTimeout)
	}
	if s.RetryMax < 0 || s.RetryMax > MaxRetries {
		errs["retry_max"] = msg.New(msg.ValueBetween, "min", 0, "max", MaxRetries)
	}
	if s.RetryBackoffMS < 0 {
		errs["retry_backoff_ms"] = msg.New(msg.ValuePositiveMS)
	}
	if _, err := protocol.ParsePriority(s.Priority); err != nil {
		errs["priority"] = msg.New(msg.JobPriorityUnknown, "value", strconv.Quote(s.Priority))
	}
	if s.MaxRunningSlots < 0 || s.MaxRunningSlots > MaxRunningSlots {
		errs["max_running_slots"] = msg.New(msg.ValueBetween, "min", 0, "max", MaxRunningSlots)
	}
	validateRecordsPolicy(s.JobDef, errs)
	validateBreaker(s.JobDef, errs)
	validateDeadlines(s.JobDef, errs)
	validateWindow(s.JobDef, errs)
	validateWaits(s.JobDef, errs)
	if len(s.ChildJobIDs) > MaxChildren {
		errs["child_job_ids"] = msg.New(msg.JobChildrenMax, "max", MaxChildren)
	}
	seen := map[int64]bool{}
	for _, id := range s.ChildJobIDs {
		if id <= 0 || seen[id] {
			errs["child_job_ids"] = msg.New(msg.JobChildrenIDs)
		}
		seen[id] = true
	}
	zones := validateZones(s.JobDef, anchor, errs)
	var sched *schedule.Schedule
	if zones != nil {
		sched = zones.Primary()
	}
	validateCalendar(s.JobDef, sched, errs)
	validateJitter(s.JitterWindow, sched, FiringsFrom(windowRow(s.JobDef), now), errs)
	if len(errs) > 0 {
		return Validated{}, errs
	}
	j := row(s, string(mp), string(op), anchor)
	if j.Enabled && !j.HasCalendar() {
		// A job on a calendar gets its next firing from WithCalendar,
		// once the caller has read the calendar.
		planWindow(&j, NextFire(zones, FiringsFrom(j.JobWindow, now)), now)
	}
	return Validated{Job: j, Schedule: sched, Zones: zones}, nil
}

// Nexter is a schedule's next firing strictly after an instant (the zero
// Time for none): *schedule.Schedule and *schedule.MultiZone.
type Nexter interface {
	Next(after time.Time) time.Time
}

// NextFire is the first firing strictly after now, as stored.
func NextFire(s Nexter, now time.Time) sql.NullInt64 {
	n := s.Next(now)
	if n.IsZero() {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: n.UnixMilli(), Valid: true}
}

// FormatIDList writes ids as "1,2,3" (the stored form).
func FormatIDList(ids []int64) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = strconv.FormatInt(id, 10)
	}
	return strings.Join(parts, ",")
}

// FindCycle reports a cycle that giving job `id` the children `children`
// would create in the child graph (job → its children), as the path of job
// ids from id back to id, or nil. A job may not be its own child.
func FindCycle(graph map[int64][]int64, id int64, children []int64) []int64 {
	g := make(map[int64][]int64, len(graph)+1)
	for k, v := range graph {
		g[k] = v
	}
	g[id] = children
	// Depth-first search from id; a path that reaches id again is a cycle.
	var path []int64
	visited := map[int64]bool{}
	var dfs func(n int64) bool
	dfs = func(n int64) bool {
		path = append(path, n)
		for _, c := range g[n] {
			if c == id {
				path = append(path, c)
				return true
			}
			if !visited[c] {
				visited[c] = true
				if dfs(c) {
					return true
				}
			}
		}
		path = path[:len(path)-1]
		return false
	}
	if dfs(id) {
		return path
	}
	return nil
}

// paramsMsg is the message of a built-in handler's refusal of its params
// (builtin.ValidateParams): a *builtin.ParamsError as the code
// "builtin.<its code>" inside ParamsField or ParamsDoc, which render its
// English exactly.
func paramsMsg(err error) msg.Msg {
	var pe *builtin.ParamsError
	if !errors.As(err, &pe) {
		return msg.Of(err)
	}
	if pe.Field == "" {
		return msg.New(msg.ParamsDoc, "handler", pe.Handler, "problem", problemMsg(pe))
	}
	return msg.New(msg.ParamsField, "handler", pe.Handler, "field", pe.Field, "problem", problemMsg(pe))
}

// problemMsg is the problem of pe, its nested problems too, as a message.
func problemMsg(pe *builtin.ParamsError) msg.Msg {
	m := msg.Msg{Code: msg.Code("builtin." + pe.Code)}
	for name, v := range pe.Args {
		if m.Args == nil {
			m.Args = make(map[string]any, len(pe.Args))
		}
		if nested, ok := v.(*builtin.ParamsError); ok {
			m.Args[name] = problemMsg(nested)
		} else {
			m.Args[name] = fmt.Sprint(v)
		}
	}
	return m
}
