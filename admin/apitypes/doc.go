// Package apitypes defines the JSON wire types of the admin's operator API
// (/api/v1: jobs, runs, slot attempts, calendars, workflows, alarms,
// executors and apps, logs, utilization, users, tokens, the audit log,
// errors), the way sdk/protocol defines the executor protocol: every request
// body and answer that admin/api declares a type for is declared here. The server (admin/api), the CLI (admin/cli) and the
// OpenAPI test use these types; docs/openapi.yaml describes the same fields.
// It depends on the standard library only.
//
// A job is written once, in three layers:
//
//	JobDef   the definition: what a jobs file states
//	JobSpec  JobDef + child jobs + version: what a client sends (create, update, validate)
//	Job      JobSpec + what the admin keeps: what the API returns
//
// The admin stores a job as its own row (admin/store.Job); admin/jobdef
// turns a JobSpec into a row (validation) and a row into a Job (View, in wire.go),
// once each way.
//
// The JobSpec and Job schemas of docs/openapi.yaml and the list of a jobs
// file's fields in docs/cli.md are generated from job.go by schemagen.
package apitypes

//go:generate go run ./schemagen -src job.go -openapi ../../docs/openapi.yaml -cli ../../docs/cli.md
