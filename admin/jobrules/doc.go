// Package jobrules holds the rules a stored job follows at run time, once
// it has been validated and saved: pure functions of a job's row
// (store.Job and its parts) and the instants they are given, with no I/O,
// no database, no HTTP and no clock of their own.
//
//   - The schedule of a job (ScheduleOf: its cron in each of its zones) and
//     its business calendar rule (CalendarPolicy), with the reason of a
//     firing the calendar removes (CalendarSkipReason).
//   - The job's window (docs/schedules.md, "Windows and one-offs"): which
//     firings are inside start_at..end_at (InWindow), the next firing
//     bounded by end_at and why the job is then completed (BoundNext), and
//     whether max_runs is reached (MaxRunsReached).
//   - A run of the job (NewRun): its copy of the job's params, slots, zone
//     and records policy, the start of a jittered firing, and its deadlines
//     as instants (RunDeadlines, RunDeadlinesStartingAt, DeadlinesAt).
//   - What a run sends to executors: the parameter of each slot
//     (ParseSlotParams) and the dedup scope with its placeholders replaced
//     by the run's scheduled day (ResolveDedupScope) or, for a workflow
//     node's run, by the business date (ResolveDedupScopeOnDate); the
//     placeholders themselves (ScopePlaceholders, ScopeBraces).
//
// Callers: the leader (admin/scheduler fires jobs and creates their runs,
// admin/runstate completes a job by max_runs and creates child runs,
// admin/workflowrun creates the runs of workflow nodes), admin/dispatch
// (the assignments sent to executors), the API (manual runs, backfills,
// previews) and the watchdog. admin/jobdef validates a job's definition
// and uses the same rules where validation needs them (slot params, the
// dedup scope's placeholders, the window and calendar of a new
// definition); this package does not import it.
//
// The store takes what these functions compute (a store.NewRun with its
// deadlines and start, a completed job's reason) and computes no such
// value itself; a rule that changes for product reasons is changed and
// table-tested here, without a database.
package jobrules
