package calendar

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/msg"
)

// TestErrorsAreCodes: the refusals of a definition, a policy, a date and a
// week are message codes of the catalog (nested ones too) rendering the
// error's English (which the other tests of this package check), so that
// the console can show them in the reader's language.
func TestErrorsAreCodes(t *testing.T) {
	t.Parallel()
	def := func(entries ...Entry) error { return Definition{Name: "cn", Entries: entries}.Validate() }
	week := func(s string) error { _, err := ParseWeek(s); return err }
	date := func(s string) error { _, err := ParseDate(s); return err }
	for name, err := range map[string]error{
		"name required": Definition{}.Validate(),
		"name long":     Definition{Name: strings.Repeat("n", MaxCalendarNameLen+1)}.Validate(),
		"name chars":    Definition{Name: "a b"}.Validate(),
		"week bits":     Definition{Name: "cn", Week: 1 << 7}.Validate(),
		"too many":      Definition{Name: "cn", Entries: make([]Entry, MaxEntries+1)}.Validate(),
		"bad day":       def(Entry{Date: d(2026, 2, 30), Kind: KindHoliday}),
		"bad month":     def(Entry{Date: d(2026, 13, 1), Kind: KindHoliday}),
		"bad year":      def(Entry{Date: d(0, 1, 1), Kind: KindHoliday}),
		"bad kind":      def(Entry{Date: d(2026, 2, 3), Kind: "off"}),
		"name control":  def(Entry{Date: d(2026, 2, 3), Kind: KindHoliday, Name: "a\nb"}),
		"name space":    def(Entry{Date: d(2026, 2, 3), Kind: KindHoliday, Name: " a"}),
		"name utf8":     def(Entry{Date: d(2026, 2, 3), Kind: KindHoliday, Name: "\xff"}),
		"day name long": def(Entry{Date: d(2026, 2, 3), Kind: KindHoliday, Name: strings.Repeat("n", MaxNameBytes+1)}),
		"both":          def(Entry{Date: d(2026, 2, 14), Kind: KindWorkday, Name: "make-up"}, Entry{Date: d(2026, 2, 14), Kind: KindHoliday}),
		"twice":         def(Entry{Date: d(2026, 1, 1), Kind: KindWorkday}, Entry{Date: d(2026, 1, 1), Kind: KindWorkday}),
		"shift only":    Policy{Rule: RuleSkipHolidays, Shift: ShiftNext}.Validate(),
		"shift bad":     Policy{Rule: RuleShift, Shift: "up"}.Validate(),
		"rule bad":      Policy{Rule: "x"}.Validate(),
		"week name":     week("MON-FUN"),
		"week backward": week("FRI-MON"),
		"date format":   date("2026-1-01"),
		"date invalid":  date("2026-02-29"),
	} {
		require.Error(t, err, name)
		m := msg.Of(err)
		require.NotEqual(t, msg.Text, m.Code, name)
		require.Equal(t, err.Error(), m.String(), "%s: the code renders the error's English", name)
		var walk func(where string, m msg.Msg)
		walk = func(where string, m msg.Msg) {
			_, ok := msg.Catalog[m.Code]
			require.True(t, ok, "%s: code %q in the catalog", where, m.Code)
			for k, a := range m.Args {
				if nested, ok := a.(msg.Msg); ok {
					walk(where+"."+k, nested)
				}
			}
		}
		walk(name, m)
	}
}
