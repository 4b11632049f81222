package schedule

import (
	"strconv"
	"strings"
	"time"

	"github.com/shardjob/shardjob/admin/msg"
)

// MisfirePolicy says what happens to firings that are late by more than the
// threshold (the admin was down, the job was paused, the leader changed...).
type MisfirePolicy string

const (
	// MisfireRunOnce fires one run for the whole missed stretch — for its most
	// recent missed scheduled time — and records the other missed times as
	// skipped. If an on-time firing is due as well, that run already is the
	// "run now" and every late time is recorded as skipped. The default.
	MisfireRunOnce MisfirePolicy = "run_once"
	// MisfireSkip records every late firing as skipped and fires none of them.
	MisfireSkip MisfirePolicy = "skip"
	// MisfireCatchUp fires each missed firing, oldest first, up to
	// MisfireConfig.MaxCatchUp runs; the rest are recorded as skipped.
	MisfireCatchUp MisfirePolicy = "catch_up"
)

// ParseMisfirePolicy accepts "run_once", "skip" and "catch_up" (case and
// surrounding spaces ignored, '-' accepted for '_'); "" means run_once.
func ParseMisfirePolicy(s string) (MisfirePolicy, error) {
	switch p := MisfirePolicy(normalizePolicy(s)); p {
	case "":
		return MisfireRunOnce, nil
	case MisfireRunOnce, MisfireSkip, MisfireCatchUp:
		return p, nil
	}
	return "", invalid(0, "misfire policy", s, msg.New(msg.BadMisfirePolicy, "value", strconv.Quote(s)))
}

// OverlapPolicy says what happens when a firing comes while the job's
// previous run is still active.
type OverlapPolicy string

const (
	OverlapAllow   OverlapPolicy = "allow"   // start the new run alongside (the default)
	OverlapSkip    OverlapPolicy = "skip"    // record the new firing as skipped
	OverlapQueue   OverlapPolicy = "queue"   // start the new run when the active one ends
	OverlapReplace OverlapPolicy = "replace" // cancel the active run, then start the new one
)

// ParseOverlapPolicy accepts "allow", "skip", "queue" and "replace" (case and
// surrounding spaces ignored); "" means allow.
func ParseOverlapPolicy(s string) (OverlapPolicy, error) {
	switch p := OverlapPolicy(normalizePolicy(s)); p {
	case "":
		return OverlapAllow, nil
	case OverlapAllow, OverlapSkip, OverlapQueue, OverlapReplace:
		return p, nil
	}
	return "", invalid(0, "overlap policy", s, msg.New(msg.BadOverlapPolicy, "value", strconv.Quote(s)))
}

func normalizePolicy(s string) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimSpace(s)), "-", "_")
}

// OverlapAction is what the scheduler does with one new firing.
type OverlapAction string

const (
	ActionStart                  OverlapAction = "start"
	ActionSkip                   OverlapAction = "skip"
	ActionQueue                  OverlapAction = "queue"
	ActionCancelPreviousAndStart OverlapAction = "cancel_previous_and_start"
)

// DecideOverlap maps the policy to an action for a new firing. Without an
// active previous run every policy starts the run; an unknown policy behaves
// like allow (ParseOverlapPolicy rejects it before it is stored).
func DecideOverlap(p OverlapPolicy, previousActive bool) OverlapAction {
	if !previousActive {
		return ActionStart
	}
	switch p {
	case OverlapSkip:
		return ActionSkip
	case OverlapQueue:
		return ActionQueue
	case OverlapReplace:
		return ActionCancelPreviousAndStart
	}
	return ActionStart
}

// Defaults and limits of MisfireConfig.
const (
	DefaultMisfireThreshold = 60 * time.Second
	DefaultMaxCatchUp       = 10
	// MaxMisfireThreshold bounds Threshold.
	MaxMisfireThreshold = 7 * 24 * time.Hour
	// MaxOnTimeFire bounds the on-time firings one Plan returns. When more
	// are due within the threshold (an every-second job with a threshold of
	// an hour after an outage), the newest MaxOnTimeFire count as on time and
	// the older ones are handled as late.
	MaxOnTimeFire = 1000
	// MaxCatchUpLimit bounds MaxCatchUp.
	MaxCatchUpLimit = 1000
	// MaxSkippedListed is how many skipped times a Decision lists one by one;
	// SkippedCount always has the total.
	MaxSkippedListed = 1000
)

