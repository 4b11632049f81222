package msg

// The codes of the admin's messages. Run: why a run ended, waits or was
// skipped; Cause: why no executor can take a run (nested in Run and Alarm
// messages); Attempt: why the admin ended a slot attempt; Alarm: the alarm
// texts.
const (
	RunSlotsFailed        Code = "run.slots_failed"
	RunSlotsPartlyFailed  Code = "run.slots_partly_failed"
	RunJobDeleted         Code = "run.job_deleted"
	RunSkippedDisabled    Code = "run.skipped_disabled"
	RunSkippedPaused      Code = "run.skipped_paused"
	RunSkippedOverlap     Code = "run.skipped_overlap"
	RunSkippedMisfire     Code = "run.skipped_misfire"
	RunWaiting            Code = "run.waiting"
	RunUnplaceableFailed  Code = "run.unplaceable_failed"
	RunCancelledBy        Code = "run.cancelled_by"
	RunCancelledByReason  Code = "run.cancelled_by_reason"
	RunReplaced           Code = "run.replaced"
	RunDeadlineCancelled  Code = "run.deadline_cancelled"
	CauseNoExecutor       Code = "cause.no_executor"
	CauseNoHandler        Code = "cause.no_handler"
	AttemptNotAcked       Code = "attempt.not_acked"
	AttemptUnknownStatus  Code = "attempt.unknown_status"
	AttemptXXLNoCallback  Code = "attempt.xxl_no_callback"
	AttemptXXLKilled      Code = "attempt.xxl_killed"
	AttemptXXLRefused     Code = "attempt.xxl_refused"
	AttemptXXLLateSuccess Code = "attempt.xxl_late_success"
	AttemptXXLTimeout     Code = "attempt.xxl_timeout"
	AttemptXXLFailed      Code = "attempt.xxl_failed"
	LimitJobTimeout       Code = "limit.job_timeout"
	LimitDefaultTimeout   Code = "limit.default_timeout"
	JobNoExecutor         Code = "job.no_executor"
	JobHandlerNotSeen     Code = "job.handler_not_seen"
	DSTGapSkippedOne      Code = "dst.gap_skipped_one"
	DSTGapSkippedMany     Code = "dst.gap_skipped_many"
	DSTGapFiredOne        Code = "dst.gap_fired_one"
	DSTGapFiredMany       Code = "dst.gap_fired_many"
	DSTWithRegular        Code = "dst.with_regular"
	DSTOverlapSecond      Code = "dst.overlap_second"
	DSTOverlapFirstOnly   Code = "dst.overlap_first_only"
	DSTOverlapFirst       Code = "dst.overlap_first"
	AlarmSlotDead         Code = "alarm.slot_dead"
	AlarmRecordsUncertain Code = "alarm.records_uncertain"
	AlarmRunFailed        Code = "alarm.run_failed"
	AlarmRunPartlyFailed  Code = "alarm.run_partly_failed"
	AlarmLeaderChange     Code = "alarm.leader_change"
	AlarmRunsWaiting      Code = "alarm.runs_waiting"
	AlarmRunsUnplaceable  Code = "alarm.runs_unplaceable"
	AlarmArchiveBehind    Code = "alarm.archive_behind"
	AlarmArchiveNever     Code = "alarm.archive_never"
	AlarmMissedFire       Code = "alarm.missed_fire"
	AlarmMissedFirings    Code = "alarm.missed_firings"
	AlarmExecutorLost     Code = "alarm.executor_lost"
	AlarmExecutorRestart  Code = "alarm.executor_restart"
	AlarmSlotsUnreported  Code = "alarm.slots_unreported"
	AlarmRunLateStart     Code = "alarm.run_late_start"
	AlarmDeadlineMissed   Code = "alarm.run_deadline_missed"
	AlarmDeadlineCancel   Code = "alarm.run_deadline_cancel"
	FlowNodeJobMissing    Code = "workflow.node_job_missing"
	FlowNodeJobDisabled   Code = "workflow.node_job_disabled"
	FlowNodeInline        Code = "workflow.node_inline"
	FlowNodeJobRunEnded   Code = "workflow.node_job_run_ended"
	FlowNodeSkippedRule   Code = "workflow.node_skipped_rule"
	FlowNodeSkippedStop   Code = "workflow.node_skipped_stop"
	FlowRunFailed         Code = "workflow.run_failed"
	FlowRunPartlyFailed   Code = "workflow.run_partly_failed"
	FlowRunInvalid        Code = "workflow.run_invalid"
)

