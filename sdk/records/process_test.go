package records

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/deploy/dev/testenv"
)

var modes = []Mode{Transactional, External}

// handlerFor returns a handler for mode that records its effect (an effect
// row: through the record's transaction in Transactional mode, directly in
// External mode) and counts its calls.
func handlerFor(e *env, mode Mode, token int64, calls *sync.Map) Func {
	return func(ctx context.Context, rec Record) error {
		if calls != nil {
			n, _ := calls.LoadOrStore(rec.Key, new(atomic.Int64))
			n.(*atomic.Int64).Add(1)
		}
		if mode == Transactional {
			_, err := rec.Tx.ExecContext(ctx, "INSERT INTO effect (k, token) VALUES (?, ?)", rec.Key, token)
			return err
		}
		_, err := e.db.ExecContext(ctx, "INSERT INTO effect (k, token) VALUES (?, ?)", rec.Key, token)
		return err
	}
}

func callCount(calls *sync.Map, key string) int64 {
	n, ok := calls.Load(key)
	if !ok {
		return 0
	}
	return n.(*atomic.Int64).Load()
}

func TestProcessAllRecordsOnce(t *testing.T) {
	t.Parallel()
	for _, mode := range modes {
		t.Run(mode.String(), func(t *testing.T) {
			t.Parallel()
			eachDialect(t, func(t *testing.T, e *env) {
				ctx := context.Background()
				p := e.processor(t, Config{Mode: mode, Uncertain: Skip, BatchSize: 100, Concurrency: 4})
				task := newTask(7, 100, 0, 1)
				ks := keys(1050)
				// The Source repeats a key within a batch and one at the end.
				src := append(append([]string{"k00000"}, ks...), "k00001")
				res, err := p.Process(ctx, task, KeysOf(src), handlerFor(e, mode, 1, nil))
				require.NoError(t, err)
				require.NoError(t, res.Err())
				require.Equal(t, int64(1052), res.Read)
				require.Equal(t, int64(1050), res.Processed)
				require.Equal(t, int64(2), res.Skipped, "repeated keys")
				require.Zero(t, res.Failed+res.Exhausted+res.Uncertain)

				processed, skipped, failed, uncertain := task.Counts()
				require.Equal(t, [4]int64{1050, 2, 0, 0}, [4]int64{processed, skipped, failed, uncertain})
				require.Equal(t, map[string]int{"done": 1050}, e.statuses(t, 7, "run:100"))
				eff := e.effects(t)
				require.Len(t, eff, 1050)
				for k, n := range eff {
					require.Equal(t, 1, n, k)
				}
				require.Equal(t, 1, e.count(t, "SELECT COUNT(*) FROM shard_lock WHERE job_id = 7 AND released_at IS NOT NULL"), "released")
				r := e.row(t, 7, "run:100", "k00042")
				require.Equal(t, rowState{Status: "done", Attempts: 1, Token: 1}, r)
			})
		})
	}
}

// A retry of the slot (same run, newer token) skips what is done: nothing
// is processed twice.
func TestRerunSkipsDone(t *testing.T) {
	t.Parallel()
	for _, mode := range modes {
		t.Run(mode.String(), func(t *testing.T) {
			t.Parallel()
			eachDialect(t, func(t *testing.T, e *env) {
				ctx := context.Background()
				p := e.processor(t, Config{Mode: mode, Uncertain: Skip, BatchSize: 64})
				var calls sync.Map
				_, err := p.Process(ctx, newTask(7, 100, 0, 1), IDRangeSource(1, 500), handlerFor(e, mode, 1, &calls))
				require.NoError(t, err)
				// The retry sees 200 more records.
				task := newTask(7, 100, 0, 2)
				res, err := p.Process(ctx, task, IDRangeSource(1, 700), handlerFor(e, mode, 2, &calls))
				require.NoError(t, err)
				require.Equal(t, int64(200), res.Processed)
				require.Equal(t, int64(500), res.Skipped)
				for i := 1; i <= 700; i++ {
					require.Equal(t, int64(1), callCount(&calls, fmt.Sprint(i)), "record %d", i)
				}
				require.Len(t, e.effects(t), 700)
				require.Equal(t, 700, e.count(t, "SELECT COUNT(*) FROM effect"))
				_, skipped, _, _ := task.Counts()
				require.Equal(t, int64(500), skipped)
			})
		})
	}
}

