// Package e2e holds end-to-end tests: they build the real shardjob-admin and
// shardjob-executor binaries, start them as processes against real MariaDB
// and ZooKeeper (deploy/dev/testenv), and drive them through the HTTP API only.
// The exception is the herd harness (herd_test.go: BenchmarkHerdE2E and
// TestHerdSmall), which seeds its thousands of jobs by SQL INSERT into the
// admin's database and reads its figures and end state from there.
// The package has no code outside its tests; the API client and the
// processes come from deploy/dev/testenv/cluster.
package e2e
