package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jmoiron/sqlx"
)

// Alarm delivery (admin/alarm, docs/alarms.md). An alarm is fanned out once
// into one delivery per destination; deliveries of the same destination and
// scope (a job, or an alarm kind when the alarm has no job) form a group,
// the unit of throttling and the unit a notifier claims with a lease. Times
// are the notifier's clock (tests inject one).

// Delivery statuses.
const (
	DeliveryPending = "pending"
	DeliverySent    = "sent"
	DeliveryFailed  = "failed" // gave up after the maximum number of attempts
)

// ErrLeaseLost reports that a claimed alarm batch was claimed again by
// another notifier after this one's lease expired; its outcome was not
// recorded (the other notifier will send it).
var ErrLeaseLost = errors.New("alarm batch lease expired: another notifier claimed it")

// AlarmRoute sends a job's alarms to a channel (Recipient "") or to an
// address on an email channel.
type AlarmRoute struct {
	JobID     int64  `db:"job_id" json:"-"`
	Channel   string `db:"channel" json:"channel"`
	Recipient string `db:"recipient" json:"recipient,omitempty"`
}

// AlarmRoutes returns the routes of a job.
func (s *Store) AlarmRoutes(ctx context.Context, jobID int64) ([]AlarmRoute, error) {
	out, err := s.q.AlarmRouteList(ctx, s.db, jobID)
	if err != nil {
		return nil, fmt.Errorf("alarm routes of job %d: %w", jobID, err)
	}
	return out, nil
}

// SetAlarmRoutes replaces the routes of a job.
func (s *Store) SetAlarmRoutes(ctx context.Context, jobID int64, routes []AlarmRoute) error {
	return s.inTx(ctx, func(tx *sqlx.Tx) error {
		if _, err := s.q.AlarmRouteDeleteJob(ctx, tx, jobID); err != nil {
			return fmt.Errorf("set alarm routes of job %d: %w", jobID, err)
		}
		for _, r := range routes {
			if _, err := s.q.AlarmRouteInsert(ctx, tx, alarmRouteInsertParams{JobID: jobID, Channel: r.Channel, Recipient: r.Recipient}); err != nil {
				return fmt.Errorf("set alarm routes of job %d: %w", jobID, err)
			}
		}
		return nil
	})
}

// AlarmDest is one destination of an alarm.
type AlarmDest struct {
	Channel   string
	Recipient string // "" for the channel's own destination
}

// alarmGroupKey names the throttling group of a destination and a scope.
func alarmGroupKey(d AlarmDest, a Alarm) (key string, jobID sql.NullInt64, kind string) {
	scope := "kind:" + a.Kind
	if a.JobID.Valid {
		scope, jobID = "job:"+strconv.FormatInt(a.JobID.Int64, 10), a.JobID
	} else {
		kind = a.Kind
	}
	sum := sha256.Sum256([]byte(d.Channel + "\x00" + d.Recipient + "\x00" + scope))
	return hex.EncodeToString(sum[:])[:40], jobID, kind
}