func TestScopes(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		run := func(p *Processor, runID, token int64) Result {
			t.Helper()
			res, err := p.Process(ctx, newTask(7, runID, 0, token), KeysOf(keys(20)), func(context.Context, Record) error { return nil })
			require.NoError(t, err)
			return res
		}
		perRun := e.processor(t, Config{Mode: External, Uncertain: Retry})
		require.Equal(t, int64(20), run(perRun, 1, 1).Processed)
		require.Equal(t, int64(20), run(perRun, 2, 2).Processed, "ScopeRun: the next run processes everything again")
		require.Equal(t, int64(20), run(perRun, 2, 3).Skipped, "ScopeRun: a retry of the run skips")

		perJob := perRun.WithScope(ScopeJob)
		require.Equal(t, int64(20), run(perJob, 3, 4).Processed)
		require.Equal(t, int64(20), run(perJob, 4, 5).Skipped, "ScopeJob: another run skips")

		day1 := perRun.WithScope("date:2026-11-30")
		require.Equal(t, int64(20), run(day1, 5, 6).Processed)
		require.Equal(t, int64(20), run(day1, 6, 7).Skipped, "same named scope: skipped")
		day2 := perRun.WithScope("date:2026-12-01")
		require.Equal(t, int64(20), run(day2, 7, 8).Processed, "another named scope")

		_, err := perRun.WithScope("run:9").Process(ctx, newTask(7, 8, 0, 9), KeysOf(keys(1)), func(context.Context, Record) error { return nil })
		require.ErrorContains(t, err, "reserved for ScopeRun")

		// The idempotency key is stable per (job, scope, key).
		var got []string
		_, err = perRun.WithScope("date:x").Process(ctx, newTask(7, 9, 0, 10), KeysOf([]string{"a"}), func(_ context.Context, r Record) error {
			got = append(got, r.IdempotencyKey)
			return nil
		})
		require.NoError(t, err)
		_, err = perRun.Process(ctx, newTask(7, 9, 0, 11), KeysOf([]string{"a"}), func(_ context.Context, r Record) error {
			got = append(got, r.IdempotencyKey)
			return nil
		})
		require.NoError(t, err)
		require.Equal(t, []string{"7|date:x|a", "7|run:9|a"}, got)
	})
}

// Keys are compared byte for byte: no collation folds case or trailing
// spaces, and bytes that are not UTF-8 are kept.
func TestKeysAreExactBytes(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		p := e.processor(t, Config{Mode: External, Uncertain: Skip})
		ks := []string{"a", "A", "a ", "ä", "\xff\xfe", "x\x00y"}
		res, err := p.Process(ctx, newTask(7, 1, 0, 1), KeysOf(ks), func(context.Context, Record) error { return nil })
		require.NoError(t, err)
		require.Equal(t, int64(len(ks)), res.Processed)
		require.Equal(t, map[string]int{"done": len(ks)}, e.statuses(t, 7, "run:1"))

		_, err = p.Process(ctx, newTask(7, 1, 0, 2), KeysOf([]string{"ok", string(make([]byte, 256))}), func(context.Context, Record) error { return nil })
		require.ErrorIs(t, err, ErrInvalidKey)
		_, err = p.Process(ctx, newTask(7, 1, 0, 3), KeysOf([]string{""}), func(context.Context, Record) error { return nil })
		require.ErrorIs(t, err, ErrInvalidKey)
	})
}

