package schedule

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/shardjob/shardjob/admin/calendar"
	"github.com/shardjob/shardjob/admin/msg"
)

const (
	// maxExprLen bounds the work spent on one expression; real expressions,
	// even long minute lists, are far shorter.
	maxExprLen = 1024
	// maxEvery is the longest @every interval; longer cycles belong in a
	// cron expression (and would exceed the Next look-ahead horizon).
	maxEvery = 366 * 24 * time.Hour
)

// robfig's parser does the standard syntax once H, names of Sunday as 7 and
// the field count are dealt with: always six fields, seconds first.
var (
	sixFieldParser   = cron.NewParser(cron.Second | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow)
	descriptorParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)
)

// starBit is robfig's marker for a field written as '*' or '?'.
const starBit = uint64(1) << 63

type fieldKind struct {
	index     int    // canonical position: 0 second ... 5 day of week
	name      string // used in messages
	min, max  int    // accepted literal values (day of week accepts 7 = Sunday)
	starMax   int    // upper end of '*' and of "N/step" (day of week: 6)
	hMin      int    // range of a bare H and of H/n
	hMax      int
	names     map[string]int
	notNumber msg.Code // the error of a value that is neither a number nor a name
}

var (
	monthNames = map[string]int{"JAN": 1, "FEB": 2, "MAR": 3, "APR": 4, "MAY": 5, "JUN": 6, "JUL": 7, "AUG": 8, "SEP": 9, "OCT": 10, "NOV": 11, "DEC": 12}
	dowNames   = map[string]int{"SUN": 0, "MON": 1, "TUE": 2, "WED": 3, "THU": 4, "FRI": 5, "SAT": 6}
	monthAbbr  = [13]string{"", "JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"}
)

var kinds = [6]fieldKind{
	{index: 0, name: "second", min: 0, max: 59, starMax: 59, hMin: 0, hMax: 59, notNumber: msg.CronNotNumber},
	{index: 1, name: "minute", min: 0, max: 59, starMax: 59, hMin: 0, hMax: 59, notNumber: msg.CronNotNumber},
	{index: 2, name: "hour", min: 0, max: 23, starMax: 23, hMin: 0, hMax: 23, notNumber: msg.CronNotNumber},
	{index: 3, name: "day of month", min: 1, max: 31, starMax: 31, hMin: 1, hMax: 28, notNumber: msg.CronNotNumber},
	{index: 4, name: "month", min: 1, max: 12, starMax: 12, hMin: 1, hMax: 12, names: monthNames, notNumber: msg.CronNotNumberMonth},
	{index: 5, name: "day of week", min: 0, max: 7, starMax: 6, hMin: 0, hMax: 6, names: dowNames, notNumber: msg.CronNotNumberDOW},
}

var descriptors = map[string]bool{
	"@yearly": true, "@annually": true, "@monthly": true, "@weekly": true,
	"@daily": true, "@midnight": true, "@hourly": true,
}

