package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/shardjob/shardjob/admin/partition"
)

// settingPartitionCount names the partition count in installation_setting.
const settingPartitionCount = "partition_count"

// PartitionCountError is returned by AgreePartitionCount when the store
// was opened with another partition count than the installation's. Every
// job's stored partition depends on the count, so an admin with another
// one would fire the wrong partitions.
type PartitionCountError struct {
	Recorded   int // the installation's count
	Configured int // Config.PartitionCount
}

func (e *PartitionCountError) Error() string {
	return fmt.Sprintf("this installation schedules with %d partitions (recorded by the first admin that started), "+
		"and this admin was started with %d: start every admin with %d, or change the count with "+
		"'shardjob-admin repartition --count %d' while every admin is stopped (docs/operations.md)",
		e.Recorded, e.Configured, e.Recorded, e.Configured)
}

// RecordedPartitionCount is the installation's partition count as
// recorded, and false when none is recorded yet.
func (s *Store) RecordedPartitionCount(ctx context.Context) (int, bool, error) {
	v, err := s.q.SettingGet(ctx, s.db, settingPartitionCount)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("read the recorded partition count: %w", err)
	}
	return int(v), true, nil
}

// AgreePartitionCount records Config.PartitionCount as the installation's
// partition count unless one is recorded, and returns a
// *PartitionCountError when the recorded count differs. An admin calls it
// before it owns or fires any partition.
func (s *Store) AgreePartitionCount(ctx context.Context) error {
	if _, err := s.q.SettingRecord(ctx, s.db, settingRecordParams{Name: settingPartitionCount, Value: int64(s.parts)}); err != nil {
		return fmt.Errorf("record the partition count: %w", err)
	}
	recorded, _, err := s.RecordedPartitionCount(ctx)
	if err != nil {
		return err
	}
	if recorded != s.parts {
		return &PartitionCountError{Recorded: recorded, Configured: s.parts}
	}
	return nil
}

// repartitionBatch is how many job ids one statement of Repartition
// covers while it forgets the jobs' partitions.
const repartitionBatch = 10000

// RepartitionResult says what Repartition did.
type RepartitionResult struct {
	From, To int   // the partition counts before (0: none recorded) and after
	Jobs     int64 // jobs whose partition was computed again
}

// Repartition changes the installation's partition count to count: it
// forgets every job's partition (by id ranges of repartitionBatch, one
// statement each), then in one transaction forgets every partition's
// fencing record and records count, then fills every job's partition
// for count. It must run while no admin runs: an admin started with the
// former count would refuse to start afterwards, but one that is running
// would go on firing by the former count. It can be run again after a
// failure: until the transaction commits, the installation keeps its
// former count (the admins refill what was forgotten by that count).
func (s *Store) Repartition(ctx context.Context, count int) (RepartitionResult, error) {
	if count < 1 || count > partition.MaxCount {
		return RepartitionResult{}, fmt.Errorf("partition count %d: must be 1-%d", count, partition.MaxCount)
	}
	from, _, err := s.RecordedPartitionCount(ctx)
	if err != nil {
		return RepartitionResult{}, err
	}
	top, err := s.q.JobIDMax(ctx, s.db)
	if err != nil {
		return RepartitionResult{}, fmt.Errorf("the largest job id: %w", err)
	}
	for after := int64(0); after < top; after += repartitionBatch {
		if _, err := s.q.JobsPartitionClear(ctx, s.db, jobsPartitionClearParams{After: after, Upto: after + repartitionBatch}); err != nil {
			return RepartitionResult{}, fmt.Errorf("forget the partition of jobs %d-%d: %w", after+1, after+repartitionBatch, err)
		}
	}
	err = s.Tx(ctx, func(tx *Tx) error {
		if _, err := s.q.PartitionsForget(ctx, tx.tx); err != nil {
			return fmt.Errorf("forget the partitions' records: %w", err)
		}
		if _, err := s.q.SettingPut(ctx, tx.tx, settingPutParams{Name: settingPartitionCount, Value: int64(count)}); err != nil {
			return fmt.Errorf("record the partition count: %w", err)
		}
		return nil
	})
	if err != nil {
		return RepartitionResult{}, err
	}
	jobs, err := s.fillJobPartitions(ctx, count)
	if err != nil {
		return RepartitionResult{From: from, To: count, Jobs: jobs},
			fmt.Errorf("%w (the count is recorded: the admins fill the rest when they start)", err)
	}
	return RepartitionResult{From: from, To: count, Jobs: jobs}, nil
}
