package storetest

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/calendar"
	"github.com/shardjob/shardjob/admin/store"
)

// ChinaCSV is admin/calendar's fixture of mainland China's 2026 holidays
// and make-up working days, in its CSV format.
func ChinaCSV(t testing.TB) []byte {
	t.Helper()
	_, here, _, ok := runtime.Caller(0)
	require.True(t, ok)
	data, err := os.ReadFile(filepath.Join(filepath.Dir(here), "..", "..", "calendar", "testdata", "cn-2026.csv"))
	require.NoError(t, err)
	return data
}

// CreateCalendar stores a global calendar named name (Monday to Friday)
// with the days of csv (admin/calendar's CSV format) and returns its row as
// read back.
func CreateCalendar(t testing.TB, st *store.Store, name string, csv []byte) store.Calendar {
	t.Helper()
	entries, err := calendar.ParseCSV(csv)
	require.NoError(t, err)
	cal, err := calendar.New(calendar.Definition{Name: name, Entries: entries})
	require.NoError(t, err)
	row := store.Calendar{Name: name, Week: cal.Week().String(), Days: string(cal.ExportCSV()), Version: cal.Version(), Revision: 1}
	row.ID, err = st.CreateCalendar(context.Background(), row)
	require.NoError(t, err)
	row, err = st.Calendar(context.Background(), row.ID)
	require.NoError(t, err)
	return row
}
