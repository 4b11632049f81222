// Package protocol defines the HTTP/JSON wire protocol between the shardjob
// admin and its executors, and the HMAC request signing both sides use.
//
// Executor → admin (any replica):
//
//	POST /api/v1/executor/heartbeat   register + heartbeat; the response carries
//	                                  unacknowledged assignments and cancellations
//	POST /api/v1/executor/results     batched slot results, retried until acknowledged
//	POST /api/v1/executor/deregister  leave the cluster (after draining)
//
// Admin → executor (the executor's advertised address):
//
//	POST /shardjob/v1/assign  one request per executor and run, carrying all of its slots
//	POST /shardjob/v1/cancel  stop the given tokens
//	GET  /shardjob/v1/health  liveness
//
// Every request in both directions is signed with HMAC-SHA256 over the method,
// path, timestamp, nonce and the SHA-256 of the body (see Sign and Verifier).
// A request outside the clock window or whose nonce was already seen is
// refused. There is no default secret: both sides refuse to start without one.
//
// A slot attempt is identified by its token. Tokens are allocated by the
// admin, strictly increase for every new attempt of the same slot, and fence
// stale workers: results are accepted only for the current token.
package protocol
