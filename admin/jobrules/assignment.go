package jobrules

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/schedule"
)

// What a run sends to executors with each of its slots: the slot's
// parameter and the records policy's dedup scope, resolved for the run.

// ParseSlotParams parses "0=Beijing,1=Shanghai" into a map from slot to
// parameter. Slots must be within 0..slots-1 and appear once. An error is a
// msg.Msg.
func ParseSlotParams(s string, slots int) (map[int]string, error) {
	out := map[int]string{}
	if strings.TrimSpace(s) == "" {
		return out, nil
	}
	for _, part := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return nil, msg.New(msg.SlotParamsPair, "part", strconv.Quote(part))
		}
		n, err := strconv.Atoi(strings.TrimSpace(k))
		if err != nil || n < 0 || n >= max(slots, 1) {
			return nil, msg.New(msg.SlotParamsSlot, "part", strconv.Quote(part), "max", max(slots, 1)-1)
		}
		if _, dup := out[n]; dup {
			return nil, msg.New(msg.SlotParamsTwice, "slot", n)
		}
		out[n] = strings.TrimSpace(v)
	}
	return out, nil
}

// scopePlaceholders are replaced by the run's scheduled time in the job's
// time zone: runs of one day (month, year) share a scope.
var scopePlaceholders = map[string]string{
	"{date}":  "2006-01-02",
	"{month}": "2006-01",
	"{year}":  "2006",
}

var placeholderRE = regexp.MustCompile(`\{[^{}]*\}`)

// ScopePlaceholders are the placeholders a dedup scope may hold, sorted:
// {date}, {month} and {year}.
func ScopePlaceholders() []string {
	out := make([]string, 0, len(scopePlaceholders))
	for p := range scopePlaceholders {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// ScopeBraces returns the parts of dedup scope scope in braces ({…}), in
// order, placeholders or not (ScopePlaceholders), and scope with each of
// them replaced by "x": what is left to check for its characters.
func ScopeBraces(scope string) (braced []string, bare string) {
	return placeholderRE.FindAllString(scope, -1), placeholderRE.ReplaceAllString(scope, "x")
}

// ResolveDedupScope is the scope a run of a job with dedup scope scope
// uses: "" for a job that leaves it to the handler, "run", "job", or the name
// with its placeholders replaced by the run's scheduled time (Unix ms) in
// time zone zone (UTC when zone does not load).
func ResolveDedupScope(scope, zone string, scheduledAtMS int64) string {
	if !strings.Contains(scope, "{") {
		return scope
	}
	loc, err := schedule.ValidateZone(zone)
	if err != nil {
		loc = time.UTC // jobs are saved with a valid zone; a zone the machine lost reads as UTC
	}
	at := time.UnixMilli(scheduledAtMS).In(loc)
	return placeholderRE.ReplaceAllStringFunc(scope, func(p string) string {
		if layout, ok := scopePlaceholders[p]; ok {
			return at.Format(layout)
		}
		return p
	})
}

// ResolveDedupScopeOnDate is the scope of a workflow node's run: its
// placeholders name the workflow run's business date (YYYY-MM-DD), not the
// day the node happens to run, so it is resolved when the run is created
// and passed on as it is. A date that does not parse leaves scope as it
// is (ResolveDedupScope resolves it for the run when it is sent).
func ResolveDedupScopeOnDate(scope, businessDate string) string {
	day, err := time.Parse(time.DateOnly, businessDate)
	if err != nil {
		return scope
	}
	return ResolveDedupScope(scope, "UTC", day.UnixMilli())
}
