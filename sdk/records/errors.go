package records

import (
	"errors"
	"fmt"
	"strconv"
	"time"
)

var (
	// ErrFenced means the shard lock belongs to a newer token (or another
	// holder): this attempt was replaced and must write nothing more. Process
	// stops at once and returns a *FencedError, which wraps it.
	ErrFenced = errors.New("fenced off: the shard lock belongs to another attempt")

	// ErrLockHeld means another instance holds the shard lock with the same
	// token and a live lease. It can be taken when the lease expires; a
	// newer token takes it at once. Returned as a *LockHeldError.
	ErrLockHeld = errors.New("shard lock held by another instance with the same token")

	// ErrSlotBusy is returned by Process when this Processor is already
	// running Process for the same attempt (job, run, slot and token). A
	// newer token for the same slot is not busy: it takes the slot over.
	ErrSlotBusy = errors.New("a Process call is already running for this attempt of the slot on this Processor")

	// ErrInvalidKey is returned by Process when the Source yields an empty
	// key or one longer than MaxKeyLen bytes (such a key cannot be stored
	// exactly in dedup_record). Nothing of that batch was claimed.
	ErrInvalidKey = errors.New("invalid record key")

	// ErrUncertain may be returned (wrapped) by a Func in External mode when
	// it cannot tell whether its effect happened (a timeout of the remote
	// call, say). The record is left pending and handled by the
	// UncertainPolicy, like a record left pending by a crash. In
	// Transactional mode it is an ordinary failure: the effect was rolled
	// back.
	ErrUncertain = errors.New("the record's effect may or may not have happened")

	// ErrRecordsFailed is wrapped by Result.Err when records failed.
	ErrRecordsFailed = errors.New("records failed")
)

// FencedError is returned when the shard lock does not belong to the
// attempt any more. It wraps ErrFenced.
type FencedError struct {
	JobID, RunID int64
	Slot         int
	Token        int64  // the token of this attempt
	HolderToken  int64  // the token holding the lock; 0 when the lock row is gone (purged)
	Holder       string // the instance holding the lock
	Op           string // what was refused: "acquire", "renew", "claim", "mark", …
}

func (e *FencedError) Error() string {
	who := "token " + strconv.FormatInt(e.HolderToken, 10) + " (" + e.Holder + ")"
	if e.HolderToken == 0 {
		who = "nobody (the lock row is gone: purged, or never acquired)"
	}
	return fmt.Sprintf("%s refused: shard lock of job %d run %d slot %d is held by %s, not by token %d: "+
		"this attempt was replaced and writes nothing more", e.Op, e.JobID, e.RunID, e.Slot, who, e.Token)
}

func (e *FencedError) Unwrap() error { return ErrFenced }

// LockHeldError is returned by Acquire when another instance holds the lock
// with the same token and a lease that has not expired. It wraps
// ErrLockHeld.
type LockHeldError struct {
	JobID, RunID int64
	Slot         int
	Token        int64
	Holder       string        // the other instance
	ExpiresIn    time.Duration // until its lease ends (database clock)
}

func (e *LockHeldError) Error() string {
	return fmt.Sprintf("shard lock of job %d run %d slot %d: token %d is held by instance %q for %s more; "+
		"it can be taken when that lease expires (a newer token takes it at once)",
		e.JobID, e.RunID, e.Slot, e.Token, e.Holder, e.ExpiresIn.Round(time.Millisecond))
}

func (e *LockHeldError) Unwrap() error { return ErrLockHeld }
