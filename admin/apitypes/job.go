package apitypes

import "time"

// JobDef is the definition of a job: every field a client states, without
// its child jobs and version. It is what a jobs file manages (shardjobctl
// apply). App and Name identify a job; omitted (zero) fields take the
// admin's defaults (WithDefaults).
type JobDef struct {
	App           string `json:"app"`
	Name          string `json:"name"`
	Description   string `json:"description"`
	Handler       string `json:"handler"`
	Cron          string `json:"cron"`
	TimeZone      string `json:"time_zone"`
	Slots         int    `json:"slots"`
	SlotParams    string `json:"slot_params"` // "0=Beijing,1=Shanghai"
	Params        string `json:"params"`
	MisfirePolicy string `json:"misfire_policy"`
	// MisfireThresholdMS is how late a firing may start before the misfire
	// policy decides what happens to it.
	MisfireThresholdMS int64  `json:"misfire_threshold_ms"`
	MaxCatchUp         int    `json:"max_catch_up"`
	OverlapPolicy      string `json:"overlap_policy"`
	TimeoutMS          int64  `json:"timeout_ms"`
	RetryMax           int    `json:"retry_max"`
	RetryBackoffMS     int64  `json:"retry_backoff_ms"`
	// The records policy imposed on the handler's sdk/records Processor
	// (admin/jobdef records.go); empty / 0: the handler's Config decides.
	DedupScope        string `json:"dedup_scope"`         // "run", "job" or a name such as "settle:{date}"
	UncertainPolicy   string `json:"uncertain_policy"`    // "retry" or "skip"
	RecordMaxAttempts int    `json:"record_max_attempts"` // 1..100
	// Enabled: nil (omitted) means true. The admin always answers it.
	Enabled *bool `json:"enabled"`
}

// Key is "app/name", the identity of a job.
func (d JobDef) Key() string { return d.App + "/" + d.Name }

// JobSpec is a job as clients send it: POST /api/v1/jobs (create), PUT
// /api/v1/jobs/{id} (update), POST /api/v1/jobs/validate.
type JobSpec struct {
	JobDef
	// ChildJobIDs are the jobs triggered once each time a run of this job
	// succeeds.
	ChildJobIDs []int64 `json:"child_job_ids"`
	// Version is the version being replaced, required on update
	// (optimistic lock).
	Version int64 `json:"version"`
}

// Job is a job as the API returns it: its spec and what the admin keeps
// about it.
type Job struct {
	ID int64 `json:"id"`
	JobSpec
	Paused     bool       `json:"paused"`
	NextFireAt *time.Time `json:"next_fire_at"`
	CreatedAt  time.Time  `json:"created_at"`
	UpdatedAt  time.Time  `json:"updated_at"`
	// Warnings about the job as saved, in the answers of create, update and
	// clone (never a reason to refuse): e.g. no executor of the app has
	// shown the job's handler yet.
	Warnings []string `json:"warnings,omitempty"`
}

// The admin's defaults for the omitted fields of a JobDef.
const (
	DefaultTimeZone           = "UTC"
	DefaultSlots              = 1
	DefaultMisfirePolicy      = "run_once"
	DefaultOverlapPolicy      = "allow"
	DefaultMisfireThresholdMS = 60_000
	DefaultMaxCatchUp         = 10
	DefaultRetryBackoffMS     = 1000
)

// WithDefaults returns d with the defaults in place of omitted (zero)
// fields. Policies keep their spelling (the admin parses them).
func (d JobDef) WithDefaults() JobDef {
	if d.TimeZone == "" {
		d.TimeZone = DefaultTimeZone
	}
	if d.Slots == 0 {
		d.Slots = DefaultSlots
	}
	if d.MisfirePolicy == "" {
		d.MisfirePolicy = DefaultMisfirePolicy
	}
	if d.OverlapPolicy == "" {
		d.OverlapPolicy = DefaultOverlapPolicy
	}
	if d.MisfireThresholdMS == 0 {
		d.MisfireThresholdMS = DefaultMisfireThresholdMS
	}
	if d.MaxCatchUp == 0 {
		d.MaxCatchUp = DefaultMaxCatchUp
	}
	if d.RetryBackoffMS == 0 {
		d.RetryBackoffMS = DefaultRetryBackoffMS
	}
	if d.Enabled == nil {
		t := true
		d.Enabled = &t
	}
	return d
}