// FanOutAlarms claims up to limit alarms that have not been fanned out yet
// (SKIP LOCKED: concurrent notifiers take different alarms), creates one
// pending delivery per destination that dests returns (none: the alarm is
// not sent) and marks them fanned out, in one transaction. An alarm that
// follows an open alarm of its group (raised before it, not resolved) gets
// no delivery: a group sends one message, its first alarm's, until all of
// it is resolved. routes are the
// job's alarm routes (nil for alarms without a job). It returns the number
// of alarms and of deliveries.
func (s *Store) FanOutAlarms(ctx context.Context, now time.Time, limit int,
	dests func(a Alarm, routes []AlarmRoute) []AlarmDest) (alarms, deliveries int, err error) {
	err = s.inTx(ctx, func(tx *sqlx.Tx) error {
		alarms, deliveries = 0, 0
		claimed, err := s.q.AlarmFanOutClaim(ctx, tx, limit)
		if err != nil {
			return fmt.Errorf("claim alarms to fan out: %w", err)
		}
		if len(claimed) == 0 {
			return nil
		}
		ids := make([]int64, 0, len(claimed))
		for _, a := range claimed {
			ids = append(ids, a.ID)
		}
		following, err := s.q.AlarmFanOutFollowers(ctx, tx, ids)
		if err != nil {
			return fmt.Errorf("alarms that follow their group: %w", err)
		}
		follows := make(map[int64]bool, len(following))
		for _, id := range following {
			follows[id] = true
		}
		routes := map[int64][]AlarmRoute{}
		for _, a := range claimed {
			if follows[a.ID] {
				continue // one message per group: its first open alarm's
			}
			var rs []AlarmRoute
			if a.JobID.Valid {
				var ok bool
				if rs, ok = routes[a.JobID.Int64]; !ok {
					if rs, err = s.q.AlarmRouteList(ctx, tx, a.JobID.Int64); err != nil {
						return fmt.Errorf("alarm routes of job %d: %w", a.JobID.Int64, err)
					}
					routes[a.JobID.Int64] = rs
				}
			}
			for _, d := range dests(a, rs) {
				key, jobID, kind := alarmGroupKey(d, a)
				if _, err := s.q.AlarmGroupEnsure(ctx, tx, alarmGroupEnsureParams{
					GroupKey: key, Channel: d.Channel, Recipient: d.Recipient, JobID: jobID, Kind: kind,
				}); err != nil {
					return fmt.Errorf("alarm group: %w", err)
				}
				if _, err := s.q.AlarmDeliveryInsert(ctx, tx, alarmDeliveryInsertParams{AlarmID: a.ID, GroupKey: key, CreatedAt: ms(now)}); err != nil {
					return fmt.Errorf("alarm delivery: %w", err)
				}
				deliveries++
			}
		}
		if _, err := s.q.AlarmFanOutMark(ctx, tx, ids); err != nil {
			return fmt.Errorf("mark alarms fanned out: %w", err)
		}
		alarms = len(claimed)
		return nil
	})
	return alarms, deliveries, err
}

// AlarmCount counts the alarms of one kind (and job) in a batch.
type AlarmCount struct {
	Kind  string        `db:"kind"`
	JobID sql.NullInt64 `db:"job_id"`
	N     int           `db:"n"`
}

// AlarmBatch is what one message of a group carries: the oldest pending
// alarm alone, or — when alarms accumulated during the group's throttling
// window — a digest of all of its pending alarms.
type AlarmBatch struct {
	GroupKey  string
	Channel   string
	Recipient string
	JobID     sql.NullInt64 // scope: the job, or
	Kind      string        // the alarm kind when JobID is not valid
	Attempts  int           // failed attempts of this group so far
	Digest    bool
	Count     int          // alarms in the batch
	Counts    []AlarmCount // per kind and job, most frequent first
	Alarms    []Alarm      // the oldest alarms of the batch (at most sample)
	claim     string
}

