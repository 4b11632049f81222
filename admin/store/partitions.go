package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

	"github.com/jmoiron/sqlx"
)

// PartitionRecord is the fencing record of one scheduling partition
// (docs/architecture.md, "Partitions"): the epoch its current owner
// claimed, who that is, and when (database clock, Unix ms).
type PartitionRecord struct {
	Partition int    `db:"id" json:"partition"`
	Epoch     int64  `db:"epoch" json:"epoch"`
	Holder    string `db:"holder" json:"holder"`
	ClaimedMS int64  `db:"claimed_ms" json:"claimed_ms"`
}

// ErrStalePartitionEpoch is the error of a partition's fence: the
// partition's recorded epoch is no longer the caller's (it was handed
// over). errors.Is reports it as ErrStaleEpoch too, so that every
// scheduling loop treats both fences alike.
var ErrStalePartitionEpoch error = stalePartitionEpoch{}

type stalePartitionEpoch struct{}

func (stalePartitionEpoch) Error() string {
	return "partition epoch is no longer ours: the partition was handed over"
}

func (stalePartitionEpoch) Is(target error) bool { return target == ErrStaleEpoch }

// PartitionEpoch is a partition's recorded epoch.
type PartitionEpoch struct {
	Partition int   `db:"id"`
	Epoch     int64 `db:"epoch"`
}

// PartitionNextDue is a partition's earliest next firing (Unix ms; NULL
// when none of its jobs is due to fire).
type PartitionNextDue struct {
	Partition int           `db:"id"`
	NextDue   sql.NullInt64 `db:"next_due"`
}

// PartitionClaim asks for one partition at one epoch.
type PartitionClaim struct {
	Partition int
	Epoch     int64
}

