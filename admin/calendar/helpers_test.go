package calendar

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// d builds a date for tests: d(2026, 2, 14).
func d(y, m, day int) Date { return Date{Year: y, Month: time.Month(m), Day: day} }

// china2026 loads testdata/cn-2026.csv into a calendar named cn.
func china2026(t testing.TB) *Calendar {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "cn-2026.csv"))
	require.NoError(t, err)
	entries, err := ParseCSV(data)
	require.NoError(t, err)
	c, err := New(Definition{Name: "cn", Entries: entries})
	require.NoError(t, err)
	return c
}

func mustNew(t testing.TB, def Definition) *Calendar {
	t.Helper()
	c, err := New(def)
	require.NoError(t, err)
	return c
}

func mustZone(t testing.TB, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	require.NoError(t, err)
	return loc
}

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}
