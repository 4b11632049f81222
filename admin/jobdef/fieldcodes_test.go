package jobdef

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/calendar"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/schedule"
)

func ptrTime(t time.Time) *time.Time { return &t }

type badSpec struct {
	name string
	spec apitypes.JobSpec
}

type namedErr struct {
	name string
	err  error
}

// TestFieldErrorsAreCodes: every field error of a bad job, and every error
// of admin/schedule, is a message code of the catalog (its nested
// arguments too) whose English is exactly the text the API returned before
// codes existed (testdata/field_errors_en.json, written by the code before
// this change): API clients and the CLI read the same English, the console
// translates the codes. Between them the cases use every code that
// admin/jobdef and admin/schedule name.
func TestFieldErrorsAreCodes(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("testdata/field_errors_en.json")
	require.NoError(t, err)
	var golden map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(b, &golden))
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	seen := map[msg.Code]bool{}
	checked := 0
	check := func(where string, m msg.Msg, english string) {
		t.Helper()
		walkCodes(t, where, m, seen)
		require.Equal(t, english, m.String(), "%s: the code renders the English the API answers", where)
		checked++
	}
	for _, c := range badSpecs() {
		var want FieldErrors
		require.NoError(t, json.Unmarshal(golden[c.name], &want), c.name)
		_, err := Validate(c.spec, now)
		var fm FieldMsgs
		require.ErrorAs(t, err, &fm, c.name)
		var fe FieldErrors
		require.ErrorAs(t, err, &fe, c.name)
		require.Equal(t, want, fe, "%s: the English of the API is unchanged", c.name)
		require.Equal(t, fe.Error(), err.Error(), c.name)
		for field, m := range fm {
			check(c.name+" "+field, m, want[field])
			require.NotEqual(t, msg.Text, m.Code, "%s %s: a code, not text", c.name, field)
		}
	}
	for _, c := range scheduleOnly(t) {
		var want string
		require.NoError(t, json.Unmarshal(golden[c.name], &want), c.name)
		require.ErrorIs(t, c.err, schedule.ErrInvalid, c.name)
		require.Equal(t, want, c.err.Error(), c.name)
		check(c.name, msg.Of(c.err), want)
	}
	require.Len(t, golden, checked-countExtraFields(t, golden), "every golden case is checked")

	// Every error code that admin/schedule, this package and admin/jobrules
	// (the slot params parser Validate uses) name is met by a case, but the
	// one for a bug of admin/schedule (a field it accepted that robfig
	// refuses).
	var unmet []msg.Code
	for _, code := range codesNamedIn(t, "../schedule", ".", "../jobrules") {
		// (dst.*: the preview's notes, not errors; admin/schedule tests them)
		// (run.skipped_*, cal.shifted_*: a calendar's reasons and notes, tested with the scheduler)
		// (text: the fallback of errors made by hand, and robfig's words for
		// a descriptor it refuses after admin/schedule accepted it: a bug)
		// (job.completed_*: why a job is completed, tested with the scheduler)
		if !seen[code] && code != msg.CronNotValid && code != msg.Text && !strings.HasPrefix(string(code), "dst.") &&
			!strings.HasPrefix(string(code), "run.") && !strings.HasPrefix(string(code), "cal.shifted") &&
			!strings.HasPrefix(string(code), "job.completed_") {
			unmet = append(unmet, code)
		}
	}
	require.Empty(t, unmet, "codes no case meets")
}

// countExtraFields is how many more field messages than cases golden has
// (a case with several fields in error counts each).
func countExtraFields(t *testing.T, golden map[string]json.RawMessage) int {
	t.Helper()
	extra := 0
	for _, raw := range golden {
		var fields map[string]string
		if json.Unmarshal(raw, &fields) == nil {
			extra += len(fields) - 1
		}
	}
	return extra
}

// walkCodes checks that m and its nested messages have templates in the
// catalog, and records their codes in seen.
func walkCodes(t *testing.T, where string, m msg.Msg, seen map[msg.Code]bool) {
	t.Helper()
	_, ok := msg.Catalog[m.Code]
	require.True(t, ok, "%s: code %q is not in the catalog", where, m.Code)
	seen[m.Code] = true
	for name, arg := range m.Args {
		switch a := arg.(type) {
		case msg.Msg:
			walkCodes(t, where+"."+name, a, seen)
		case string:
		default:
			t.Fatalf("%s: argument %s is a %T", where, name, arg)
		}
	}
}

