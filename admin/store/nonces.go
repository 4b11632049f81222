package store

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"
)

// Defaults of Nonces.
const (
	// NonceKeepExtra is how long a nonce is kept past its expiry: replicas'
	// clocks differ, and a nonce purged by a replica whose clock is ahead
	// must still be refused by one whose clock is behind.
	NonceKeepExtra = 30 * time.Second
	// NoncePurgeEvery is how often a replica deletes expired nonces.
	NoncePurgeEvery = 5 * time.Second
	// NoncePurgeBatch bounds the rows one purge deletes (a short statement);
	// a purge that deletes a full batch lets the next claim purge again.
	NoncePurgeBatch = 5000
)

// Nonces records the nonces of signed executor requests in the platform
// database (table executor_nonce), so that every admin replica refuses a
// request any replica has accepted: a captured request cannot be replayed
// to another replica within the clock window. It implements
// protocol.NonceStore. Each Claim is one insert; every NoncePurgeEvery one
// claim of each replica also deletes up to NoncePurgeBatch expired rows.
// It is safe for concurrent use.
type Nonces struct {
	st  *Store
	log *slog.Logger
	now func() time.Time

	nextPurge atomic.Int64 // Unix ms
}

// NewNonces returns the nonce store of st. A nil log is slog.Default(); a
// nil now is time.Now.
func NewNonces(st *Store, log *slog.Logger, now func() time.Time) *Nonces {
	if log == nil {
		log = slog.Default()
	}
	if now == nil {
		now = time.Now
	}
	return &Nonces{st: st, log: log, now: now}
}

// Claim records nonce, valid until expires, and reports whether it was new;
// false means some replica accepted a request with it already.
func (n *Nonces) Claim(ctx context.Context, nonce string, expires time.Time) (bool, error) {
	c, err := n.st.q.NonceClaim(ctx, n.st.db, nonceClaimParams{Nonce: nonce, ExpiresAt: expires.UnixMilli()})
	if err != nil {
		return false, fmt.Errorf("record request nonce: %w", err)
	}
	if c == 0 {
		return false, nil
	}
	now := n.now().UnixMilli()
	if next := n.nextPurge.Load(); now >= next && n.nextPurge.CompareAndSwap(next, now+NoncePurgeEvery.Milliseconds()) {
		deleted, err := n.Purge(ctx, n.now().Add(-NonceKeepExtra), NoncePurgeBatch)
		switch {
		case err != nil:
			// The request stays accepted; the next purge catches up.
			n.log.Warn("purge of expired executor request nonces failed", "err", err)
		case deleted == NoncePurgeBatch:
			n.nextPurge.Store(0) // more to delete: the next claim goes on
		}
	}
	return true, nil
}

// Purge deletes up to limit nonces that expired before cutoff and returns
// how many it deleted.
func (n *Nonces) Purge(ctx context.Context, cutoff time.Time, limit int) (int64, error) {
	c, err := n.st.q.NoncePurge(ctx, n.st.db, noncePurgeParams{ExpiresAt: cutoff.UnixMilli(), Limit: limit})
	if err != nil {
		return 0, fmt.Errorf("purge expired request nonces: %w", err)
	}
	return c, nil
}
