package jobdef

import (
	"strconv"
	"time"

	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/schedule"
)

// jitterGapFirings is how many firings from now validateJitter looks at for
// the shortest gap between two firings.
const jitterGapFirings = 500

// validateJitter checks a job's jitter window into errs: a duration from 0
// to schedule.MaxJitterWindow, and no longer than the shortest gap between
// two of the schedule's next jitterGapFirings firings after from (sched
// nil: the schedule is invalid, reported already), so that a firing does
// not start after the next one is due.
func validateJitter(window string, sched *schedule.Schedule, from time.Time, errs FieldMsgs) {
	w, err := schedule.ParseJitterWindow(window)
	if err != nil {
		errs["jitter_window"] = deadlineMsg(err)
		return
	}
	if w == 0 || sched == nil {
		return
	}
	if at, next, ok := shortestGap(sched, from, jitterGapFirings); ok && next.Sub(at) < w {
		errs["jitter_window"] = msg.New(msg.JitterGap, "value", strconv.Quote(window), "gap", next.Sub(at).String(),
			"at", at.UTC().Format(time.RFC3339), "next", next.UTC().Format(time.RFC3339))
	}
}

// shortestGap returns the two consecutive firings of sched, among its
// first n after from, that are closest together; ok is false when it has
// fewer than two.
func shortestGap(sched *schedule.Schedule, from time.Time, n int) (at, next time.Time, ok bool) {
	prev := sched.Next(from)
	for i := 1; i < n && !prev.IsZero(); i++ {
		t := sched.Next(prev)
		if t.IsZero() {
			break
		}
		if !ok || t.Sub(prev) < next.Sub(at) {
			at, next, ok = prev, t, true
		}
		prev = t
	}
	return at, next, ok
}

// jitterRow is a jitter window as the job's row keeps it: "" for none (a
// spec's "0" too), otherwise as written.
func jitterRow(window string) string {
	if w, err := schedule.ParseJitterWindow(window); err == nil && w == 0 {
		return ""
	}
	return window
}
