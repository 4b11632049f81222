// Package ownership splits the scheduling partitions (admin/partition)
// between the live admin replicas through the coordinator (admin/coord)
// and fences each partition in the database (admin/store): it is the
// glue between the three, with no scheduling in it.
//
// Two loops run on a Keeper:
//
//   - Rebalance, on the leader, for the length of its term: it watches the
//     member list and the published assignment, and whenever a replica
//     joins or leaves it computes the next assignment (partition.Rebalance:
//     balanced, fewest moves, a new epoch for each moved partition built
//     from the term, partition.NextEpoch) and publishes it. With ZooKeeper
//     the write is one transaction with a check that the leader's election
//     node still exists, so a leader whose session expired cannot publish.
//   - Run, on every replica: it watches the published assignment; it drops
//     at once the partitions that moved away (and all of them while the
//     coordinator session may be lost: coord.Published.Trusted), then
//     claims the new ones at their epochs (store.ClaimPartitions, which
//     waits for the former owner's fenced transactions and only ever raises
//     an epoch) and owns those the database granted. Owned reports the set.
//
// Why a paused former owner writes nothing: every scheduling write of a
// partition reads the partition's row with a shared lock and checks its
// own epoch (store.Tx.CheckPartitionEpoch). A successor claims a larger
// epoch before it schedules anything; the claim waits for the transactions
// that hold the row and makes every later check of the old epoch fail,
// whatever the former owner believes.
//
// A replica that joins receives about P/N partitions, taken from the
// others; a replica that leaves (its member node disappears when its
// session expires or it closes) hands its partitions to the others; the
// partitions of the replicas that stay and are not over their share keep
// their owner and their epoch, so their scheduling is not interrupted.
package ownership
