package schedule

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/shardjob/shardjob/admin/msg"
)

// Limits of a job's deadlines: a duration is at least MinDeadline and at
// most MaxDeadline (a wall-clock finish deadline falls within a day and a
// few hours of the scheduled time anyway).
const (
	MinDeadline = time.Second
	MaxDeadline = 7 * 24 * time.Hour
)

// Deadline is a job's start or finish deadline. Either After is set (a
// duration after the run's scheduled time) or Clock is true (a local
// wall-clock time, Hour:Minute in the job's zone; finish deadlines only).
// The zero Deadline is no deadline.
type Deadline struct {
	After        time.Duration
	Clock        bool
	Hour, Minute int
}

// IsZero reports whether d is no deadline.
func (d Deadline) IsZero() bool { return d.After == 0 && !d.Clock }

// String is d as a job states it ("" for none).
func (d Deadline) String() string {
	switch {
	case d.Clock:
		return fmt.Sprintf("%02d:%02d", d.Hour, d.Minute)
	case d.After > 0:
		return d.After.String()
	}
	return ""
}

func deadlineError(name, value string, code msg.Code, kv ...any) *ValidationError {
	return invalid(0, name, value, msg.New(code, kv...))
}

// ParseStartDeadline parses a start deadline: "" (none) or a Go duration
// such as "90s", "15m" or "1h30m", from MinDeadline to MaxDeadline.
func ParseStartDeadline(s string) (Deadline, error) {
	if s == "" {
		return Deadline{}, nil
	}
	d, err := parseDeadlineDuration("start deadline", s)
	if err != nil {
		return Deadline{}, err
	}
	return Deadline{After: d}, nil
}

// ParseFinishDeadline parses a finish deadline: "" (none), a duration after
// the scheduled time (as ParseStartDeadline), or a local wall-clock time
// "HH:MM" (00:00-23:59) in the job's zone.
func ParseFinishDeadline(s string) (Deadline, error) {
	if s == "" {
		return Deadline{}, nil
	}
	if h, m, ok := strings.Cut(s, ":"); ok {
		hour, herr := strconv.Atoi(h)
		minute, merr := strconv.Atoi(m)
		if herr != nil || merr != nil || len(h) != 2 || len(m) != 2 || hour < 0 || hour > 23 || minute < 0 || minute > 59 {
			return Deadline{}, deadlineError("finish deadline", s, msg.DeadlineNotClock, "value", strconv.Quote(s))
		}
		return Deadline{Clock: true, Hour: hour, Minute: minute}, nil
	}
	d, err := parseDeadlineDuration("finish deadline", s)
	if err != nil {
		return Deadline{}, deadlineError("finish deadline", s, msg.DeadlineOrClock, "error", err.Reason)
	}
	return Deadline{After: d}, nil
}

func parseDeadlineDuration(name, s string) (time.Duration, *ValidationError) {
	d, err := time.ParseDuration(s)
	fail := func(code msg.Code, kv ...any) (time.Duration, *ValidationError) {
		how := msg.New(msg.DeadlineHow, "min", MinDeadline, "max", fmtHours(MaxDeadline))
		return 0, deadlineError(name, s, code, append(kv, "value", strconv.Quote(s), "how", how)...)
	}
	switch {
	case err != nil:
		return fail(msg.DeadlineNotDuration)
	case d < 0:
		return fail(msg.DeadlineNegative)
	case d < MinDeadline:
		return fail(msg.DeadlineTooShort, "min", MinDeadline)
	case d > MaxDeadline:
		return fail(msg.DeadlineTooLong, "max", fmtHours(MaxDeadline))
	}
	return d, nil
}

func fmtHours(d time.Duration) string { return strconv.Itoa(int(d/time.Hour)) + "h" }

// At is the instant of deadline d for a run scheduled at scheduled, in
// zone loc; the zero time for no deadline. A duration counts in real time
// from the scheduled instant. A wall-clock time is its first occurrence
// strictly after the scheduled instant, local to loc:
//
//   - a local time the zone skips (spring forward: 02:30 in New York on
//     the second Sunday of March) means the transition instant (03:00 EDT);
//   - a local time the zone repeats (fall back: 01:30 in New York on the
//     first Sunday of November) means its first occurrence (01:30 EDT).
func (d Deadline) At(scheduled time.Time, loc *time.Location) time.Time {
	switch {
	case d.After > 0:
		return scheduled.Add(d.After)
	case !d.Clock:
		return time.Time{}
	}
	if loc == nil {
		loc = time.UTC
	}
	local := scheduled.In(loc)
	// Two calendar days after the scheduled date always hold an
	// occurrence; a zone jump of a day (Pacific/Apia, 2011) may skip one.
	for day := 0; day <= 2; day++ {
		date := time.Date(local.Year(), local.Month(), local.Day()+day, 0, 0, 0, 0, time.UTC)
		wall := date.Unix() + int64(d.Hour*3600+d.Minute*60)
		if at := time.Unix(wallInstant(loc, wall), 0).UTC(); at.After(scheduled) {
			return at
		}
	}
	return time.Time{} // unreachable for a zone whose jumps stay under a day
}

// wallInstant is the instant (Unix seconds) of wall value w (local seconds
// counted as if the zone were UTC) in loc: its first occurrence when the
// zone repeats it, the transition instant when the zone skips it.
func wallInstant(loc *time.Location, w int64) int64 {
	found, best := false, int64(0)
	lo, hi := 0, 0 // smallest and largest offset around w
	for i, probe := range []int64{w - 86400, w, w + 86400} {
		off := offsetAt(loc, probe)
		if i == 0 || off < lo {
			lo = off
		}
		if i == 0 || off > hi {
			hi = off
		}
		if u := w - int64(off); offsetAt(loc, u) == off && (!found || u < best) {
			found, best = true, u
		}
	}
	if found {
		return best
	}
	// Skipped: the first instant whose wall time is w or later. Between
	// w-hi (still before the jump) and w-lo (after it) the wall time grows.
	a, b := w-int64(hi), w-int64(lo)
	for a < b {
		m := a + (b-a)/2
		if m+int64(offsetAt(loc, m)) >= w {
			b = m
		} else {
			a = m + 1
		}
	}
	return a
}
