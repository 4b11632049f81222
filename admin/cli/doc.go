// Package cli is the logic of shardjobctl, the command-line client of the
// admin's API (admin/cmd/shardjobctl is only its main). It authenticates
// with a personal API key (sjt_…, see admin/ops apikeys.go).
//
// Jobs as code: a jobs file is a YAML list of job definitions keyed by
// app and name (LoadJobs, strict: unknown fields and duplicate keys are
// errors with their line). apply compares the file with the server
// (MakePlan: create, update with the changed fields, unchanged), asks the
// admin to validate every job it is about to write, prints the plan, and
// writes in file order; each update carries the version it read, so a
// concurrent change is refused, never overwritten. Applying the same file
// twice changes nothing the second time. Jobs absent from the file are left
// alone. An item with "kind: workflow" is a workflow (LoadFile, workflows.go):
// apply checks its graph here, writes it after the jobs, and shows the
// nodes and edges that changed.
//
// Exit codes are the Exit* constants; ExitCode maps an error to one.
package cli
