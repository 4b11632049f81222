// Package e2e holds end-to-end tests: they build the real shardjob-admin and
// shardjob-executor binaries, start them as processes against real MariaDB
// and ZooKeeper (admin/testenv), and drive them through the HTTP API only.
// The package has no non-test code besides the small API client below.
package e2e
