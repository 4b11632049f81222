// Package cluster is the test harness of the packages that run the real
// binaries as a cluster (admin/chaos, admin/e2e, executor/chaos,
// executor/e2e): shardjob-admin processes (serve on MySQL/MariaDB and
// ZooKeeper, or standalone), shardjob-executor processes that tests start,
// restart, kill -9 and freeze, a client of the admin's API (NewClient: the
// CLI's cli.Client, the one Go client of /api/v1, with a 10 s timeout),
// waits with deadlines on what the API shows, the parsing of the processes'
// slog lines, and the leader row watched in the database. Like
// deploy/dev/testenv, on which it is built, it is for tests only (TestOnlyTestsImportTestenv in deploy/dev/testenv checks that
// no production package imports either).
//
// # Processes
//
// StartAdmin starts `shardjob-admin serve` with AdminOpts (the flags of the
// store and the coordinator are the caller's) and waits for "serving at";
// Standalone starts `shardjob-admin standalone`. StartExecutor starts
// `shardjob-executor` with ExecutorOpts and waits for "listening at". Each
// returns a Proc: a testenv.Process that remembers being killed (Kill) or
// frozen (Freeze, SIGSTOP; Thaw, SIGCONT), and that is thawed before the
// test's cleanup stops it. With a LogDir, the whole output of the process is
// copied to LogDir/<name>.log when the test ends (testenv itself reports
// only the last lines, and only of a failed test).
//
// # The cluster
//
// New starts the first admin of a cluster, waits until it leads and logs in
// with the console password it printed; Cluster.StartAdmin adds replicas
// (same database, ZooKeeper chroot and secret), Cluster.StartExecutor
// executors with the cluster's defaults. The Cluster methods fail the test
// they were given (In gives a copy for a subtest): CreateJob, Trigger, Run,
// Executors, WaitOnline, WaitRunEnded, WaitAttempts.
//
// WatchLeader polls the leader row of a platform database (MySQL or
// MariaDB) and records every change of epoch with the time it was first
// seen: which replica led when, for failover measurements.
//
// # Log lines
//
// ParseLine reads a slog text line (key=value, quoted values unquoted; the
// first occurrence of a key wins) into a LogLine; LogLines keeps the lines
// of an output that contain a string.
package cluster