// Parse validates spec and compiles it. Errors are *ValidationError values
// (matching ErrInvalid) whose message names the field and the fix.
//
// Accepted expressions: five fields (minute hour day-of-month month
// day-of-week), six fields with seconds first, the descriptors @yearly
// @annually @monthly @weekly @daily @midnight @hourly, and "@every <duration>"
// (whole seconds, 1s to 366 days) anchored at spec.Anchor. Any field may use
// H, H(a-b), H/n or H(a-b)/n, resolved from spec.JobKey. An expression that
// can never fire (0 0 30 2 *) is rejected.
func Parse(spec Spec) (*Schedule, error) {
	loc, err := ValidateZone(spec.Zone)
	if err != nil {
		return nil, err
	}
	expr := strings.TrimSpace(spec.Expr)
	if expr == "" {
		return nil, exprError(spec.Expr, msg.CronEmpty)
	}
	if len(expr) > maxExprLen {
		return nil, exprError(expr[:32]+"...", msg.CronTooLong, "bytes", len(expr), "limit", maxExprLen)
	}
	if up := strings.ToUpper(expr); strings.HasPrefix(up, "TZ=") || strings.HasPrefix(up, "CRON_TZ=") {
		return nil, exprError(expr, msg.CronTZPrefix)
	}
	s := &Schedule{spec: spec, loc: loc}
	fields := strings.Fields(expr)
	if strings.HasPrefix(fields[0], "@") {
		if err := s.compileDescriptor(fields); err != nil {
			return nil, err
		}
		return s, nil
	}
	if err := s.compileFields(fields); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Schedule) compileDescriptor(fields []string) error {
	name := strings.ToLower(fields[0])
	if name == "@at" {
		return s.compileAt(fields)
	}
	if name == "@every" {
		if len(fields) != 2 {
			return exprError(strings.Join(fields, " "), msg.CronEveryArgs)
		}
		d, err := time.ParseDuration(fields[1])
		switch {
		case err != nil:
			return exprError(fields[1], msg.CronEveryNotDuration, "value", strconv.Quote(fields[1]))
		case d < time.Second:
			return exprError(fields[1], msg.CronEveryTooShort, "value", fields[1])
		case d%time.Second != 0:
			return exprError(fields[1], msg.CronEveryFraction, "value", fields[1])
		case d > maxEvery:
			return exprError(fields[1], msg.CronEveryTooLong, "value", fields[1])
		}
		s.every = int64(d / time.Second)
		if !s.spec.Anchor.IsZero() {
			s.anchor = s.spec.Anchor.Unix()
		}
		s.resolved = "@every " + d.String()
		return nil
	}
	if !descriptors[name] {
		return exprError(fields[0], msg.CronUnknownDescriptor, "value", strconv.Quote(fields[0]))
	}
	if len(fields) != 1 {
		return exprError(strings.Join(fields, " "), msg.CronDescriptorArgs, "name", name)
	}
	s.robfig = name
	parsed, err := descriptorParser.Parse(name)
	if err != nil {
		return exprError(name, msg.Text, "text", err)
	}
	s.setMasks(parsed.(*cron.SpecSchedule))
	s.resolved = name
	return nil
}

func (s *Schedule) compileFields(fields []string) error {
	var canonical [6]string
	first := 1 // canonical index of the first field written
	switch len(fields) {
	case 5:
		canonical[0] = "0"
		copy(canonical[1:], fields)
	case 6:
		first = 0
		copy(canonical[:], fields)
	case 7:
		return exprError(strings.Join(fields, " "), msg.CronYearField)
	default:
		return exprError(strings.Join(fields, " "), msg.CronFieldCount, "count", len(fields))
	}
	var robfigFields [6]string
	resolved := make([]string, 0, len(fields))
	for i := range canonical {
		if i < first {
			robfigFields[i] = canonical[i]
			continue
		}
		pos := i - first + 1
		if i == 3 && hasBusinessDay(canonical[i]) {
			bd, err := compileBusinessDay(canonical[i], pos)
			if err != nil {
				return err
			}
			s.bd, s.bdPos = bd, pos
			resolved = append(resolved, bd.String())
			robfigFields[i] = "*" // replaced below: the calendar picks the day
			continue
		}
		res, rob, err := compileField(canonical[i], kinds[i], pos, s.spec.JobKey)
		if err != nil {
			return err
		}
		resolved = append(resolved, res)
		robfigFields[i] = rob
	}
	s.robfig = strings.Join(robfigFields[:], " ")
	parsed, err := sixFieldParser.Parse(s.robfig)
	if err != nil {
		// compileField accepts only what robfig accepts; reaching this is a bug
		// in this package, but still an input error for the caller.
		return exprError(strings.Join(fields, " "), msg.CronNotValid, "error", err)
	}
	s.setMasks(parsed.(*cron.SpecSchedule))
	s.resolved = strings.Join(resolved, " ")
	if s.bd != 0 {
		if !s.dowStar {
			dow := fields[len(fields)-1]
			return invalid(len(fields), "day of week", dow, msg.New(msg.CronBDWithDOW, "dow", dow, "bd", s.bd))
		}
		s.dom, s.domStar = 0, false // no day of its own: the calendar picks it
		return nil
	}
	if err := s.checkCanFire(3 - first + 1); err != nil {
		return err
	}
	return nil
}

