// Package e2e holds the real-process tests of executors and slots: they
// build the shardjob-admin and shardjob-executor binaries, start one admin
// (`serve`, against a MariaDB database and ZooKeeper from deploy/dev/testenv) and
// several executors running the demo.range handler, and then check through
// the HTTP API and the processes' logs how slots are placed, run once,
// recovered from a killed executor, fenced after a paused one wakes up,
// kept inside their app, and spread onto an executor that joins mid-run.
// Executors are killed with SIGKILL and paused with SIGSTOP/SIGCONT; waits
// are on conditions and log lines, never on fixed sleeps.
//
// The package has no code outside its tests.
package e2e
