package demo

import (
	"context"
	"fmt"
	"time"

	"github.com/shardjob/shardjob/sdk"
)

// Range parameter defaults.
const (
	DefaultRangeRecords     = 1000
	DefaultRangeMSPerRecord = 0
)

// Range processes its slot's part of the record IDs 1..records, the way a
// batch handler walks `WHERE id BETWEEN lo AND hi`: params
// "records=N;ms_per_record=M" (defaults 1000 and 0). The slot's part is
// Task.IDRange(1, N); every record takes M milliseconds and counts as
// processed (Task.AddProcessed), and progress is reported as it goes.
//
// When its context ends it stops at once, logs "slot context cancelled"
// (the task's logger carries the token) with the cause and the records
// done so far, and returns ctx.Err(). A slot that finished logs one line
//
//	range slot=S lo=L hi=H token=T
//
// with lo > hi (0 and -1) when the slot owns no record (more slots than
// records). Tests read these lines to check that the slots of a run
// covered every record exactly once.
func Range(ctx context.Context, t *sdk.Task) error {
	records, err := intParam(t.Params, "records", DefaultRangeRecords)
	if err != nil {
		return err
	}
	ms, err := intParam(t.Params, "ms_per_record", DefaultRangeMSPerRecord)
	if err != nil {
		return err
	}
	if ms > int64(time.Hour/time.Millisecond) {
		return fmt.Errorf("param ms_per_record=%d: at most %d (one hour)", ms, time.Hour/time.Millisecond)
	}
	perRecord := time.Duration(ms) * time.Millisecond
	lo, hi := t.IDRange(1, records)
	var total int64
	if lo <= hi {
		total = hi - lo + 1
	}
	t.Progress(0, total)

	var timer *time.Timer
	if perRecord > 0 {
		timer = time.NewTimer(perRecord)
		defer timer.Stop()
	}
	// Count rather than walk the IDs: the loop must end even when hi is
	// math.MaxInt64.
	for done := int64(0); done < total; done++ {
		if timer != nil {
			if done > 0 {
				timer.Reset(perRecord)
			}
			select {
			case <-ctx.Done():
				return rangeCancelled(ctx, t, done)
			case <-timer.C:
			}
		} else if ctx.Err() != nil {
			return rangeCancelled(ctx, t, done)
		}
		t.AddProcessed(1)
		t.Progress(done+1, total)
	}
	t.Logger.Info(fmt.Sprintf("range slot=%d lo=%d hi=%d token=%d", t.Slot, lo, hi, t.Token),
		"records", total)
	return nil
}

func rangeCancelled(ctx context.Context, t *sdk.Task, done int64) error {
	t.Logger.Warn("slot context cancelled", "cause", context.Cause(ctx), "records_done", done)
	return ctx.Err()
}