func (s *Schedule) setMasks(p *cron.SpecSchedule) {
	s.second = p.Second &^ starBit
	s.minute = p.Minute &^ starBit
	s.hour = p.Hour &^ starBit
	s.dom = p.Dom &^ starBit
	s.month = p.Month &^ starBit
	s.dow = p.Dow &^ starBit
	s.domStar = p.Dom&starBit != 0
	s.dowStar = p.Dow&starBit != 0
	s.fixed = bits.OnesCount64(s.hour) == 1 && bits.OnesCount64(s.minute) == 1
	s.perDay = int64(bits.OnesCount64(s.hour) * bits.OnesCount64(s.minute) * bits.OnesCount64(s.second))
}

// checkCanFire rejects a day-of-month/month combination that never occurs.
// With a restricted day of week (and a restricted day of month) the OR rule
// always finds days, and a '*' day of month with a restricted day of week
// finds them every month, so only a restricted day of month with a '*' day of
// week can be empty. February counts 29 days: "0 0 29 2 *" fires in leap
// years.
func (s *Schedule) checkCanFire(domPos int) error {
	if !s.dowStar {
		return nil
	}
	maxDays := [13]int{0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}
	var months []string
	for m := 1; m <= 12; m++ {
		if s.month&(1<<m) == 0 {
			continue
		}
		if s.dom&(uint64(1)<<(maxDays[m]+1)-1) != 0 {
			return nil
		}
		months = append(months, monthAbbr[m])
	}
	var days []string
	for d := 1; d <= 31; d++ {
		if s.dom&(1<<d) != 0 {
			days = append(days, strconv.Itoa(d))
		}
	}
	code := msg.CronNeverFiresMany
	if len(days) == 1 {
		code = msg.CronNeverFiresOne
	}
	return invalid(domPos, "day of month", strings.Join(days, ","),
		msg.New(code, "days", strings.Join(days, ","), "months", strings.Join(months, ",")))
}

// hasBusinessDay reports whether a day-of-month field uses the BD syntax
// (in any letter case) in any of its list elements.
func hasBusinessDay(field string) bool {
	for item := range strings.SplitSeq(field, ",") {
		if len(item) >= 2 && strings.EqualFold(item[:2], "BD") {
			return true
		}
	}
	return false
}

// compileBusinessDay reads a day-of-month field holding a business-day
// selector: BDn (1 <= n <= 31), BDL or BD-n, in any letter case, alone.
func compileBusinessDay(field string, pos int) (calendar.BusinessDay, error) {
	fail := func(code msg.Code, kv ...any) (calendar.BusinessDay, error) {
		return 0, invalid(pos, "day of month", field, msg.New(code, kv...))
	}
	if strings.Contains(field, ",") {
		return fail(msg.CronBDInList, "value", strconv.Quote(field))
	}
	up := strings.ToUpper(field)
	rest := up[2:]
	switch {
	case strings.ContainsAny(rest, "/,") || (len(rest) > 1 && strings.Contains(rest[1:], "-")) || strings.Contains(rest, "BD"):
		return fail(msg.CronBDRange, "value", strconv.Quote(field), "max", calendar.MaxBusinessDay)
	case rest == "0" || rest == "-0" || rest == "00" || rest == "-00":
		return fail(msg.CronBDZero, "bd", up)
	}
	bd, err := calendar.ParseBusinessDay(field)
	if err != nil {
		if n, ok := parseNumber(strings.TrimPrefix(rest, "-")); ok && n > calendar.MaxBusinessDay {
			return fail(msg.CronBDOutside, "bd", up, "n", n, "max", calendar.MaxBusinessDay)
		}
		return fail(msg.CronBDInvalid, "value", strconv.Quote(field), "max", calendar.MaxBusinessDay)
	}
	return bd, nil
}