// The core of the transactional guarantee: whatever happens to the attempts
// — one replaced by a newer token between two of its batches, handler
// failures, retries — every record's effect is committed exactly once.
func TestTransactionalExactlyOnce(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		a := e.processor(t, Config{Mode: Transactional, Holder: "a", BatchSize: 50, Concurrency: 1})
		b := e.processor(t, Config{Mode: Transactional, Holder: "b", BatchSize: 50, Concurrency: 2})
		ks := keys(1000)

		// Attempt 1 stops in its Source before its fourth batch; meanwhile
		// attempt 2 takes the slot over. Attempt 1 then writes nothing more.
		paused, resume := make(chan struct{}), make(chan struct{})
		var batches atomic.Int64
		inner := KeysOf(ks)
		src := SourceFunc(func(ctx context.Context, max int) ([]string, error) {
			if batches.Add(1) == 4 {
				close(paused)
				<-resume
			}
			return inner.Next(ctx, max)
		})
		// The records ending in 37 fail on their first attempt: the failure
		// must not roll back the rest of their batch.
		handler := func(token int64) Func {
			return func(ctx context.Context, rec Record) error {
				if _, err := rec.Tx.ExecContext(ctx, "INSERT INTO effect (k, token) VALUES (?, ?)", rec.Key, token); err != nil {
					return err
				}
				if rec.Attempt == 1 && strings.HasSuffix(rec.Key, "37") {
					return errors.New("transient business error") // after writing: the savepoint undoes it
				}
				return nil
			}
		}
		type out struct {
			res Result
			err error
		}
		first := make(chan out, 1)
		task1 := newTask(7, 100, 3, 1)
		go func() {
			res, err := a.Process(ctx, task1, src, handler(1))
			first <- out{res, err}
		}()
		recv(t, paused, "attempt 1 reading its fourth batch")
		testenv.WaitFor(t, waitTimeout, func() (bool, error) {
			processed, _, failed, _ := task1.Counts()
			return processed+failed == 150, nil
		}, "attempt 1's third batch committed (the reader reads one batch ahead)")
		res2, err := b.Process(ctx, newTask(7, 100, 3, 2), KeysOf(ks[:600]), handler(2))
		require.NoError(t, err)
		close(resume)
		o := recv(t, first, "attempt 1")
		require.ErrorIs(t, o.err, ErrFenced)
		var fe *FencedError
		require.ErrorAs(t, o.err, &fe)
		require.Equal(t, int64(2), fe.HolderToken)
		require.Equal(t, int64(148), o.res.Processed, "three batches of 50 before the takeover")
		require.Equal(t, int64(2), o.res.Failed, "k00037, k00137")
		require.Equal(t, int64(148), res2.Skipped, "attempt 2 skips what attempt 1 did")
		require.Equal(t, int64(2+446), res2.Processed, "attempt 1's two failures retried, and 446 new")
		require.Equal(t, int64(4), res2.Failed, "k00237 … k00537")

		// Attempt 3 finishes the slot, and retries the records that failed.
		c := e.processor(t, Config{Mode: Transactional, BatchSize: 50})
		res3, err := c.Process(ctx, newTask(7, 100, 3, 3), KeysOf(ks), handler(3))
		require.NoError(t, err)
		require.Equal(t, int64(4+396), res3.Processed, "attempt 2's four failures retried, and 396 new")
		require.Equal(t, int64(4), res3.Failed, "k00637 … k00937 fail on their first attempt")
		require.ErrorIs(t, res3.Err(), ErrRecordsFailed)

		res4, err := c.Process(ctx, newTask(7, 100, 3, 4), KeysOf(ks), handler(4))
		require.NoError(t, err)
		require.Equal(t, int64(4), res4.Processed)
		require.Equal(t, int64(996), res4.Skipped)

		eff := e.effects(t)
		require.Len(t, eff, 1000)
		for k, n := range eff {
			require.Equal(t, 1, n, "record %s applied %d times", k, n)
		}
		require.Equal(t, map[string]int{"done": 1000}, e.statuses(t, 7, "run:100"))
		require.Equal(t, 1000, e.count(t, "SELECT COUNT(*) FROM effect"))
		r := e.row(t, 7, "run:100", "k00037")
		require.Equal(t, rowState{Status: "done", Attempts: 2, Token: 2}, r)
	})
}

// External mode: a stale holder's outcomes are rejected mid-batch. Attempt
// 1's records are claimed (pending) and being processed when attempt 2 takes
// over: attempt 1 marks nothing done after that, not even the records whose
// handler had already returned.
func TestExternalStaleHolderWritesNothing(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		a := e.processor(t, Config{Mode: External, Uncertain: Retry, Holder: "a", BatchSize: 10, Concurrency: 2, FlushInterval: time.Hour})
		b := e.processor(t, Config{Mode: External, Uncertain: Retry, Holder: "b", BatchSize: 10})
		blocked, release := make(chan struct{}), make(chan struct{})
		var started atomic.Int64
		type out struct {
			res Result
			err error
		}
		first := make(chan out, 1)
		go func() {
			res, err := a.Process(ctx, newTask(7, 100, 0, 1), KeysOf(keys(10)), func(ctx context.Context, rec Record) error {
				if rec.Key == "k00005" {
					close(blocked)
					select {
					case <-release:
					case <-ctx.Done():
						return ctx.Err()
					}
				}
				started.Add(1)
				return nil
			})
			first <- out{res, err}
		}()
		recv(t, blocked, "attempt 1 inside its batch")
		require.Equal(t, map[string]int{"pending": 10}, e.statuses(t, 7, "run:100"))

		var calls sync.Map
		var uncertainSeen atomic.Int64
		res2, err := b.Process(ctx, newTask(7, 100, 0, 2), KeysOf(keys(10)), func(ctx context.Context, rec Record) error {
			if rec.Uncertain && rec.Attempt == 2 {
				uncertainSeen.Add(1)
			}
			n, _ := calls.LoadOrStore(rec.Key, new(atomic.Int64))
			n.(*atomic.Int64).Add(1)
			return nil
		})
		require.NoError(t, err)
		require.Equal(t, int64(10), res2.Uncertain, "attempt 1's pending records: its token lost the lock")
		require.Equal(t, int64(10), res2.Processed, "policy Retry")
		require.Equal(t, int64(10), uncertainSeen.Load())

		close(release)
		o := recv(t, first, "attempt 1")
		require.ErrorIs(t, o.err, ErrFenced)
		require.Zero(t, o.res.Processed, "attempt 1 recorded nothing")
		require.Equal(t, 0, e.count(t, "SELECT COUNT(*) FROM dedup_record WHERE token = 1"), "no row carries attempt 1's token")
		require.Equal(t, map[string]int{"done": 10}, e.statuses(t, 7, "run:100"))
	})
}

