package records_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	_ "modernc.org/sqlite" // the "sqlite" driver

	"github.com/shardjob/shardjob/sdk"
	"github.com/shardjob/shardjob/sdk/records"
)

// Transactional mode: the handler writes its effect (a ledger row) through
// rec.Tx, the transaction that also marks the record done, so each record is
// applied exactly once — through retries of the slot and a replaced attempt
// that wakes up late.
func Example_transactional() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "records-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "billing.db")+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer db.Close()
	if _, err := db.Exec("CREATE TABLE ledger (invoice TEXT NOT NULL, amount INTEGER NOT NULL)"); err != nil {
		fmt.Println(err)
		return
	}

	p, err := records.New(records.Config{
		DB:      db,
		Dialect: records.DialectSQLite,
		Mode:    records.Transactional,
		Logger:  slog.New(slog.DiscardHandler),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := p.EnsureSchema(ctx); err != nil { // shard_lock, dedup_record
		fmt.Println(err)
		return
	}

	bill := func(ctx context.Context, rec records.Record) error {
		_, err := rec.Tx.ExecContext(ctx, "INSERT INTO ledger (invoice, amount) VALUES (?, 100)", rec.Key)
		return err
	}

	// In a handler the executor passes the task; here: slot 0 of run 1001
	// of job 42, attempt 1 (token 1), invoices 1 to 1000.
	first := &sdk.Task{JobID: 42, RunID: 1001, Slot: 0, SlotCount: 1, Token: 1, Attempt: 1}
	res, err := p.Process(ctx, first, records.IDRangeSource(first.IDRange(1, 1000)), bill)
	fmt.Printf("attempt 1: processed %d, skipped %d, err %v\n", res.Processed, res.Skipped, err)

	// The slot runs again (a retry, a duplicate dispatch): newer token, same run.
	second := &sdk.Task{JobID: 42, RunID: 1001, Slot: 0, SlotCount: 1, Token: 2, Attempt: 2}
	res, err = p.Process(ctx, second, records.IDRangeSource(second.IDRange(1, 1000)), bill)
	fmt.Printf("attempt 2: processed %d, skipped %d, err %v\n", res.Processed, res.Skipped, err)

	// Attempt 1 wakes up late (it was paused, presumed dead): fenced off.
	_, err = p.Process(ctx, first, records.IDRangeSource(1, 1000), bill)
	fmt.Println("attempt 1 again, fenced:", errors.Is(err, records.ErrFenced))

	var rows int
	if err := db.QueryRow("SELECT COUNT(*) FROM ledger").Scan(&rows); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("ledger rows:", rows)
	// Output:
	// attempt 1: processed 1000, skipped 0, err <nil>
	// attempt 2: processed 0, skipped 1000, err <nil>
	// attempt 1 again, fenced: true
	// ledger rows: 1000
}

// External mode: the effect is a call to another system, which deduplicates
// on rec.IdempotencyKey. A record left pending by a crash is retried
// (policy Retry: at least once) with rec.Uncertain set.
func Example_external() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "records-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "mail.db")+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer db.Close()

	p, err := records.New(records.Config{
		DB:        db,
		Dialect:   records.DialectSQLite,
		Mode:      records.External,
		Uncertain: records.Retry,
		Scope:     records.ScopeJob, // each customer is mailed once, across all runs
		Logger:    slog.New(slog.DiscardHandler),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := p.EnsureSchema(ctx); err != nil {
		fmt.Println(err)
		return
	}
	send := func(ctx context.Context, rec records.Record) error {
		// mailer.Send(ctx, rec.Key, mailer.IdempotencyKey(rec.IdempotencyKey))
		if rec.Key == "customer-2" {
			fmt.Println("idempotency key:", rec.IdempotencyKey)
		}
		return nil
	}
	task := &sdk.Task{JobID: 7, RunID: 1, Slot: 0, SlotCount: 1, Token: 1, Attempt: 1}
	res, err := p.Process(ctx, task, records.KeysOf([]string{"customer-1", "customer-2"}), send)
	fmt.Println("run 1: processed", res.Processed, "err", err)

	next := &sdk.Task{JobID: 7, RunID: 2, Slot: 0, SlotCount: 1, Token: 2, Attempt: 1}
	res, err = p.Process(ctx, next, records.KeysOf([]string{"customer-2", "customer-3"}), send)
	fmt.Println("run 2: processed", res.Processed, "skipped", res.Skipped, "err", err)
	// Output:
	// idempotency key: 7|job|customer-2
	// run 1: processed 2 err <nil>
	// run 2: processed 1 skipped 1 err <nil>
}
