package apitypes

import "time"

// AlarmKindCount is how many members of a group are of one kind.
type AlarmKindCount struct {
	Kind string `json:"kind"`
	N    int    `json:"n"`
}

// AlarmGroupView is a group of alarms: the alarms of one run, else of one
// job within an hour, else of one kind and app within an hour.
type AlarmGroupView struct {
	ID int64 `json:"id"`
	// Count members; Open of them not resolved; Unacked neither
	// acknowledged nor resolved.
	Count   int `json:"count"`
	Open    int `json:"open"`
	Unacked int `json:"unacked"`
	// FirstAt and LastAt: when its first and its latest member were raised.
	FirstAt time.Time `json:"first_at"`
	LastAt  time.Time `json:"last_at"`
	// Severity is the worst of its members'.
	Severity string           `json:"severity"`
	Kinds    []AlarmKindCount `json:"kinds"`
	// Latest is its newest member (its kind, job, run, app, message).
	Latest AlarmView `json:"latest"`
}

// AlarmFilterBody is the filter of a bulk request (the query parameters of
// GET /api/v1/alarms).
type AlarmFilterBody struct {
	Open     bool   `json:"open,omitempty"`
	Severity string `json:"severity,omitempty"`
	Kind     string `json:"kind,omitempty"`
	App      string `json:"app,omitempty"`
	JobID    int64  `json:"job_id,omitempty"`
}

// AlarmBulkRequest acknowledges or resolves many alarms in one request: a
// selection (ids and/or group_ids) or every alarm matching a filter.
type AlarmBulkRequest struct {
	Action      string          `json:"action"`
	IDs         []int64         `json:"ids,omitempty"`
	GroupIDs    []int64         `json:"group_ids,omitempty"`
	AllMatching bool            `json:"all_matching,omitempty"`
	Filter      AlarmFilterBody `json:"filter"`
}

// AlarmView is an alarm event.
type AlarmView struct {
	ID       int64     `json:"id"`
	At       time.Time `json:"at"`
	Kind     string    `json:"kind"`
	Severity string    `json:"severity"`
	JobID    *int64    `json:"job_id,omitempty"`
	RunID    *int64    `json:"run_id,omitempty"`
	Message  string    `json:"message"`
	// MessageCode and MessageArgs are Message as a code with named
	// arguments (as error_code on runs).
	MessageCode string         `json:"message_code,omitempty"`
	MessageArgs map[string]any `json:"message_args,omitempty"`
	RaisedBy    string         `json:"raised_by"`
	// App is the app of the job, run or executor the alarm is about; ""
	// for the platform's alarms (leader_change).
	App string `json:"app"`
	// JobName names job JobID (absent once the job is deleted).
	JobName string `json:"job_name,omitempty"`
	// AckedAt/AckedBy: someone acknowledged it (is on it); ResolvedAt/
	// ResolvedBy: someone resolved it. An alarm with neither is open.
	AckedAt    *time.Time `json:"acked_at,omitempty"`
	AckedBy    string     `json:"acked_by,omitempty"`
	ResolvedAt *time.Time `json:"resolved_at,omitempty"`
	ResolvedBy string     `json:"resolved_by,omitempty"`
	// ResolvedReason says why the admin resolved the alarm by itself
	// (ResolvedBy "shardjob"): an info alarm, resolved when raised; an
	// executor_lost alarm, resolved when its executor heartbeats again.
	// ResolvedCode and ResolvedArgs are the reason as a code.
	ResolvedReason string         `json:"resolved_reason,omitempty"`
	ResolvedCode   string         `json:"resolved_code,omitempty"`
	ResolvedArgs   map[string]any `json:"resolved_args,omitempty"`
	// GroupID is the alarm's group (GET /api/v1/alarm-groups/{id}/alarms).
	GroupID *int64 `json:"group_id,omitempty"`
}

// AlarmRoute sends a job's alarms to a channel (alarm.Notifier), for an
// email channel to one recipient.
type AlarmRoute struct {
	Channel   string `json:"channel"`
	Recipient string `json:"recipient,omitempty"`
}

// AlarmRoutes are the alarm routes of a job: the answer of GET and PUT
// /jobs/{id}/alarm-routes.
type AlarmRoutes struct {
	Routes []AlarmRoute `json:"routes"`
}
