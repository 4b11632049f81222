// Package ops is the operator service: what the operator API's requests do
// to the platform database, without HTTP. It holds the rules of the
// operations: who may act on which app, a job's definition validated and
// completed (calendar, child jobs without cycle), the pause rule of an
// edit, the next firing of a job switched on again, the warnings of a
// saved job, which runs may be cancelled or retried, and the audit entry
// of every change.
//
// Its methods take who acts (Actor) and decoded admin/apitypes requests,
// and return apitypes answers (or store rows where admin/api still maps
// them). admin/api authenticates the request, decodes it, calls the
// Service and maps its errors to HTTP statuses in one place:
//
//	ErrInvalid    400  a request field is wrong (Error.Fields names it)
//	ErrForbidden  403  the actor may not act on that app
//	ErrNotFound   404  the object does not exist, or is of an app the actor
//	                   may not see (the same answer for both)
//	ErrConflict   409  the request contradicts the object's state
//	ErrCredential 401  the API key of the request went away while it ran
//	anything else 500  a database failure, logged by admin/api
//
// A refusal is an *Error: its Kind (one of the five), the message for the
// client and the fields in error as message codes (admin/msg); the field
// errors of job validation (jobdef.FieldMsgs) come back as an ErrInvalid
// with the same text. This is admin/executorsvc's shape, for the operator
// API. Here so far: the job operations (jobs.go, job_state.go, with their
// rules in job_rules.go and calendar.go) and the job list (lists.go); a
// run's cancel and retry (runs.go); the workflows — create, update,
// delete, validate, layout, with their rules (the graph, the schedule, the
// jobs and workflows the nodes name or wait for, in apps the actor may
// manage) — in workflows.go; a workflow's runs — trigger, list, read,
// rerun, cancel with their job runs — in workflow_runs.go; the backfills of
// a job and of a workflow (backfills.go); the business calendars, global
// ones for admins only, and the jobs on an edited calendar planned again
// (calendars.go); the reads of runs, slots, logs, executors, apps and the
// leader, and an alarm acknowledged or resolved (run_reads.go); users and
// one's own password (users.go); API keys, the personal credentials
// formerly called API tokens (apikeys.go); the audit log (audit_log.go);
// alarm groups (alarm_groups.go) and a job's alarm routes
// (alarm_routes.go); the dashboard (dashboard.go) and utilization
// (utilization.go); draining an executor (drain.go); the XXL-JOB log and
// kill (xxljob.go); the database's readiness (ready.go). Authentication
// (sessions, API keys, the login throttle, CSRF) stays in admin/api.
package ops
