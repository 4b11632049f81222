// Package executorsvc is the admin's side of the executor protocol
// (sdk/protocol): what a heartbeat, a batch of results, a batch of log lines
// and a deregistration do to the platform database, and what the executor
// is told in return.
//
// Its methods take decoded protocol messages and return protocol answers;
// they know nothing of HTTP. admin/api authenticates the request (HMAC
// signature, nonce, body limit), decodes it, calls the Service and maps the
// typed errors to HTTP statuses: ErrInvalid is the executor's mistake (400),
// ErrConflict a request the admin's records contradict (409; ErrUnknownExecutor
// is one), anything else a database failure (500, logged).
//
// The limits a request is held to are named constants (limits.go), each
// saying which column or which cost it protects.
package executorsvc
