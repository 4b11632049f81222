// Package calendar is the pure core of shardjob's business calendars: which
// days are working days, the N-th working day of a month, and what a job's
// calendar rule does to a firing its cron expression produced.
//
// It is pure logic: no I/O, no database, no HTTP, no clock, no goroutines.
// Storage, the API, the CLI and the scheduler build on it; every function
// takes what it needs as arguments, so the leader, the console preview and
// the tests get the same answers. A *Calendar is immutable and safe for
// concurrent use.
//
// # Model
//
// A calendar (Definition) has a Name, a base week (Week: the working
// weekdays, Monday to Friday by default; ParseWeek reads "MON-FRI",
// "SUN-THU", "MON,WED,FRI") and special days (Entry), each a civil Date
// with a Kind:
//
//	holiday   a day off, whatever its weekday
//	workday   an extra working day, whatever its weekday: a make-up working
//	          day (the Saturdays and Sundays China works to bridge a
//	          holiday), a bank's special opening day
//
// A date is a working day when it is an extra working day, or a weekday of
// the base week that is not a holiday. Dates have no time of day and no zone:
// the job's zone decides which date an instant falls on (DateOf(t.In(zone))).
// Years run from MinYear to MaxYear (1-9999).
//
// Definition.Validate (also run by New) rejects, with a *ValidationError
// that names the field and the date: a missing or malformed calendar name, a
// date that does not exist, an unknown kind, a date listed twice, a date
// that is both a holiday and a working day ("calendar days: 2026-02-14 is
// both a holiday (...) and a working day (...)"), a day name that is too long
// or holds control characters, more than MaxEntries special days.
//
// Definition.Version is a stable fingerprint of the content (32 hex digits
// of SHA-256 over a canonical text of the week and the sorted days, the
// calendar's name left out): a run records the version of the calendar it was
// created with; equal content gives the same version in any order and in any
// release.
//
// # Queries
//
// IsWorkday, IsHoliday and Lookup answer for one date; NextWorkday and
// PreviousWorkday find the nearest working day strictly after or before a
// date; WorkdaysIn counts a month's working days; NthWorkday selects one:
//
//	BD3     NthWorkday(y, m, 3)    the third working day of the month
//	BDL     NthWorkday(y, m, -1)   the last working day
//	BD-2    NthWorkday(y, m, -2)   the second to last
//
// Business days count within the month, make-up working days included (in
// February 2026 in mainland China, BDL is Saturday 28, a make-up day). When
// the month has fewer working days than asked (BD25 in a month with 20),
// NthWorkday returns ok = false: the month has no such day, a job that
// selects it does not fire that month, and the caller records
// ReasonNoSuchBusinessDay. Nothing panics, whatever the arguments.
// ParseBusinessDay reads the BDn / BDL / BD-n syntax (|n| <= 31).
//
// New precomputes a bit mask of working days per month for the years that
// hold special days (8 bytes a month); other years follow the base week. A
// query is a few nanoseconds to a few tens (see bench_test.go).
//
// # Rules
//
// A job refers to a calendar with a Policy; Calendar.Apply decides one
// candidate firing (an instant in the job's zone) and returns a Decision:
//
//	business_days_only   fire only on working days; other days are skipped
//	skip_holidays        fire per cron except on holidays; a weekend that is
//	                     not a holiday still fires
//	shift (next)         a firing on a non-working day moves to the next
//	                     working day at the same local clock time
//	shift (previous)     ... to the previous working day
//
// Nothing is removed silently: a skipped or shifted Decision carries a
// Reason (ReasonHoliday with the holiday's name, ReasonNonWorkingDay for a
// weekend, ReasonNoWorkday when no working day is left to shift to) and a
// Note for people. A shifted clock time that does not exist on the new day
// (a daylight-saving gap) fires when the clocks jump; one that happens twice
// fires at the first occurrence, as for fixed-time cron firings.
//
// Two firings can be shifted onto one instant (a daily job over the Spring
// Festival break: nine firings land on the first working day after it). They
// fire once: Dedupe keeps the firing that was not shifted (or the earliest
// one) and marks the others ReasonDuplicate. A scheduler deciding one
// firing at a time gets the same result by using Decision.At as the run key
// of a shifted firing.
//
// With shift (previous) a firing happens before its scheduled time: the
// firings of a non-working run (after working day W, up to the next working
// day) all land on W, so a scheduler looking for the firings on W looks at
// the candidates up to NextWorkday(W).
//
// The rules only remove or move firings the cron expression produced: with
// business_days_only, a make-up Saturday fires only if the expression allows
// Saturdays ("0 9 * * *", not "0 9 * * MON-FRI").
//
// # Import and export
//
// ParseCSV reads rows "date,kind[,name]" (kind holiday or workday, header
// optional, '#' comments); ParseICS reads iCalendar VEVENTs with
// DTSTART;VALUE=DATE and an optional exclusive DTEND (or a DURATION of days),
// the make-up working days marked with CATEGORIES:WORKDAY. Both refuse what
// they cannot represent (recurrence rules, times, malformed dates, a date
// that is both a holiday and a working day) with an *ImportError naming the
// line, and cap their input at MaxImportBytes, MaxEvents events or rows and
// MaxEventDays days an event. FormatCSV (Calendar.ExportCSV) writes CSV that
// ParseCSV reads back to the same days. The CSV holds days only: the name and
// the base week are set separately.
package calendar
