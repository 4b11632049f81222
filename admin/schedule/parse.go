package schedule

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/shardjob/shardjob/admin/calendar"
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
	index    int    // canonical position: 0 second ... 5 day of week
	name     string // used in messages
	min, max int    // accepted literal values (day of week accepts 7 = Sunday)
	starMax  int    // upper end of '*' and of "N/step" (day of week: 6)
	hMin     int    // range of a bare H and of H/n
	hMax     int
	names    map[string]int
	nameHelp string
}

var (
	monthNames = map[string]int{"JAN": 1, "FEB": 2, "MAR": 3, "APR": 4, "MAY": 5, "JUN": 6, "JUL": 7, "AUG": 8, "SEP": 9, "OCT": 10, "NOV": 11, "DEC": 12}
	dowNames   = map[string]int{"SUN": 0, "MON": 1, "TUE": 2, "WED": 3, "THU": 4, "FRI": 5, "SAT": 6}
	monthAbbr  = [13]string{"", "JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"}
)

var kinds = [6]fieldKind{
	{index: 0, name: "second", min: 0, max: 59, starMax: 59, hMin: 0, hMax: 59},
	{index: 1, name: "minute", min: 0, max: 59, starMax: 59, hMin: 0, hMax: 59},
	{index: 2, name: "hour", min: 0, max: 23, starMax: 23, hMin: 0, hMax: 23},
	{index: 3, name: "day of month", min: 1, max: 31, starMax: 31, hMin: 1, hMax: 28},
	{index: 4, name: "month", min: 1, max: 12, starMax: 12, hMin: 1, hMax: 12, names: monthNames, nameHelp: " or a month name (JAN-DEC)"},
	{index: 5, name: "day of week", min: 0, max: 7, starMax: 6, hMin: 0, hMax: 6, names: dowNames, nameHelp: " or a day name (SUN-SAT)"},
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
		return nil, exprError(spec.Expr, "the expression is empty; write 5 fields (minute hour day-of-month month day-of-week), 6 with seconds first, or a descriptor such as @daily")
	}
	if len(expr) > maxExprLen {
		return nil, exprError(expr[:32]+"...", "the expression is %d bytes long; the limit is %d", len(expr), maxExprLen)
	}
	if up := strings.ToUpper(expr); strings.HasPrefix(up, "TZ=") || strings.HasPrefix(up, "CRON_TZ=") {
		return nil, exprError(expr, "a TZ= prefix is not accepted; set the job's time zone in its own setting instead")
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
	if name == "@every" {
		if len(fields) != 2 {
			return exprError(strings.Join(fields, " "), "@every takes exactly one duration, e.g. \"@every 90s\", \"@every 15m\" or \"@every 1h30m\"")
		}
		d, err := time.ParseDuration(fields[1])
		switch {
		case err != nil:
			return exprError(fields[1], "%q is not a duration; write e.g. 90s, 15m or 1h30m", fields[1])
		case d < time.Second:
			return exprError(fields[1], "@every %s is shorter than the minimum of 1s", fields[1])
		case d%time.Second != 0:
			return exprError(fields[1], "@every %s has a fraction of a second; use whole seconds", fields[1])
		case d > maxEvery:
			return exprError(fields[1], "@every %s is longer than the maximum of 366 days; use a cron expression for longer cycles", fields[1])
		}
		s.every = int64(d / time.Second)
		if !s.spec.Anchor.IsZero() {
			s.anchor = s.spec.Anchor.Unix()
		}
		s.resolved = "@every " + d.String()
		return nil
	}
	if !descriptors[name] {
		return exprError(fields[0], "unknown descriptor %q; use one of @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly or @every <duration>", fields[0])
	}
	if len(fields) != 1 {
		return exprError(strings.Join(fields, " "), "%s takes no arguments", name)
	}
	s.robfig = name
	parsed, err := descriptorParser.Parse(name)
	if err != nil {
		return exprError(name, "%v", err)
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
		return exprError(strings.Join(fields, " "), "7 fields given; a year field is not supported (write 5 fields, or 6 with seconds first)")
	default:
		return exprError(strings.Join(fields, " "), "%d fields given; write 5 fields (minute hour day-of-month month day-of-week) or 6 with seconds first", len(fields))
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
		return exprError(strings.Join(fields, " "), "not a valid cron expression: %v", err)
	}
	s.setMasks(parsed.(*cron.SpecSchedule))
	s.resolved = strings.Join(resolved, " ")
	if s.bd != 0 {
		if !s.dowStar {
			dow := fields[len(fields)-1]
			return &ValidationError{Field: len(fields), Name: "day of week", Value: dow,
				Msg: fmt.Sprintf("%s cannot be combined with %s in the day of month: %s already picks one working day of the month from the job's calendar (its base week and holidays say which days work); write * here",
					dow, s.bd, s.bd)}
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
	return &ValidationError{
		Field: domPos, Name: "day of month", Value: strings.Join(days, ","),
		Msg: fmt.Sprintf("%s never %s in %s, so this expression would never fire; pick a day that exists in those months (or use a day of week)",
			plural(len(days), "day", "days")+" "+strings.Join(days, ","), plural(len(days), "occurs", "occur"), strings.Join(months, ",")),
	}
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
	fail := func(format string, args ...any) (calendar.BusinessDay, error) {
		return 0, &ValidationError{Field: pos, Name: "day of month", Value: field, Msg: fmt.Sprintf(format, args...)}
	}
	if strings.Contains(field, ",") {
		return fail("%q: a business day (BD3, BDL, BD-2) stands alone in the day-of-month field and cannot be combined with other days; use one job per business day", field)
	}
	up := strings.ToUpper(field)
	rest := up[2:]
	switch {
	case strings.ContainsAny(rest, "/,") || (len(rest) > 1 && strings.Contains(rest[1:], "-")) || strings.Contains(rest, "BD"):
		return fail("%q: ranges and steps of business days are not supported; write one business day: BDn (the n-th working day, n from 1 to %d), BDL (the last) or BD-n (the n-th from the end)", field, calendar.MaxBusinessDay)
	case rest == "0" || rest == "-0" || rest == "00" || rest == "-00":
		return fail("%s is not a business day: they count from 1 (BD1 is the first working day of the month, BDL or BD-1 the last)", up)
	}
	bd, err := calendar.ParseBusinessDay(field)
	if err != nil {
		if n, ok := parseNumber(strings.TrimPrefix(rest, "-")); ok && n > calendar.MaxBusinessDay {
			return fail("%s: %d is outside 1-%d (no month has more than %d days)", up, n, calendar.MaxBusinessDay, calendar.MaxBusinessDay)
		}
		return fail("%q is not a business day: write BDn (the n-th working day of the month, n from 1 to %d), BDL (the last) or BD-n (the n-th from the end)", field, calendar.MaxBusinessDay)
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
	fail := func(format string, args ...any) (string, string, error) {
		return "", "", &ValidationError{Field: pos, Name: k.name, Value: item, Msg: fmt.Sprintf(format, args...)}
	}
	if item == "" {
		return fail("empty element in the list %q; remove the extra comma", field)
	}
	base, stepText, hasStep := strings.Cut(item, "/")
	if strings.Contains(stepText, "/") {
		return fail("%q has more than one '/'; write start-end/step", item)
	}
	span := k.starMax - k.min + 1
	step := 1
	if hasStep {
		n, ok := parseNumber(stepText)
		switch {
		case !ok:
			return fail("step %q in %q is not a whole number", stepText, item)
		case n == 0:
			return fail("step 0 in %q is not allowed; use a step of 1 or more", item)
		case n > span:
			return fail("step %d in %q is larger than the field's range %d-%d; steps restart every %s, so use a smaller step or @every", n, item, k.min, k.starMax, k.cycleName())
		}
		step = n
	}
	switch {
	case base == "*":
		return item, item, nil
	case base == "?":
		if k.index != 3 && k.index != 5 {
			return fail("'?' is only allowed in the day-of-month and day-of-week fields; use '*'")
		}
		return item, item, nil
	case strings.HasPrefix(base, "H"):
		return compileH(item, base, step, hasStep, k, pos, jobKey)
	}
	loText, hiText, isRange := strings.Cut(base, "-")
	if strings.Contains(hiText, "-") {
		return fail("%q has more than one '-'; write a range as start-end", item)
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
				return fail("range %q goes backwards; wrap-around ranges are not supported, write e.g. FRI-SAT,SUN or 0,5-6", base)
			}
			return fail("range %q goes backwards; write it as %d-%d", base, hi, lo)
		}
	} else if hasStep {
		hi = k.starMax // "N/step" means N to the end of the field
		if lo > hi {
			return fail("%q starts after the end of the field (%d)", item, k.starMax)
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

func (k fieldKind) cycleName() string {
	switch k.index {
	case 0:
		return "minute"
	case 1:
		return "hour"
	case 2:
		return "day"
	case 3:
		return "month"
	case 4:
		return "year"
	default:
		return "week"
	}
}

// compileH resolves H, H(a-b), H/n and H(a-b)/n to plain numbers.
func compileH(item, base string, step int, hasStep bool, k fieldKind, pos int, jobKey string) (resolved, robfig string, err error) {
	fail := func(format string, args ...any) (string, string, error) {
		return "", "", &ValidationError{Field: pos, Name: k.name, Value: item, Msg: fmt.Sprintf(format, args...)}
	}
	lo, hi := k.hMin, k.hMax
	if rest := base[1:]; rest != "" {
		inner, ok := strings.CutPrefix(rest, "(")
		if ok {
			inner, ok = strings.CutSuffix(inner, ")")
		}
		a, b, isRange := strings.Cut(inner, "-")
		if !ok || !isRange {
			return fail("malformed H %q; write H, H(a-b), H/n or H(a-b)/n", item)
		}
		var err error
		if lo, err = parseValue(a, item, k, pos); err != nil {
			return "", "", err
		}
		if hi, err = parseValue(b, item, k, pos); err != nil {
			return "", "", err
		}
		if k.index == 5 && (lo == 7 || hi == 7) {
			return fail("%q: use 0 for Sunday inside H(a-b)", item)
		}
		if lo > hi {
			return fail("H range %q goes backwards; write H(%d-%d)", base, hi, lo)
		}
	}
	if jobKey == "" {
		return fail("H needs the job's identity to pick a stable value; set the job key (e.g. \"app/name\")")
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
	fail := func(format string, args ...any) (int, error) {
		return 0, &ValidationError{Field: pos, Name: k.name, Value: item, Msg: fmt.Sprintf(format, args...)}
	}
	if s == "" {
		return fail("%q is missing a number", item)
	}
	if n, ok := parseNumber(s); ok {
		if n < k.min || n > k.max {
			return fail("%d is outside %d-%d", n, k.min, k.max)
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
		return fail("%q: business days (BD3, BDL, BD-2) are only allowed in the day-of-month field", item)
	}
	if isQuartzToken(up) {
		return fail("%q uses a Quartz extension (L, W or #) that is not supported; use plain values, ranges, lists and steps", item)
	}
	if allDigits(s) {
		return fail("%s is outside %d-%d", s, k.min, k.max)
	}
	return fail("%q is not a number%s", s, k.nameHelp)
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

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