// Two runs of the same job overlap: their locks are independent. With a
// shared scope, a record pending under the other run's live lock is left to
// it, not taken as uncertain.
func TestOverlappingRuns(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		p := e.processor(t, Config{Mode: External, Uncertain: Retry, Scope: ScopeJob, BatchSize: 10})
		blocked, release := make(chan struct{}), make(chan struct{})
		first := make(chan error, 1)
		go func() {
			_, err := p.Process(ctx, newTask(7, 1, 0, 5), KeysOf(keys(10)), func(ctx context.Context, rec Record) error {
				if rec.Key == "k00000" {
					close(blocked)
					select {
					case <-release:
					case <-ctx.Done():
						return ctx.Err()
					}
				}
				return nil
			})
			first <- err
		}()
		recv(t, blocked, "run 1 processing")

		// Run 2 (a newer token, same slot number) is not fenced by run 1,
		// and neither is run 1 by it.
		var calls atomic.Int64
		res, err := p.Process(ctx, newTask(7, 2, 0, 6), KeysOf(keys(20)), func(context.Context, Record) error {
			calls.Add(1)
			return nil
		})
		require.NoError(t, err)
		require.Equal(t, int64(10), res.Skipped, "k00000…k00009 belong to run 1's live attempt")
		require.Equal(t, int64(10), res.Processed)
		require.Zero(t, res.Uncertain)
		close(release)
		require.NoError(t, recv(t, first, "run 1"))
		require.Equal(t, map[string]int{"done": 20}, e.statuses(t, 7, "job"))
	})
}

