package msg

// The codes of the admin's messages. Run: why a run ended, waits or was
// skipped; Cause: why no executor can take a run (nested in Run and Alarm
// messages); Attempt: why the admin ended a slot attempt; Alarm: the alarm
// texts.
const (
	RunSlotsFailed           Code = "run.slots_failed"
	RunSlotFailed            Code = "run.slot_failed"
	RunSlotsPartlyFailed     Code = "run.slots_partly_failed"
	RunJobDeleted            Code = "run.job_deleted"
	RunSkippedDisabled       Code = "run.skipped_disabled"
	RunSkippedPaused         Code = "run.skipped_paused"
	RunSkippedMaxRuns        Code = "run.skipped_max_runs"
	RunSkippedOverlap        Code = "run.skipped_overlap"
	RunSkippedMisfire        Code = "run.skipped_misfire"
	RunWaiting               Code = "run.waiting"
	RunWaitsBackfill         Code = "run.waits_backfill"
	RunUnplaceableFailed     Code = "run.unplaceable_failed"
	RunCancelledBy           Code = "run.cancelled_by"
	RunCancelledByReason     Code = "run.cancelled_by_reason"
	RunReplaced              Code = "run.replaced"
	RunDeadlineCancelled     Code = "run.deadline_cancelled"
	RunSkippedHoliday        Code = "run.skipped_holiday"
	RunSkippedHolidayName    Code = "run.skipped_holiday_named"
	RunSkippedNonWorking     Code = "run.skipped_non_working_day"
	RunSkippedShiftDup       Code = "run.skipped_shift_duplicate"
	RunSkippedNoWorkday      Code = "run.skipped_no_working_day"
	RunSkippedNoBizDay       Code = "run.skipped_no_business_day"
	RunWaitsHeld             Code = "run.waits_held"
	RunWaitTimedOut          Code = "run.wait_timeout"
	CalShiftedHoliday        Code = "cal.shifted_holiday"
	CalShiftedHolidayName    Code = "cal.shifted_holiday_named"
	CalShiftedNonWorking     Code = "cal.shifted_non_working_day"
	CauseNoExecutor          Code = "cause.no_executor"
	CauseNoHandler           Code = "cause.no_handler"
	CauseAppCap              Code = "cause.app_cap"
	CauseJobCap              Code = "cause.job_cap"
	CauseAppRate             Code = "cause.app_rate"
	CausePlatformCap         Code = "cause.platform_cap"
	AttemptNotAcked          Code = "attempt.not_acked"
	AttemptUnknownStatus     Code = "attempt.unknown_status"
	AttemptResultTooLarge    Code = "attempt.result_too_large"
	AttemptResultNotJSON     Code = "attempt.result_not_json"
	AttemptXXLNoCallback     Code = "attempt.xxl_no_callback"
	AttemptXXLKilled         Code = "attempt.xxl_killed"
	AttemptXXLRefused        Code = "attempt.xxl_refused"
	AttemptXXLLateSuccess    Code = "attempt.xxl_late_success"
	AttemptXXLTimeout        Code = "attempt.xxl_timeout"
	AttemptXXLFailed         Code = "attempt.xxl_failed"
	AttemptXXLIdleLost       Code = "attempt.xxl_idle_lost"
	LimitJobTimeout          Code = "limit.job_timeout"
	LimitDefaultTimeout      Code = "limit.default_timeout"
	JobNoExecutor            Code = "job.no_executor"
	JobHandlerNotSeen        Code = "job.handler_not_seen"
	JobWaitTargetMissing     Code = "job.wait_target_missing"
	DSTGapSkippedOne         Code = "dst.gap_skipped_one"
	DSTGapSkippedMany        Code = "dst.gap_skipped_many"
	DSTGapFiredOne           Code = "dst.gap_fired_one"
	DSTGapFiredMany          Code = "dst.gap_fired_many"
	DSTWithRegular           Code = "dst.with_regular"
	DSTOverlapSecond         Code = "dst.overlap_second"
	DSTOverlapFirstOnly      Code = "dst.overlap_first_only"
	DSTOverlapFirst          Code = "dst.overlap_first"
	AlarmSlotDead            Code = "alarm.slot_dead"
	AlarmSlotDeadPermanent   Code = "alarm.slot_dead_permanent"
	AlarmRecordsUncertain    Code = "alarm.records_uncertain"
	AlarmRunFailed           Code = "alarm.run_failed"
	AlarmWorkflowRunFailed   Code = "alarm.workflow_run_failed"
	AlarmRunPartlyFailed     Code = "alarm.run_partly_failed"
	AlarmLeaderChange        Code = "alarm.leader_change"
	AlarmRunsWaiting         Code = "alarm.runs_waiting"
	AlarmRunsUnplaceable     Code = "alarm.runs_unplaceable"
	AlarmArchiveBehind       Code = "alarm.archive_behind"
	AlarmArchiveNever        Code = "alarm.archive_never"
	AlarmMissedFire          Code = "alarm.missed_fire"
	AlarmMissedFirings       Code = "alarm.missed_firings"
	AlarmWorkflowOverdue     Code = "alarm.workflow_overdue"
	AlarmWorkflowGaps        Code = "alarm.workflow_gaps"
	AlarmWatchdogBehind      Code = "alarm.watchdog_behind"
	AlarmExecutorLost        Code = "alarm.executor_lost"
	AlarmExecutorRestart     Code = "alarm.executor_restart"
	AlarmSlotsUnreported     Code = "alarm.slots_unreported"
	AlarmXXLSlotIdle         Code = "alarm.xxl_slot_idle"
	AlarmRunLateStart        Code = "alarm.run_late_start"
	AlarmDeadlineMissed      Code = "alarm.run_deadline_missed"
	AlarmDeadlineCancel      Code = "alarm.run_deadline_cancel"
	AlarmWorkflowWaitTimeout Code = "alarm.workflow_wait_timeout"
	AlarmRunWaitTimeout      Code = "alarm.run_wait_timeout"
	AlarmResolvedInfo        Code = "alarm.resolved_info"
	AlarmResolvedExecutor    Code = "alarm.resolved_executor_back"
	AlarmResolvedRunPlaced   Code = "alarm.resolved_run_placed"
	AlarmResolvedCaughtUp    Code = "alarm.resolved_audit_caught_up"

	// Retry budgets and circuit breakers (docs/failures.md)
	CauseBreakerOpen           Code = "cause.breaker_open"
	CauseBreakerProbing        Code = "cause.breaker_probing"
	BreakerFailures            Code = "breaker.failures"
	BreakerProbeFailed         Code = "breaker.probe_failed"
	AttemptBudgetSpent         Code = "attempt.retry_budget_spent"
	AlarmSlotDeadBudget        Code = "alarm.slot_dead_budget"
	AlarmBreakerOpen           Code = "alarm.breaker_open"
	AlarmResolvedBreakerClosed Code = "alarm.resolved_breaker_closed"
	AlarmBreakerClosed         Code = "alarm.breaker_closed"
	BreakerClosedProbe         Code = "breaker.closed_probe"
	BreakerClosedBy            Code = "breaker.closed_by"
	BreakerDuration            Code = "breaker.duration"
	BreakerOnlyWith            Code = "breaker.only_with"

	// Validation: generic words and values (admin/jobdef, admin/api)
	Text            Code = "text"
	ValueOutside    Code = "value.outside"
	ValueBetween    Code = "value.between"
	ValueMaxChars   Code = "value.max_chars"
	ValueMaxBytes   Code = "value.max_bytes"
	ValuePositiveMS Code = "value.positive_ms"
	NameRule        Code = "name.rule"
	NameRequired    Code = "name.required"
	NameInvalid     Code = "name.invalid"
	MustStay        Code = "value.must_stay"
	NotYourApp      Code = "app.not_yours"
	NotYourAppShort Code = "app.not_yours_short"
	ReachesApp      Code = "app.reaches"
	AppOwnersMax    Code = "app.owners_max"
	AppOwnerInvalid Code = "app.owner_invalid"
	AppNameTaken    Code = "app.name_taken"
	AppQuotaJobs    Code = "app.quota_jobs"
	AppQuotaSlots   Code = "app.quota_slots"
	AppQuotaRange   Code = "app.quota_range"
	AppQuotaAdmins  Code = "app.quota_admins"
	AppQuotaBackfil Code = "app.quota_backfill"
	RoleOneOf       Code = "role.one_of"

	// Validation: schedules (admin/schedule)
	CronFieldError        Code = "sched.field_error"
	PartError             Code = "sched.part_error"
	PartSecond            Code = "part.second"
	PartMinute            Code = "part.minute"
	PartHour              Code = "part.hour"
	PartDayOfMonth        Code = "part.day_of_month"
	PartMonth             Code = "part.month"
	PartDayOfWeek         Code = "part.day_of_week"
	PartExpression        Code = "part.expression"
	PartTimeZone          Code = "part.time_zone"
	PartTimeZones         Code = "part.time_zones"
	PartMisfirePolicy     Code = "part.misfire_policy"
	PartMisfireThreshold  Code = "part.misfire_threshold"
	PartMaxCatchUp        Code = "part.max_catch_up"
	PartOverlapPolicy     Code = "part.overlap_policy"
	PartCalendarRule      Code = "part.calendar_rule"
	PartCalendarShift     Code = "part.calendar_shift"
	PartStartDeadline     Code = "part.start_deadline"
	PartFinishDeadline    Code = "part.finish_deadline"
	PartJitterWindow      Code = "part.jitter_window"
	CycleMinute           Code = "cycle.minute"
	CycleHour             Code = "cycle.hour"
	CycleDay              Code = "cycle.day"
	CycleMonth            Code = "cycle.month"
	CycleYear             Code = "cycle.year"
	CycleWeek             Code = "cycle.week"
	CronEmpty             Code = "cron.empty"
	CronTooLong           Code = "cron.too_long"
	CronTZPrefix          Code = "cron.tz_prefix"
	CronEveryArgs         Code = "cron.every_args"
	CronEveryNotDuration  Code = "cron.every_not_duration"
	CronEveryTooShort     Code = "cron.every_too_short"
	CronEveryFraction     Code = "cron.every_fraction"
	CronEveryTooLong      Code = "cron.every_too_long"
	CronAtArgs            Code = "cron.at_args"
	CronAtBad             Code = "cron.at_bad"
	CronAtYears           Code = "cron.at_years"
	CronUnknownDescriptor Code = "cron.unknown_descriptor"
	CronDescriptorArgs    Code = "cron.descriptor_args"
	CronYearField         Code = "cron.year_field"
	CronFieldCount        Code = "cron.field_count"
	CronNotValid          Code = "cron.not_valid"
	CronBDWithDOW         Code = "cron.bd_with_dow"
	CronNeverFiresOne     Code = "cron.never_fires_one"
	CronNeverFiresMany    Code = "cron.never_fires_many"
	CronBDInList          Code = "cron.bd_in_list"
	CronBDRange           Code = "cron.bd_range"
	CronBDZero            Code = "cron.bd_zero"
	CronBDOutside         Code = "cron.bd_outside"
	CronBDInvalid         Code = "cron.bd_invalid"
	CronBDNeedsCalendar   Code = "cron.bd_needs_calendar"
	CronBDNotDOM          Code = "cron.bd_not_dom"
	CronEmptyElement      Code = "cron.empty_element"
	CronTwoSlashes        Code = "cron.two_slashes"
	CronStepNotNumber     Code = "cron.step_not_number"
	CronStepZero          Code = "cron.step_zero"
	CronStepTooLarge      Code = "cron.step_too_large"
	CronQuestionMark      Code = "cron.question_mark"
	CronTwoDashes         Code = "cron.two_dashes"
	CronDOWBackwards      Code = "cron.dow_backwards"
	CronBackwards         Code = "cron.backwards"
	CronStartsAfterEnd    Code = "cron.starts_after_end"
	CronHMalformed        Code = "cron.h_malformed"
	CronHSunday           Code = "cron.h_sunday"
	CronHBackwards        Code = "cron.h_backwards"
	CronHNoKey            Code = "cron.h_no_key"
	CronMissingNumber     Code = "cron.missing_number"
	CronQuartz            Code = "cron.quartz"
	CronNotNumber         Code = "cron.not_number"
	CronNotNumberMonth    Code = "cron.not_number_month"
	CronNotNumberDOW      Code = "cron.not_number_dow"
	BadMisfirePolicy      Code = "sched.bad_misfire_policy"
	BadOverlapPolicy      Code = "sched.bad_overlap_policy"
	RuleNeedsCalendar     Code = "sched.rule_needs_calendar"
	RuleShiftTooOften     Code = "sched.shift_too_often"
	ZoneError             Code = "zone.error"
	ZoneLocal             Code = "zone.local"
	ZoneSpaces            Code = "zone.spaces"
	ZoneFixedOffset       Code = "zone.fixed_offset"
	ZoneEtcGMT            Code = "zone.etc_gmt"
	ZonePath              Code = "zone.path"
	ZoneUnknown           Code = "zone.unknown"
	ZonesTooMany          Code = "zones.too_many"
	ZonesDuplicate        Code = "zones.duplicate"
	ZonesEvery            Code = "zones.every"
	ZonesAt               Code = "zones.at"
	ZonesTooDense         Code = "zones.too_dense"
	ZonesFirst            Code = "zones.first"
	ZonesCalendar         Code = "zones.calendar"
	DeadlineHow           Code = "deadline.how"
	DeadlineNotDuration   Code = "deadline.not_duration"
	DeadlineNegative      Code = "deadline.negative"
	DeadlineTooShort      Code = "deadline.too_short"
	DeadlineTooLong       Code = "deadline.too_long"
	DeadlineOrClock       Code = "deadline.or_clock"
	DeadlineNotClock      Code = "deadline.not_clock"
	JitterNotDuration     Code = "jitter.not_duration"
	JitterOutside         Code = "jitter.outside"
	JitterGap             Code = "jitter.gap"

	// Validation: jobs, users, passwords, tokens, alarm routes
	JobHandlerRule         Code = "job.handler_rule"
	JobMisfireThreshold    Code = "job.misfire_threshold"
	JobPriorityUnknown     Code = "job.priority_unknown"
	RunPriorityAboveJob    Code = "run.priority_above_job"
	BackfillNoPriority     Code = "backfill.no_priority"
	JobTimeout             Code = "job.timeout"
	JobChildrenMax         Code = "job.children_max"
	JobChildrenIDs         Code = "job.children_ids"
	JobChildMissing        Code = "job.child_missing"
	JobChildCycle          Code = "job.child_cycle"
	JobCronRequired        Code = "job.cron_required"
	JobBusinessDay         Code = "job.business_day"
	JobCalendarID          Code = "job.calendar_id"
	JobCalendarRuleAlone   Code = "job.calendar_rule_alone"
	JobCalendarShiftAlone  Code = "job.calendar_shift_alone"
	JobCalendarRuleNeeded  Code = "job.calendar_rule_needed"
	JobCalendarShiftRule   Code = "job.calendar_shift_rule"
	JobCalendarMissing     Code = "job.calendar_missing"
	WorkflowNameTaken      Code = "workflow.name_taken"
	WorkflowBusinessDate   Code = "workflow.business_date"
	WorkflowRunKey         Code = "workflow.run_key"
	WorkflowParamsObject   Code = "workflow.params_object"
	BackfillDate           Code = "backfill.date"
	BackfillBackwards      Code = "backfill.backwards"
	BackfillTooLong        Code = "backfill.too_long"
	JobNameTaken           Code = "job.name_taken"
	JobVersionRequired     Code = "job.version_required"
	JobWorkflowOwned       Code = "job.workflow_owned"
	JobDeleteRunning       Code = "job.delete_running"
	SlotParamsPair         Code = "job.slot_params_pair"
	SlotParamsSlot         Code = "job.slot_params_slot"
	SlotParamsTwice        Code = "job.slot_params_twice"
	DedupScopeHow          Code = "job.dedup_scope_how"
	DedupScopeTooLong      Code = "job.dedup_scope_too_long"
	DedupScopeRunPrefix    Code = "job.dedup_scope_run_prefix"
	DedupScopePlaceholder  Code = "job.dedup_scope_placeholder"
	DedupScopeChars        Code = "job.dedup_scope_chars"
	DedupScopeResolved     Code = "job.dedup_scope_resolved"
	UncertainPolicyBad     Code = "job.uncertain_policy"
	RecordMaxAttempts      Code = "job.record_max_attempts"
	DeadlineActionBad      Code = "job.deadline_action"
	JobEndBeforeStart      Code = "job.end_before_start"
	JobMaxRuns             Code = "job.max_runs"
	JobInstantBad          Code = "job.instant_bad"
	JobPauseUntilPast      Code = "job.pause_until_past"
	JobCompletedEndAt      Code = "job.completed_end_at"
	JobCompletedMaxRuns    Code = "job.completed_max_runs"
	JobCompletedNoFiring   Code = "job.completed_no_firing"
	UserAppsInvalid        Code = "user.apps_invalid"
	UserAppsTooLong        Code = "user.apps_too_long"
	UserNameTaken          Code = "user.name_taken"
	PasswordHint           Code = "password.hint"
	PasswordTooShort       Code = "password.too_short"
	PasswordTooLong        Code = "password.too_long"
	PasswordCommon         Code = "password.common"
	PasswordRepeated       Code = "password.repeated"
	PasswordConsecutive    Code = "password.consecutive"
	PasswordWrongOld       Code = "password.wrong_old"
	APIKeyNameRule         Code = "token.name_rule"
	APIKeyRoleOneOf        Code = "token.role_one_of"
	APIKeyDays             Code = "token.days"
	APIKeyOutliveMost      Code = "token.outlive_most"
	APIKeyOutliveNone      Code = "token.outlive_none"
	RoutesRequired         Code = "routes.required"
	RoutesMax              Code = "routes.max"
	RouteChannelRequired   Code = "routes.channel_required"
	AlarmsActionInvalid    Code = "alarms.action_invalid"
	AlarmsSelectionNeeded  Code = "alarms.selection_needed"
	AlarmsSelectionBoth    Code = "alarms.selection_both"
	AlarmsTooMany          Code = "alarms.too_many"
	AlarmsIDInvalid        Code = "alarms.id_invalid"
	AlarmsSeverityInvalid  Code = "alarms.severity_invalid"
	DashboardWindowInvalid Code = "dashboard.window_invalid"
	RouteNoChannels        Code = "routes.no_channels"
	RouteUnknownChannel    Code = "routes.unknown_channel"
	RouteRecipientEmail    Code = "routes.recipient_email"
	RouteRecipientNotEmail Code = "routes.recipient_not_email"
	RouteDuplicate         Code = "routes.duplicate"

	// Validation: calendars (admin/calendar, admin/api)
	Month1               Code = "month.1"
	Month2               Code = "month.2"
	Month3               Code = "month.3"
	Month4               Code = "month.4"
	Month5               Code = "month.5"
	Month6               Code = "month.6"
	Month7               Code = "month.7"
	Month8               Code = "month.8"
	Month9               Code = "month.9"
	Month10              Code = "month.10"
	Month11              Code = "month.11"
	Month12              Code = "month.12"
	KindHoliday          Code = "kind.holiday"
	KindWorkday          Code = "kind.workday"
	CalError             Code = "cal.error"
	CalAppRule           Code = "cal.app_rule"
	CalWeekExample       Code = "cal.week_example"
	CalWeekDayName       Code = "cal.week_day_name"
	CalWeekBackwards     Code = "cal.week_backwards"
	CalWeekBits          Code = "cal.week_bits"
	CalImportBoth        Code = "cal.import_both"
	CalImportFormat      Code = "cal.import_format"
	CalDayDate           Code = "cal.day_date"
	DateFormat           Code = "date.format"
	DateInvalid          Code = "date.invalid"
	DateYear             Code = "date.year"
	DateMonth            Code = "date.month"
	DateDay              Code = "date.day"
	CalTooManyDays       Code = "cal.too_many_days"
	CalDayError          Code = "cal.day_error"
	CalDayKind           Code = "cal.day_kind"
	CalDayName           Code = "cal.day_name"
	CalDayBoth           Code = "cal.day_both"
	CalDayTwice          Code = "cal.day_twice"
	CalNameRequired      Code = "cal.name_required"
	CalNameLong          Code = "cal.name_long"
	CalNameChars         Code = "cal.name_chars"
	CalShiftOnly         Code = "cal.shift_only"
	CalShiftBad          Code = "cal.shift_bad"
	CalRuleBad           Code = "cal.rule_bad"
	CalGlobalAdminOnly   Code = "cal.global_admin_only"
	CalNameTaken         Code = "cal.name_taken"
	CalRevisionRequired  Code = "cal.revision_required"
	DayNameLong          Code = "day_name.long"
	DayNameUTF8          Code = "day_name.utf8"
	DayNameSpace         Code = "day_name.space"
	DayNameControl       Code = "day_name.control"
	FlowNodeJobMissing   Code = "workflow.node_job_missing"
	FlowNodeJobDisabled  Code = "workflow.node_job_disabled"
	FlowNodeInline       Code = "workflow.node_inline"
	FlowRunWaitsBackfill Code = "workflow.run_waits_backfill"
	FlowNodeJobRunEnded  Code = "workflow.node_job_run_ended"
	FlowNodeSkippedRule  Code = "workflow.node_skipped_rule"
	FlowNodeSkippedStop  Code = "workflow.node_skipped_stop"
	FlowRunFailed        Code = "workflow.run_failed"
	FlowRunPartlyFailed  Code = "workflow.run_partly_failed"
	FlowRunInvalid       Code = "workflow.run_invalid"
	FlowNodeParamsLarge  Code = "workflow.node_params_large"
	FlowNodeWaiting      Code = "workflow.node_waiting"
	FlowNodeWaitTimeout  Code = "workflow.node_wait_timeout"

	// Validation: the waits of a workflow node or a job (admin/waits)
	WaitOnlyWith       Code = "wait.only_with"
	WaitTooMany        Code = "wait.too_many"
	WaitOneOf          Code = "wait.one_of"
	WaitDuplicate      Code = "wait.duplicate"
	WaitTimeoutBad     Code = "wait.timeout_bad"
	WaitTimeoutOutside Code = "wait.timeout_outside"
	WaitOnTimeoutBad   Code = "wait.on_timeout_bad"
	WaitSelfWorkflow   Code = "wait.self_workflow"
	WaitSelfNodeJob    Code = "wait.self_node_job"
	WaitSelfJob        Code = "wait.self_job"

	// Validation: a calendar file's import errors (admin/calendar)
	ImportLine            Code = "import.line"
	ImportWhole           Code = "import.whole"
	ImportAHoliday        Code = "import.a_holiday"
	ImportAWorkday        Code = "import.a_workday"
	ImportBothKinds       Code = "import.both_kinds"
	ImportJoinedName      Code = "import.joined_name"
	ImportTooManyDays     Code = "import.too_many_days"
	ImportTooLarge        Code = "import.too_large"
	ImportTooManyRows     Code = "import.too_many_rows"
	ImportFieldCount      Code = "import.field_count"
	ImportKind            Code = "import.kind"
	ImportName            Code = "import.name"
	ImportBeginOutside    Code = "import.begin_outside"
	ImportCalendarInside  Code = "import.calendar_inside"
	ImportEventInside     Code = "import.event_inside"
	ImportTooManyEvents   Code = "import.too_many_events"
	ImportTooDeep         Code = "import.too_deep"
	ImportEndWithoutBegin Code = "import.end_without_begin"
	ImportEndMismatch     Code = "import.end_mismatch"
	ImportPropertyOutside Code = "import.property_outside"
	ImportNotClosed       Code = "import.not_closed"
	ImportNoCalendar      Code = "import.no_calendar"
	ImportContentLine     Code = "import.content_line"
	ImportParamNoValue    Code = "import.param_no_value"
	ImportQuoteOpen       Code = "import.quote_open"
	ImportQuoteFollowed   Code = "import.quote_followed"
	ImportNoColon         Code = "import.no_colon"
	ImportSecondProperty  Code = "import.second_property"
	ImportDateTZ          Code = "import.date_tz"
	ImportDateValue       Code = "import.date_value"
	ImportDateTime        Code = "import.date_time"
	ImportDateLength      Code = "import.date_length"
	ImportDateError       Code = "import.date_error"
	ImportDuration        Code = "import.duration"
	ImportRecurrence      Code = "import.recurrence"
	ImportNoStart         Code = "import.no_start"
	ImportEndAndDuration  Code = "import.end_and_duration"
	ImportEndNotAfter     Code = "import.end_not_after"
	ImportEventTooLong    Code = "import.event_too_long"
	ImportEventDays       Code = "import.event_days"
	ImportSummaryName     Code = "import.summary_name"
	ImportPastYear        Code = "import.past_year"
	ImportCategoriesBoth  Code = "import.categories_both"
	ImportSummaryWorkday  Code = "import.summary_workday"

	// Validation: the params of a built-in handler (admin/jobdef); the
	// problem is a "builtin.<code>" message, its code one of
	// executor/builtin's Problems (they have no constants here)
	ParamsField Code = "params.field"
	ParamsDoc   Code = "params.doc"
)

