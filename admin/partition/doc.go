// Package partition splits the jobs of an installation between the admin
// replicas. It is pure logic — no I/O, no clock, no goroutines, no
// randomness — so it is tested exhaustively; electing the leader,
// publishing the assignment (in ZooKeeper) and claiming epochs in the
// database are done elsewhere.
//
// # Partitions
//
// A partition is a fixed slice of the jobs: every job hashes into one of
// Count logical partitions (DefaultCount, 256, unless configured; at most
// MaxCount), and whoever owns a partition schedules its jobs. Of computes
// the partition of a job: a multiplicative (Fibonacci) hash of the job
// id, scaled to the count, simple enough to be computed in SQL as well
// (the database fills job.partition_id with it). Job ids are
// auto-increment integers; consecutive ids land far apart, so every
// partition gets its fair share of them (ids 1 to 256,000 on 256
// partitions: 999 to 1,001 each) and jobs created together do not pile up
// on one replica. The count is fixed per installation:
// changing it moves almost every job to another partition.
//
// # The assignment
//
// An Assignment gives each partition an owner (an admin id, "" for nobody)
// and an epoch. The elected leader computes it with Rebalance from the
// previous assignment and the list of live admin replicas, whenever that
// list changes, and publishes it; each replica then schedules the jobs of
// the partitions it owns (Owned), after claiming their epochs.
//
// Balance. With n live members, every member owns floor(count/n) or
// ceil(count/n) partitions, and exactly count%n of them own the ceiling.
// The ceilings go to the members that hold the most already (ties: the
// lower id), because that is what moves the fewest partitions.
//
// Minimal movement. A partition whose owner is still alive keeps it unless
// its owner holds more than its share. The partitions that change owner are
// exactly the ones whose owner is gone (or that had none) and the surplus
// of the over-loaded members: nothing else moves, and nothing moves between
// two members that both stay unless one of them was over its share. So a
// member that joins a balanced assignment of N members receives about
// count/(N+1) partitions, taken from the others, and one that leaves hands
// only its own partitions to the others. Ownership is worth keeping: a
// move costs a claim in the database and a pause in the scheduling of the
// partition's jobs.
//
// Determinism. The result depends only on the inputs: members are sorted
// (duplicates and "" dropped), ties go to the lower id, then to the lower
// partition. An over-loaded member gives up partitions evenly spaced over
// those it holds, and the partitions to hand out are dealt in partition
// order, each to the least-loaded member still below its share, so a
// member's partitions are spread over the whole range rather than bunched
// at one end.
//
// # Epochs
//
// Each partition has its own fencing epoch. Whenever a partition gets a new
// owner, Rebalance gives it the epoch of the new assignment; the partitions
// that keep their owner keep their epoch, so their owner need not claim them
// again. The new owner claims the epoch in the database, and the database
// refuses a claim — and every write made under a claim — whose epoch is not
// above the one it recorded for the partition. That is the fence: a former
// owner that was paused (a long GC, a SIGSTOP, a network partition) and
// wakes up still believing it owns the partition writes with the old epoch
// and is refused. The fence only holds if the epochs of a partition
// strictly increase, which is why Rebalance refuses an epoch that is not
// greater than every epoch of the previous assignment.
//
// NextEpoch builds these epochs as term<<32 | seq: term is the leader's
// election epoch and seq counts the assignments the leader has written in
// that term, from 1. Within a term the epochs grow with seq; a new leader
// has a greater term, so its first epoch is above every epoch any earlier
// leader could have written, even one it never saw.
package partition