// Catalog is the English template of every code: {name} is the argument
// name. The console's web/static/i18n/en.json holds the same texts under
// "srv.<code>" (checked by a test), zh-CN.json their translations.
var Catalog = map[Code]string{
	RunSlotsFailed:        "{failed} slot(s) failed",
	RunSlotsPartlyFailed:  "{failed} of {total} slot(s) failed",
	RunJobDeleted:         "job was deleted",
	RunSkippedDisabled:    "the job was disabled before this firing started",
	RunSkippedPaused:      "the job was paused before this firing started",
	RunSkippedOverlap:     "overlap policy skip: the previous run is still active",
	RunSkippedMisfire:     "misfire policy {policy}: firing was late by more than {threshold_ms}ms",
	RunWaiting:            "waiting: {cause}",
	RunUnplaceableFailed:  "{cause} for {timeout} (unplaceable timeout): the run failed without starting",
	RunCancelledBy:        "cancelled by {user}",
	RunCancelledByReason:  "cancelled by {user}: {reason}",
	RunReplaced:           "replaced by run {run} (overlap policy replace)",
	RunDeadlineCancelled:  "cancelled: its finish deadline {deadline} passed (deadline_action cancel)",
	CauseNoExecutor:       "no executor of app {app} is online",
	CauseNoHandler:        "no online executor of app {app} has handler {handler} ({online} online without it)",
	AttemptNotAcked:       "executor {executor} did not acknowledge the assignment within {timeout} (it refused it or never took it): not started there",
	AttemptUnknownStatus:  "executor reported unknown status {status}: {error}",
	AttemptXXLNoCallback:  "timed out: no callback from the XXL-JOB executor within {limit} ({limit_kind}) plus {grace} grace; its result is lost",
	AttemptXXLKilled:      "killed by {user} on XXL-JOB executor {address}",
	AttemptXXLRefused:     "XXL-JOB executor {address} refused the run ({why})",
	AttemptXXLLateSuccess: "timed out on the XXL-JOB executor: its callback (handleCode 200, {answer}) came {after} after the run call, past the job's timeout of {timeout}",
	AttemptXXLTimeout:     "timed out on the XXL-JOB executor: {answer}",
	AttemptXXLFailed:      "XXL-JOB handler failed (handleCode {code}): {answer}",
	LimitJobTimeout:       "the job's timeout",
	LimitDefaultTimeout:   "the default result timeout",
	JobNoExecutor:         "no executor of app {app} has registered yet: runs of this job wait for one with handler {handler} (and fail after the unplaceable timeout)",
	JobHandlerNotSeen:     "no executor of app {app} has shown handler {handler} yet (check the name, or deploy it): runs of this job wait for one (and fail after the unplaceable timeout)",
	DSTGapSkippedOne:      "DST gap: {time} on {day} does not exist and is skipped",
	DSTGapSkippedMany:     "DST gap: {count} scheduled times from {from} to {to} on {day} do not exist and are skipped",
	DSTGapFiredOne:        "DST gap: {time} does not exist, fired at {at}",
	DSTGapFiredMany:       "DST gap: {count} scheduled times from {from} to {to} do not exist, fired once at {at}",
	DSTWithRegular:        "{note} (together with the regular {time} firing)",
	DSTOverlapSecond:      "DST overlap: {time} {zone} is the second of two (clocks went back from {from})",
	DSTOverlapFirstOnly:   "DST overlap: first {time} ({zone}); the repeated {time} {to} does not fire",
	DSTOverlapFirst:       "DST overlap: {time} {zone} is the first of two (clocks go back to {to})",
	AlarmSlotDead:         "job {job} run {run}: slot {slot} failed on its last allowed attempt ({failures} failure(s), retry_max {retry_max}): {error}",
	AlarmRecordsUncertain: "job {job} run {run} slot {slot}: {records} record(s) left pending by a crashed attempt were skipped (policy skip): their effect may or may not have happened; check them in the dedup table",
	AlarmRunFailed:        "run {run} failed: {reason}",
	AlarmRunPartlyFailed:  "run {run} partially failed: {reason}",
	AlarmLeaderChange:     "admin replica {replica} leads the scheduler (epoch {epoch})",
	AlarmRunsWaiting:      "{runs} run(s) of app {app} cannot start, e.g. run {run} of job {job}: {reason}; they fail after {timeout}",
	AlarmRunsUnplaceable:  "{runs} run(s) of app {app} failed without starting, e.g. run {run} of job {job}: {reason}",
	AlarmArchiveBehind:    "dedup archive job {app}/{job} has not succeeded for {max_age} (last at {last}): the dedup table grows past its horizon; check the job's runs",
	AlarmArchiveNever:     "dedup archive job {app}/{job} has not succeeded for {max_age} (never): the dedup table grows past its horizon; check the job's runs",
	AlarmMissedFire:       "job {app}/{job} should have fired at {due} and has not (grace {grace}): is an admin leading? see /api/v1/cluster",
	AlarmMissedFirings:    "job {app}/{job}: {missing} of {expected} firings between {from} and {to} have neither a run nor a recorded skip",
	AlarmExecutorLost:     "executor {executor} of app {app} stopped heartbeating; its unfinished slots move to other executors",
	AlarmExecutorRestart:  "executor {executor} (app {app}) restarted while its previous process held {slots} slot(s): they were lost and are placed again",
	AlarmSlotsUnreported:  "executor {executor} (app {app}) no longer reports {slots} slot(s) it had accepted (first token {token}): they were lost and are placed again",
	AlarmRunLateStart:     "job {app}/{job} run {run} scheduled at {scheduled}: no slot had started by its start deadline {deadline}",
	AlarmDeadlineMissed:   "job {app}/{job} run {run} scheduled at {scheduled} had not finished by its finish deadline {deadline} (status {status})",
	AlarmDeadlineCancel:   "job {app}/{job} run {run} scheduled at {scheduled} had not finished by its finish deadline {deadline} (status {status}): cancelled (deadline_action cancel)",
	FlowNodeJobMissing:    "node {node}: its job {job} does not exist (any more)",
	FlowNodeJobDisabled:   "node {node}: its job {app}/{job} is disabled",
	FlowNodeInline:        "node {node}: inline nodes (handler {handler}) are not run yet; reference a job instead",
	FlowNodeJobRunEnded:   "job run {run} ended {status}: {reason}",
	FlowNodeSkippedRule:   "start rule {rule} can no longer be met: parent {cause} ended without success",
	FlowNodeSkippedStop:   "failure policy stop: node {cause} failed",
	FlowRunFailed:         "{count} node(s) failed or were cancelled: {nodes}",
	FlowRunPartlyFailed:   "{count} node(s) failed or were cancelled: {nodes}; other ends of the workflow succeeded",
	FlowRunInvalid:        "version {version} of the workflow cannot be run: {error}",
}
