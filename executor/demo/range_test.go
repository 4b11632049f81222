package demo_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/deploy/dev/testenv"
	"github.com/shardjob/shardjob/executor/demo"
	"github.com/shardjob/shardjob/sdk"
)

// task returns a task for slot of total, with a logger tagged like the
// SDK's (slot and token) writing to out.
func task(slot, total int, params string, out *testenv.Buffer) *sdk.Task {
	token := int64(1000 + slot)
	log := slog.New(slog.NewTextHandler(out, nil)).With("slot", slot, "token", token)
	return &sdk.Task{RunID: 1, Slot: slot, SlotCount: total, Params: params, Token: token, Attempt: 1, Logger: log}
}

var rangeLineRE = regexp.MustCompile(`range slot=(\d+) lo=(-?\d+) hi=(-?\d+) token=(\d+)`)

func TestRangeSlotsCoverEveryRecordOnce(t *testing.T) {
	cases := []struct {
		records, slots int
	}{
		{10, 4},    // uneven parts: 3,3,2,2
		{2, 5},     // more slots than records: three slots own nothing
		{1024, 1},  // one slot owns everything
		{0, 3},     // no record at all
		{4096, 64}, // even parts
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("records=%d/slots=%d", tc.records, tc.slots), func(t *testing.T) {
			params := fmt.Sprintf("records=%d;ms_per_record=0", tc.records)
			seen := make([]int, tc.records+1) // seen[id] = how many slots processed record id
			var sum int64
			for slot := range tc.slots {
				var out testenv.Buffer
				tk := task(slot, tc.slots, params, &out)
				require.NoError(t, demo.Range(context.Background(), tk))

				m := rangeLineRE.FindStringSubmatch(out.String())
				require.NotNil(t, m, "one range line per finished slot: %s", out.String())
				require.Equal(t, strconv.Itoa(slot), m[1])
				require.Equal(t, strconv.FormatInt(tk.Token, 10), m[4])
				lo, _ := strconv.ParseInt(m[2], 10, 64)
				hi, _ := strconv.ParseInt(m[3], 10, 64)
				wantLo, wantHi := sdk.IDRange(slot, tc.slots, 1, int64(tc.records))
				require.Equal(t, [2]int64{wantLo, wantHi}, [2]int64{lo, hi}, "the slot's part is IDRange(1, records)")

				processed, skipped, failed, uncertain := tk.Counts()
				require.Zero(t, skipped+failed+uncertain)
				if lo > hi {
					require.Zero(t, processed, "a slot without records processes none")
					continue
				}
				require.Equal(t, hi-lo+1, processed, "one AddProcessed per record")
				for id := lo; id <= hi; id++ {
					seen[id]++
				}
				sum += processed
			}
			require.Equal(t, int64(tc.records), sum)
			for id := 1; id <= tc.records; id++ {
				require.Equal(t, 1, seen[id], "record %d", id)
			}
		})
	}
}

func TestRangeSleepsPerRecord(t *testing.T) {
	var out testenv.Buffer
	tk := task(0, 1, "records=5;ms_per_record=20", &out)
	start := time.Now()
	require.NoError(t, demo.Range(context.Background(), tk))
	require.GreaterOrEqual(t, time.Since(start), 5*20*time.Millisecond, "5 records at 20ms each")
	processed, _, _, _ := tk.Counts()
	require.Equal(t, int64(5), processed)
}

// cancelAfter is a context that cancels itself, with cause, the n-th time
// the handler looks at it (Done or Err): a deterministic "cancelled in the
// middle of the slot", without timing.
type cancelAfter struct {
	context.Context
	cancel context.CancelCauseFunc
	cause  error
	left   atomic.Int64
}

func newCancelAfter(n int64, cause error) *cancelAfter {
	ctx, cancel := context.WithCancelCause(context.Background())
	c := &cancelAfter{Context: ctx, cancel: cancel, cause: cause}
	c.left.Store(n)
	return c
}

func (c *cancelAfter) look() {
	if c.left.Add(-1) == 0 {
		c.cancel(c.cause)
	}
}

func (c *cancelAfter) Done() <-chan struct{} { c.look(); return c.Context.Done() }
func (c *cancelAfter) Err() error            { c.look(); return c.Context.Err() }

func TestRangeStopsWhenItsContextIsCancelled(t *testing.T) {
	for _, params := range []string{
		"records=1000;ms_per_record=1",          // cancelled while waiting for a record
		"records=1000000000000;ms_per_record=0", // cancelled between records
	} {
		t.Run(params, func(t *testing.T) {
			var out testenv.Buffer
			tk := task(3, 4, params, &out)
			ctx := newCancelAfter(10, errors.New("cancelled by admin: test"))
			err := demo.Range(ctx, tk)
			require.ErrorIs(t, err, context.Canceled, "returns ctx.Err()")
			processed, _, _, _ := tk.Counts()
			require.GreaterOrEqual(t, processed, int64(9), "records before the cancellation count")
			require.LessOrEqual(t, processed, int64(10), "stops at the cancellation")
			log := out.String()
			require.Contains(t, log, "slot context cancelled")
			require.Contains(t, log, "token=1003", "the cancelled line carries the token")
			require.Contains(t, log, "cancelled by admin: test", "and the cause")
			require.NotContains(t, log, "range slot=", "no finished line for a cancelled slot")
		})
	}
	t.Run("cancelled before the start", func(t *testing.T) {
		var out testenv.Buffer
		tk := task(0, 1, "records=10;ms_per_record=3600000", &out)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		require.ErrorIs(t, demo.Range(ctx, tk), context.Canceled)
		processed, _, _, _ := tk.Counts()
		require.Zero(t, processed)
		require.Contains(t, out.String(), "slot context cancelled")
	})
}

func TestRangeRejectsBadParams(t *testing.T) {
	for _, params := range []string{"records=x", "records=-1", "ms_per_record=1.5", "ms_per_record=-2", "ms_per_record=99999999999"} {
		var out testenv.Buffer
		err := demo.Range(context.Background(), task(0, 1, params, &out))
		require.Error(t, err, params)
	}
	var out testenv.Buffer
	tk := task(0, 1, "", &out)
	require.NoError(t, demo.Range(context.Background(), tk), "defaults")
	processed, _, _, _ := tk.Counts()
	require.Equal(t, int64(demo.DefaultRangeRecords), processed)
}

func TestRegisterAddsRange(t *testing.T) {
	ex, err := sdk.New(sdk.Config{App: "demo", Admins: []string{"http://127.0.0.1:1"}, Secret: "0123456789abcdef0123456789abcdef"})
	require.NoError(t, err)
	demo.Register(ex)
	// Handle panics on a name that is taken: demo.range is registered.
	require.Panics(t, func() { ex.Handle("demo.range", demo.Range) })
}