// ClaimPartitions records holder as the owner of each claimed partition
// whose recorded epoch is below the claim's, in one transaction, in
// partition order (so that two claimers never wait for each other in a
// cycle). It returns the partitions holder owns at their claimed epochs
// afterwards: those it won now, and those already recorded with the same
// epoch and holder (a claim repeated after a lost answer). A partition
// recorded with a larger epoch, or with the same epoch by another holder,
// is not returned: the caller must not schedule it.
//
// The claim waits for the transactions of the former owner that hold the
// partition's row (CheckPartitionEpoch); once it committed, those
// transactions fail their check.
func (s *Store) ClaimPartitions(ctx context.Context, holder string, claims []PartitionClaim) ([]int, error) {
	if holder == "" {
		return nil, errors.New("claim partitions: empty holder: give the admin's id")
	}
	sorted := slices.Clone(claims)
	slices.SortFunc(sorted, func(a, b PartitionClaim) int { return a.Partition - b.Partition })
	for i, c := range sorted {
		if c.Partition < 0 || c.Epoch <= 0 {
			return nil, fmt.Errorf("claim partitions: partition %d at epoch %d: partitions are >= 0 and epochs > 0", c.Partition, c.Epoch)
		}
		if i > 0 && sorted[i-1].Partition == c.Partition {
			return nil, fmt.Errorf("claim partitions: partition %d claimed twice in one call", c.Partition)
		}
	}
	var won []int
	err := s.inTx(ctx, func(tx *sqlx.Tx) error {
		won = won[:0]
		for _, c := range sorted {
			if _, err := s.q.PartitionCreate(ctx, tx, c.Partition); err != nil {
				return fmt.Errorf("create the row of partition %d: %w", c.Partition, err)
			}
			n, err := s.q.PartitionClaim(ctx, tx, partitionClaimParams{Epoch: c.Epoch, Holder: holder, ID: c.Partition})
			if err != nil {
				return fmt.Errorf("claim partition %d at epoch %d: %w", c.Partition, c.Epoch, err)
			}
			if n == 1 {
				won = append(won, c.Partition)
				continue
			}
			cur, err := s.q.PartitionGet(ctx, tx, c.Partition)
			if err != nil {
				return fmt.Errorf("read partition %d: %w", c.Partition, err)
			}
			if cur.Epoch == c.Epoch && cur.Holder == holder {
				won = append(won, c.Partition)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("claim %d partitions for %s: %w", len(claims), holder, err)
	}
	return won, nil
}

// Partitions returns the fencing record of every partition ever claimed,
// in partition order.
func (s *Store) Partitions(ctx context.Context) ([]PartitionRecord, error) {
	rows, err := s.q.Partitions(ctx, s.db)
	if err != nil {
		return nil, fmt.Errorf("read partitions: %w", err)
	}
	return rows, nil
}

// PartitionsNextDue returns each claimed partition's earliest next
// firing, in partition order: one index read per partition.
func (s *Store) PartitionsNextDue(ctx context.Context) ([]PartitionNextDue, error) {
	rows, err := s.q.PartitionsNextDue(ctx, s.db)
	if err != nil {
		return nil, fmt.Errorf("the partitions' next firings: %w", err)
	}
	return rows, nil
}

// CheckPartitionEpoch reads the partition's row with a shared lock inside
// the transaction and returns ErrStaleEpoch unless its epoch equals epoch
// (a partition never claimed has none, and fails too). The lock is held
// until the transaction ends, so a successor's ClaimPartitions waits for
// it, and the transaction cannot commit after the successor took over.
func (t *Tx) CheckPartitionEpoch(ctx context.Context, partition int, epoch int64) error {
	cur, err := t.s.q.PartitionEpochShared(ctx, t.tx, partition)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%w (partition %d: ours %d, never claimed)", ErrStalePartitionEpoch, partition, epoch)
	}
	if err != nil {
		return fmt.Errorf("read the epoch of partition %d: %w", partition, err)
	}
	if cur != epoch {
		return fmt.Errorf("%w (partition %d: ours %d, recorded %d)", ErrStalePartitionEpoch, partition, epoch, cur)
	}
	return nil
}

// PartitionCount is the installation's number of scheduling partitions
// (Config.PartitionCount).
func (s *Store) PartitionCount() int { return s.parts }

// fillPartitionBatch is how many jobs FillJobPartitions fills per
// statement.
const fillPartitionBatch = 2000

// FillJobPartitions fills the partition_id of the jobs that have none
// (jobs of an older schema, jobs loaded in bulk) with partition.Of(id,
// PartitionCount), fillPartitionBatch at a time, and returns how many it
// filled. Any replica may run it at any time: the value depends on the id
// only. Each batch reads only the unfilled entries of
// idx_job_partition_due.
func (s *Store) FillJobPartitions(ctx context.Context) (int64, error) {
	return s.fillJobPartitions(ctx, s.parts)
}

// fillJobPartitions is FillJobPartitions for count partitions.
func (s *Store) fillJobPartitions(ctx context.Context, count int) (int64, error) {
	var filled int64
	for {
		ids, err := s.q.JobsPartitionUnset(ctx, s.db, fillPartitionBatch)
		if err != nil {
			return filled, fmt.Errorf("jobs without a partition: %w", err)
		}
		if len(ids) == 0 {
			return filled, nil
		}
		if _, err := s.q.JobsPartitionFill(ctx, s.db, jobsPartitionFillParams{Count: count, IDs: ids}); err != nil {
			return filled, fmt.Errorf("fill the partition of %d jobs: %w", len(ids), err)
		}
		filled += int64(len(ids))
		if len(ids) < fillPartitionBatch {
			return filled, nil
		}
	}
}

// FillAllJobPartitions is FillJobPartitions in one statement, for
// loaders that write jobs in bulk (tests, benchmarks): one transaction
// that locks every job it fills.
func (s *Store) FillAllJobPartitions(ctx context.Context) error {
	if _, err := s.q.JobsPartitionFillAll(ctx, s.db, s.parts); err != nil {
		return fmt.Errorf("fill the partition of every job: %w", err)
	}
	return nil
}

// fillPartition fills the partition_id of a job just inserted, in its
// transaction.
func (s *Store) fillPartition(ctx context.Context, tx dbtx, id int64) error {
	if _, err := s.q.JobsPartitionFill(ctx, tx, jobsPartitionFillParams{Count: s.parts, IDs: []int64{id}}); err != nil {
		return fmt.Errorf("fill the partition of job %d: %w", id, err)
	}
	return nil
}

// ClaimDueIn is ClaimDue for the jobs of some partitions (their order:
// by partition, oldest first within one). Call after CheckPartitionEpochs
// for the same partitions.
func (t *Tx) ClaimDueIn(ctx context.Context, partitions []int, nowMS int64, limit int) ([]Job, error) {
	if len(partitions) == 0 {
		return nil, nil
	}
	out, err := t.s.q.JobClaimDueIn(ctx, t.tx, jobClaimDueInParams{Partitions: partitions, NextFireAt: nowMS, Limit: limit})
	if err != nil {
		return nil, fmt.Errorf("claim due jobs of %d partitions: %w", len(partitions), err)
	}
	return out, nil
}

// ResumeDueIn is ResumeDue for the jobs of some partitions.
func (t *Tx) ResumeDueIn(ctx context.Context, partitions []int, nowMS int64) (int64, error) {
	if len(partitions) == 0 {
		return 0, nil
	}
	n, err := t.s.q.JobsResumeDueIn(ctx, t.tx, jobsResumeDueInParams{PauseUntil: nowMS, Partitions: partitions})
	if err != nil {
		return 0, fmt.Errorf("resume jobs paused until now: %w", err)
	}
	return n, nil
}

// NextDueIn is NextDue for the jobs of some partitions: one index dive
// per partition (a partition never claimed has no row and is left out).
func (s *Store) NextDueIn(ctx context.Context, partitions []int) (sql.NullInt64, error) {
	if len(partitions) == 0 {
		return sql.NullInt64{}, nil
	}
	v, err := s.q.JobNextDueIn(ctx, s.db, partitions)
	if err != nil {
		return v, fmt.Errorf("next due job of %d partitions: %w", len(partitions), err)
	}
	return v, nil
}

// CountDueIn is CountDue for the jobs of some partitions.
func (s *Store) CountDueIn(ctx context.Context, partitions []int, nowMS int64, limit int) (int, error) {
	if len(partitions) == 0 {
		return 0, nil
	}
	n, err := s.q.JobCountDueIn(ctx, s.db, jobCountDueInParams{Partitions: partitions, NextFireAt: nowMS, Limit: limit})
	if err != nil {
		return 0, fmt.Errorf("count due jobs of %d partitions: %w", len(partitions), err)
	}
	return n, nil
}

// NextPauseEndIn is NextPauseEnd for the jobs of some partitions.
func (s *Store) NextPauseEndIn(ctx context.Context, partitions []int) (sql.NullInt64, error) {
	if len(partitions) == 0 {
		return sql.NullInt64{}, nil
	}
	v, err := s.q.JobNextPauseEndIn(ctx, s.db, partitions)
	if err != nil {
		return v, fmt.Errorf("next pause end of %d partitions: %w", len(partitions), err)
	}
	return v, nil
}

// CheckPartitionEpochs is CheckPartitionEpoch for several partitions in
// one statement: it reads their rows with a shared lock (held until the
// transaction ends) and returns ErrStaleEpoch unless each one's epoch is
// owned[p]. partitions must be sorted and owned must have each of them.
func (t *Tx) CheckPartitionEpochs(ctx context.Context, partitions []int, owned map[int]int64) error {
	if len(partitions) == 0 {
		return nil
	}
	rows, err := t.s.q.PartitionEpochsShared(ctx, t.tx, partitions)
	if err != nil {
		return fmt.Errorf("read the epochs of %d partitions: %w", len(partitions), err)
	}
	got := make(map[int]int64, len(rows))
	for _, r := range rows {
		got[r.Partition] = r.Epoch
	}
	for _, p := range partitions {
		ours := owned[p]
		cur, ok := got[p]
		if !ok {
			return fmt.Errorf("%w (partition %d: ours %d, never claimed)", ErrStalePartitionEpoch, p, ours)
		}
		if cur != ours {
			return fmt.Errorf("%w (partition %d: ours %d, recorded %d)", ErrStalePartitionEpoch, p, ours, cur)
		}
	}
	return nil
}
