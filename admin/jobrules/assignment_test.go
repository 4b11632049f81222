package jobrules

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParseSlotParams(t *testing.T) {
	t.Parallel()
	m, err := ParseSlotParams("0=Beijing, 1=Shanghai", 2)
	require.NoError(t, err)
	require.Equal(t, map[int]string{0: "Beijing", 1: "Shanghai"}, m)
	for _, bad := range []string{"x", "2=a", "0=a,0=b", "-1=a"} {
		_, err := ParseSlotParams(bad, 2)
		require.Error(t, err, bad)
	}
}

func FuzzParseSlotParams(f *testing.F) {
	f.Add("0=a,1=b", 4)
	f.Add("=,=", 1)
	f.Fuzz(func(t *testing.T, s string, slots int) {
		if slots < 0 || slots > 1024 {
			return
		}
		m, err := ParseSlotParams(s, slots)
		if err == nil {
			for k := range m {
				require.True(t, k >= 0 && k < max(slots, 1))
			}
		}
	})
}

func TestResolveDedupScope(t *testing.T) {
	t.Parallel()
	// 2026-11-30 23:30 UTC is already 1 December in Shanghai (UTC+8) and
	// still 30 November in New York.
	at := time.Date(2026, 11, 30, 23, 30, 0, 0, time.UTC).UnixMilli()
	require.Equal(t, "settle:2026-12-01", ResolveDedupScope("settle:{date}", "Asia/Shanghai", at))
	require.Equal(t, "settle:2026-11-30", ResolveDedupScope("settle:{date}", "America/New_York", at))
	require.Equal(t, "m=2026-12/y=2026", ResolveDedupScope("m={month}/y={year}", "Asia/Shanghai", at))
	require.Equal(t, "settle:2026-11-30", ResolveDedupScope("settle:{date}", "No/Such_Zone", at), "an unknown zone falls back to UTC")
	for _, fixed := range []string{"", "run", "job", "batch-7"} {
		require.Equal(t, fixed, ResolveDedupScope(fixed, "Asia/Shanghai", at))
	}
}

func TestResolveDedupScopeOnDate(t *testing.T) {
	t.Parallel()
	require.Equal(t, "settle:2026-12-01", ResolveDedupScopeOnDate("settle:{date}", "2026-12-01"))
	require.Equal(t, "m=2026-12/y=2026", ResolveDedupScopeOnDate("m={month}/y={year}", "2026-12-31"))
	require.Equal(t, "settle:{date}", ResolveDedupScopeOnDate("settle:{date}", ""), "no business date: left for the dispatch")
	for _, fixed := range []string{"", "run", "job", "batch-7"} {
		require.Equal(t, fixed, ResolveDedupScopeOnDate(fixed, "2026-12-01"))
	}
}

func TestScopeBraces(t *testing.T) {
	t.Parallel()
	require.Equal(t, []string{"{date}", "{month}", "{year}"}, ScopePlaceholders())
	braced, bare := ScopeBraces("settle:{date}/{day}")
	require.Equal(t, []string{"{date}", "{day}"}, braced)
	require.Equal(t, "settle:x/x", bare)
	braced, bare = ScopeBraces("batch-7")
	require.Empty(t, braced)
	require.Equal(t, "batch-7", bare)
}
