package apitypes

import "time"

// AppView is an app: what its team says of it, and the jobs and executors
// that name it.
type AppView struct {
	Name            string `json:"name"`
	Jobs            int    `json:"jobs"`
	ExecutorsOnline int    `json:"executors_online"`
	Executors       int    `json:"executors"`
	// What the app's team says of it (GET/POST/PATCH /api/v1/apps/{name});
	// empty for an app nobody described yet.
	Description string   `json:"description"`
	Owners      []string `json:"owners"`
	// Quotas, set by admins (null: no limit): the most ordinary jobs, the
	// most slots of one run (jobs and workflows' inline nodes), the most
	// runs of one backfill at once (docs/tenancy.md).
	MaxJobs             *int64 `json:"max_jobs"`
	MaxSlotsPerRun      *int64 `json:"max_slots_per_run"`
	MaxBackfillParallel *int64 `json:"max_backfill_parallel"`
	// MaxRunningSlots caps the slots of the app's runs placed on
	// executors at once (assigned, queued or running); null: no cap.
	MaxRunningSlots *int64 `json:"max_running_slots"`
	// MaxStartsPerSecond limits how many of the app's runs the leader
	// starts a second (null: no limit).
	MaxStartsPerSecond *int64 `json:"max_starts_per_second"`
	// Weight is the app's share of the platform's capacity
	// (--max-running-slots) when apps compete for it (1 unless set).
	Weight int64 `json:"weight"`
	// MaxLogBytesPerDay is a quota on the run-log bytes the app stores a
	// UTC day (null: none); LogBytesToday what it stored today and
	// LogLinesDroppedToday the lines the quota dropped.
	MaxLogBytesPerDay    *int64 `json:"max_log_bytes_per_day"`
	LogBytesToday        int64  `json:"log_bytes_today"`
	LogLinesDroppedToday int64  `json:"log_lines_dropped_today"`
	// Version guards edits (PATCH sends the version it read).
	Version   int64     `json:"version"`
	CreatedAt time.Time `json:"created_at"`
	CreatedBy string    `json:"created_by,omitempty"`
	UpdatedAt time.Time `json:"updated_at"`
	UpdatedBy string    `json:"updated_by,omitempty"`
}

// AppSpec is an app as POST /api/v1/apps creates it (Name required) and
// PATCH /api/v1/apps/{name} changes it (Version required: the version
// read; a field left out keeps its value).
type AppSpec struct {
	Name        string    `json:"name,omitempty"`
	Description *string   `json:"description,omitempty"`
	Owners      *[]string `json:"owners,omitempty"`
	// Quotas (admins only): a number sets the limit, 0 removes it, left
	// out keeps it.
	MaxJobs             *int64 `json:"max_jobs,omitempty"`
	MaxSlotsPerRun      *int64 `json:"max_slots_per_run,omitempty"`
	MaxBackfillParallel *int64 `json:"max_backfill_parallel,omitempty"`
	MaxRunningSlots     *int64 `json:"max_running_slots,omitempty"`
	MaxStartsPerSecond  *int64 `json:"max_starts_per_second,omitempty"`
	// Weight (admins only; 1 to 1000, left out keeps it).
	Weight            *int64 `json:"weight,omitempty"`
	MaxLogBytesPerDay *int64 `json:"max_log_bytes_per_day,omitempty"`
	Version           int64  `json:"version,omitempty"`
}

// ExecutorView is a registered executor.
type ExecutorView struct {
	ID            int64     `json:"id"`
	InstanceID    string    `json:"instance_id"`
	App           string    `json:"app"`
	Address       string    `json:"address"`
	Capacity      int       `json:"capacity"`
	Version       string    `json:"version"`
	Handlers      string    `json:"handlers"`
	State         string    `json:"state"`
	RegisteredAt  time.Time `json:"registered_at"`
	LastHeartbeat time.Time `json:"last_heartbeat"`
	// DrainRequested: an operator drains it (no new slots; queued ones given back).
	DrainRequested bool `json:"drain_requested"`
	// Protocol: "shardjob", or "xxljob" for an unchanged XXL-JOB executor
	// (its slots' logs and kill: /api/v1/xxljob/attempts/{token}/…).
	Protocol string `json:"protocol"`
	// Active is how many slots are placed on it and not finished (queued
	// included); Queued, of those, acknowledged but not started. Busy
	// slots against Capacity is its utilization.
	Active int `json:"active"`
	Queued int `json:"queued"`
}
