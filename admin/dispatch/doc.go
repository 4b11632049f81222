// Package dispatch pushes work to executors: one signed HTTP request per
// executor and run carrying all of its slots (never one request per slot),
// and cancellations. A failed push is not fatal: unacknowledged assignments
// are delivered again in the executor's next heartbeat response.
package dispatch
