// Package scheduler is the leader's loop: it creates the runs of due jobs,
// starts them on live executors, retries failed slots, rebalances queued
// work and moves slots off executors that stopped heartbeating.
//
// With Config.Partitions (an admin server always sets it), every replica
// also runs FireOwned (fire_owned.go): it fires the due jobs of the
// scheduling partitions it owns, each transaction fenced by those
// partitions' epochs (store.Tx.CheckPartitionEpochs), and Lead's step 1
// below is skipped; Lead starts the runs whoever fired them.
//
// Lead (loop.go) runs for one leadership term (one epoch). Every
// transaction it writes starts with store.Tx.CheckEpoch, so once another admin
// has claimed a larger epoch this one cannot create or change a run,
// whatever it believes locally; Lead then returns. Between ticks it sleeps
// until the next job enters the pre-read window or the next early-created
// run is due (at most PollInterval; Wake cuts it short); while due runs are
// left after a tick it goes straight on.
//
// One tick (tick, in loop.go) does the duties below in this order, one
// file each; the last two run only every Timing.Heartbeat/2.
//
//  1. fire (fire.go): in one transaction per batch, claim due jobs (oldest
//     first, SKIP LOCKED), let the schedule package decide which firings
//     to create and which to record as skipped (misfire policy), apply the
//     overlap policy skip, insert the runs (the unique run key drops a
//     firing that exists already) and advance next_fire_at. Firings due
//     within the pre-read window are created ahead of their time; the
//     window widens up to MaxPreRead when a herd is coming, and a backlog
//     is claimed by FireWorkers transactions at once. At most TickBudget
//     per tick: what is left is fired next tick, after the runs fired so
//     far are started.
//  2. breakers, then retry (breaker.go, retry.go): open a job's circuit
//     breaker after breaker_threshold consecutive failures, probe it after
//     its cool-down with the oldest held work, close it or open it again
//     by the probe's outcome (docs/failures.md); give failed slots whose
//     job allows more attempts a new, unplaced attempt once their
//     full-jitter backoff (RetryDelay, capped by retry_backoff_max) has
//     passed — within the job's retry budget, else the slot fails for good
//     (runstate Machine.DenyRetry). A job whose breaker is open gets no
//     retry and no placement but its probe, and its runs are held.
//  3. place (place.go): put unplaced attempts (retries, manual retries from
//     the API, slots given back by a drain, slots a concurrency cap held
//     back) on an online executor of their app with the handler, another
//     than the previous attempt's when there is one, as far as the caps
//     allow, and push them, in one transaction per page fenced by the
//     epoch. It comes before start so that started work takes freed room
//     before new runs do.
//  4. start (start.go): page through the due pending runs, each page the
//     most urgent first (priority aged by waiting, byPriority) and, when
//     the platform's capacity is short, by weighted fair share between
//     apps (fairshare.go); cancel or skip
//     those whose job was deleted, disabled or paused; apply the overlap
//     policies queue and replace; hold (start_hold.go) a run whose job
//     waits for other runs of its business date that have not succeeded,
//     or a job backfill's run that is not yet its turn, until HoldRecheck
//     later, saying why (a run whose waits timed out ends failed or
//     skipped with a run_wait_timeout alarm, start_waits.go); check the
//     concurrency caps of its app and job and the platform's (caps.go) and
//     its app's start rate (startrate.go): with no room, or no token, it
//     stays pending saying why; with room for some of its slots it starts
//     with those placed and the rest unplaced (step 3 places them later);
//     place each run's slots on the app's
//     online executors that have the handler (placement.Spread, or
//     placement.Balance once slot costs are measured); start StartBatch
//     runs per transaction with StartWorkers in flight, and push. A run no
//     executor can take stays pending saying why, raises run_unplaceable
//     (resolved once the run is placed: store.ResolveRunsPlaced) and fails
//     after UnplaceableTimeout. At most TickBudget per tick.
//  5. steal (steal.go), unless DisableWorkStealing: executors with free
//     capacity take over slots other executors of the app have queued but
//     not started. The victim releases them first, so a slot never runs
//     twice; the round runs in the background, one at a time.
//  6. deadlines (deadline.go): one indexed query for the runs whose
//     earliest unchecked deadline (store.RunDeadlines, kept on the run
//     when it was created) has passed; DecideDeadlines says what follows:
//     run_late_start, run_deadline_missed (alarms deduplicated per run and
//     kind, so that each run alarms once whatever replica leads), the
//     cancel of deadline_action cancel (runstate Machine.Cancel, pushed);
//     then the run's next deadline to check.
//  7. drain (drain.go): ask executors an operator drains to release their
//     queued slots; the released ones become unplaced attempts (step 3).
//  8. recover (recover.go): executors silent for LostAfter (database clock)
//     are marked lost, and gone after ForgetLostAfter; their unfinished
//     slots get new tokens on live executors. Attempts an executor has not
//     acknowledged within DispatchTimeout fail, and the retry policy
//     decides what follows.
//
// Pushing (push.go) is no step of its own: start, place, steal and recover
// hand executors to a background push loop per executor, which sends every
// attempt placed there and not yet acknowledged (one signed request per
// PushBatch slots, built by dispatch.BuildAssignments) through a
// dispatch.Pusher and moves the slots of a failed push to other executors.
// What no push delivers, the executor's heartbeat response does.
//
// The other files: scheduler.go (Scheduler, New, Stats, Observer),
// config.go (Config and its defaults), targets.go (which executors can
// take a handler's slots), caps.go (the concurrency caps of a round and the
// term's bounds of placed slots), startrate.go (start-rate buckets),
// fairshare.go (the weighted fair order, pure).
package scheduler
