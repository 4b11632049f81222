package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParseAndWrite(t *testing.T) {
	t.Parallel()
	in := `goos: linux
pkg: github.com/shardjob/shardjob/admin/schedule
BenchmarkNext/ny-2   	 5000000	       212.5 ns/op	       0 B/op	       0 allocs/op
BenchmarkFire-2   	 10	 1000 ns/op	 12000 firings/s
PASS
`
	rows, err := parse(strings.NewReader(in))
	require.NoError(t, err)
	require.Len(t, rows, 2)
	require.Equal(t, "BenchmarkNext/ny", rows[0].name)
	require.Equal(t, "admin/schedule", rows[0].pkg)
	var out bytes.Buffer
	write(&out, rows, time.Unix(0, 0))
	require.Contains(t, out.String(), "| admin/schedule | Next/ny | 212.5 | 0 | 0 |  |")
	require.Contains(t, out.String(), "12000 firings/s")
	require.Contains(t, out.String(), "cores")
}
