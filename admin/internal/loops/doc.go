// Package loops is the one start/stop contract of the admin's background
// loops: the HTTP server, the missed-fire watchdog, alarm delivery, the
// XXL-JOB prober and the leader election on every replica, and, for one
// leadership term, the scheduler's duties beside it (workflow engine,
// run statistics, utilization samples, retention).
//
// A Loop runs until its context ends and returns only once everything it
// started has stopped. Start runs a set of them, each in its own goroutine,
// under one context; Group.Stop cancels that context and waits for every
// loop to return, so that nothing a loop started outlives Stop. A loop that
// returns an error other than its context's marks the group failed
// (Group.Failed, Group.Err): the owner decides whether to stop the rest.
//
// The package depends on nothing but the standard library.
package loops
