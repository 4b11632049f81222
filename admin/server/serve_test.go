package server

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/shardjob/shardjob/admin/utilization"
	"github.com/shardjob/shardjob/sdk/protocol"
)

// TestServeStartsAndStopsRepeatedly starts a replica (SQLite, the
// in-process coordinator) and stops it, again and again: half of the
// times at once, half of the times once a leadership term runs (its
// first utilization sample was taken). Serve returns nil each time, and
// no goroutine of any of its loops — HTTP server, watchdog, XXL-JOB
// prober, election, the leader's duties — is left behind (goleak; run it
// with -race).
func TestServeStartsAndStopsRepeatedly(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	dsn := filepath.Join(t.TempDir(), "shardjob.db")
	for i := range 8 {
		sampled := make(chan struct{}, 1)
		s, err := New(context.Background(), Config{
			ID: "stress", HTTPAddr: "127.0.0.1:0", DBDriver: "sqlite", DBDSN: dsn,
			ExecutorSecret: protocol.NewSecret(), Out: io.Discard, Logger: slog.New(slog.DiscardHandler),
			Utilization: utilization.Config{OnSample: func(int64, error) {
				select {
				case sampled <- struct{}{}:
				default:
				}
			}},
		})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		served := make(chan error, 1)
		go func() { served <- s.Serve(ctx) }()
		if i%2 == 1 {
			<-sampled // a term runs: stop while leading
		}
		cancel()
		require.NoError(t, <-served, "round %d", i)
	}
}