// External mode, crash between the effect and its mark: the records stay
// pending under the crashed token, and the next attempt finds them
// uncertain. Retry processes them again (at least once), Skip leaves them and
// alarms (at most once).
func TestExternalCrashUncertain(t *testing.T) {
	t.Parallel()
	errCrash := errors.New("simulated crash")
	crash := func(e *env, t *testing.T, run int64, scope Scope) {
		t.Helper()
		p := e.processor(t, Config{Mode: External, Uncertain: Retry, Scope: scope, BatchSize: 10})
		p.hooks = &testHooks{beforeMark: func([]string) error { return errCrash }}
		var applied atomic.Int64
		_, err := p.Process(context.Background(), newTask(7, run, 0, 1), KeysOf(keys(10)), func(context.Context, Record) error {
			applied.Add(1)
			return nil
		})
		require.ErrorIs(t, err, errCrash)
		require.Equal(t, map[string]int{"pending": 10}, e.statuses(t, 7, scope.resolve(run)))
		require.Equal(t, 1, e.count(t, "SELECT COUNT(*) FROM shard_lock WHERE run_id = ? AND released_at IS NULL", run), "a crash releases nothing")
	}

	t.Run("retry", func(t *testing.T) {
		t.Parallel()
		eachDialect(t, func(t *testing.T, e *env) {
			crash(e, t, 100, ScopeRun)
			p := e.processor(t, Config{Mode: External, Uncertain: Retry, BatchSize: 10})
			var recs []Record
			var mu sync.Mutex
			task := newTask(7, 100, 0, 2)
			res, err := p.Process(context.Background(), task, KeysOf(keys(12)), func(_ context.Context, r Record) error {
				mu.Lock()
				defer mu.Unlock()
				recs = append(recs, r)
				return nil
			})
			require.NoError(t, err)
			require.Equal(t, int64(10), res.Uncertain)
			require.Equal(t, int64(12), res.Processed)
			require.Empty(t, res.UncertainKeys, "all retried")
			_, _, _, uncertain := task.Counts()
			require.Equal(t, int64(10), uncertain)
			nUncertain := 0
			for _, r := range recs {
				if r.Uncertain {
					nUncertain++
					require.Equal(t, 2, r.Attempt)
				} else {
					require.Equal(t, 1, r.Attempt, r.Key)
				}
			}
			require.Equal(t, 10, nUncertain)
			require.Equal(t, map[string]int{"done": 12}, e.statuses(t, 7, "run:100"))
		})
	})

	// An uncertain record taken over and then given back unapplied (the
	// call was cancelled) stays uncertain for the next attempt.
	t.Run("given back stays uncertain", func(t *testing.T) {
		t.Parallel()
		eachDialect(t, func(t *testing.T, e *env) {
			crash(e, t, 100, ScopeRun)
			p := e.processor(t, Config{Mode: External, Uncertain: Retry, BatchSize: 10, Concurrency: 1})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			_, err := p.Process(ctx, newTask(7, 100, 0, 2), KeysOf(keys(10)), func(ctx context.Context, r Record) error {
				cancel()
				return ctx.Err()
			})
			require.ErrorIs(t, err, context.Canceled)
			require.Equal(t, map[string]int{"pending": 10}, e.statuses(t, 7, "run:100"))
			require.Equal(t, 10, e.count(t, "SELECT COUNT(*) FROM dedup_record WHERE attempts = 1 AND token = 2"), "attempt not spent")

			var uncertain atomic.Int64
			res, err := p.Process(context.Background(), newTask(7, 100, 0, 3), KeysOf(keys(10)), func(_ context.Context, r Record) error {
				if r.Uncertain && r.Attempt == 2 {
					uncertain.Add(1)
				}
				return nil
			})
			require.NoError(t, err)
			require.Equal(t, int64(10), res.Uncertain)
			require.Equal(t, int64(10), uncertain.Load())
		})
	})

	t.Run("skip", func(t *testing.T) {
		t.Parallel()
		eachDialect(t, func(t *testing.T, e *env) {
			crash(e, t, 100, ScopeRun)
			var logs testenv.Buffer
			p := e.processor(t, Config{Mode: External, Uncertain: Skip, BatchSize: 10, Logger: debugLogger(&logs)})
			var calls atomic.Int64
			res, err := p.Process(context.Background(), newTask(7, 100, 0, 2), KeysOf(keys(12)), func(context.Context, Record) error {
				calls.Add(1)
				return nil
			})
			require.NoError(t, err)
			require.Equal(t, int64(10), res.Uncertain)
			require.Equal(t, keys(10), res.UncertainKeys)
			require.Equal(t, int64(2), res.Processed)
			require.Equal(t, int64(2), calls.Load(), "at most once: the uncertain records are not handed out again")
			require.Equal(t, map[string]int{"pending": 10, "done": 2}, e.statuses(t, 7, "run:100"))
			require.Contains(t, logs.String(), "alarm=true")
			require.Contains(t, logs.String(), "uncertain records left pending")

			// A later attempt still skips them: they stay uncertain until
			// someone resolves them (or the horizon archives them).
			res, err = p.Process(context.Background(), newTask(7, 100, 0, 3), KeysOf(keys(12)), func(context.Context, Record) error {
				calls.Add(1)
				return nil
			})
			require.NoError(t, err)
			require.Equal(t, int64(10), res.Uncertain)
			require.Equal(t, int64(2), res.Skipped)
			require.Equal(t, int64(2), calls.Load())
		})
	})

	// In a scope shared by runs, the pending records of a crashed attempt
	// whose lease still runs are left alone (it might be alive); once the
	// lease expired (database clock) they are uncertain.
	t.Run("shared scope waits for the lease", func(t *testing.T) {
		t.Parallel()
		eachDialect(t, func(t *testing.T, e *env) {
			crash(e, t, 100, ScopeJob)
			p := e.processor(t, Config{Mode: External, Uncertain: Retry, Scope: ScopeJob, BatchSize: 10})
			ok := func(context.Context, Record) error { return nil }
			res, err := p.Process(context.Background(), newTask(7, 101, 0, 2), KeysOf(keys(10)), ok)
			require.NoError(t, err)
			require.Equal(t, int64(10), res.Skipped, "run 100's attempt may still be alive")
			e.expireLock(t, 7, 100, 0)
			res, err = p.Process(context.Background(), newTask(7, 101, 0, 2), KeysOf(keys(10)), ok)
			require.NoError(t, err)
			require.Equal(t, int64(10), res.Uncertain)
			require.Equal(t, int64(10), res.Processed)
		})
	})

	// The same attempt calling Process again after its first call crashed
	// between effect and mark: its own pending rows are uncertain, not new
	// (the claim falls back to its exact path to tell them apart).
	t.Run("same token", func(t *testing.T) {
		t.Parallel()
		eachDialect(t, func(t *testing.T, e *env) {
			p := e.processor(t, Config{Mode: External, Uncertain: Skip, BatchSize: 10})
			p.hooks = &testHooks{beforeMark: func([]string) error { return errCrash }}
			ok := func(context.Context, Record) error { return nil }
			_, err := p.Process(context.Background(), newTask(7, 100, 0, 1), KeysOf(keys(10)), ok)
			require.ErrorIs(t, err, errCrash)
			p.hooks = nil
			// keys 5…14: 5 pending of this token, 5 new.
			res, err := p.Process(context.Background(), newTask(7, 100, 0, 1), KeysOf(keys(15)[5:]), ok)
			require.NoError(t, err)
			require.Equal(t, int64(5), res.Uncertain)
			require.Equal(t, int64(5), res.Processed)
			require.Equal(t, keys(10)[5:], res.UncertainKeys)
		})
	})
}