// codesNamedIn returns the message codes (msg.X constants of catalog.go)
// that the non-test Go files of dirs name.
func codesNamedIn(t *testing.T, dirs ...string) []msg.Code {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "../msg/catalog.go", nil, 0)
	require.NoError(t, err)
	consts := map[string]msg.Code{}
	for _, d := range f.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.CONST {
			for _, spec := range g.Specs {
				vs := spec.(*ast.ValueSpec)
				v, err := strconv.Unquote(vs.Values[0].(*ast.BasicLit).Value)
				require.NoError(t, err)
				consts[vs.Names[0].Name] = msg.Code(v)
			}
		}
	}
	ref := regexp.MustCompile(`\bmsg\.([A-Z]\w*)`)
	var out []msg.Code
	for _, dir := range dirs {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		require.NoError(t, err)
		for _, file := range files {
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			src, err := os.ReadFile(file)
			require.NoError(t, err)
			for _, m := range ref.FindAllStringSubmatch(string(src), -1) {
				if code, ok := consts[m[1]]; ok {
					out = append(out, code)
				}
			}
		}
	}
	require.NotEmpty(t, out)
	return out
}

// badSpecs are job specs with one thing wrong each (or several, named),
// covering every field error of Validate and every error of the schedule
// package a job's cron, time zone, policies and deadlines can meet.
func badSpecs() []badSpec {
	base := apitypes.JobSpec{JobDef: apitypes.JobDef{App: "a", Name: "n", Handler: "h", Cron: "0 3 * * *"}}
	with := func(f func(s *apitypes.JobSpec)) apitypes.JobSpec {
		s := base
		f(&s)
		return s
	}
	cron := func(expr string) apitypes.JobSpec { return with(func(s *apitypes.JobSpec) { s.Cron = expr }) }
	zone := func(z string) apitypes.JobSpec { return with(func(s *apitypes.JobSpec) { s.TimeZone = z }) }
	return []badSpec{
		// the job's own fields
		{"empty", apitypes.JobSpec{}},
		{"bad names", with(func(s *apitypes.JobSpec) { s.App, s.Name = "-a", "a b" })},
		{"description", with(func(s *apitypes.JobSpec) { s.Description = strings.Repeat("d", 1025) })},
		{"handler", with(func(s *apitypes.JobSpec) { s.Handler = "a b" })},
		{"slots", with(func(s *apitypes.JobSpec) { s.SlotCount = 2000 })},
		{"priority and cap", with(func(s *apitypes.JobSpec) { s.Priority, s.MaxRunningSlots = "urgent", -1 })},
		// a business calendar's fields (the calendar itself is the API's check)
		{"calendar id", with(func(s *apitypes.JobSpec) { s.CalendarID, s.CalendarRule = -1, "shift" })},
		{"calendar rule alone", with(func(s *apitypes.JobSpec) { s.CalendarRule = "skip_holidays" })},
		{"calendar shift alone", with(func(s *apitypes.JobSpec) { s.CalendarShift = "next" })},
		{"calendar rule needed", with(func(s *apitypes.JobSpec) { s.CalendarID = 3 })},
		{"calendar shift rule", with(func(s *apitypes.JobSpec) { s.CalendarID, s.CalendarRule, s.CalendarShift = 3, "skip_holidays", "next" })},
		{"params size", with(func(s *apitypes.JobSpec) { s.Params = strings.Repeat("p", MaxParamsBytes+1) })},
		{"builtin params", with(func(s *apitypes.JobSpec) { s.Handler, s.Params = "http", `{"url": "ftp://example.com/"}` })},
		{"builtin params doc", with(func(s *apitypes.JobSpec) { s.Handler, s.Params = "http", "  " })},
		{"slot params pair", with(func(s *apitypes.JobSpec) { s.SlotCount, s.SlotParams = 2, "x" })},
		{"slot params slot", with(func(s *apitypes.JobSpec) { s.SlotCount, s.SlotParams = 2, "2=a" })},
		{"slot params twice", with(func(s *apitypes.JobSpec) { s.SlotCount, s.SlotParams = 2, "0=a,0=b" })},
		{"policies", with(func(s *apitypes.JobSpec) { s.MisfirePolicy, s.OverlapPolicy = "sometimes", "never" })},
		{"numbers", with(func(s *apitypes.JobSpec) {
			s.MisfireThresholdMS, s.MaxCatchUp, s.TimeoutMS, s.RetryMax, s.RetryBackoffMS = 5, 5000, -1, 101, -1
		})},
		{"children max", with(func(s *apitypes.JobSpec) {
			for i := range MaxChildren + 1 {
				s.ChildJobIDs = append(s.ChildJobIDs, int64(i+1))
			}
		})},
		{"children ids", with(func(s *apitypes.JobSpec) { s.ChildJobIDs = []int64{4, 4} })},
		{"dedup scope too long", with(func(s *apitypes.JobSpec) { s.DedupScope = strings.Repeat("d", 161) })},
		{"dedup scope run prefix", with(func(s *apitypes.JobSpec) { s.DedupScope = "run:5" })},
		{"dedup scope placeholder", with(func(s *apitypes.JobSpec) { s.DedupScope = "settle:{day}" })},
		{"dedup scope chars", with(func(s *apitypes.JobSpec) { s.DedupScope = "a b" })},
		{"dedup scope resolved", with(func(s *apitypes.JobSpec) { s.DedupScope = strings.Repeat("{date}", 13) })},
		{"records", with(func(s *apitypes.JobSpec) { s.UncertainPolicy, s.RecordMaxAttempts = "maybe", 101 })},
		{"deadline negative", with(func(s *apitypes.JobSpec) { s.StartDeadline, s.FinishDeadline = "-1m", "-2h" })},
		{"deadline not duration", with(func(s *apitypes.JobSpec) { s.StartDeadline, s.FinishDeadline = "06:00x", "8d" })},
		{"deadline too short", with(func(s *apitypes.JobSpec) { s.StartDeadline, s.FinishDeadline = "0s", "10ms" })},
		{"deadline too long", with(func(s *apitypes.JobSpec) { s.StartDeadline, s.FinishDeadline = "200h", "169h" })},
		{"deadline clock", with(func(s *apitypes.JobSpec) { s.FinishDeadline, s.DeadlineAction = "24:00", "kill" })},
		{"jitter not duration", with(func(s *apitypes.JobSpec) { s.JitterWindow = "soon" })},
		{"jitter outside", with(func(s *apitypes.JobSpec) { s.JitterWindow = "13h" })},
		{"jitter gap", with(func(s *apitypes.JobSpec) { s.Cron, s.JitterWindow = "*/5 * * * *", "6m" })},
		{"breaker only with", with(func(s *apitypes.JobSpec) { s.BreakerCooldown, s.RetryBudgetWindow = "1m", "1h" })},
		{"breaker bounds", with(func(s *apitypes.JobSpec) {
			s.RetryBackoffMax, s.RetryBudgetPercent, s.RetryBudgetWindow, s.BreakerThreshold, s.BreakerCooldown = "25h", 1001, "30s", 1001, "soon"
		})},
		{"end before start", with(func(s *apitypes.JobSpec) {
			s.StartAt = ptrTime(time.Date(2026, 12, 24, 18, 0, 0, 0, time.FixedZone("", 8*3600)))
			s.EndAt = ptrTime(time.Date(2026, 12, 24, 10, 0, 0, 0, time.UTC))
		})},
		{"max runs", with(func(s *apitypes.JobSpec) { s.MaxRuns = -1 })},
		{"at args", cron("@at 2026-12-24 18:00")},
		{"at bad", cron("@at 2026-12-24T18")},
		{"at years", cron("@at 1900-01-01T00:00")},
		{"cron required", cron("  ")},
		{"business day", cron("0 9 bdl * *")},
		// time zones
		{"zone local", zone("Local")},
		{"zone spaces", zone(" UTC")},
		{"zone offset", zone("UTC+8")},
		{"zone etc", zone("Etc/GMT+8")},
		{"zone path", zone("../etc/passwd")},
		{"zone implausible", zone("localtime")},
		{"zone unknown", zone("Mars/Olympus")},
		// several zones
		{"zones first", with(func(s *apitypes.JobSpec) { s.TimeZone, s.TimeZones = "UTC", []string{"Asia/Tokyo", "Europe/London"} })},
		{"zones calendar", with(func(s *apitypes.JobSpec) {
			s.TimeZones, s.CalendarID, s.CalendarRule = []string{"Asia/Tokyo", "Europe/London"}, 3, "skip_holidays"
		})},
		{"zones too many", with(func(s *apitypes.JobSpec) {
			s.TimeZones = []string{"UTC", "Asia/Tokyo", "Asia/Seoul", "Asia/Kolkata", "Europe/London", "Europe/Paris", "America/New_York", "America/Chicago", "America/Denver"}
		})},
		{"zones duplicate", with(func(s *apitypes.JobSpec) { s.TimeZones = []string{"Asia/Tokyo", "Europe/London", "Asia/Tokyo"} })},
		{"zones unknown", with(func(s *apitypes.JobSpec) { s.TimeZones = []string{"Asia/Tokyo", "Mars/Olympus"} })},
		{"zones every", with(func(s *apitypes.JobSpec) { s.Cron, s.TimeZones = "@every 1h", []string{"Asia/Tokyo", "Europe/London"} })},
		{"zones at", with(func(s *apitypes.JobSpec) {
			s.Cron, s.TimeZones = "@at 2026-12-24T18:00", []string{"Asia/Tokyo", "Europe/London"}
		})},
		{"zones too dense", with(func(s *apitypes.JobSpec) {
			s.Cron, s.TimeZones = "*/30 * * * *", []string{"Asia/Tokyo", "Europe/London"}
		})},
		// the expression as a whole
		{"expr too long", cron("0 3 * * " + strings.Repeat("1,", 600) + "1")},
		{"expr tz", cron("TZ=UTC 0 3 * * *")},
		{"every args", cron("@every")},
		{"every not duration", cron("@every soon")},
		{"every short", cron("@every 500ms")},
		{"every fraction", cron("@every 1500ms")},
		{"every long", cron("@every 9000h")},
		{"descriptor unknown", cron("@sometimes")},
		{"descriptor args", cron("@daily 3")},
		{"year field", cron("0 0 3 * * * 2026")},
		{"field count", cron("0 3 *")},
		{"never fires one", cron("0 0 30 2 *")},
		{"never fires many", cron("0 0 30,31 2 *")},
		// business days
		{"bd with dow", cron("0 9 BD3 * MON")},
		{"bd in list", cron("0 9 BD3,5 * *")},
		{"bd range", cron("0 9 BD1-BD3 * *")},
		{"bd zero", cron("0 9 BD0 * *")},
		{"bd outside", cron("0 9 BD40 * *")},
		{"bd invalid", cron("0 9 BDX * *")},
		{"bd outside day of month", cron("0 9 * BD3 *")},
		// one field
		{"empty element", cron("0 3,,4 * * *")},
		{"two slashes", cron("*/5/2 * * * *")},
		{"step not number", cron("*/x * * * *")},
		{"step zero", cron("*/0 * * * *")},
		{"step too large", cron("0 */25 * * *")},
		{"step too large seconds", cron("*/61 * * * * *")},
		{"step too large dom", cron("0 0 */32 * *")},
		{"step too large month", cron("0 0 1 */13 *")},
		{"step too large dow", cron("0 0 * * */8")},
		{"step too large minute", cron("*/61 * * * *")},
		{"question mark", cron("? * * * *")},
		{"two dashes", cron("1-2-3 * * * *")},
		{"dow backwards", cron("0 0 * * FRI-MON")},
		{"backwards", cron("0 5-2 * * *")},
		{"starts after end", cron("0 0 * * 7/2")},
		{"h malformed", cron("H5 * * * *")},
		{"h sunday", cron("0 0 * * H(1-7)")},
		{"h backwards", cron("H(30-10) * * * *")},
		{"missing number", cron("0 -5 * * *")},
		{"outside", cron("0 25 * * *")},
		{"outside digits", cron("0 1000 * * *")},
		{"outside zero", cron("0 0 0 * *")},
		{"quartz", cron("0 0 L * *")},
		{"not number", cron("0 x * * *")},
		{"not number month", cron("0 0 1 FOO *")},
		{"not number dow", cron("0 0 * * FUN")},
		// waits (admin/waits.Check, the rules of a workflow node's)
		{"wait neither", waitSpec(func(s *apitypes.JobSpec) { s.WaitFor[0] = apitypes.WorkflowWait{} })},
		{"wait both", waitSpec(func(s *apitypes.JobSpec) { s.WaitFor[0].Workflow = &apitypes.WorkflowNameRef{Name: "x"} })},
		{"wait name", waitSpec(func(s *apitypes.JobSpec) { s.WaitFor[1].Workflow.Name = "" })},
		{"wait app", waitSpec(func(s *apitypes.JobSpec) { s.WaitFor[1].Workflow.App = "Market Data" })},
		{"wait itself", waitSpec(func(s *apitypes.JobSpec) { s.WaitFor[0].Job.Name = "n" })},
		{"wait twice", waitSpec(func(s *apitypes.JobSpec) {
			s.WaitFor = append(s.WaitFor, apitypes.WorkflowWait{Job: &apitypes.WorkflowNameRef{App: "a", Name: "load"}})
		})},
		{"wait too many", waitSpec(func(s *apitypes.JobSpec) { s.WaitFor = make([]apitypes.WorkflowWait, 21) })},
		{"wait timeout", waitSpec(func(s *apitypes.JobSpec) { s.WaitTimeout = "tomorrow" })},
		{"wait timeout outside", waitSpec(func(s *apitypes.JobSpec) { s.WaitTimeout = "169h" })},
		{"wait on timeout", waitSpec(func(s *apitypes.JobSpec) { s.OnTimeout = "retry" })},
		{"wait settings alone", with(func(s *apitypes.JobSpec) { s.WaitTimeout, s.OnTimeout = "1h", "skip" })},
		// a bad cron and a bad slots value: the console's browser test
		{"hour 25 and slots", with(func(s *apitypes.JobSpec) { s.Cron, s.SlotCount = "0 25 * * *", 0-1 })},
	}
}

