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

// CheckPartitionEpoch reads the partition's row with a shared lock inside
// the transaction and returns ErrStaleEpoch unless its epoch equals epoch
// (a partition never claimed has none, and fails too). The lock is held
// until the transaction ends, so a successor's ClaimPartitions waits for
// it, and the transaction cannot commit after the successor took over.
func (t *Tx) CheckPartitionEpoch(ctx context.Context, partition int, epoch int64) error {
	cur, err := t.s.q.PartitionEpochShared(ctx, t.tx, partition)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%w (partition %d: ours %d, never claimed)", ErrStaleEpoch, partition, epoch)
	}
	if err != nil {
		return fmt.Errorf("read the epoch of partition %d: %w", partition, err)
	}
	if cur != epoch {
		return fmt.Errorf("%w (partition %d: ours %d, recorded %d)", ErrStaleEpoch, partition, epoch, cur)
	}
	return nil
}