// compileField validates one field, resolves H, and returns the field as the
// user should see it (H replaced by numbers) and as robfig should parse it
// (additionally with day-of-week 7 rewritten to 0).
func compileField(text string, k fieldKind, pos int, jobKey string) (resolved, robfig string, err error) {
	items := strings.Split(text, ",")
	res := make([]string, 0, len(items))
	rob := make([]string, 0, len(items))
	for _, item := range items {
		r, b, err := compileItem(item, text, k, pos, jobKey)
		if err != nil {
			return "", "", err
		}
		res = append(res, r)
		rob = append(rob, b)
	}
	return strings.Join(res, ","), strings.Join(rob, ","), nil
}

func compileItem(item, field string, k fieldKind, pos int, jobKey string) (resolved, robfig string, err error) {
	fail := func(code msg.Code, kv ...any) (string, string, error) {
		return "", "", invalid(pos, k.name, item, msg.New(code, kv...))
	}
	if item == "" {
		return fail(msg.CronEmptyElement, "field", strconv.Quote(field))
	}
	base, stepText, hasStep := strings.Cut(item, "/")
	if strings.Contains(stepText, "/") {
		return fail(msg.CronTwoSlashes, "item", strconv.Quote(item))
	}
	span := k.starMax - k.min + 1
	step := 1
	if hasStep {
		n, ok := parseNumber(stepText)
		switch {
		case !ok:
			return fail(msg.CronStepNotNumber, "step", strconv.Quote(stepText), "item", strconv.Quote(item))
		case n == 0:
			return fail(msg.CronStepZero, "item", strconv.Quote(item))
		case n > span:
			return fail(msg.CronStepTooLarge, "step", n, "item", strconv.Quote(item), "min", k.min, "max", k.starMax, "cycle", msg.New(k.cycle()))
		}
		step = n
	}
	switch {
	case base == "*":
		return item, item, nil
	case base == "?":
		if k.index != 3 && k.index != 5 {
			return fail(msg.CronQuestionMark)
		}
		return item, item, nil
	case strings.HasPrefix(base, "H"):
		return compileH(item, base, step, hasStep, k, pos, jobKey)
	}
	loText, hiText, isRange := strings.Cut(base, "-")
	if strings.Contains(hiText, "-") {
		return fail(msg.CronTwoDashes, "item", strconv.Quote(item))
	}
	lo, err := parseValue(loText, item, k, pos)
	if err != nil {
		return "", "", err
	}
	hi := lo
	if isRange {
		if hi, err = parseValue(hiText, item, k, pos); err != nil {
			return "", "", err
		}
		if lo > hi {
			if k.index == 5 {
				return fail(msg.CronDOWBackwards, "range", strconv.Quote(base))
			}
			return fail(msg.CronBackwards, "range", strconv.Quote(base), "lo", hi, "hi", lo)
		}
	} else if hasStep {
		hi = k.starMax // "N/step" means N to the end of the field
		if lo > hi {
			return fail(msg.CronStartsAfterEnd, "item", strconv.Quote(item), "max", k.starMax)
		}
	}
	if k.index == 5 && hi == 7 {
		// robfig knows only 0-6; spell the values out with Sunday as 0.
		vals := make([]string, 0, 8)
		seen := map[int]bool{}
		for v := lo; v <= hi; v += step {
			x := v % 7
			if !seen[x] {
				seen[x] = true
				vals = append(vals, strconv.Itoa(x))
			}
		}
		return item, strings.Join(vals, ","), nil
	}
	return item, item, nil
}

// cycle names what the field's steps restart every: the next larger unit.
func (k fieldKind) cycle() msg.Code {
	switch k.index {
	case 0:
		return msg.CycleMinute
	case 1:
		return msg.CycleHour
	case 2:
		return msg.CycleDay
	case 3:
		return msg.CycleMonth
	case 4:
		return msg.CycleYear
	default:
		return msg.CycleWeek
	}
}

