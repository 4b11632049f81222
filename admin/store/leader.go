package store

import (
	"context"
	"fmt"

	"github.com/jmoiron/sqlx"
)

// LeaderRecord is the fencing record of the current leader.
type LeaderRecord struct {
	Epoch   int64  `db:"epoch"`
	Holder  string `db:"holder"`
	SinceMS int64  `db:"since_ms"`
}

// ClaimEpoch records holder as leader with epoch if epoch is larger than the
// stored one. It returns false when a larger or equal epoch is already
// recorded: the caller must not lead.
func (s *Store) ClaimEpoch(ctx context.Context, epoch int64, holder string) (bool, error) {
	n, err := s.q.LeaderClaim(ctx, s.db, leaderClaimParams{Epoch: epoch, Holder: holder})
	if err != nil {
		return false, fmt.Errorf("claim leader epoch %d: %w", epoch, err)
	}
	return n == 1, nil
}

// Leader returns the fencing record.
func (s *Store) Leader(ctx context.Context) (LeaderRecord, error) {
	l, err := s.q.LeaderGet(ctx, s.db)
	if err != nil {
		return l, fmt.Errorf("read leader record: %w", err)
	}
	return l, nil
}

// CheckEpoch reads the leader row with a shared lock inside the
// transaction and returns ErrStaleEpoch unless its epoch equals epoch. The
// lock is held until the transaction ends, so a successor's ClaimEpoch
// waits for it and it cannot commit after the successor took over.
func (t *Tx) CheckEpoch(ctx context.Context, epoch int64) error {
	return t.s.checkEpoch(ctx, t.tx, epoch)
}

// checkEpoch is Tx.CheckEpoch for the store's own transactions.
func (s *Store) checkEpoch(ctx context.Context, tx *sqlx.Tx, epoch int64) error {
	cur, err := s.q.LeaderGetShared(ctx, tx)
	if err != nil {
		return fmt.Errorf("read leader epoch: %w", err)
	}
	if cur != epoch {
		return fmt.Errorf("%w (ours %d, recorded %d)", ErrStaleEpoch, epoch, cur)
	}
	return nil
}
