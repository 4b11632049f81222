// Package sdk is the shardjob executor library: a business service embeds an
// Executor to run the handlers of its app's jobs, slot by slot, for the
// shardjob admin.
//
// # Use
//
//	exec, err := sdk.New(sdk.Config{
//		App:    "billing",
//		Admins: []string{"http://admin-1:8080", "http://admin-2:8080"},
//		Secret: os.Getenv("SHARDJOB_SECRET"),
//	})
//	if err != nil { … }
//	exec.Handle("invoice-batch", func(ctx context.Context, t *sdk.Task) error {
//		lo, hi := t.IDRange(minID, maxID) // or: t.Owns(customerID)
//		for … {                            // process this slot's records
//			if err := ctx.Err(); err != nil {
//				return err // cancelled, timed out, or executor stopping
//			}
//			t.AddProcessed(1)
//			t.Progress(done, total)
//		}
//		return nil
//	})
//	if err := exec.Start(ctx); err != nil { … }
//	<-ctx.Done()                       // e.g. signal.NotifyContext(SIGTERM)
//	err = exec.Stop(context.Background()) // drains, then deregisters
//
// # Lifecycle
//
// An Executor goes through these states, once:
//
//	New ──Handle…──▶ new ──Start──▶ running ──Stop──▶ draining ──▶ stopped
//
// New validates the Config (errors name the field and the fix) and touches
// no network. Handle registers handlers; it panics on programmer errors
// (empty or duplicate name, nil handler, call after Start). Start binds the
// HTTP server (the error names ListenAddr when the port is taken) and starts
// two loops, and returns without waiting for an admin: the executor retries
// in the background, so a service can start before the admin does.
//
//   - The heartbeat loop registers the executor and then, every
//     HeartbeatInterval (or the admin's interval_ms), reports its identity,
//     capacity, handler names, Draining flag and every accepted unfinished
//     token with its progress ("done/total" from Task.Progress, or "queued").
//     The response carries assignments the admin has not seen acknowledged,
//     which are accepted like pushes, and tokens to cancel.
//   - The result loop delivers results to the admin (below).
//
// The HTTP server takes the admin's pushes: POST assign, POST cancel, both
// HMAC-signed (protocol.Verifier; an unsigned, badly signed, out-of-window or
// replayed request gets 401 with a JSON protocol.Error), and an unsigned
// GET health for probes.
//
// Stop drains: it refuses new work (pushes get 503), hands back the queued
// slots that have not started (they get no result; the admin reassigns them
// when the executor deregisters), sends a heartbeat with Draining=true, waits
// up to DrainTimeout for running slots and then cancels them, delivers the
// remaining results (for up to DrainTimeout more), deregisters, stops the
// HTTP server and waits for all of its goroutines. Stop is idempotent; an
// Executor cannot be started again.
//
// # Slots
//
// Every slot attempt is identified by its token. An assignment arriving by
// push and again in a heartbeat response (or pushed twice) starts once: the
// executor remembers every token it has accepted until its result is
// acknowledged, and for ten minutes after that, and answers the duplicates
// as accepted without running them again.
//
// At most Capacity handlers run at once. Further accepted slots wait in a
// local FIFO queue and start as running ones finish; they are reported in
// heartbeats as "queued", so the admin knows they are held and may cancel
// them (a queued slot cancelled is finished as cancelled without running).
// To bound memory while no admin answers, the executor refuses new slots
// (they are not in the accepted tokens, so the admin places them elsewhere or
// redelivers them) once queued + running slots + unacknowledged results reach
// MaxPendingResults. Results are never dropped to make room.
//
// Each started slot runs its Handler in its own goroutine with a context
// that is cancelled when the admin cancels the token, when the assignment's
// timeout (measured from the start of the handler) elapses, or when Stop
// gives up waiting. context.Cause tells which: *CancelledError,
// *TimeoutError or *StoppingError. The slot's result follows from the
// handler's return:
//
//	returned nil                                   → succeeded (even if ctx was cancelled meanwhile)
//	returned an error, ctx cancelled (admin, Stop)  → cancelled, error = cause [: handler error]
//	returned an error, ctx timed out                → failed (class timeout), "timed out after 5s" [: handler error]
//	returned Permanent(err), or an error wrapping one → failed (class permanent: no retry), err.Error()
//	returned RetryAfter(err, d), or one wrapping it  → failed (class retryable, retried no earlier than d)
//	returned any other error                        → failed (class retryable), err.Error()
//	panicked                                        → failed (class retryable), "handler panicked: …" (stack in the log)
//	handler name not registered                     → failed at once: "no handler named X registered on this executor (app Y)"
//
// The error class travels with the result (protocol.SlotResult.ErrorClass,
// RetryAfterMS); the admin retries a retryable or timed-out slot as the
// job's retry_max and backoff allow and never a permanent one
// (docs/failures.md).
//
// The counters a handler records (Task.AddProcessed, AddSkipped, AddFailed,
// AddUncertain) go into the result. A handler that ignores its context
// cannot be stopped: Go cannot kill a goroutine. Stop leaves it behind after
// a second DrainTimeout and reports ErrHandlersStuck (the slot gets no
// result; the admin treats it like a slot of a dead executor).
//
// # Results
//
// Results are queued in memory and sent in batches of at most ResultBatch,
// no later than 200ms after they are produced, to the admin in use. They are
// retried with capped exponential backoff with full jitter until an admin
// acknowledges them — as accepted, or as rejected when the token is stale
// (the slot was reassigned; logged at warn, "stale token: result ignored by
// admin"); both are final. A heartbeat answered after an outage retries them
// at once. Delivery is at least once: a result whose acknowledgement was
// lost is sent again, so the admin treats a repeated result for a token as
// already applied. Results still undelivered when Stop gives up are lost
// (logged, and reported by Stop as ErrResultsUndelivered); the admin then
// treats those slots like the slots of a dead executor.
//
// # Admins
//
// Config.Admins lists the admin replicas. Every request goes to the admin
// that last answered; when it fails (network error or non-2xx), the others
// are tried in list order, and the first that answers becomes the one in
// use. Replicas announced in heartbeat responses are appended to the list.
// Every request is signed with protocol.Sign.
//
// # Sharding helpers
//
// SlotOf maps a record key to its slot with FNV-1a (32 bits) modulo the slot
// count, a mapping that will never change; IDRange cuts an ID range into
// contiguous per-slot parts that partition it exactly. Task.Owns and
// Task.IDRange apply them to the task's own slot.
//
// # Fencing
//
// Running a slot is not a license to write: another executor may hold a
// newer token for the same slot (this one was presumed dead, or paused). A
// handler fences its writes with Task.Token: every write checks, in its own
// transaction, that the token is still the slot's newest (the shard lock
// and dedup table of the design do exactly that), so that a replaced attempt
// writes nothing. A result sent with a superseded token is rejected by the
// admin.
//
// # Clocks
//
// The executor keeps the standard clock (time.Now): it measures only local
// durations (slot times, heartbeat pacing, how long the admins have been
// silent) and compares the admin's validity bounds of pushes and heartbeat
// assignments with its wall clock, as the admin sets them from its own
// (both rely on NTP). Nothing it shares with other processes is an instant
// of its clock: shard locks and the dedup table of sdk/records are stamped
// by the database clock in SQL.
package sdk
