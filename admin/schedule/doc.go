// Package schedule decides when shardjob jobs fire.
//
// It is pure logic: no I/O, no goroutines, no clock. Every function takes the
// instants it needs ("after", "now", the stored next_fire_at) as arguments, so
// the admin's leader loop, the console preview and the tests all get the same
// answers for the same inputs. A *Schedule is immutable and safe for
// concurrent use.
//
// # Role in the admin
//
// When a job is saved, the API calls Parse to validate it (the error names the
// field and the fix) and stores Next(now) as the job's next_fire_at. When the
// leader claims due jobs (next_fire_at <= now), it calls Plan with the stored
// next_fire_at and the current time: Plan returns the scheduled times to create
// runs for (the run keys), the scheduled times to record as skipped, and the
// new next_fire_at. For each run it is about to start, the leader calls
// DecideOverlap with the job's overlap policy and whether a previous run is
// still active. The console shows Preview: the next firings in the job's zone
// and in UTC, with a note on every firing that daylight saving moved and on
// the first firing after scheduled times that daylight saving skipped.
//
// # Expressions
//
// An expression has 5 fields (minute hour day-of-month month day-of-week) or 6
// with seconds first. robfig/cron/v3 parses the standard syntax:
//
//	any value   * (also ?, in day of month and day of week only)
//	one value   5
//	range       1-5 (both ends included)
//	list        1,15,30 (elements may be ranges and steps)
//	step        */15, 0-30/10, 5/20 (= 5-59/20)
//	names       JAN-DEC, SUN-SAT (in any case; day of week 7 is also Sunday)
//
// Day of month and day of week follow the classic cron rule: when either field
// is * (or ?), a day must match both — that is, the other field alone decides;
// when both are restricted, a day matching either one fires. "0 0 13 * FRI"
// fires on every 13th and on every Friday. A step such as */2 counts as a
// restriction; */1 (and ?/1) counts as * (robfig keeps its star bit), while
// a range over the whole field such as 1-31 or 0-6 is a restriction.
//
// Descriptors: @yearly (= @annually, 0 0 1 1 *), @monthly (0 0 1 * *), @weekly
// (0 0 * * 0), @daily (= @midnight, 0 0 * * *), @hourly (0 * * * *), and
// "@every <duration>" — whole seconds, from 1s to 366 days — which fires at
// Spec.Anchor + k·d for k = 1, 2, ... (the anchor is the job's creation; a zero
// anchor is the Unix epoch). @every counts absolute time, so it never drifts
// and daylight saving does not affect it.
//
// Not supported, with an error that says so: a year field, the Quartz
// extensions L, W and #, wrap-around ranges (FRI-MON), a TZ= prefix (the zone
// is a separate setting), and steps longer than the field (*/90 in minutes:
// use @every 90m). An expression that can never fire, such as "0 0 30 2 *" or
// "0 0 31 4 *", is rejected at Parse. "0 0 29 2 *" is accepted and fires on
// leap days only.
//
// # H: spreading jobs
//
// H in any field stands for a value picked from a hash of the job's identity
// (Spec.JobKey, e.g. "app/name") and the field's position, so a thousand jobs
// written "H * * * *" do not all start at minute 0, and each job keeps its
// minute forever:
//
//	H          one value in the field's range (day of month: 1-28, so every month has it;
//	           day of week: 0-6)
//	H(a-b)     one value in a..b
//	H/n        an offset o in [0, n), then o, o+n, o+2n, ... up to the end of H's range
//	           ("H/15" in minutes: e.g. 7,22,37,52; in day of month it stops at 28)
//	H(a-b)/n   a+o, a+o+n, ... up to b, with o in [0, min(n, b-a+1))
//
// H is resolved before robfig parses the expression; Resolved shows the
// result, which is plain cron. The hash is FNV-1a 64 of the key, a zero byte
// and the field index (0 second ... 5 day of week, the same for 5- and 6-field
// expressions, so a job's minute does not move when seconds are added),
// finished with the MurmurHash3 mixer. It is pinned by a test: changing it
// would move every H job. Every H of one field uses the same hash, so
// "H(0-29),H(30-59)" gives two firings exactly 30 minutes apart. H without a
// job key is an error.
//
// # Time zones
//
// Each job has an IANA zone ("Europe/Berlin"); "" means UTC. The IANA database
// is embedded (time/tzdata), so zones resolve on hosts without
// /usr/share/zoneinfo. "Local" is rejected (it would be the admin server's
// zone), and so is every spelling of a fixed offset: "+08:00", "UTC+8",
// "GMT-5", "GMT0", "Etc/GMT+8" (whose sign is inverted: it means UTC-8). A
// fixed offset cannot follow a region's daylight-saving rules; name the region
// ("Asia/Shanghai") or use "UTC".
//
// # Daylight saving
//
// Fields are matched against the local wall clock of the job's zone. Where a
// transition makes a wall time nonexistent or ambiguous, the rule depends on
// whether the schedule is fixed:
//
//	case                              rule                                     example (America/New_York, 2026)
//	--------------------------------  ---------------------------------------  -----------------------------------------------
//	wall time does not exist (spring  fires once, at the transition instant    30 2 * * * on Mar 8: 02:30 does not exist,
//	forward gap), fixed hour and      (several times in the gap, e.g. with     fires at 03:00 EDT = 07:00Z
//	minute                            seconds, collapse into that one firing)
//	wall time does not exist,         skipped: no firing                       */15 2 * * * on Mar 8: no firing that day;
//	anything else                                                              30 * * * * on Mar 8: 01:30 EST (06:30Z), then
//	                                                                           03:30 EDT (07:30Z)
//	repeated wall time (fall back),   fires once, at the first occurrence      30 1 * * * on Nov 1: 01:30 EDT = 05:30Z only
//	fixed hour and minute                                                      (not 01:30 EST = 06:30Z)
//	repeated wall time, anything      fires at every real instant that         0 * * * * on Nov 1: 01:00 EDT = 05:00Z and
//	else                              matches                                  01:00 EST = 06:00Z
//
// "Fixed hour and minute" means the hour field and the minute field each match
// exactly one value after H is resolved ("30 1 * * *", "H H * * *", @daily,
// "5-5 1 * * *"). The seconds field does not affect it ("*/10 30 1 * * *" is
// fixed, "0 30 * * * *" is not), and neither do the day fields. A range, list,
// step or * with more than one value in the hour or the minute field makes the
// schedule non-fixed. Fixed schedules are daily-style jobs: their one time of
// day must happen once a day, so it moves to the transition when it does not
// exist and does not repeat when clocks go back. Non-fixed schedules keep
// their rhythm in real time: they fire at every real instant that matches and
// at no instant that does not ("0 * * * *" fires at 01:00 EST and 03:00 EDT on
// Mar 8, an hour apart; nothing stands for the missing 02:00). Vixie cron and
// cronie apply the same split, but call a job "wildcard" only when its hour or
// minute field starts with '*'; here any field with more than one value does.
//
// The instants below (and more) are tested in next_test.go:
//
//	Europe/Berlin 2026-03-29 (02:00 CET -> 03:00 CEST at 01:00Z):
//	    30 2 * * *    fires at 03:00 CEST = 01:00Z
//	    */10 2 * * *  skips the day: next 2026-03-30 02:00 CEST = 00:00Z
//	Europe/Berlin 2026-10-25: 30 2 * * * fires at 02:30 CEST = 00:30Z only (not 02:30 CET = 01:30Z)
//	Europe/London 2014-03-30 (01:00 GMT -> 02:00 BST at 01:00Z):
//	    30 * * * *    fires at 00:30Z and 01:30Z (02:30 BST); 01:30 GMT does not exist
//	    30 1 * * *    fires at 02:00 BST = 01:00Z
//	Australia/Lord_Howe 2026-10-04 (02:00 -> 02:30, a 30-minute gap, at 2026-10-03 15:30Z):
//	    15 2 * * *    fires at 02:30 +11 = 15:30Z
//	    15 * * * *    fires at 01:15 +1030 = 14:45Z, then 03:15 +11 = 16:15Z
//	Australia/Lord_Howe 2026-04-05 (02:00 -> 01:30):
//	    45 1 * * *    fires at 01:45 +11 = 2026-04-04 14:45Z only;
//	    */15 1 * * *  fires at 14:00, 14:15, 14:30, 14:45, 15:00 and 15:15 Z
//	America/Sao_Paulo 2018-11-04 (midnight did not exist, 00:00 -03 -> 01:00 -02 at 03:00Z):
//	    0 0 * * *     fires at 01:00 -02 = 03:00Z
//	    */30 0 * * *  skips the day: next 2018-11-05 00:00 -02 = 02:00Z
//	Asia/Kolkata (+05:30, no DST): 0 9 * * * fires at 03:30Z every day
//
// Next works on local wall-clock fields: it walks the zone's periods of
// constant offset and, inside each, steps month, day, hour, minute and second
// with bitmask look-ups (as robfig does) instead of scanning time, then turns
// the wall time into an instant with the rules above. A typical call costs a
// few hundred nanoseconds. Next looks about five years ahead and returns the
// zero Time when nothing fires in that window (in practice only "0 0 29 2 *"
// between 2096 and 2104, as 2100 is not a leap year).
//
// # Business calendars
//
// The day-of-month field may hold one business-day selector instead of
// days: BDn (the n-th working day of the month, 1 <= n <= 31), BDL (the last)
// or BD-n (the n-th from the end; BD-1 is BDL), in any letter case. It
// stands alone (no list, range or step), the day of week must be * or ?,
// and the month, hour, minute and second fields work as usual. Such a
// Schedule NeedsCalendar: it matches no day of its own, so Next and Preview
// find nothing, and WithCalendar without a calendar is an error matching
// ErrNeedsCalendar ("cron field 3 (day of month): BD3 needs a calendar: set
// the job's calendar").
//
// WithCalendar(s, cal, policy) joins a Schedule, a *calendar.Calendar and a
// job's calendar.Policy (business_days_only, skip_holidays, shift next or
// previous). This package imports admin/calendar rather than declaring an
// interface for it: calendar is pure, imports nothing of shardjob, and has
// one implementation; its Decision, Reason, Policy and Dedupe are the
// vocabulary of the result, which an interface would have to copy. Schedule
// itself stays calendar-free: Next is untouched for jobs without a calendar.
//
// CalendarSchedule.Next(after) returns a CalendarFiring: the instant it
// fires (the run key; for a shifted firing, the moved instant), the
// candidate that fires there, and every candidate removed since after with
// its reason (holiday, non_working_day, no_such_business_day,
// no_working_day, and duplicate for those shifted onto an instant that
// fires already), so the scheduler records each as skipped and a preview
// shows them. A chain of Next calls, each from the previous firing, accounts
// for every candidate once.
//
// Shift (next) moves firings forward: the firing after `after` may come
// from a candidate before it, so Next looks back to the first day after the
// working day before after's date. Shift (previous) moves firings backward:
// the firings landing on working day W come from candidates up to the next
// working day after W, so Next looks ahead that far; it never returns an
// instant <= after. Shifted firings landing on one instant fire once (the
// one on its own day, else the earliest: calendar.Dedupe). Shift is refused
// for schedules firing more than MaxShiftPerDay (24) times a day, which
// bounds that look-around. A shifted firing's clock time is resolved on the
// new day like a fixed-time firing (a gap fires at the jump, an overlap at
// the first occurrence); a business day's times follow the expression's own
// daylight-saving rules.
//
// The search is bounded: about five years of candidates (or of months for
// BD3); beyond, Next returns an error matching ErrNoFiring. business_days_only
// and skip_holidays list at most MaxSkippedListed skipped candidates and
// count the rest of a skipped day from the bitmasks, so an every-second job
// over a nine-day holiday costs a few hundred microseconds, once.
//
// Count counts the firings in a window under the calendar (whole days from
// the bitmasks, except for shift), and PlanCalendar is Plan over the
// calendar's firings, so counts of expected and late firings agree with the
// calendar.
//
// # Misfires
//
// A due firing is on time when now - scheduled <= Threshold (default 60s, at
// most 7 days) and late otherwise. On-time firings fire — at most 1000 of them
// in one Plan, the newest; if a long threshold and a dense schedule make more
// due at once, the older ones are handled as late. For late firings the job's
// MisfirePolicy decides:
//
//	run_once (default)  one run for the whole missed stretch, keyed by the most recent
//	                    missed scheduled time; the other missed times are recorded as
//	                    skipped. When an on-time firing is due as well, it is that run,
//	                    and all late times are recorded as skipped.
//	skip                every late time is recorded as skipped; on-time firings still fire.
//	catch_up            late times fire oldest first, up to MaxCatchUp (default 10, at
//	                    most 1000); the newer ones beyond the cap are recorded as skipped.
//
// A skipped time is never dropped silently: Decision.Skipped lists the oldest
// 1000 and Decision.SkippedCount has the total. Plan's work is bounded: it
// lists at most MaxCatchUp+1001 late firings, counts the rest from the field
// bitmasks (whole days at a time) and finds the most recent one by binary
// search, so a job that has missed a year of every-second firings is planned
// in well under a millisecond.
//
// # Overlap
//
// When a firing comes while the job's previous run is still active,
// DecideOverlap maps the OverlapPolicy to an action:
//
//	allow (default)  start            run alongside the active one
//	skip             skip             record the firing as skipped
//	queue            queue            start when the active run ends
//	replace          cancel_previous_and_start
//
// Without an active run every policy starts the run.
package schedule
