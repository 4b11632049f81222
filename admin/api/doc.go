// Package api is the admin's HTTP surface (gin): the operator API under
// /api/v1 (session cookie with CSRF, or bearer token; roles checked on
// every route), the executor protocol endpoints (HMAC-signed, see
// sdk/protocol), health endpoints and the embedded console.
//
// The executor endpoints only authenticate the request, decode it, call
// admin/executorsvc (what the protocol does to the database) and map its
// typed errors to HTTP statuses. The job endpoints and a run's cancel and
// retry do the same with admin/ops, the operator service (refused, in
// ops.go, is the one mapping of its errors to statuses); the other
// operator endpoints still hold their rules in their handlers. Every JSON
// type of the operator API is declared in admin/apitypes.
//
// Bad input never reaches the database: bodies are size-limited, unknown
// JSON fields are refused, and validation errors come back as 400 with a
// message per field.
package api
