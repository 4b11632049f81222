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

func TestHerdRows(t *testing.T) {
	t.Parallel()
	// Names ending in a size ("-10k") keep it; a process's output between
	// the name and the results (go test prints them apart) does not lose
	// the row.
	in := `pkg: github.com/shardjob/shardjob/admin/e2e
BenchmarkHerdE2E/batched-10k-2         	       1	52000000000 ns/op	        -3.100 due-created-s	        48.20 due-started-s	        49.90 due-settled-s	      2400 settle-p50-ms	      4800 settle-p99-ms	       200.4 runs/s	         0 http-500s	         0 failed-runs
BenchmarkHerdE2E/per-run-10k-2         	[mysql] 2026/12/01 15:00:00 packets.go:58: unexpected EOF
       1	60000000000 ns/op	         1.000 due-created-s
BenchmarkHerdE2E/one-job-1024-slots-2
some line of output
       1	900000000 ns/op	         12.00 settle-overhead-ms
pkg: github.com/shardjob/shardjob/admin/scheduler
BenchmarkHerdCreate/fixed-5s-2         	       1	37682003310 ns/op	         0 p99-lag-ms
PASS
`
	rows, err := parse(strings.NewReader(in))
	require.NoError(t, err)
	names := []string{}
	for _, r := range rows {
		names = append(names, r.pkg+" "+r.name)
	}
	require.Equal(t, []string{
		"admin/e2e BenchmarkHerdE2E/batched-10k",
		"admin/e2e BenchmarkHerdE2E/per-run-10k",
		"admin/e2e BenchmarkHerdE2E/one-job-1024-slots",
		"admin/scheduler BenchmarkHerdCreate/fixed-5s",
	}, names)
	var out bytes.Buffer
	write(&out, rows, time.Unix(0, 0))
	require.Contains(t, out.String(), "| admin/e2e | HerdE2E/batched-10k | 52000000000 | — | — | -3.100 due-created-s, 48.20 due-started-s, 49.90 due-settled-s, 2400 settle-p50-ms, 4800 settle-p99-ms, 200.4 runs/s, 0 http-500s, 0 failed-runs |")
	require.Contains(t, out.String(), "| admin/e2e | HerdE2E/per-run-10k | 60000000000 | — | — | 1.000 due-created-s |")
	require.Contains(t, out.String(), "| admin/e2e | HerdE2E/one-job-1024-slots | 900000000 | — | — | 12.00 settle-overhead-ms |")

	// Without a -GOMAXPROCS suffix (GOMAXPROCS 1) the size stays.
	require.Equal(t, "BenchmarkHerdE2E/batched-10k", trimProcs("BenchmarkHerdE2E/batched-10k"))
	require.Equal(t, "BenchmarkHerdE2E/batched-10k", trimProcs("BenchmarkHerdE2E/batched-10k-16"))
}