// ClaimAlarmBatches claims up to limit groups that have pending deliveries
// and may send now (throttling window over, retry backoff over, no live
// lease), leases them to owner until now+lease, and returns one batch per
// group with up to sample alarms each. Concurrent notifiers claim different
// groups (SKIP LOCKED on MySQL; SQLite has a single writer).
func (s *Store) ClaimAlarmBatches(ctx context.Context, now time.Time, owner string, lease time.Duration, limit, sample int) ([]AlarmBatch, error) {
	var out []AlarmBatch
	err := s.inTx(ctx, func(tx *sqlx.Tx) error {
		out = out[:0]
		n := ms(now)
		groups, err := s.q.AlarmGroupsDue(ctx, tx, alarmGroupsDueParams{WindowUntil: n, RetryAt: n, LeaseUntil: n, Limit: limit})
		if err != nil {
			return fmt.Errorf("claim alarm groups: %w", err)
		}
		for _, g := range groups {
			oldest, err := s.q.AlarmDeliveryOldest(ctx, tx, g.GroupKey)
			if errors.Is(err, sql.ErrNoRows) {
				continue
			} else if err != nil {
				return fmt.Errorf("oldest alarm delivery: %w", err)
			}
			claim := truncate(owner, 39) + ":" + rand.Text()[:24]
			b := AlarmBatch{GroupKey: g.GroupKey, Channel: g.Channel, Recipient: g.Recipient, JobID: g.JobID, Kind: g.Kind,
				Attempts: g.Attempts, Digest: oldest.CreatedAt < g.WindowUntil, claim: claim}
			if b.Digest {
				_, err = s.q.AlarmDeliveryClaimGroup(ctx, tx, alarmDeliveryClaimGroupParams{Claim: claim, GroupKey: g.GroupKey})
			} else {
				_, err = s.q.AlarmDeliveryClaimOne(ctx, tx, alarmDeliveryClaimOneParams{Claim: claim, ID: oldest.ID})
			}
			if err != nil {
				return fmt.Errorf("claim alarm deliveries: %w", err)
			}
			if b.Counts, err = s.q.AlarmClaimCounts(ctx, tx, claim); err != nil {
				return fmt.Errorf("count claimed alarms: %w", err)
			}
			for _, c := range b.Counts {
				b.Count += c.N
			}
			if b.Alarms, err = s.q.AlarmClaimSample(ctx, tx, alarmClaimSampleParams{Claim: claim, Limit: max(1, sample)}); err != nil {
				return fmt.Errorf("read claimed alarms: %w", err)
			}
			if _, err := s.q.AlarmGroupLease(ctx, tx, alarmGroupLeaseParams{LeaseOwner: claim, LeaseUntil: ms(now.Add(lease)), GroupKey: g.GroupKey}); err != nil {
				return fmt.Errorf("lease alarm group: %w", err)
			}
			out = append(out, b)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// AlarmBatchSent records that b was delivered: its alarms are sent and the
// group may not send again before now+window.
func (s *Store) AlarmBatchSent(ctx context.Context, now time.Time, b AlarmBatch, window time.Duration) error {
	return s.inTx(ctx, func(tx *sqlx.Tx) error {
		n, err := s.q.AlarmGroupSent(ctx, tx, alarmGroupSentParams{
			WindowUntil: ms(now.Add(window)), LastSentAt: ms(now), GroupKey: b.GroupKey, LeaseOwner: b.claim,
		})
		if err != nil {
			return fmt.Errorf("record alarm delivery: %w", err)
		}
		if n == 0 {
			return ErrLeaseLost
		}
		if _, err := s.q.AlarmDeliveriesSent(ctx, tx, alarmDeliveriesSentParams{DoneAt: ms(now), Claim: b.claim}); err != nil {
			return fmt.Errorf("record alarm delivery: %w", err)
		}
		return nil
	})
}

// AlarmBatchFailed records a failed attempt to deliver b. With giveUp its
// alarms are marked failed with the error; otherwise the group is retried
// at retryAt.
func (s *Store) AlarmBatchFailed(ctx context.Context, now time.Time, b AlarmBatch, cause string, retryAt time.Time, giveUp bool) error {
	cause = truncate(cause, 1024)
	attempts, status, done := b.Attempts+1, DeliveryPending, sql.NullInt64{}
	if giveUp {
		attempts, status, done, retryAt = 0, DeliveryFailed, nullMS(now), time.UnixMilli(0)
	}
	return s.inTx(ctx, func(tx *sqlx.Tx) error {
		n, err := s.q.AlarmGroupFailed(ctx, tx, alarmGroupFailedParams{
			Attempts: attempts, RetryAt: ms(retryAt), LastError: cause, GroupKey: b.GroupKey, LeaseOwner: b.claim,
		})
		if err != nil {
			return fmt.Errorf("record alarm delivery failure: %w", err)
		}
		if n == 0 {
			return ErrLeaseLost
		}
		if _, err := s.q.AlarmDeliveriesFailed(ctx, tx, alarmDeliveriesFailedParams{
			Status: status, DoneAt: done, LastError: cause, Claim: b.claim,
		}); err != nil {
			return fmt.Errorf("record alarm delivery failure: %w", err)
		}
		return nil
	})
}

// AlarmDeliveryCounts counts deliveries by status.
func (s *Store) AlarmDeliveryCounts(ctx context.Context) (map[string]int, error) {
	rows, err := s.q.AlarmDeliveryCounts(ctx, s.db)
	if err != nil {
		return nil, fmt.Errorf("count alarm deliveries: %w", err)
	}
	out := map[string]int{}
	for _, r := range rows {
		out[r.Status] = r.N
	}
	return out, nil
}
