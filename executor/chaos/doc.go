// Package chaos holds the failure test of record-level exactly-once
// (sdk/records through the demo handlers of executor/demo): a real
// shardjob-admin, real shardjob-executor processes and a private MariaDB,
// broken on purpose while a run processes records, and then rows counted to
// prove that no record was lost or applied twice, and that no attempt wrote
// anything after a newer attempt had fenced it off.
//
// The package has no production code; everything is in its tests.
//
// The short form runs in make test; the long form in make chaos.
//
// # Scenario
//
// One private MariaDB (testenv.StartMariaDB) holds both the platform
// database (the admin's --db-dsn) and a business database (the executors'
// --demo-db-dsn, with idle_transaction_timeout=2 so that the transaction of
// a frozen executor does not hold its slot's shard lock: see sdk/records).
// One `shardjob-admin serve` (ZooKeeper from testenv, --heartbeat-interval
// 500ms, so executors are lost after 1.5s of silence) and three executors
// (--capacity 4) of one app.
//
//  1. Transactional. A job of 256 slots runs demo.ledger over R records
//     (scope=job, batches of 20 committed one after the other, retry_max
//     3). While it runs: kill -9 an executor half-way through a slot (a
//     replacement starts at once); kill -9 MariaDB and start it again;
//     SIGSTOP another executor half-way through a slot until the admin has
//     declared it lost and newer tokens have taken the shard locks of the
//     slots it was running, then SIGCONT it. The run must end succeeded —
//     after a POST /api/v1/runs/:id/retry when the database outage used up
//     a slot's retries (the run then ends partially_failed; the test logs
//     it and retries, as an operator would) — and SQL must show: one done
//     dedup row and one ledger row per record, the ids 1..R each booked
//     once (SUM(amount)), every ledger row written by the token of its done
//     row, by an attempt of the slot owning the record; for every slot, the
//     rows of an older token all written before the first row of a newer
//     one (the database clock: a fenced token writes nothing after the
//     takeover); nothing written by the frozen executor's tokens after they
//     were fenced; each slot the killed or frozen executor was running
//     superseded as lost; and each succeeded attempt's processed counter
//     equal to the rows its token booked.
//  2. Same run key. POST /api/v1/jobs/:id/trigger with the first run's
//     scheduled_at returns that run (200, created=false) and starts
//     nothing; a retry of the succeeded run is refused (409); a new firing
//     (another scheduled_at) in the same job scope processes nothing: every
//     record skipped, ledger and dedup rows unchanged (count and checksum
//     of tokens, attempts and updated_at).
//  3. External, uncertain=retry. demo.ledger-external (one external_calls
//     row per call, outside the dedup transaction) with a kill -9 mid-run:
//     every record done and called at least once; a key called more than
//     once was first called by a superseded attempt (the killed one), and
//     every later call is flagged uncertain, with attempt >= 2 and a
//     larger token (its dedup row counts the hand-outs); each succeeded
//     attempt made exactly as many uncertain calls as it reported
//     uncertain records.
//  4. External, uncertain=skip, kill -9 mid-run: no key is called twice;
//     every record is done (called exactly once) or left pending by a
//     superseded attempt (called at most once), and the pending ones are
//     exactly those reported: the succeeded attempts' uncertain counters
//     (GET /api/v1/runs/:id) and their alarm log lines add up to the
//     pending rows, and their "ledger slot done" lines list those keys.
//
// Counts and timings are logged, with a final "SUMMARY records-chaos" line.
// Failures starting with DEFECT describe misbehaviour of the product: lost
// or doubled records, writes after fencing, work stealing that moved a
// started slot, a retry budget spent by moves.
//
// # Forms
//
// The short form runs in every `go test ./...` (also with -race): R =
// 20,000 records, about a minute and a half on two cores. The long form
// processes R = 200,000 records and is selected by environment:
//
//	SHARDJOB_CHAOS=long           the long form
//	SHARDJOB_CHAOS_RECORDS=n      R (overrides the form's)
//	SHARDJOB_CHAOS_LOG_DIR=dir    keep the whole output of every process in dir
//
//	SHARDJOB_CHAOS=long go test -count=1 -timeout 30m ./executor/chaos/
//
// The machine's own MariaDB (3306) is never touched: the server broken here
// is private to the test and stopped by its fixture.
package chaos
