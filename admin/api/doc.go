// Package api is the admin's HTTP surface (gin): the operator API under
// /api/v1 (session cookie with CSRF, or a bearer session token or API key;
// roles checked on every route), the executor protocol endpoints
// (HMAC-signed, see sdk/protocol), health endpoints and the embedded
// console.
//
// The executor endpoints only authenticate the request, decode it, call
// admin/executorsvc (what the protocol does to the database) and map its
// typed errors to HTTP statuses. The operator endpoints of jobs, a run's
// cancel and retry, users, API keys, the audit log, alarm groups and
// routes, the dashboard, utilization, draining and the XXL-JOB log and kill
// do the same with admin/ops, the operator service (refused, in ops.go, is
// the one mapping of its errors to statuses); the others (workflows,
// calendars, backfills, runs, logs) still hold their rules in their
// handlers. Authentication (session.go, apikeys.go: sessions, API keys,
// the login throttle, CSRF) reads the store itself. Every JSON type of the
// operator API is declared in admin/apitypes.
//
// Bad input never reaches the database: bodies are size-limited, unknown
// JSON fields are refused, and validation errors come back as 400 with a
// message per field.
package api