// MisfireConfig is a job's misfire setting.
type MisfireConfig struct {
	// Policy for late firings. Default run_once.
	Policy MisfirePolicy
	// Threshold: a firing is on time while now - scheduled <= Threshold, and
	// late after that. Default 60s, at most 7 days.
	Threshold time.Duration
	// MaxCatchUp caps the late firings that catch_up fires. Default 10, at
	// most 1000.
	MaxCatchUp int
}

// WithDefaults fills zero fields with their defaults.
func (c MisfireConfig) WithDefaults() MisfireConfig {
	if c.Policy == "" {
		c.Policy = MisfireRunOnce
	}
	if c.Threshold == 0 {
		c.Threshold = DefaultMisfireThreshold
	}
	if c.MaxCatchUp == 0 {
		c.MaxCatchUp = DefaultMaxCatchUp
	}
	return c
}

// Validate checks a config after WithDefaults.
func (c MisfireConfig) Validate() error {
	if _, err := ParseMisfirePolicy(string(c.Policy)); err != nil {
		return err
	}
	if c.Threshold < 0 || c.Threshold > MaxMisfireThreshold {
		return invalid(0, "misfire threshold", c.Threshold.String(),
			msg.New(msg.ValueOutside, "value", c.Threshold, "min", "0s", "max", MaxMisfireThreshold))
	}
	if c.MaxCatchUp < 0 || c.MaxCatchUp > MaxCatchUpLimit {
		return invalid(0, "max catch-up", strconv.Itoa(c.MaxCatchUp),
			msg.New(msg.ValueOutside, "value", c.MaxCatchUp, "min", 0, "max", MaxCatchUpLimit))
	}
	return nil
}

// Decision is the outcome of Plan for one due job.
type Decision struct {
	Fire         []time.Time // scheduled times (run keys) to create runs for, oldest first
	Skipped      []time.Time // scheduled times to record as skipped, oldest first; at most MaxSkippedListed
	SkippedCount int         // total number of skipped scheduled times (>= len(Skipped))
	Next         time.Time   // the new next_fire_at: the first firing after now, zero if none within ~5 years
	Misfired     bool        // some due firing was late by more than the threshold
}

// firingSource is what Plan needs of a schedule: the next firing after an
// instant, the number of firings between two instants and the last one
// before an instant (Unix seconds). *Schedule and the calendar-aware
// source of PlanCalendar provide it.
type firingSource interface {
	nextSec(a int64) (int64, bool)
	countBetween(lo, hi int64) int64
	lastBefore(from, hi int64) int64
}

// nextOf returns the first firing of src strictly after t, or the zero Time.
func nextOf(src firingSource, t time.Time) time.Time {
	f, ok := src.nextSec(t.Unix())
	if !ok {
		return time.Time{}
	}
	return time.Unix(f, 0).UTC()
}

// upToCounter is a firingSource that counts more cheaply when only "more
// than limit?" matters: a MultiZone enumerates its union.
type upToCounter interface {
	countUpTo(lo, hi, limit int64) int64
}

// countAtMost is min(s.countBetween(lo, hi), limit), or the exact count.
func countAtMost(s firingSource, lo, hi, limit int64) int64 {
	if c, ok := s.(upToCounter); ok {
		return c.countUpTo(lo, hi, limit)
	}
	return s.countBetween(lo, hi)
}

// capOnTime moves cut forward, if needed, so that at most MaxOnTimeFire
// firings fall in [cut, now]; firings before nextFireAt are not due and do
// not count. It counts instead of enumerating and binary searches the new
// cut, so its cost does not grow with the backlog.
func capOnTime(s firingSource, cut, nextFireAt, now time.Time) time.Time {
	from := cut
	if nextFireAt.After(cut) {
		from = nextFireAt
	}
	lo := from.Unix()
	if from.Nanosecond() > 0 {
		lo++ // first whole second >= from
	}
	end := now.Unix() + 1 // firings f <= now  <=>  f < floor(now)+1
	inWindow := func(from int64) int64 { return countAtMost(s, from-1, end, MaxOnTimeFire+1) }
	if lo >= end || inWindow(lo) <= MaxOnTimeFire {
		return cut
	}
	hi := end // inWindow(lo) > max, inWindow(hi) == 0
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if inWindow(mid) <= MaxOnTimeFire {
			hi = mid
		} else {
			lo = mid
		}
	}
	return time.Unix(hi, 0).UTC()
}