// compileH resolves H, H(a-b), H/n and H(a-b)/n to plain numbers.
func compileH(item, base string, step int, hasStep bool, k fieldKind, pos int, jobKey string) (resolved, robfig string, err error) {
	fail := func(code msg.Code, kv ...any) (string, string, error) {
		return "", "", invalid(pos, k.name, item, msg.New(code, kv...))
	}
	lo, hi := k.hMin, k.hMax
	if rest := base[1:]; rest != "" {
		inner, ok := strings.CutPrefix(rest, "(")
		if ok {
			inner, ok = strings.CutSuffix(inner, ")")
		}
		a, b, isRange := strings.Cut(inner, "-")
		if !ok || !isRange {
			return fail(msg.CronHMalformed, "item", strconv.Quote(item))
		}
		var err error
		if lo, err = parseValue(a, item, k, pos); err != nil {
			return "", "", err
		}
		if hi, err = parseValue(b, item, k, pos); err != nil {
			return "", "", err
		}
		if k.index == 5 && (lo == 7 || hi == 7) {
			return fail(msg.CronHSunday, "item", strconv.Quote(item))
		}
		if lo > hi {
			return fail(msg.CronHBackwards, "range", strconv.Quote(base), "lo", hi, "hi", lo)
		}
	}
	if jobKey == "" {
		return fail(msg.CronHNoKey)
	}
	size := hi - lo + 1
	h := hashField(jobKey, k.index)
	if !hasStep {
		v := strconv.Itoa(lo + int(h%uint64(size)))
		return v, v, nil
	}
	first := lo + int(h%uint64(min(step, size)))
	var out string
	switch {
	case first+step > hi:
		out = strconv.Itoa(first)
	case step == 1:
		out = fmt.Sprintf("%d-%d", first, hi)
	default:
		out = fmt.Sprintf("%d-%d/%d", first, hi, step)
	}
	return out, out, nil
}

// hashField is the stable hash behind H: FNV-1a (64 bit) of the job key, a
// zero byte and the canonical field index (0 second ... 5 day of week, the
// same for 5- and 6-field expressions), finished with the MurmurHash3 64-bit
// mixer so that small moduli use well-spread bits. Changing it moves every
// H job, so it is pinned by a test.
func hashField(jobKey string, field int) uint64 {
	const (
		offset = 14695981039346656037
		prime  = 1099511628211
	)
	h := uint64(offset)
	for i := 0; i < len(jobKey); i++ {
		h ^= uint64(jobKey[i])
		h *= prime
	}
	h ^= 0
	h *= prime
	h ^= uint64(field)
	h *= prime
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

// parseNumber accepts 1-3 ASCII digits.
func parseNumber(s string) (int, bool) {
	if s == "" || len(s) > 3 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

func parseValue(s, item string, k fieldKind, pos int) (int, error) {
	fail := func(code msg.Code, kv ...any) (int, error) {
		return 0, invalid(pos, k.name, item, msg.New(code, kv...))
	}
	if s == "" {
		return fail(msg.CronMissingNumber, "item", strconv.Quote(item))
	}
	if n, ok := parseNumber(s); ok {
		if n < k.min || n > k.max {
			return fail(msg.ValueOutside, "value", n, "min", k.min, "max", k.max)
		}
		return n, nil
	}
	if k.names != nil {
		if n, ok := k.names[strings.ToUpper(s)]; ok {
			return n, nil
		}
	}
	up := strings.ToUpper(s)
	if strings.HasPrefix(up, "BD") {
		return fail(msg.CronBDNotDOM, "item", strconv.Quote(item))
	}
	if isQuartzToken(up) {
		return fail(msg.CronQuartz, "item", strconv.Quote(item))
	}
	if allDigits(s) {
		return fail(msg.ValueOutside, "value", s, "min", k.min, "max", k.max)
	}
	return fail(k.notNumber, "value", strconv.Quote(s))
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// isQuartzToken spots L, LW, 15W, 5L and 6#3 from Quartz syntax.
func isQuartzToken(up string) bool {
	if up == "L" || up == "LW" || strings.Contains(up, "#") {
		return true
	}
	n := len(up)
	return n > 1 && (up[n-1] == 'L' || up[n-1] == 'W') && allDigits(up[:n-1])
}
