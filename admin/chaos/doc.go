// Package chaos holds the failure tests of the HA scheduling core: real
// shardjob-admin processes, a real ZooKeeper and a real MariaDB, broken on
// purpose while jobs fire, and then rows counted to prove that no firing
// was lost, doubled, or written by a leader that had been replaced.
//
// The package has no production code; everything is in its tests.
//
// # Scenario
//
// Three `shardjob-admin serve` processes share one private MariaDB
// (testenv.StartMariaDB) and one private ZooKeeper (testenv.StartZooKeeper)
// with a 6s session timeout. N jobs fire every second (`* * * * * *`, one
// slot, misfire policy catch_up with max_catch_up 1000; half of them with a
// 2s misfire threshold, so that outages go through the catch-up path, half
// with one hour, so that they stay on the on-time path). No executor runs:
// runs stay pending, which is enough, because the subject is firings (rows
// of job_run), not their execution. A goroutine polls the leader row every
// 50ms and records each epoch change with the time it was first seen.
//
// Each round applies these disruptions, one after the other, with a short
// undisturbed stretch in between:
//
//  1. kill -9 the leader (the holder of the leader row), wait for another
//     admin to create runs with a larger epoch, and start the killed
//     replica again;
//  2. SIGSTOP the new leader for 10s, longer than its ZooKeeper session,
//     wait for a successor to claim a larger epoch and fire, SIGCONT the
//     old one and wait for its term to end; it must write nothing after the
//     successor's claim (the epoch fence of admin/store);
//  3. the same, but with the leader stopped inside a fenced transaction:
//     the test holds the row lock of a run the leader is about to insert,
//     waits until the leader's INSERT waits for it (after its epoch check
//     locked the leader row), sends SIGSTOP and releases the row. A
//     successor must still take over while the old leader is stopped;
//  4. stop ZooKeeper and start it again after 5s, longer than the leader's
//     trust window (2/3 of the session); in even rounds kill it and keep it
//     down 8s, longer than the session;
//  5. stop MariaDB (even rounds: kill it) and start it again after 10s,
//     long enough for firings to become late and go through catch-up;
//     every admin must survive and answer /readyz again, and the leader
//     must catch up.
//
// Afterwards, with all admins stopped, SQL checks that every job has exactly
// one job_run row (pending or skipped) for every scheduled second from its
// first firing up to its final next_fire_at, that every run records an
// epoch, and that no run of an older epoch was created after a newer epoch
// had been claimed. Per disruption the test logs the failover time (from
// the kill -9 or SIGSTOP instant to the first run created under a larger
// epoch), the longest pause in run creation, how late the latest firing
// was created, and the admins' log messages about terms, fences and
// failed ticks; a final "chaos summary" line sums it up. Lines starting
// with DEFECT describe misbehaviour of the product.
//
// # PostgreSQL
//
// TestChaosHASchedulingPostgres runs the same scenario with the platform
// database on a private PostgreSQL server (testenv.StartPostgreSQL): steps
// 1–3 and 5 (in odd rounds the database is killed, in even ones stopped);
// ZooKeeper's outages do not depend on the database and stay with the
// MariaDB test. In step 3 the leader stopped inside its transaction holds
// the leader row until the server's idle_in_transaction_session_timeout
// (set by the store) ends the session; a successor must take over all the
// same. What differs by dialect (users per replica, the database clock, the
// lock-wait setting, how a waiting session is found, lock diagnostics) is
// the platform interface of platform_test.go. Same checks, same summary
// line ("database=PostgreSQL").
//
// # Workflows
//
// TestChaosWorkflowLeaderKilled (workflow_test.go) runs a 20-node
// diamond-shaped workflow (issue 22) on the same three admins and one real
// executor, each node a job sleeping 1.5s, and kills the leader with
// kill -9 once the first layer has started. With the admins stopped, SQL
// counts one node run, one job run and one succeeded slot attempt per node,
// node runs created under two epochs, and the workflow run succeeded. It
// takes about 35s.
//
// # Forms
//
// The short form runs in every `go test ./...` (60 jobs, one round, about
// 70-90s on two cores). The long form is `make chaos`: 1000 jobs, every
// disruption twice, about four minutes. It is selected by environment:
//
//	SHARDJOB_CHAOS=long         the long form
//	SHARDJOB_CHAOS_JOBS=n       number of jobs (overrides the form's)
//	SHARDJOB_CHAOS_ROUNDS=n     rounds of the four disruptions
//	SHARDJOB_CHAOS_SETTLE=d     undisturbed firing between disruptions (Go duration)
//
// The machine's own MariaDB (3306) and PostgreSQL (5432) are never touched: the servers broken here
// are private to the test and stopped by their fixtures.
package chaos