// A handler that cannot tell whether its effect happened returns
// ErrUncertain: the record is left pending and handled by the policy.
func TestHandlerReturnsErrUncertain(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		p := e.processor(t, Config{Mode: External, Uncertain: Retry})
		res, err := p.Process(ctx, newTask(7, 1, 0, 1), KeysOf([]string{"a", "b"}), func(_ context.Context, r Record) error {
			if r.Key == "b" {
				return fmt.Errorf("payment API timed out: %w", ErrUncertain)
			}
			return nil
		})
		require.NoError(t, err)
		require.Equal(t, int64(1), res.Processed)
		require.Equal(t, int64(1), res.Uncertain)
		require.Equal(t, []string{"b"}, res.UncertainKeys)
		require.Equal(t, "pending", e.row(t, 7, "run:1", "b").Status)

		var got []Record
		res, err = p.Process(ctx, newTask(7, 1, 0, 2), KeysOf([]string{"a", "b"}), func(_ context.Context, r Record) error {
			got = append(got, r)
			return nil
		})
		require.NoError(t, err)
		require.Equal(t, []Record{{Key: "b", IdempotencyKey: "7|run:1|b", Attempt: 2, Uncertain: true}}, got)
		require.Equal(t, int64(1), res.Skipped)
	})
}

// A failed record is retried by the next attempts until it failed
// MaxRecordAttempts times, then left failed with its error; its failure
// does not undo the other records of its batch.
func TestFailedRecordsRetriedUpToLimit(t *testing.T) {
	t.Parallel()
	for _, mode := range modes {
		t.Run(mode.String(), func(t *testing.T) {
			t.Parallel()
			eachDialect(t, func(t *testing.T, e *env) {
				ctx := context.Background()
				p := e.processor(t, Config{Mode: mode, Uncertain: Skip, MaxRecordAttempts: 3, BatchSize: 4})
				var badCalls atomic.Int64
				var attemptsSeen sync.Map
				fn := func(token int64) Func {
					effect := handlerFor(e, mode, token, nil)
					return func(ctx context.Context, r Record) error {
						if err := effect(ctx, r); err != nil {
							return err
						}
						if r.Key == "bad" {
							badCalls.Add(1)
							attemptsSeen.Store(r.Attempt, true)
							if r.Attempt == 2 {
								panic("attempt 2 panics")
							}
							return fmt.Errorf("attempt %d: card declined", r.Attempt)
						}
						return nil
					}
				}
				src := []string{"a", "b", "bad", "c", "d"}
				for token := int64(1); token <= 3; token++ {
					task := newTask(7, 1, 0, token)
					res, err := p.Process(ctx, task, KeysOf(src), fn(token))
					require.NoError(t, err, "record failures are not Process errors")
					require.Equal(t, int64(1), res.Failed, "token %d", token)
					require.Equal(t, []string{"bad"}, res.FailedKeys)
					require.ErrorIs(t, res.Err(), ErrRecordsFailed)
					_, _, failed, _ := task.Counts()
					require.Equal(t, int64(1), failed)
					r := e.row(t, 7, "run:1", "bad")
					require.Equal(t, "failed", r.Status)
					require.Equal(t, int(token), r.Attempts)
					if token == 2 {
						require.Contains(t, r.Error, "handler panicked on key \"bad\": attempt 2 panics")
					}
				}
				require.Equal(t, "attempt 3: card declined", e.row(t, 7, "run:1", "bad").Error)

				task := newTask(7, 1, 0, 4)
				res, err := p.Process(ctx, task, KeysOf(src), fn(4))
				require.NoError(t, err)
				require.Equal(t, int64(1), res.Exhausted)
				require.Equal(t, int64(4), res.Skipped)
				require.Zero(t, res.Failed)
				require.ErrorIs(t, res.Err(), ErrRecordsFailed)
				_, _, failed, _ := task.Counts()
				require.Equal(t, int64(1), failed, "an exhausted record counts as failed for the slot")
				var seen []int
				attemptsSeen.Range(func(k, _ any) bool { seen = append(seen, k.(int)); return true })
				require.ElementsMatch(t, []int{1, 2, 3}, seen)
				if mode == External {
					require.Equal(t, int64(3), badCalls.Load())
				} else {
					// Each attempt runs the batch once without and once with
					// savepoints; the effects of the first run are rolled back.
					require.Equal(t, int64(6), badCalls.Load())
				}

				eff := e.effects(t)
				for _, k := range []string{"a", "b", "c", "d"} {
					require.Equal(t, 1, eff[k], k)
				}
				if mode == Transactional {
					require.Zero(t, eff["bad"], "a failed record's writes are rolled back")
				}
			})
		})
	}
}

