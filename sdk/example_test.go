package sdk_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/shardjob/shardjob/sdk"
)

// An executor for the app "billing" with one handler. New checks the
// configuration and touches no network; Start does.
func ExampleNew() {
	exec, err := sdk.New(sdk.Config{
		App:    "billing",
		Admins: []string{"http://127.0.0.1:8080"},
		Secret: "0123456789abcdef0123456789abcdef", // in production: from a secret store
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	exec.Handle("invoice-batch", func(ctx context.Context, t *sdk.Task) error {
		lo, hi := t.IDRange(1, 1_000_000) // this slot's invoices
		t.Logger.Info("billing invoices", "from", lo, "to", hi)
		for id := lo; id <= hi; id++ {
			if err := ctx.Err(); err != nil {
				return err // cancelled, timed out, or the executor is stopping
			}
			// … bill invoice id, fenced by t.Token …
			t.AddProcessed(1)
			t.Progress(id-lo+1, hi-lo+1)
		}
		return nil
	})
	fmt.Println("ready to Start")
	// Output: ready to Start
}

// A handler tells the admin how its slot failed: Permanent for a failure
// that no retry can fix, RetryAfter for a "come back later" (docs/failures.md).
// Any other error is retried as the job's retry_max and backoff allow.
func ExamplePermanent() {
	charge := func(account string) error {
		switch account {
		case "closed":
			return errors.New("account is closed")
		case "busy":
			return errors.New("bank answered 429")
		}
		return nil
	}
	handler := func(ctx context.Context, t *sdk.Task) error {
		account := t.Params
		err := charge(account)
		switch {
		case err == nil:
			return nil
		case account == "closed":
			return sdk.Permanent(fmt.Errorf("charge %s: %w", account, err)) // no retry
		case account == "busy":
			return sdk.RetryAfter(err, 30*time.Second) // not before 30 s
		}
		return err // retryable
	}
	_ = handler
	var pe *sdk.PermanentError
	fmt.Println(errors.As(fmt.Errorf("slot 3: %w", sdk.Permanent(errors.New("account is closed"))), &pe))
	// Output: true
}

// Configuration errors name the field and the fix.
func ExampleConfig_Validate() {
	err := sdk.Config{App: "billing", Admins: []string{"http://127.0.0.1:8080"}, Secret: "changeme"}.Validate()
	fmt.Println(errors.Is(err, sdk.ErrInvalidConfig))
	fmt.Println(err)
	// Output:
	// true
	// invalid shardjob executor config: Secret: must be at least 16 characters (got 8): use the secret the admin was started with (there is no default)
}

// A record key always maps to the same slot: FNV-1a 32 modulo the slot count.
func ExampleSlotOf() {
	for _, key := range []string{"customer:1001", "order-42", "foobar"} {
		fmt.Println(key, "→ slot", sdk.SlotOf(key, 16))
	}
	// Output:
	// customer:1001 → slot 11
	// order-42 → slot 4
	// foobar → slot 8
}

// Ten IDs over three slots: contiguous parts, sizes within one of each
// other; with more slots than IDs the surplus slots get the empty range.
func ExampleIDRange() {
	for slot := range 3 {
		lo, hi := sdk.IDRange(slot, 3, 1, 10)
		fmt.Printf("slot %d: [%d, %d]\n", slot, lo, hi)
	}
	lo, hi := sdk.IDRange(3, 4, 1, 3)
	fmt.Println("slot 3 of 4 over [1, 3] is empty:", lo > hi)
	// Output:
	// slot 0: [1, 4]
	// slot 1: [5, 7]
	// slot 2: [8, 10]
	// slot 3 of 4 over [1, 3] is empty: true
}

// A handler that processes only the records its slot owns.
func ExampleTask_Owns() {
	t := &sdk.Task{Slot: 11, SlotCount: 16}
	for _, customer := range []string{"customer:1001", "customer:1002", "order-42"} {
		if t.Owns(customer) {
			fmt.Println("slot 11 processes", customer)
		}
	}
	// Output: slot 11 processes customer:1001
}

// The whole lifecycle in a service's main: start, run until SIGTERM, drain.
// (Not run: it needs an admin.)
func Example_lifecycle() {
	exec, err := sdk.New(sdk.Config{
		App:          "billing",
		Admins:       []string{"http://admin-1:8080", "http://admin-2:8080"},
		Secret:       os.Getenv("SHARDJOB_SECRET"),
		ListenAddr:   ":9090",
		AdvertiseURL: "http://10.0.0.5:9090",
		Capacity:     8,
		Version:      "billing v2.3.0",
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	exec.Handle("invoice-batch", func(ctx context.Context, t *sdk.Task) error { return nil })

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	if err := exec.Start(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer stop()
	<-ctx.Done()
	// DrainTimeout (30s) for running slots, up to 30s more for results.
	stopCtx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if err := exec.Stop(stopCtx); err != nil {
		fmt.Fprintln(os.Stderr, "stop:", err)
	}
}
