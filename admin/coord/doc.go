// Package coord elects one leader among the admin replicas and tracks which
// replicas are alive.
//
// Only the leader fires schedules and assigns slots; every replica serves
// the API, the console and the executors. The admin depends on the small
// Elector interface; two implementations exist:
//
//   - ZKElector (NewZK): ZooKeeper, for production.
//   - Local (NewLocal): in-process, for standalone mode, and for tests that
//     run several candidates in one process (they share a LocalGroup).
//
// A typical use:
//
//	e, err := coord.NewZK(coord.ZKConfig{Servers: servers, ID: id, Address: url})
//	...
//	defer e.Close()
//	err = e.Lead(ctx, func(term context.Context, epoch int64) {
//		if !store.ClaimEpoch(term, epoch, id) { return } // a newer leader exists: step down
//		runScheduler(term, epoch)                         // returns promptly once term is done
//	})
//
// # Election
//
// Each campaigning replica creates an ephemeral-sequential candidate node
// under Root/election, through CreateProtectedEphemeralSequential: the name
// carries a random GUID ("_c_<guid>-n-0000000042"), so that a create whose
// reply was lost with the connection is found again instead of being
// created twice. The node's data names its owner ({"id","address"}).
//
// The candidate with the lowest sequence number leads. Every other
// candidate watches only its predecessor, the next lower node (a GetW,
// which leaves no watch behind when the node is already gone): when that
// node goes away, one candidate wakes up, lists the children again and
// either leads or watches its new predecessor. There is no herd: deleting
// the leader's node wakes exactly one replica, whatever their number.
//
// A leader also watches its own node; when it disappears (an operator, a
// tool), the term ends with ErrNodeDeleted. When a term ends for whatever
// reason, the replica deletes its node and creates a new one: it goes to
// the back of the queue, and if it wins again it is with a new epoch.
// Before creating a node, a replica deletes any election node its current
// session still owns (a node whose create reply was lost, or one it could
// not delete while disconnected), so that no orphan can block the queue.
//
// # Epoch
//
// The epoch of a term is the sequence number of the winner's node plus
// one. ZooKeeper numbers the children of Root/election from 0, strictly
// increasing, so epochs strictly increase across successive leaders; the
// +1 makes the first epoch 1, above the 0 the leader table starts with.
// (Never delete Root/election: its counter would start again at 0, and the
// leader table would refuse every claim until the epochs caught up.)
//
// Local hands out epochs from a counter per LocalGroup, starting above
// LocalConfig.BaseEpoch, which the admin reads from the leader table so a
// restarted standalone admin continues above the epoch it stored.
//
// # Connection state machine
//
// go-zookeeper/zk has traps: it drops session events when nobody drains
// its channel fast enough, it silently opens a new session after the old
// one expired (the ephemeral nodes of the old one are gone and are not
// recreated), and a Disconnected event says nothing about whether the
// session still lives. ZKElector therefore takes the events from the
// client's callback, which sees all of them, in order, and keeps this state
// (the leader's view):
//
//	state         event                      action                                    next
//	------------  -------------------------  ----------------------------------------  ------------
//	connecting    HasSession                 register the member; campaign             connected
//	connected     Disconnected               arm the trust timer (see below)           disconnected
//	disconnected  HasSession, same session   stop the timer; the leader checks that    connected
//	                                         its node still exists; the term goes on
//	disconnected  trust timer fires          cancel the term (ErrMaybeLost)            maybe-lost
//	maybe-lost    HasSession, same session   delete the old node; new candidate node   connected
//	any           Expired, or HasSession     cancel the term (ErrSessionExpired)       expired
//	              with a new session id
//	expired       HasSession (new session)   delete the old node if it still exists;   connected
//	                                         new candidate node; member node again
//
// In detail:
//
//   - Disconnected: the session may still be alive, or may expire at any
//     moment. The leader keeps its term for at most MaybeLostAfter (default
//     2/3 of the session timeout), counted from the last byte the client
//     read from a server, not from the event: the client only notices a
//     silent server after 2/3 of the session timeout, so counting from the
//     event could outlast the session. The window is also capped at 2/3 of
//     the session timeout the server granted, if it granted less than asked.
//   - HasSession again, same session id, before the timer fired: the
//     session never ended and the ephemeral node should still be there; the
//     timer stops and the term goes on, after the leader checked that its
//     node still exists (the server also re-fires the leader's own watch if
//     the node was deleted meanwhile).
//   - Timer fired: the term is cancelled with ErrMaybeLost. The session may
//     still come back; the replica then deletes its old node and campaigns
//     with a new one, so its next term has a new epoch.
//   - Expired (or a HasSession with a new session id): the term is
//     cancelled at once with ErrSessionExpired; in the new session the
//     replica deletes the old node should it somehow still exist, creates a
//     new candidate node and registers as a member again.
//
// One more go-zookeeper trap: v1.0.4 reads and writes its last-seen zxid
// from two goroutines without a lock when it re-sends its watches after a
// reconnection. ZKElector sends no request while disconnected or until the
// watches went out again (it sees them pass on the socket), which keeps its
// own traffic out of that race.
//
// And one more: v1.0.4 waits for the server's answer to its handshake for
// 10 times its read timeout (40s for a 6s session), and Close cannot cut
// that wait short. A server that accepts a connection and never answers
// would keep the replica away from ZooKeeper, and from the election, long
// after its session expired. ZooKeeper 3.8 does exactly that to the
// connections that arrive while it loads its database after a restart (its
// close of them fails: ZOOKEEPER-5051), which is when every replica
// reconnects. ZKElector's dialer bounds the handshake to 2/3 of the session
// timeout, the silence after which the client drops an established
// connection too; the client then tries again.
//
// # Why a paused leader is still safe
//
// Nothing in this package can stop a leader that does not run: a process
// paused by a GC, SIGSTOP or a VM migration wakes up believing it leads,
// and acts before it handles any event; its session may have expired and
// another replica may lead. And a leader cut off from ZooKeeper leads on
// for up to MaybeLostAfter, while the others may already have elected
// someone (the tests measure that overlap). The timer shortens the window;
// it cannot close it.
//
// What makes two leaders harmless is the epoch fence in the database
// (admin/store): on winning, a leader runs
// UPDATE leader SET epoch=?, holder=? WHERE id=1 AND epoch < ? and steps
// down (returns from lead) on 0 rows; every scheduling transaction reads
// the leader row with a shared lock and aborts unless the epoch is still
// its own. A successor's claim waits for, or invalidates, every
// transaction of the old leader, so a stale leader writes nothing once a
// larger epoch was claimed, whatever its local state says. Epochs from this
// package only have to be unique and increasing, which ZooKeeper's
// sequence numbers guarantee.
//
// # Membership
//
// Each ZKElector creates the ephemeral node Root/members/<ID> with
// {"id","address","since"} when it starts, whether or not it campaigns,
// and again after a session expiry or if the node was deleted. If the node
// exists and belongs to another session (a previous run of this replica
// whose session has not expired yet, or a second replica with the same
// ID), it waits for that node to go. Members lists these nodes and marks
// the owner of the lowest election node as the leader, with its epoch:
// ZooKeeper's view, which can differ briefly from what a disconnected
// leader believes. Local lists the open electors of its group.
//
// # Life cycle
//
// NewZK connects (failing after ConnectTimeout with an error naming the
// servers), creates the paths and registers the member. Lead campaigns in
// the caller's goroutine until its context ends; only one Lead runs at a
// time per elector. Close cancels the campaign, waits for lead to return,
// deletes the nodes, closes the session and waits for the client's
// goroutines: nothing is left running.
package coord