func TestConcurrencyBound(t *testing.T) {
	t.Parallel()
	for _, mode := range modes {
		t.Run(mode.String(), func(t *testing.T) {
			t.Parallel()
			eachDialect(t, func(t *testing.T, e *env) {
				const conc = 4
				batch := 25
				if mode == Transactional {
					batch = 5 // concurrency is per batch transaction
				}
				p := e.processor(t, Config{Mode: mode, Uncertain: Skip, Concurrency: conc, BatchSize: batch})
				var active, peak atomic.Int64
				full := make(chan struct{})
				var once sync.Once
				fn := func(ctx context.Context, r Record) error {
					n := active.Add(1)
					defer active.Add(-1)
					for {
						m := peak.Load()
						if n <= m || peak.CompareAndSwap(m, n) {
							break
						}
					}
					if n == conc {
						once.Do(func() { close(full) })
					}
					// Hold the first records until conc run at once, so
					// that the bound is reached, not just respected. SQLite
					// runs one write transaction at a time: there a batch
					// transaction cannot wait for another.
					if mode == External || e.dialect != DialectSQLite {
						select {
						case <-full:
						case <-ctx.Done():
							return ctx.Err()
						}
					}
					return nil
				}
				res, err := p.Process(context.Background(), newTask(7, 1, 0, 1), KeysOf(keys(200)), fn)
				require.NoError(t, err)
				require.Equal(t, int64(200), res.Processed)
				if mode == External || e.dialect != DialectSQLite {
					require.Equal(t, int64(conc), peak.Load(), "the bound is reached and never exceeded")
				} else {
					require.Equal(t, int64(1), peak.Load(), "SQLite: one write transaction at a time")
				}
			})
		})
	}
}

// Cancelling Process records the outcomes it has and gives the records it
// claimed but did not apply back, without spending an attempt: nothing is
// left pending (uncertain).
func TestCancelGivesRecordsBack(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		p := e.processor(t, Config{Mode: External, Uncertain: Skip, BatchSize: 20, Concurrency: 2})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var applied atomic.Int64
		res, err := p.Process(ctx, newTask(7, 1, 0, 1), KeysOf(keys(100)), func(ctx context.Context, r Record) error {
			if r.Key == "k00010" {
				cancel()
				return ctx.Err() // not applied
			}
			applied.Add(1)
			return nil
		})
		require.ErrorIs(t, err, context.Canceled)
		st := e.statuses(t, 7, "run:1")
		require.Zero(t, st["pending"], "nothing uncertain: %v", st)
		require.Equal(t, int(applied.Load()), st["done"])
		require.Equal(t, res.Processed, applied.Load())
		require.Equal(t, 0, e.count(t, "SELECT COUNT(*) FROM dedup_record WHERE status = 'failed' AND attempts <> 0"),
			"given back without spending an attempt")
		require.Equal(t, 1, e.count(t, "SELECT COUNT(*) FROM shard_lock WHERE released_at IS NOT NULL"))

		// The next attempt does the rest, each record once in total.
		res, err = p.Process(context.Background(), newTask(7, 1, 0, 2), KeysOf(keys(100)), func(context.Context, Record) error {
			applied.Add(1)
			return nil
		})
		require.NoError(t, err)
		require.Zero(t, res.Uncertain)
		require.Equal(t, int64(100), applied.Load())
	})
}

