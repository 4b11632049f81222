// Package dispatch owns the push protocol to executors.
//
// Pusher is the interface work is pushed through (assign, cancel,
// release); Client implements it with signed HTTP requests, and the
// XXL-JOB router (admin/xxljob) wraps a Client in one. BuildAssignments
// turns attempt rows (store.DispatchSlot) into wire assignments, grouped by
// run, each carrying all of its slots (never one per slot): the scheduler's
// pushes, the heartbeat responses of admin/executorsvc and the XXL-JOB
// prober all send them. A failed push is not fatal: unacknowledged
// assignments are delivered again in the executor's next heartbeat
// response.
package dispatch