// Catalog is the English template of every code: {name} is the argument
// name. The console's web/static/i18n/en.json holds the same texts under
// "srv.<code>" (checked by a test), zh-CN.json their translations.
var Catalog = map[Code]string{
	RunSlotsFailed:           "{failed} slots failed",
	RunSlotFailed:            "1 slot failed",
	RunSlotsPartlyFailed:     "{failed} of {total} slots failed",
	RunJobDeleted:            "job was deleted",
	RunSkippedDisabled:       "the job was disabled before this firing started",
	RunSkippedPaused:         "the job was paused before this firing started",
	RunSkippedMaxRuns:        "max_runs {max}: {succeeded} runs succeeded and {active} still active could reach it",
	RunSkippedOverlap:        "overlap policy skip: the previous run is still active",
	RunSkippedMisfire:        "misfire policy {policy}: firing was late by more than {threshold_ms}ms",
	RunWaiting:               "waiting: {cause}",
	RunWaitsBackfill:         "waits its turn: backfill #{backfill} runs at most {parallel} at once, {running} running",
	RunUnplaceableFailed:     "{cause} for {timeout} (unplaceable timeout): the run failed without starting",
	RunCancelledBy:           "cancelled by {user}",
	RunCancelledByReason:     "cancelled by {user}: {reason}",
	RunReplaced:              "replaced by run {run} (overlap policy replace)",
	RunDeadlineCancelled:     "cancelled: its finish deadline {deadline} passed (deadline_action cancel)",
	RunSkippedHoliday:        "skipped: {date} is a holiday in calendar {calendar}",
	RunSkippedHolidayName:    "skipped: {date} is a holiday ({holiday}) in calendar {calendar}",
	RunSkippedNonWorking:     "skipped: {date} ({weekday}) is not a working day in calendar {calendar}",
	RunSkippedShiftDup:       "skipped: shifted onto {at}, where the job fires already (calendar {calendar})",
	RunSkippedNoWorkday:      "skipped: calendar {calendar} has no working day to shift {date} to",
	RunSkippedNoBizDay:       "skipped: {month} has fewer working days in calendar {calendar} than {business_day} asks for",
	RunWaitsHeld:             "waiting for {waits} of business date {date} (wait_for; times out at {deadline})",
	RunWaitTimedOut:          "waited {timeout} for {waits} of business date {date}: timed out (on_timeout {action})",
	CalShiftedHoliday:        "moved from {from} to {to}: {date} is a holiday in calendar {calendar}",
	CalShiftedHolidayName:    "moved from {from} to {to}: {date} is a holiday ({holiday}) in calendar {calendar}",
	CalShiftedNonWorking:     "moved from {from} to {to}: {date} ({weekday}) is not a working day in calendar {calendar}",
	CauseNoExecutor:          "no executor of app {app} is online",
	CauseNoHandler:           "no online executor of app {app} has handler {handler} ({online} online without it)",
	CauseAppCap:              "app {app} runs {running} of its {max} slots (max_running_slots)",
	CauseJobCap:              "job {job} runs {running} of its {max} slots (max_running_slots)",
	CauseAppRate:             "app {app} starts at most {rate} runs a second (max_starts_per_second)",
	CausePlatformCap:         "the platform runs {running} of its {max} slots (--max-running-slots), shared by the apps' weights",
	AttemptNotAcked:          "executor {executor} did not acknowledge the assignment within {timeout} (it refused it or never took it): not started there",
	AttemptUnknownStatus:     "executor reported unknown status {status}: {error}",
	AttemptResultTooLarge:    "the handler's result is {size} bytes, more than the {max} bytes a slot's result may have",
	AttemptResultNotJSON:     "the handler's result is not a JSON value",
	AttemptXXLNoCallback:     "timed out: no callback from the XXL-JOB executor within {limit} ({limit_kind}) plus {grace} grace; its result is lost",
	AttemptXXLKilled:         "killed by {user} on XXL-JOB executor {address}",
	AttemptXXLRefused:        "XXL-JOB executor {address} refused the run ({why})",
	AttemptXXLLateSuccess:    "timed out on the XXL-JOB executor: its callback (handleCode 200, {answer}) came {after} after the run call, past the job's timeout of {timeout}",
	AttemptXXLTimeout:        "timed out on the XXL-JOB executor: {answer}",
	AttemptXXLFailed:         "XXL-JOB handler failed (handleCode {code}): {answer}",
	AttemptXXLIdleLost:       "lost: XXL-JOB executor {address} said twice, {apart} apart, that it no longer runs job id {xxl_job_id} (idleBeat), and no callback came; its result is lost, the slot runs again with a new token",
	LimitJobTimeout:          "the job's timeout",
	LimitDefaultTimeout:      "the default result timeout",
	JobNoExecutor:            "no executor of app {app} has registered yet: runs of this job wait for one with handler {handler} (and fail after the unplaceable timeout)",
	JobHandlerNotSeen:        "no executor of app {app} has shown handler {handler} yet (check the name, or deploy it): runs of this job wait for one (and fail after the unplaceable timeout)",
	JobWaitTargetMissing:     "wait_for names {target}, which does not exist in the apps you may manage (check the name, or create it): runs of this job wait for it until their wait timeout",
	DSTGapSkippedOne:         "DST gap: {time} on {day} does not exist and is skipped",
	DSTGapSkippedMany:        "DST gap: {count} scheduled times from {from} to {to} on {day} do not exist and are skipped",
	DSTGapFiredOne:           "DST gap: {time} does not exist, fired at {at}",
	DSTGapFiredMany:          "DST gap: {count} scheduled times from {from} to {to} do not exist, fired once at {at}",
	DSTWithRegular:           "{note} (together with the regular {time} firing)",
	DSTOverlapSecond:         "DST overlap: {time} {zone} is the second of two (clocks went back from {from})",
	DSTOverlapFirstOnly:      "DST overlap: first {time} ({zone}); the repeated {time} {to} does not fire",
	DSTOverlapFirst:          "DST overlap: {time} {zone} is the first of two (clocks go back to {to})",
	AlarmSlotDead:            "job {job} run {run}: slot {slot} failed on its last allowed attempt ({failures} failure(s), retry_max {retry_max}): {error}",
	AlarmSlotDeadPermanent:   "job {job} run {run}: slot {slot} failed permanently (not retried): {error}",
	AlarmRecordsUncertain:    "job {job} run {run} slot {slot}: {records} record(s) left pending by a crashed attempt were skipped (policy skip): their effect may or may not have happened; check them in the dedup table",
	AlarmRunFailed:           "run {run} failed: {reason}",
	AlarmWorkflowRunFailed:   "workflow {app}/{workflow} run {run} (business date {date}) ended {status}: {reason}",
	AlarmRunPartlyFailed:     "run {run} partially failed: {reason}",
	AlarmLeaderChange:        "admin replica {replica} leads the scheduler (epoch {epoch})",
	AlarmRunsWaiting:         "{runs} run(s) of app {app} cannot start, e.g. run {run} of job {job}: {reason}; they fail after {timeout}",
	AlarmRunsUnplaceable:     "{runs} run(s) of app {app} failed without starting, e.g. run {run} of job {job}: {reason}",
	AlarmArchiveBehind:       "dedup archive job {app}/{job} has not succeeded for {max_age} (last at {last}): the dedup table grows past its horizon; check the job's runs",
	AlarmArchiveNever:        "dedup archive job {app}/{job} has not succeeded for {max_age} (never): the dedup table grows past its horizon; check the job's runs",
	AlarmMissedFire:          "job {app}/{job} should have fired at {due} and has not (grace {grace}): is an admin leading? see /api/v1/cluster",
	AlarmMissedFirings:       "job {app}/{job}: {missing} of {expected} firings between {from} and {to} have neither a run nor a recorded skip",
	AlarmWorkflowOverdue:     "workflow {app}/{workflow} should have fired at {due} and has not (grace {grace}): is an admin leading? see /api/v1/cluster",
	AlarmWorkflowGaps:        "workflow {app}/{workflow}: {missing} of {expected} firings between {from} and {to} have neither a run nor a recorded skip",
	AlarmWatchdogBehind:      "the missed-fire audit of {what} is behind: {count} of them have firings due for more than {lag} that are not checked yet, the oldest since {oldest} ({behind} late); they will be checked late, not skipped: see the load of the admin replicas and docs/guarantees.md",
	AlarmExecutorLost:        "executor {executor} of app {app} stopped heartbeating; its unfinished slots move to other executors",
	AlarmExecutorRestart:     "executor {executor} (app {app}) restarted while its previous process held {slots} slot(s): they were lost and are placed again",
	AlarmSlotsUnreported:     "executor {executor} (app {app}) no longer reports {slots} slot(s) it had accepted (first token {token}): they were lost and are placed again",
	AlarmXXLSlotIdle:         "XXL-JOB executor {executor} (app {app}) no longer runs slot {slot} of run {run} (token {token}, job id {xxl_job_id}) and sent no callback: the slot was lost and is placed again",
	AlarmRunLateStart:        "job {app}/{job} run {run} scheduled at {scheduled}: no slot had started by its start deadline {deadline}",
	AlarmDeadlineMissed:      "job {app}/{job} run {run} scheduled at {scheduled} had not finished by its finish deadline {deadline} (status {status})",
	AlarmDeadlineCancel:      "job {app}/{job} run {run} scheduled at {scheduled} had not finished by its finish deadline {deadline} (status {status}): cancelled (deadline_action cancel)",
	AlarmWorkflowWaitTimeout: "workflow {app}/{workflow} run {run} (business date {date}): node {node} waited {timeout} for {waits} and was {action}",
	AlarmRunWaitTimeout:      "job {app}/{job} run {run} (business date {date}) waited {timeout} for {waits} and was {action}",
	AlarmResolvedInfo:        "for information only: resolved when raised",
	AlarmResolvedExecutor:    "the executor heartbeats again",
	AlarmResolvedRunPlaced:   "the run found an executor with its handler: its slots are placed",
	AlarmResolvedCaughtUp:    "the missed-fire audit has caught up",

	// Retry budgets and circuit breakers
	CauseBreakerOpen:           "the circuit breaker of job {job} is open since {opened_at} ({reason}); one probe goes at {probe_at}",
	CauseBreakerProbing:        "the circuit breaker of job {job} is probing (token {token}); the rest waits for its result",
	BreakerFailures:            "{failures} consecutive failures of its slots (last: {error})",
	BreakerProbeFailed:         "the probe (token {token}) failed: {error}",
	AttemptBudgetSpent:         "not retried: the job's retry budget is spent ({retries} retries for {firsts} first attempts in the last {window}, at most {percent}%); the failure was: {error}",
	AlarmSlotDeadBudget:        "job {job} run {run}: slot {slot} failed and is not retried: {reason}",
	AlarmBreakerOpen:           "job {job}: circuit breaker open: {reason}; its new runs and retries wait, one probe at {probe_at}",
	AlarmResolvedBreakerClosed: "the circuit breaker closed: {how}",
	AlarmBreakerClosed:         "job {job}: circuit breaker closed: {how}; its held runs and retries go",
	BreakerClosedProbe:         "the probe (token {token}) succeeded",
	BreakerClosedBy:            "closed by {user}",
	BreakerDuration:            "{value} is not a duration from {min} to {max} such as \"{example}\"",
	BreakerOnlyWith:            "only with {field} above 0: set it, or leave this empty",

	// Validation: generic words and values (admin/jobdef, admin/api)
	Text:            "{text}",
	ValueOutside:    "{value} is outside {min}-{max}",
	ValueBetween:    "between {min} and {max}",
	ValueMaxChars:   "at most {max} characters",
	ValueMaxBytes:   "at most {max} bytes",
	ValuePositiveMS: "a positive number of milliseconds",
	NameRule:        "1-64 ASCII letters (a-z, A-Z), digits, '.', '_' or '-', starting with a letter or digit (no spaces)",
	NameRequired:    "required; {rule}",
	NameInvalid:     "{value} is not a valid name: use {rule}",
	MustStay:        "must stay {value}",
	NotYourApp:      "not one of your apps ({apps}); ask an admin",
	NotYourAppShort: "not one of your apps; ask an admin",
	ReachesApp:      "reaches app {app} ({via}), which you may not act on: ask a user of both apps or an admin",
	AppOwnersMax:    "at most {max} owners",
	AppOwnerInvalid: "{value} is not an owner: a user name or an e-mail address of 1-{max} characters, without commas or spaces",
	AppNameTaken:    "app {app} exists already: change it with PATCH /api/v1/apps/{app}",
	AppQuotaJobs:    "app {app} has {jobs} jobs, its quota (max_jobs {max}): delete one or ask an admin to raise the quota",
	AppQuotaSlots:   "at most {max} slots per run in app {app} (its quota max_slots_per_run): ask an admin to raise it",
	AppQuotaRange:   "0 (no limit) to {max}",
	AppQuotaAdmins:  "an app's quotas and concurrency cap are set by admins",
	AppQuotaBackfil: "at most {max} runs at once in app {app} (its quota max_backfill_parallel): ask an admin to raise it",
	RoleOneOf:       "one of viewer, operator, admin",

	// Validation: schedules (admin/schedule)
	CronFieldError:        "cron field {field} ({name}): {error}",
	PartError:             "{name}: {error}",
	PartSecond:            "second",
	PartMinute:            "minute",
	PartHour:              "hour",
	PartDayOfMonth:        "day of month",
	PartMonth:             "month",
	PartDayOfWeek:         "day of week",
	PartExpression:        "expression",
	PartTimeZone:          "time zone",
	PartTimeZones:         "time zones",
	PartMisfirePolicy:     "misfire policy",
	PartMisfireThreshold:  "misfire threshold",
	PartMaxCatchUp:        "max catch-up",
	PartOverlapPolicy:     "overlap policy",
	PartCalendarRule:      "calendar rule",
	PartCalendarShift:     "calendar shift",
	PartStartDeadline:     "start deadline",
	PartFinishDeadline:    "finish deadline",
	PartJitterWindow:      "jitter window",
	CycleMinute:           "minute",
	CycleHour:             "hour",
	CycleDay:              "day",
	CycleMonth:            "month",
	CycleYear:             "year",
	CycleWeek:             "week",
	CronEmpty:             "the expression is empty; write 5 fields (minute hour day-of-month month day-of-week), 6 with seconds first, or a descriptor such as @daily",
	CronTooLong:           "the expression is {bytes} bytes long; the limit is {limit}",
	CronTZPrefix:          "a TZ= prefix is not accepted; set the job's time zone in its own setting instead",
	CronEveryArgs:         "@every takes exactly one duration, e.g. \"@every 90s\", \"@every 15m\" or \"@every 1h30m\"",
	CronEveryNotDuration:  "{value} is not a duration; write e.g. 90s, 15m or 1h30m",
	CronEveryTooShort:     "@every {value} is shorter than the minimum of 1s",
	CronEveryFraction:     "@every {value} has a fraction of a second; use whole seconds",
	CronEveryTooLong:      "@every {value} is longer than the maximum of 366 days; use a cron expression for longer cycles",
	CronAtArgs:            "@at takes exactly one date and time, e.g. \"@at 2026-12-24T18:00\" (in the job's time zone) or \"@at 2026-12-24T18:00+08:00\"",
	CronAtBad:             "{value} is not a date and time like 2026-12-24T18:00 or 2026-12-24T18:00:30 (in the job's time zone), optionally with an offset such as +08:00 or Z",
	CronAtYears:           "@at {value} is outside the years {min} to {max}",
	CronUnknownDescriptor: "unknown descriptor {value}; use one of @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly or @every <duration>",
	CronDescriptorArgs:    "{name} takes no arguments",
	CronYearField:         "7 fields given; a year field is not supported (write 5 fields, or 6 with seconds first)",
	CronFieldCount:        "{count} fields given; write 5 fields (minute hour day-of-month month day-of-week) or 6 with seconds first",
	CronNotValid:          "not a valid cron expression: {error}",
	CronBDWithDOW:         "{dow} cannot be combined with {bd} in the day of month: {bd} already picks one working day of the month from the job's calendar (its base week and holidays say which days work); write * here",
	CronNeverFiresOne:     "day {days} never occurs in {months}, so this expression would never fire; pick a day that exists in those months (or use a day of week)",
	CronNeverFiresMany:    "days {days} never occur in {months}, so this expression would never fire; pick a day that exists in those months (or use a day of week)",
	CronBDInList:          "{value}: a business day (BD3, BDL, BD-2) stands alone in the day-of-month field and cannot be combined with other days; use one job per business day",
	CronBDRange:           "{value}: ranges and steps of business days are not supported; write one business day: BDn (the n-th working day, n from 1 to {max}), BDL (the last) or BD-n (the n-th from the end)",
	CronBDZero:            "{bd} is not a business day: they count from 1 (BD1 is the first working day of the month, BDL or BD-1 the last)",
	CronBDOutside:         "{bd}: {n} is outside 1-{max} (no month has more than {max} days)",
	CronBDInvalid:         "{value} is not a business day: write BDn (the n-th working day of the month, n from 1 to {max}), BDL (the last) or BD-n (the n-th from the end)",
	CronBDNeedsCalendar:   "{bd} needs a calendar: set the job's calendar",
	CronBDNotDOM:          "{item}: business days (BD3, BDL, BD-2) are only allowed in the day-of-month field",
	CronEmptyElement:      "empty element in the list {field}; remove the extra comma",
	CronTwoSlashes:        "{item} has more than one '/'; write start-end/step",
	CronStepNotNumber:     "step {step} in {item} is not a whole number",
	CronStepZero:          "step 0 in {item} is not allowed; use a step of 1 or more",
	CronStepTooLarge:      "step {step} in {item} is larger than the field's range {min}-{max}; steps restart every {cycle}, so use a smaller step or @every",
	CronQuestionMark:      "'?' is only allowed in the day-of-month and day-of-week fields; use '*'",
	CronTwoDashes:         "{item} has more than one '-'; write a range as start-end",
	CronDOWBackwards:      "range {range} goes backwards; wrap-around ranges are not supported, write e.g. FRI-SAT,SUN or 0,5-6",
	CronBackwards:         "range {range} goes backwards; write it as {lo}-{hi}",
	CronStartsAfterEnd:    "{item} starts after the end of the field ({max})",
	CronHMalformed:        "malformed H {item}; write H, H(a-b), H/n or H(a-b)/n",
	CronHSunday:           "{item}: use 0 for Sunday inside H(a-b)",
	CronHBackwards:        "H range {range} goes backwards; write H({lo}-{hi})",
	CronHNoKey:            "H needs the job's identity to pick a stable value; set the job key (e.g. \"app/name\")",
	CronMissingNumber:     "{item} is missing a number",
	CronQuartz:            "{item} uses a Quartz extension (L, W or #) that is not supported; use plain values, ranges, lists and steps",
	CronNotNumber:         "{value} is not a number",
	CronNotNumberMonth:    "{value} is not a number or a month name (JAN-DEC)",
	CronNotNumberDOW:      "{value} is not a number or a day name (SUN-SAT)",
	BadMisfirePolicy:      "{value} is not a misfire policy; use run_once, skip or catch_up",
	BadOverlapPolicy:      "{value} is not an overlap policy; use allow, skip, queue or replace",
	RuleNeedsCalendar:     "the rule {rule} needs a calendar: set the job's calendar",
	RuleShiftTooOften:     "shift moves firings to another day and is for schedules that fire at most {max} times a day; {expr} fires {count} times a day: use {rule}",
	ZoneError:             "{zone}: {error}",
	ZoneLocal:             "\"Local\" would follow the admin server's own zone; name the job's zone explicitly, e.g. \"Europe/Berlin\" or \"UTC\"",
	ZoneSpaces:            "remove the surrounding spaces",
	ZoneFixedOffset:       "fixed UTC offsets are not accepted because they cannot follow daylight-saving rules; use a region name such as \"Asia/Shanghai\" or \"America/New_York\", or \"UTC\"",
	ZoneEtcGMT:            "fixed UTC offsets are not accepted because they cannot follow daylight-saving rules; use a region name such as \"Asia/Shanghai\" or \"America/New_York\", or \"UTC\" (note that Etc/GMT+8 means UTC-8: the sign is inverted)",
	ZonePath:              "a time zone is an IANA name such as \"Europe/Berlin\", not a file path",
	ZoneUnknown:           "unknown IANA time zone name (names are case-sensitive), use one like \"Europe/Berlin\", \"America/New_York\" or \"UTC\"",
	ZonesTooMany:          "{count} zones; a job may list at most {max}",
	ZonesDuplicate:        "{zone} is listed twice; list each zone once",
	ZonesEvery:            "an @every interval is the same in every zone: give one zone",
	ZonesAt:               "a one-time @at schedule is one instant: give one zone",
	ZonesTooDense:         "several zones are for schedules that fire at most {max} times a day; this one fires {per_day} times a day: give one zone",
	ZonesFirst:            "time_zone must be the first of time_zones ({first}), or be omitted",
	ZonesCalendar:         "a job on a business calendar has one zone (its calendar days are that zone's dates): remove time_zones or the calendar",
	DeadlineHow:           "a duration from {min} to {max} such as \"30m\" or \"2h\"",
	DeadlineNotDuration:   "{value} is not a duration: write {how}",
	DeadlineNegative:      "{value} is negative: write {how}",
	DeadlineTooShort:      "{value} is shorter than {min}: write {how} (or leave it empty for none)",
	DeadlineTooLong:       "{value} is longer than {max}: write {how}",
	DeadlineOrClock:       "{error}, or a local time of day HH:MM such as \"06:00\"",
	DeadlineNotClock:      "{value} is not a time of day: write HH:MM from 00:00 to 23:59, e.g. \"06:00\"",
	JitterNotDuration:     "{value} is not a duration: write one from 0 to {max} such as \"10m\" (0 or empty for none)",
	JitterOutside:         "{value} is outside 0 to {max}: write a duration such as \"10m\" (0 or empty for none)",
	JitterGap:             "{value} is longer than the {gap} between the firings at {at} and {next}: a firing would start after the next one is due; make it at most {gap}",

	// Validation: jobs, users, passwords, tokens, alarm routes
	JobHandlerRule:         "required; the name a handler is registered under on the executors (no spaces or commas, at most 128 characters)",
	JobMisfireThreshold:    "between 1000 (1 s) and 604800000 (7 days)",
	JobPriorityUnknown:     "unknown priority {value}: one of critical, high, normal, low",
	RunPriorityAboveJob:    "at most the job's priority ({priority}): a trigger or backfill may lower it, not raise it",
	BackfillNoPriority:     "a workflow backfill has no priority: its nodes' runs take their jobs' priorities",
	JobTimeout:             "0 (no timeout) or a positive number of milliseconds",
	JobChildrenMax:         "at most {max} child jobs",
	JobChildrenIDs:         "ids of existing jobs, each once",
	JobChildMissing:        "job {id} does not exist",
	JobChildCycle:          "cycle {path}; remove one of these links",
	JobCronRequired:        "required, e.g. \"0 3 * * *\" (5 fields), \"*/10 * * * * *\" (6 fields with seconds) or \"@every 30s\"",
	JobBusinessDay:         "{bd} (a business day) is counted on a business calendar: set calendar_id and calendar_rule, or use a plain day of month",
	JobCalendarID:          "the id of a calendar (GET /api/v1/calendars), or 0 for none",
	JobCalendarRuleAlone:   "{rule} needs a calendar: set calendar_id, or leave the rule out",
	JobCalendarShiftAlone:  "only with a calendar and the rule shift",
	JobCalendarRuleNeeded:  `required with a calendar: "business_days_only" (fire on working days only), "skip_holidays" (fire except on holidays) or "shift" (move a firing on a non-working day to a working day)`,
	JobCalendarShiftRule:   `only with the rule "shift" (the rule is {rule})`,
	JobCalendarMissing:     "calendar {id} does not exist for app {app}: use a global calendar or one of the app's (GET /api/v1/calendars)",
	WorkflowNameTaken:      "a workflow with this name exists in app {app}; choose another name or update that one",
	WorkflowBusinessDate:   "a day as YYYY-MM-DD, e.g. 2026-03-02 (default: today in the workflow's zone)",
	WorkflowRunKey:         "at most {max} bytes, without leading or trailing spaces (or leave it out: the instant of the request)",
	WorkflowParamsObject:   `a JSON object, laid over each node job's params, e.g. {"region":"eu"}`,
	BackfillDate:           "{value}: a day as YYYY-MM-DD, e.g. 2026-03-02",
	BackfillBackwards:      "{to} is before {from}: from is the first business date of the range, to the last",
	BackfillTooLong:        "{days} dates, at most {max}: split the range into several backfills",
	JobNameTaken:           "a job with this name exists in app {app}; choose another name",
	JobVersionRequired:     "send the version you read (optimistic lock), currently {version}",
	JobWorkflowOwned:       "job {job} runs an inline node of workflow {workflow}: change it through the workflow",
	JobDeleteRunning:       "job {job} has {runs} running run(s): cancel them or let them finish, then delete the job",
	SlotParamsPair:         "{part}: write slot=value pairs separated by commas, e.g. 0=Beijing,1=Shanghai",
	SlotParamsSlot:         "{part}: slot must be a number in 0-{max}",
	SlotParamsTwice:        "slot {slot} appears twice",
	DedupScopeHow:          "empty or \"run\" (each run handles each record once), \"job\" (once per job), or a name such as \"settle:{date}\" (letters, digits and . _ : / = -; {date}, {month} and {year} become the run's scheduled time in the job's time zone)",
	DedupScopeTooLong:      "{bytes} bytes: at most {max} (and at most {max_resolved} once its placeholders are replaced)",
	DedupScopeRunPrefix:    "{value} starts with \"run:\", which the per-run scope uses: {how}",
	DedupScopePlaceholder:  "{value}: unknown placeholder {placeholder}: {how}",
	DedupScopeChars:        "{value}: {how}",
	DedupScopeResolved:     "{value} becomes {bytes} bytes with its placeholders replaced: at most {max}",
	UncertainPolicyBad:     "{value}: empty (the handler decides), \"retry\" (at least once) or \"skip\" (at most once, alarmed)",
	RecordMaxAttempts:      "between 0 (the handler decides) and {max}",
	DeadlineActionBad:      "{value}: \"alarm\" (raise run_deadline_missed) or \"cancel\" (raise it and cancel the run)",
	JobEndBeforeStart:      "must be after start_at ({start_at}); leave it empty for no end",
	JobMaxRuns:             "{value}: 0 (no limit) or a number of successful runs from 1 to {max}",
	JobPauseUntilPast:      "{until} is not in the future (now {now}): pause until a later instant, or resume the job",
	JobInstantBad:          "{value} is not an instant in RFC 3339 such as \"2026-12-24T18:00:00+08:00\" or \"2026-12-24T10:00:00Z\"; null for none",
	JobCompletedEndAt:      "past its end_at ({end_at}): no firing after it",
	JobCompletedMaxRuns:    "{succeeded} scheduled runs succeeded: its max_runs ({max}) is reached",
	JobCompletedNoFiring:   "its schedule {expr} has no firing left (a one-time @at fires once)",
	UserAppsInvalid:        "app names of {rule}, each once; {value} is not",
	UserAppsTooLong:        "at most {max} characters in all",
	UserNameTaken:          "taken by {user}; case does not make names different",
	PasswordHint:           "choose another, for example a passphrase of three or four unrelated words (spaces and any letters are allowed)",
	PasswordTooShort:       "password is {length} characters long; use at least {min}: a passphrase of three or four unrelated words, spaces allowed, is long and easy to remember",
	PasswordTooLong:        "password is {bytes} bytes long; at most {max} bytes are possible (the limit of bcrypt; letters outside ASCII take 2 to 4 bytes each): use a shorter one",
	PasswordCommon:         "password is one of the most common passwords (or one with digits or symbols around it), which attackers try first; {hint}",
	PasswordRepeated:       "password repeats a short pattern (like aaaa or abcabc); {hint}",
	PasswordConsecutive:    "password is a run of consecutive characters (like abcdef or 98765); {hint}",
	PasswordWrongOld:       "wrong password: give your current password",
	APIKeyNameRule:         "required; 1-64 printable characters without leading or trailing spaces",
	APIKeyRoleOneOf:        "one of viewer, operator, admin, or empty for no cap",
	APIKeyDays:             "0 (never) or 1-{max}",
	APIKeyOutliveMost:      "at most {days}; omit expires_in_days to expire together with it, or create the key from a console session",
	APIKeyOutliveNone:      "none fits (it expires in less than a day); omit expires_in_days to expire together with it, or create the key from a console session",
	RoutesRequired:         "send {\"routes\": [...]}; an empty list removes every route",
	RoutesMax:              "at most {max} routes per job",
	RouteChannelRequired:   "required: the name of a channel from the admin's alarm channels file",
	AlarmsActionInvalid:    "must be \"ack\" or \"resolve\", got {value}",
	AlarmsSelectionNeeded:  "say which alarms: ids or group_ids, or all_matching: true with a filter",
	AlarmsSelectionBoth:    "give either ids/group_ids or all_matching, not both",
	AlarmsTooMany:          "at most {max} ids per request: select all matching the filter instead",
	AlarmsIDInvalid:        "ids are positive integers, got {value}",
	AlarmsSeverityInvalid:  "must be critical, warning or info, got {value}",
	DashboardWindowInvalid: "must be 1h, 6h, 24h or 7d (the windows the dashboard's rollup answers), got {value}",
	RouteNoChannels:        "no alarm channels are configured on this admin (--alarm-channels)",
	RouteUnknownChannel:    "no alarm channel named {channel} is configured",
	RouteRecipientEmail:    "must be a plain email address like owner@example.com",
	RouteRecipientNotEmail: "only email channels take a recipient; leave it empty for channel {channel}",
	RouteDuplicate:         "same as routes[{index}]",

	// Validation: calendars (admin/calendar, admin/api)
	Month1:               "January",
	Month2:               "February",
	Month3:               "March",
	Month4:               "April",
	Month5:               "May",
	Month6:               "June",
	Month7:               "July",
	Month8:               "August",
	Month9:               "September",
	Month10:              "October",
	Month11:              "November",
	Month12:              "December",
	KindHoliday:          "holiday",
	KindWorkday:          "workday",
	CalError:             "calendar {field}: {error}",
	CalAppRule:           "{rule}; \"\" for a global calendar",
	CalWeekExample:       "{error} (for example MON-FRI or SUN-THU)",
	CalWeekDayName:       "week {week}: {value} is not a day name (SUN, MON, TUE, WED, THU, FRI, SAT)",
	CalWeekBackwards:     "week {week}: range {range} runs backwards (ranges run SUN to SAT and do not wrap: write it as two parts)",
	CalWeekBits:          "bits outside SUN-SAT are set ({bits})",
	CalImportBoth:        "send the days either as a list (days) or as a file (import), not both",
	CalImportFormat:      "format {format}: use ics or csv",
	CalDayDate:           "{value}: {error} (YYYY-MM-DD)",
	DateFormat:           "date {value}: want YYYY-MM-DD, for example 2026-02-14",
	DateInvalid:          "date {value}: {error}",
	DateYear:             "year {year} is outside {min}-{max}",
	DateMonth:            "month {month} is outside 1-12",
	DateDay:              "day {day} is outside 1-{max} ({month} {year})",
	CalTooManyDays:       "{count} special days, more than the limit of {max}",
	CalDayError:          "{date}: {error}",
	CalDayKind:           "{date}: kind {kind} is neither \"holiday\" nor \"workday\"",
	CalDayName:           "{date}: name {error}",
	CalDayBoth:           "{date} is both a holiday{holiday} and a working day{workday}: a date can be only one of them",
	CalDayTwice:          "{date} is listed twice as a {kind}: list each date once",
	CalNameRequired:      "required: 1-{max} letters, digits, '.', '_' or '-' (for example cn-mainland)",
	CalNameLong:          "{length} characters, more than {max}",
	CalNameChars:         "{value}: only letters, digits, '.', '_' and '-' are allowed",
	CalShiftOnly:         "a direction ({value}) is only for the rule \"shift\"",
	CalShiftBad:          "{value} is not a direction: want \"next\" or \"previous\"",
	CalRuleBad:           "{value} is not a calendar rule: want \"business_days_only\", \"skip_holidays\" or \"shift\"",
	CalGlobalAdminOnly:   "set one of your apps, or ask an admin for a global calendar",
	CalNameTaken:         "taken in this app; choose another name or edit that calendar",
	CalRevisionRequired:  "send the revision you read (optimistic lock), currently {revision}",
	DayNameLong:          "is {bytes} bytes long, more than {max}",
	DayNameUTF8:          "is not valid UTF-8",
	DayNameSpace:         "has leading or trailing white space",
	DayNameControl:       "contains a control character (a line break, a tab...)",
	FlowNodeJobMissing:   "node {node}: its job {job} does not exist (any more)",
	FlowNodeJobDisabled:  "node {node}: its job {app}/{job} is disabled",
	FlowNodeInline:       "node {node}: the job of this inline node (handler {handler}) no longer exists: the node was removed from the workflow, or the workflow deleted",
	FlowRunWaitsBackfill: "waits for its turn: backfill {backfill} runs {parallel} at a time, and that many are running",
	FlowNodeJobRunEnded:  "job run {run} ended {status}: {reason}",
	FlowNodeSkippedRule:  "start rule {rule} can no longer be met: parent {cause} ended without success",
	FlowNodeSkippedStop:  "failure policy stop: node {cause} failed",
	FlowRunFailed:        "{count} node(s) failed or were cancelled: {nodes}",
	FlowRunPartlyFailed:  "{count} node(s) failed or were cancelled: {nodes}; other ends of the workflow succeeded",
	FlowRunInvalid:       "version {version} of the workflow cannot be run: {error}",
	FlowNodeParamsLarge:  "node {node}: its params with its parents' results are {size} bytes, more than the {max} a run's params may have",
	FlowNodeWaiting:      "waiting for {waits} of {date} (times out at {deadline})",
	FlowNodeWaitTimeout:  "waited {timeout} for {waits} of {date}: timed out",

	// Validation: the waits of a workflow node or a job (admin/waits)
	WaitOnlyWith:       "only with wait_for: name the runs to wait for, or leave this empty",
	WaitTooMany:        "{count} waits: at most {max}",
	WaitOneOf:          `a job or a workflow to wait for, not both: {"job": {"app": …, "name": …}} or {"workflow": {…}}`,
	WaitDuplicate:      "{ref} is wait_for[{index}] already",
	WaitTimeoutBad:     "{value} is not a duration such as 90m or 2h30m",
	WaitTimeoutOutside: "{value} is outside 1ms-{max}",
	WaitOnTimeoutBad:   "{value} is not a timeout setting: fail (default) or skip",
	WaitSelfWorkflow:   "a workflow cannot wait for its own run of the same date",
	WaitSelfNodeJob:    "a node cannot wait for a run of its own job {job}: the node's run would be that run",
	WaitSelfJob:        "a job cannot wait for its own run of the same date: remove {job} from wait_for",

	// Validation: a calendar file's import errors (admin/calendar)
	ImportLine:            "{format} line {line}: {error}",
	ImportWhole:           "{format}: {error}",
	ImportAHoliday:        "a holiday",
	ImportAWorkday:        "a working day",
	ImportBothKinds:       "{date} is {kind} here but {other} at line {at}: a date cannot be both a holiday and a working day",
	ImportJoinedName:      "{date}: the names of the events on this date, joined, {error}",
	ImportTooManyDays:     "more than {max} special days: split the calendar",
	ImportTooLarge:        "the input is {bytes} bytes, more than the limit of {max} ({mib} MiB)",
	ImportTooManyRows:     "more than {max} rows: split the calendar",
	ImportFieldCount:      "{count} fields: want date,kind or date,kind,name (for example 2026-02-14,workday,Spring Festival make-up day)",
	ImportKind:            "kind {value}: want holiday or workday",
	ImportName:            "the name {error}",
	ImportBeginOutside:    "BEGIN:{component} outside a VCALENDAR: an .ics file starts with BEGIN:VCALENDAR",
	ImportCalendarInside:  "BEGIN:VCALENDAR inside {component} (line {at})",
	ImportEventInside:     "BEGIN:VEVENT inside the VEVENT of line {at}",
	ImportTooManyEvents:   "more than {max} events: split the calendar",
	ImportTooDeep:         "components nested more than 8 deep",
	ImportEndWithoutBegin: "END:{component} without a BEGIN",
	ImportEndMismatch:     "END:{component}, but the open component is {open} (line {at})",
	ImportPropertyOutside: "{name} outside a VCALENDAR: an .ics file starts with BEGIN:VCALENDAR",
	ImportNotClosed:       "BEGIN:{component} is never closed (END:{component} is missing)",
	ImportNoCalendar:      "no BEGIN:VCALENDAR: not an iCalendar file",
	ImportContentLine:     "{value} is not a content line (NAME:value)",
	ImportParamNoValue:    "{name}: a parameter without a value (want NAME=value)",
	ImportQuoteOpen:       "{name}: the quoted value of {param} is not closed",
	ImportQuoteFollowed:   "{name}: the quoted value of {param} is followed by {value}",
	ImportNoColon:         "{name}: no ':' before the value",
	ImportSecondProperty:  "a second {name} in the VEVENT of line {event} (the first is at line {first})",
	ImportDateTZ:          "{name} with a time zone (TZID={tz}): holidays are whole days, write {name};VALUE=DATE:YYYYMMDD",
	ImportDateValue:       "{name};VALUE={value}: holidays are whole days, write {name};VALUE=DATE:YYYYMMDD",
	ImportDateTime:        "{name} with a time ({value}): holidays are whole days, write {name};VALUE=DATE:YYYYMMDD",
	ImportDateLength:      "{name} {value}: want a date YYYYMMDD",
	ImportDateError:       "{name}: {error}",
	ImportDuration:        "DURATION {value}: want whole days or weeks (P3D, P1W); or use DTEND;VALUE=DATE",
	ImportRecurrence:      "{name} (recurrence) is not supported: list every holiday as its own event with its own dates (the VEVENT of line {event})",
	ImportNoStart:         "a VEVENT without DTSTART: add DTSTART;VALUE=DATE:YYYYMMDD",
	ImportEndAndDuration:  "both DTEND (line {at}) and DURATION: keep one",
	ImportEndNotAfter:     "DTEND {end} is not after DTSTART {start} (DTEND is exclusive: a one-day event on {start} ends on {next})",
	ImportEventTooLong:    "an event of {days} days, longer than {max}",
	ImportEventDays:       "an event of {days} days: want 1 to {max}",
	ImportSummaryName:     "the SUMMARY of this VEVENT {error}",
	ImportPastYear:        "the event runs past year {max}",
	ImportCategoriesBoth:  "CATEGORIES has both WORKDAY and HOLIDAY: keep one",
	ImportSummaryWorkday:  "the SUMMARY {summary} reads like a working day, but CATEGORIES has neither WORKDAY nor HOLIDAY: add CATEGORIES:WORKDAY for a make-up working day (or CATEGORIES:HOLIDAY for a day off)",

	// Validation: the params of a built-in handler (admin/jobdef); the
	// builtin.* texts are executor/builtin's Problems (a test of admin/jobdef
	// checks they are the same)
	ParamsField:                            "{handler} handler params: {field}: {problem}",
	ParamsDoc:                              "{handler} handler params: {problem}",
	"builtin.dedup_archive.batch_size":     "{value}: want 1 to {max} (0 or absent: {default})",
	"builtin.dedup_archive.datasource":     "required: the name of a data source configured on the executors (--sql-datasource name=driver:dsn) holding dedup_record",
	"builtin.dedup_archive.horizon_format": "{value}: want a duration such as \"720h\" (30 days)",
	"builtin.dedup_archive.horizon_short":  "{value}: at least {min} (a record whose dedup row is gone is processed again)",
	"builtin.dedup_archive.job_key":        "key {key}: want a job id (dedup rows name their job by id, not by name; the console shows the id)",
	"builtin.dedup_archive.lock_horizon":   "{value}: want a duration of at least {min} such as \"24h\" (above the longest a slot attempt can live: a purged shard lock no longer fences its run's old attempts), or \"keep\"",
	"builtin.dedup_archive.mode":           "{value}: want \"archive\" (move the rows to dedup_record_archive, the default) or \"delete\"",
	"builtin.dedup_archive.pause":          "{value}: want 0 (no pause) to 60000 milliseconds (absent: {default})",
	"builtin.error":                        "{error}",
	"builtin.http.header_name":             "{header} is not a valid header name",
	"builtin.http.header_set":              "{header} is set by the handler, not the params",
	"builtin.http.header_value":            "the value of {header} contains a line break or NUL",
	"builtin.http.host_ipv4":               "host {host} ends in a number but is not a valid IPv4 address",
	"builtin.http.host_ipv6":               "host {host} is not a valid IPv6 address",
	"builtin.http.host_zone":               "refused by the executor's policy: host {host}: addresses with an IPv6 zone are not allowed",
	"builtin.http.max_redirects":           "{value}: want 0 (do not follow) to {max}",
	"builtin.http.method":                  "{value}: use GET, HEAD, POST, PUT, PATCH, DELETE or OPTIONS",
	"builtin.http.outcome_action":          "{key}: {value}: use success, retry or fail",
	"builtin.http.outcome_key":             "key {key}: use a status class (\"2xx\" … \"5xx\") or a status code (100-599)",
	"builtin.http.url_host":                "{url} has no host",
	"builtin.http.url_parse":               "{url} is not a URL: {error}",
	"builtin.http.url_required":            "required, e.g. \"https://api.example.com/batch?slot={slot}\"",
	"builtin.http.url_scheme":              "{url}: only http and https URLs are allowed",
	"builtin.params.json_invalid":          "not a valid JSON object: {error}",
	"builtin.params.json_type":             "want a JSON {want}, not {got}",
	"builtin.params.required":              "required: a JSON object, see docs/builtin-handlers.md",
	"builtin.params.timeout":               "{value}: want 1 to {max} milliseconds (0 or absent: {default})",
	"builtin.params.timeout_executor":      "{value} ms exceeds this executor's maximum of {max}",
	"builtin.params.too_large":             "{bytes} bytes, at most {max}",
	"builtin.params.trailing":              "unexpected data after the JSON object",
	"builtin.shell.arg_nul":                "contains a NUL byte",
	"builtin.shell.args_count":             "{count} arguments, at most {max}",
	"builtin.shell.command_path":           "{value}: want a clean absolute path (no shell: no PATH lookup, arguments go in \"args\")",
	"builtin.shell.command_required":       "required: the absolute path of a program on the executors' --shell-allow list",
	"builtin.shell.exit_code":              "{value}: want exit codes 1-255 (0 is always success)",
	"builtin.sql.args_count":               "the statement has {placeholders} ? placeholders but args has {values} values",
	"builtin.sql.backslash_literal":        "the {quote} literal at byte {at} ends at a different place depending on whether the MySQL server reads backslashes as escapes (sql_mode without NO_BACKSLASH_ESCAPES) or not: write a quote inside a literal as two quotes ({quote}{quote}), not with a backslash, or pass the value as an argument",
	"builtin.sql.bracket_open":             "the [ identifier at byte {at} is not closed with ]",
	"builtin.sql.comment_open":             "the /* comment at byte {at} is not closed",
	"builtin.sql.dash_semicolon":           "the -- right before the ';' at byte {at} is two minus signs to MySQL, but a comment once the ';' is gone: put a space between the minus signs, or write a comment as -- followed by a space",
	"builtin.sql.datasource":               "required: the name of a data source configured on the executors (--sql-datasource name=driver:dsn)",
	"builtin.sql.dialects":                 "for a MySQL data source: {mysql}; for a SQLite data source: {sqlite}; for a PostgreSQL data source: {postgres}",
	"builtin.sql.dollar_numbered":          "the numbered placeholder at byte {at} is not supported: use ? or :name, which the handler numbers $1, $2, … for PostgreSQL",
	"builtin.sql.empty":                    "empty statement: nothing but white space and comments",
	"builtin.sql.executable_comment":       "the executable comment /*!…*/ at byte {at} is run by MySQL and MariaDB, not skipped: write its text as plain SQL",
	"builtin.sql.named_unused":             "{name} is not used by the statement (no :{key} in it)",
	"builtin.sql.nul":                      "a NUL character (\\u0000) at byte {at}: the database would stop reading the statement there; remove it",
	"builtin.sql.number_range":             "{value}: number out of range",
	"builtin.sql.numbered":                 "numbered placeholders (?{char}…) are not supported: use ? or :name",
	"builtin.sql.quote_open":               "the {quote} quote at byte {at} is not closed",
	"builtin.sql.sqlite_one_statement":     "one statement only: SQLite ends the statement at the ';' before {text} and would run that as another statement; run each statement as a job of its own",
	"builtin.sql.sqlite_semicolons":        "{count} ';' characters inside literals or comments, at most {max} on a SQLite data source: pass such text as an argument",
	"builtin.sql.statement_required":       "required, e.g. \"UPDATE invoice SET state = ? WHERE MOD(id, :total) = :slot\"",
	"builtin.sql.task_name":                "{name} is set by the handler (the task's {key}); pick another name",
	"builtin.sql.text_after":               "one statement only: text follows the ';' at byte {at}; run each statement as a job of its own",
	"builtin.sql.unknown_name":             ":{key} is neither a task value (:slot, :total, :run_id, :job_id, :attempt, :token) nor a key of \"named\"",
	"builtin.sql.value_type":               "want a string, number, boolean or null, not a JSON {type}",
}

