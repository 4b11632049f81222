// Package jobdef validates job definitions submitted through the API, the
// CLI or the console (the wire type apitypes.JobSpec), and turns them into
// store rows. Every problem is reported per field with a message that says
// what is wrong and how to fix it; nothing is written unless the whole
// definition is valid. wire.go holds the one mapping each way between a job
// on the wire and its row: row (used by Validate) and View. The rules a
// saved job follows at run time (its schedule, window, runs, slot params,
// dedup scope) are in admin/jobrules, which Validate uses where it needs
// the same rule.
package jobdef
