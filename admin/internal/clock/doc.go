// Package clock is the one clock seam of the admin: every part that reads
// the time for a decision (the scheduler's duties, alarm windows and
// backoff, the firing watchdog, login throttling, the metrics cache, the
// API's schedule previews and session lifetimes) takes a Clock in its
// Config, defaulting to System, and admin/server passes one Clock to all of
// them, so a test moves time for the whole admin at once.
//
// A Clock is the local process clock. Instants that another process
// compares (executor heartbeats, attempt leases, sessions, the leader
// record) are not taken from it but from the database clock, in SQL
// ({{now_ms}}); docs/architecture.md, section "Clocks", states the rule.
//
// The package depends on nothing but the standard library.
package clock