// Validation: list parameters (GET /api/v1/jobs, /api/v1/runs).
const (
	ListLimitRange    Code = "list.limit_range"
	ListOneOf         Code = "list.one_of"
	ListCursorInvalid Code = "list.cursor_invalid"
	ListIDInvalid     Code = "list.id_invalid"
	ListSearchLong    Code = "list.search_long"
)

// listCatalog holds the English texts of the list codes (merged into
// Catalog by init, apart to keep merges of the catalog small).
var listCatalog = map[Code]string{
	ListLimitRange:    "the page size must be an integer from 1 to {max}, got {value}",
	ListOneOf:         "must be one of {values}, got {value}",
	ListCursorInvalid: "is not a cursor of this list: pass next_cursor of the previous page unchanged, with the same sort, or leave it out for the first page",
	ListIDInvalid:     "must be a positive integer, got {value}",
	ListSearchLong:    "a search of the name is at most {max} characters, got {len}",
}

// Refusals of a replay of dead letters (POST /api/v1/dead/replay,
// admin/runstate: Machine.Replay).
const (
	DeadNotFound      Code = "dead.not_found"
	DeadReplayed      Code = "dead.replayed"
	DeadRunGone       Code = "dead.run_gone"
	DeadJobDeleted    Code = "dead.job_deleted"
	DeadSlotActive    Code = "dead.slot_active"
	DeadSlotSucceeded Code = "dead.slot_succeeded"
	DeadIDsRange      Code = "dead.ids_range"
	DeadParamsObject  Code = "dead.params_object"
)

// deadCatalog holds the English texts of the dead-letter codes (merged
// into Catalog by init, apart to keep merges of the catalog small).
var deadCatalog = map[Code]string{
	DeadNotFound:      "dead letter {id} does not exist (kept --dead-retention after the slot died) or is of an app you may not see",
	DeadReplayed:      "dead letter {id} was replayed already by {user} at {at} (token {token}): pass force to replay it again",
	DeadRunGone:       "dead letter {id}: run {run} is gone (deleted by retention): trigger the job again instead",
	DeadJobDeleted:    "dead letter {id}: job {job} was deleted, its runs cannot run again",
	DeadSlotActive:    "dead letter {id}: slot {slot} of run {run} runs again already (token {token}): wait until it ends",
	DeadSlotSucceeded: "dead letter {id}: slot {slot} of run {run} has succeeded since (token {token}): nothing to replay",
	DeadIDsRange:      "give 1 to {max} dead letter ids, got {count}",
	DeadParamsObject:  "must be the params text as a JSON string (e.g. \"records=10\") or a JSON object: the params the replays run with instead of the run's; got {value}",
}

func init() {
	for _, m := range []map[Code]string{listCatalog, deadCatalog} {
		for c, t := range m {
			Catalog[c] = t
		}
	}
}
