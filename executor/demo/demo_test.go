package demo_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/executor/demo"
	"github.com/shardjob/shardjob/sdk"
)

func TestNoopReturnsAtOnceSilently(t *testing.T) {
	var out syncBuffer
	tk := task(3, 8, "records=5", &out)
	require.NoError(t, demo.Noop(context.Background(), tk))
	processed, skipped, failed, uncertain := tk.Counts()
	require.Zero(t, processed+skipped+failed+uncertain, "no records reported")
	require.Empty(t, out.String(), "nothing logged")

	// It does not look at its context either: a cancelled slot that
	// reached the handler still ends without an error.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.NoError(t, demo.Noop(ctx, tk))
}

func TestRegisterAddsNoop(t *testing.T) {
	ex, err := sdk.New(sdk.Config{App: "demo", Admins: []string{"http://127.0.0.1:1"}, Secret: "0123456789abcdef0123456789abcdef"})
	require.NoError(t, err)
	demo.Register(ex)
	// Handle panics on a name that is taken: demo.noop is registered.
	require.Panics(t, func() { ex.Handle("demo.noop", demo.Noop) })
}