// waitSpec is a valid job a/n that waits for job a/load and workflow
// mkt/close, edited by f.
func waitSpec(f func(s *apitypes.JobSpec)) apitypes.JobSpec {
	s := apitypes.JobSpec{JobDef: apitypes.JobDef{App: "a", Name: "n", Handler: "h", Cron: "0 3 * * *",
		WaitFor: []apitypes.WorkflowWait{
			{Job: &apitypes.WorkflowNameRef{Name: "load"}},
			{Workflow: &apitypes.WorkflowNameRef{App: "mkt", Name: "close"}},
		}}}
	f(&s)
	return s
}

// scheduleOnly are the errors of admin/schedule that a job spec cannot
// meet yet (no job names a calendar; a job always has a key; jobdef checks
// the misfire numbers itself), made by calling the package directly.
func scheduleOnly(t *testing.T) []namedErr {
	t.Helper()
	parse := func(expr string) *schedule.Schedule {
		s, err := schedule.Parse(schedule.Spec{Expr: expr, JobKey: "a/n"})
		require.NoError(t, err, expr)
		return s
	}
	cal, err := calendar.New(calendar.Definition{Name: "c"})
	require.NoError(t, err)
	with := func(s *schedule.Schedule, c *calendar.Calendar, p calendar.Policy) error {
		_, err := schedule.WithCalendar(s, c, p)
		return err
	}
	_, noKey := schedule.Parse(schedule.Spec{Expr: "H 3 * * *"})
	_, empty := schedule.Parse(schedule.Spec{Expr: " "})
	daily := parse("0 3 * * *")
	_, startErr := schedule.ParseStartDeadline("-1m")
	_, finishErr := schedule.ParseFinishDeadline("8d")
	_, zonesErr := schedule.ParseZones(schedule.Spec{Expr: "0 9 * * *"}, []string{"Asia/Tokyo", "Asia/Tokyo"})
	_, jitterErr := schedule.ParseJitterWindow("-1m")
	_, zoneErr := schedule.ValidateZone("Mars/Olympus")
	return []namedErr{
		{"zone alone", zoneErr}, // a job's time_zone field says it without the "time zone:" part
		{"h no key", noKey},
		{"expr empty", empty},
		{"misfire threshold", schedule.MisfireConfig{Policy: schedule.MisfireRunOnce, Threshold: -time.Second, MaxCatchUp: 1}.Validate()},
		{"max catch-up", schedule.MisfireConfig{Policy: schedule.MisfireRunOnce, Threshold: time.Second, MaxCatchUp: 5000}.Validate()},
		{"bd needs calendar", with(parse("0 9 BD3 * *"), nil, calendar.Policy{})},
		{"rule needs calendar", with(daily, nil, calendar.Policy{Rule: calendar.RuleSkipHolidays})},
		{"rule bad", with(daily, cal, calendar.Policy{Rule: "sometimes"})},
		{"shift only", with(daily, cal, calendar.Policy{Rule: calendar.RuleSkipHolidays, Shift: calendar.ShiftNext})},
		{"shift bad", with(daily, cal, calendar.Policy{Rule: calendar.RuleShift, Shift: "up"})},
		{"shift too often", with(parse("*/10 * * * *"), cal, calendar.Policy{Rule: calendar.RuleShift, Shift: calendar.ShiftNext})},
		{"zones part", zonesErr},
		{"start deadline", startErr},
		{"finish deadline", finishErr},
		{"jitter window", jitterErr},
	}
}