// Plan decides what to do with a due job.
//
// nextFireAt is the job's stored next_fire_at, now the current time. The due
// firings are nextFireAt itself and every firing of s after it up to and
// including now. A due firing is on time when now - scheduled <= Threshold
// and late otherwise. On-time firings always fire. Late firings follow the
// policy (see MisfirePolicy); nothing is dropped without being counted in
// Skipped/SkippedCount.
//
// The work is bounded whatever the backlog: Plan lists at most
// MaxCatchUp+MaxSkippedListed+1 late firings one by one, counts the rest from
// the field bitmasks and finds the most recent one by binary search. A
// nextFireAt after now yields a Decision with only Next (= nextFireAt); a zero
// nextFireAt yields only Next(now). The config is completed with WithDefaults
// and clamped to its limits; an unknown policy acts as run_once. At most
// MaxOnTimeFire on-time firings fire; older ones count as late.
func Plan(s *Schedule, nextFireAt, now time.Time, cfg MisfireConfig) Decision {
	return plan(s, nextFireAt, now, cfg)
}

func plan(s firingSource, nextFireAt, now time.Time, cfg MisfireConfig) Decision {
	cfg = cfg.WithDefaults()
	cfg.Threshold = min(max(cfg.Threshold, 0), MaxMisfireThreshold)
	cfg.MaxCatchUp = min(max(cfg.MaxCatchUp, 0), MaxCatchUpLimit)
	if nextFireAt.IsZero() {
		return Decision{Next: nextOf(s, now)}
	}
	if nextFireAt.After(now) {
		return Decision{Next: nextFireAt}
	}
	cut := now.Add(-cfg.Threshold) // late: scheduled < cut
	cut = capOnTime(s, cut, nextFireAt, now)
	listCap := MaxSkippedListed + 1
	if cfg.Policy == MisfireCatchUp {
		listCap += cfg.MaxCatchUp
	}

	// Late firings, oldest first, listed up to listCap.
	var late []time.Time
	var lastLate time.Time
	f := nextFireAt
	for !f.IsZero() && f.Before(cut) && len(late) < listCap {
		late = append(late, f)
		f = nextOf(s, f)
	}
	lateTotal := len(late)
	if len(late) > 0 {
		lastLate = late[len(late)-1]
	}
	if !f.IsZero() && f.Before(cut) {
		// Too many to list: count and locate the rest instead.
		hi := cut.Unix()
		if cut.Nanosecond() > 0 {
			hi++ // firings are whole seconds: x < cut  <=>  x < floor(cut)+1
		}
		lateTotal += 1 + int(s.countBetween(f.Unix(), hi))
		lastLate = time.Unix(s.lastBefore(f.Unix(), hi), 0).UTC()
		f = nextOf(s, cut.Add(-time.Nanosecond)) // first firing >= cut
	}

	// On-time firings: all of them fire.
	var onTime []time.Time
	for !f.IsZero() && !f.After(now) {
		onTime = append(onTime, f)
		f = nextOf(s, f)
	}

	d := Decision{Next: nextOf(s, now), Misfired: lateTotal > 0}
	fireLate := 0 // how many of the listed late firings (oldest first) fire
	switch cfg.Policy {
	case MisfireSkip:
	case MisfireCatchUp:
		fireLate = min(cfg.MaxCatchUp, len(late))
	default: // run_once
		if lateTotal > 0 && len(onTime) == 0 {
			d.Fire = append(d.Fire, lastLate)
			if lastLate.Equal(late[len(late)-1]) {
				late = late[:len(late)-1]
			}
			lateTotal--
		}
	}
	d.Fire = append(append(late[:fireLate:fireLate], d.Fire...), onTime...)
	skipped := late[fireLate:]
	d.SkippedCount = lateTotal - fireLate
	if len(skipped) > MaxSkippedListed {
		skipped = skipped[:MaxSkippedListed]
	}
	if len(skipped) > 0 {
		d.Skipped = skipped
	}
	if len(d.Fire) == 0 {
		d.Fire = nil
	}
	return d
}