// TestCancelReportsTheCause: when the slot's context is cancelled with a
// cause (the admin cancelled the slot, its timeout passed), Process returns
// that cause, not a bare context.Canceled from a database call it cut short.
func TestCancelReportsTheCause(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		for _, mode := range []Mode{Transactional, External} {
			p := e.processor(t, Config{Mode: mode, Uncertain: Skip, BatchSize: 10, Concurrency: 2})
			why := errors.New("cancelled by the admin: the run was cancelled")
			ctx, cancel := context.WithCancelCause(context.Background())
			_, err := p.Process(ctx, newTask(8, int64(mode)+1, 0, 1), KeysOf(keys(200)), func(ctx context.Context, r Record) error {
				if r.Key == "k00015" {
					cancel(why)
				}
				return ctx.Err()
			})
			cancel(nil)
			require.ErrorIs(t, err, why, "mode %v", mode)
		}
	})
}

func TestLeaseRenewed(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		p := e.processor(t, Config{Mode: External, Uncertain: Skip, LockLease: 300 * time.Millisecond})
		leaseUntil := func() (int64, error) {
			var v int64
			err := e.db.QueryRow("SELECT lease_until FROM shard_lock WHERE job_id = 7").Scan(&v)
			return v, err
		}
		started, release := make(chan struct{}), make(chan struct{})
		done := make(chan error, 1)
		go func() {
			_, err := p.Process(context.Background(), newTask(7, 1, 0, 1), KeysOf([]string{"slow"}), func(ctx context.Context, r Record) error {
				close(started)
				select {
				case <-release:
				case <-ctx.Done():
				}
				return nil
			})
			done <- err
		}()
		recv(t, started, "the handler")
		first, err := leaseUntil()
		require.NoError(t, err)
		testenv.WaitFor(t, waitTimeout, func() (bool, error) {
			v, err := leaseUntil()
			return v >= first+150, err
		}, "the lease renewed while the handler runs")
		close(release)
		require.NoError(t, recv(t, done, "Process"))
	})
}

func TestProcessArguments(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		p := e.processor(t, Config{Mode: External, Uncertain: Skip})
		ok := func(context.Context, Record) error { return nil }
		_, err := p.Process(ctx, nil, KeysOf(nil), ok)
		require.ErrorContains(t, err, "task is nil")
		_, err = p.Process(ctx, newTask(7, 1, 0, 0), KeysOf(nil), ok)
		require.ErrorContains(t, err, "token is 0")
		_, err = p.Process(ctx, newTask(7, 1, 0, 1), nil, ok)
		require.Error(t, err)

		// One Process per slot at a time on a Processor.
		blocked, release := make(chan struct{}), make(chan struct{})
		done := make(chan error, 1)
		go func() {
			_, err := p.Process(ctx, newTask(7, 1, 0, 1), KeysOf([]string{"a"}), func(context.Context, Record) error {
				close(blocked)
				<-release
				return nil
			})
			done <- err
		}()
		recv(t, blocked, "the first call")
		_, err = p.Process(ctx, newTask(7, 1, 0, 1), KeysOf([]string{"b"}), ok)
		require.ErrorIs(t, err, ErrSlotBusy)
		close(release)
		require.NoError(t, recv(t, done, "the first call"))

		// A newer token of the same slot is not busy: it takes over, and the
		// older call is fenced.
		blocked, release = make(chan struct{}), make(chan struct{})
		go func() {
			_, err := p.Process(ctx, newTask(7, 3, 0, 1), KeysOf([]string{"a"}), func(ctx context.Context, _ Record) error {
				close(blocked)
				<-release
				return nil
			})
			done <- err
		}()
		recv(t, blocked, "attempt 1")
		res, err := p.Process(ctx, newTask(7, 3, 0, 2), KeysOf([]string{"a", "b"}), ok)
		require.NoError(t, err)
		require.Equal(t, int64(1), res.Processed)
		require.Equal(t, []string{"a"}, res.UncertainKeys, "attempt 1's record, pending under a superseded token (policy Skip)")
		close(release)
		require.ErrorIs(t, recv(t, done, "attempt 1"), ErrFenced)

		// Source errors stop the call.
		boom := errors.New("source broke")
		_, err = p.Process(ctx, newTask(7, 2, 0, 1), SourceFunc(func(context.Context, int) ([]string, error) { return nil, boom }), ok)
		require.ErrorIs(t, err, boom)
	})
}
