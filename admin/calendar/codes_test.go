package calendar

import (
	"encoding/json"
	"errors"
	"os"
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
		require.NoError(t, catalogCodes(m, nil), name)
	}
}

// catalogCodes returns an error unless m and its nested messages have
// templates in the catalog, and records their codes in seen (if not nil).
func catalogCodes(m msg.Msg, seen map[msg.Code]bool) error {
	if _, ok := msg.Catalog[m.Code]; !ok {
		return errors.New("code " + string(m.Code) + " is not in the catalog")
	}
	if seen != nil {
		seen[m.Code] = true
	}
	for k, a := range m.Args {
		if nested, ok := a.(msg.Msg); ok {
			if err := catalogCodes(nested, seen); err != nil {
				return errors.New(k + ": " + err.Error())
			}
		}
	}
	return nil
}

// TestImportErrorsAreCodes: every refusal of a calendar file is a message
// code of the catalog (import.line or import.whole around the reason,
// nested ones too) rendering exactly the English the API answered before
// codes existed (testdata/import_errors_en.json, written by the code before
// this change); between them the cases meet every import.* code.
func TestImportErrorsAreCodes(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("testdata/import_errors_en.json")
	require.NoError(t, err)
	var golden map[string]string
	require.NoError(t, json.Unmarshal(b, &golden))
	cases := importCases()
	require.Len(t, golden, len(cases), "a golden text for every case")
	seen := map[msg.Code]bool{}
	for _, c := range cases {
		err := parseImport(c)
		require.EqualError(t, err, golden[c.name], "%s: the English is unchanged", c.name)
		var ie *ImportError
		require.ErrorAs(t, err, &ie, c.name)
		require.Equal(t, ie.Msg, ie.Reason.String(), c.name)
		m := msg.Of(err)
		require.Contains(t, []msg.Code{msg.ImportLine, msg.ImportWhole}, m.Code, c.name)
		require.NoError(t, catalogCodes(m, seen), c.name)
		require.Equal(t, golden[c.name], m.String(), "%s: the code renders the English", c.name)
		var back msg.Msg // as the API sends it and the console reads it
		require.NoError(t, back.Scan(m.Stored()), c.name)
		require.Equal(t, golden[c.name], back.String(), "%s: read back from JSON", c.name)
	}
	var unmet []msg.Code
	for code := range msg.Catalog {
		if strings.HasPrefix(string(code), "import.") && !seen[code] {
			unmet = append(unmet, code)
		}
	}
	require.Empty(t, unmet, "import codes no case meets")
}
