// Package demo holds the demonstration handlers of the ready-made executor
// and of standalone mode. They do no harm: they log, count and wait.
//
//   - demo.hello: logs its slot, reports the slot's records as processed
//     (params "records=N", default 100) and succeeds.
//   - demo.sleep: sleeps params "ms=N" (default 100) per slot, honouring
//     cancellation.
//   - demo.fail: fails every slot whose number is in params "slots=1,3"
//     (all slots when empty), succeeds the others; "fail_attempts=N": those
//     slots fail their first N attempts only; "permanent=0,2": these slots
//     fail permanently (sdk.Permanent: no retry, docs/failures.md).
//   - demo.range: processes its slot's part of the record IDs 1..N, params
//     "records=N;ms_per_record=M", honouring cancellation (see Range).
//   - demo.noop: returns at once, logs nothing and reports no records; the
//     handler of the herd benchmarks (admin/e2e), which measure the
//     platform's own cost per run.
//   - demo.sum: adds its JSON params' "add" to the sums its workflow
//     parents returned and returns the total as its result (see Sum).
package demo

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/shardjob/shardjob/sdk"
)

// Register adds the demo handlers to an executor.
func Register(e *sdk.Executor) {
	e.Handle("demo.hello", Hello)
	e.Handle("demo.sleep", Sleep)
	e.Handle("demo.fail", Fail)
	e.Handle("demo.range", Range)
	e.Handle("demo.noop", Noop)
	e.Handle(SumHandler, Sum)
}

// param reads key=value pairs separated by ';', '&' or spaces ("a=1;b=2",
// "a=1&b=2", "a=1 b=2"); a comma belongs to the value ("slots=1,3").
func param(params, key string) (string, bool) {
	for _, kv := range strings.FieldsFunc(params, func(r rune) bool { return r == ';' || r == '&' || r == ' ' }) {
		if k, v, ok := strings.Cut(kv, "="); ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v), true
		}
	}
	return "", false
}

func intParam(params, key string, def int64) (int64, error) {
	v, ok := param(params, key)
	if !ok {
		return def, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("param %s=%q: want a non-negative integer", key, v)
	}
	return n, nil
}

// Hello logs and reports records processed.
func Hello(ctx context.Context, t *sdk.Task) error {
	n, err := intParam(t.Params, "records", 100)
	if err != nil {
		return err
	}
	t.Logger.Info("hello from slot", "slot", t.Slot, "total", t.SlotCount, "slot_param", t.SlotParam)
	t.AddProcessed(n)
	return ctx.Err()
}

// Noop does nothing: it returns nil at once, without logging or counting
// records, so that a run of it costs only what the platform spends on it.
func Noop(context.Context, *sdk.Task) error { return nil }

// Sleep waits, honouring cancellation.
func Sleep(ctx context.Context, t *sdk.Task) error {
	ms, err := intParam(t.Params, "ms", 100)
	if err != nil {
		return err
	}
	timer := time.NewTimer(time.Duration(ms) * time.Millisecond)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		t.AddProcessed(1)
		return nil
	}
}

// Fail fails the listed slots: permanently those in "permanent", the
// others in "slots" (all when empty) retryably, for their first
// "fail_attempts" attempts (every attempt when 0 or absent).
func Fail(_ context.Context, t *sdk.Task) error {
	if v, ok := param(t.Params, "permanent"); ok && listed(v, t.Slot) {
		return sdk.Permanent(fmt.Errorf("demo.fail: slot %d fails permanently on purpose", t.Slot))
	}
	upTo, err := intParam(t.Params, "fail_attempts", 0)
	if err != nil {
		return sdk.Permanent(err)
	}
	if upTo > 0 && int64(t.Attempt) > upTo {
		return nil
	}
	v, _ := param(t.Params, "slots")
	if v == "" || listed(v, t.Slot) {
		return fmt.Errorf("demo.fail: slot %d fails on purpose", t.Slot)
	}
	return nil
}

// listed reports whether slot is in the comma-separated list v.
func listed(v string, slot int) bool {
	for _, s := range strings.Split(v, ",") {
		if n, err := strconv.Atoi(strings.TrimSpace(s)); err == nil && n == slot {
			return true
		}
	}
	return false
}
