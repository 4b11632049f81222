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
	out := []AlarmRoute{}
	if err := s.db.SelectContext(ctx, &out, s.q.get(qAlarmRouteList), jobID); err != nil {
		return nil, fmt.Errorf("alarm routes of job %d: %w", jobID, err)
	}
	return out, nil
}

// SetAlarmRoutes replaces the routes of a job.
func (s *Store) SetAlarmRoutes(ctx context.Context, jobID int64, routes []AlarmRoute) error {
	return s.inTx(ctx, func(tx *sqlx.Tx) error {
		if _, err := tx.ExecContext(ctx, s.q.get(qAlarmRouteDeleteJob), jobID); err != nil {
			return fmt.Errorf("set alarm routes of job %d: %w", jobID, err)
		}
		for _, r := range routes {
			if _, err := tx.ExecContext(ctx, s.q.get(qAlarmRouteInsert), jobID, r.Channel, r.Recipient); err != nil {
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
		var claimed []Alarm
		if err := tx.SelectContext(ctx, &claimed, s.q.get(qAlarmFanOutClaim), limit); err != nil {
			return fmt.Errorf("claim alarms to fan out: %w", err)
		}
		if len(claimed) == 0 {
			return nil
		}
		ids := make([]int64, 0, len(claimed))
		for _, a := range claimed {
			ids = append(ids, a.ID)
		}
		q, args, err := sqlx.In(s.q.get(qAlarmFanOutFollowers), ids)
		if err != nil {
			return err
		}
		var following []int64
		if err := tx.SelectContext(ctx, &following, q, args...); err != nil {
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
					if err := tx.SelectContext(ctx, &rs, s.q.get(qAlarmRouteList), a.JobID.Int64); err != nil {
						return fmt.Errorf("alarm routes of job %d: %w", a.JobID.Int64, err)
					}
					routes[a.JobID.Int64] = rs
				}
			}
			for _, d := range dests(a, rs) {
				key, jobID, kind := alarmGroupKey(d, a)
				if _, err := tx.ExecContext(ctx, s.q.get(qAlarmGroupEnsure), key, d.Channel, d.Recipient, jobID, kind); err != nil {
					return fmt.Errorf("alarm group: %w", err)
				}
				if _, err := tx.ExecContext(ctx, s.q.get(qAlarmDeliveryInsert), a.ID, key, ms(now)); err != nil {
					return fmt.Errorf("alarm delivery: %w", err)
				}
				deliveries++
			}
		}
		q, args, err = sqlx.In(s.q.get(qAlarmFanOutMark), ids)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
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
		var groups []struct {
			GroupKey    string        `db:"group_key"`
			Channel     string        `db:"channel"`
			Recipient   string        `db:"recipient"`
			JobID       sql.NullInt64 `db:"job_id"`
			Kind        string        `db:"kind"`
			WindowUntil int64         `db:"window_until"`
			Attempts    int           `db:"attempts"`
		}
		n := ms(now)
		if err := tx.SelectContext(ctx, &groups, s.q.get(qAlarmGroupsDue), n, n, n, limit); err != nil {
			return fmt.Errorf("claim alarm groups: %w", err)
		}
		for _, g := range groups {
			var oldest struct {
				ID        int64 `db:"id"`
				CreatedAt int64 `db:"created_at"`
			}
			if err := tx.GetContext(ctx, &oldest, s.q.get(qAlarmDeliveryOldest), g.GroupKey); errors.Is(err, sql.ErrNoRows) {
				continue
			} else if err != nil {
				return fmt.Errorf("oldest alarm delivery: %w", err)
			}
			claim := truncate(owner, 39) + ":" + rand.Text()[:24]
			b := AlarmBatch{GroupKey: g.GroupKey, Channel: g.Channel, Recipient: g.Recipient, JobID: g.JobID, Kind: g.Kind,
				Attempts: g.Attempts, Digest: oldest.CreatedAt < g.WindowUntil, claim: claim}
			var err error
			if b.Digest {
				_, err = tx.ExecContext(ctx, s.q.get(qAlarmDeliveryClaimGroup), claim, g.GroupKey)
			} else {
				_, err = tx.ExecContext(ctx, s.q.get(qAlarmDeliveryClaimOne), claim, oldest.ID)
			}
			if err != nil {
				return fmt.Errorf("claim alarm deliveries: %w", err)
			}
			if err := tx.SelectContext(ctx, &b.Counts, s.q.get(qAlarmClaimCounts), claim); err != nil {
				return fmt.Errorf("count claimed alarms: %w", err)
			}
			for _, c := range b.Counts {
				b.Count += c.N
			}
			if err := tx.SelectContext(ctx, &b.Alarms, s.q.get(qAlarmClaimSample), claim, max(1, sample)); err != nil {
				return fmt.Errorf("read claimed alarms: %w", err)
			}
			if _, err := tx.ExecContext(ctx, s.q.get(qAlarmGroupLease), claim, ms(now.Add(lease)), g.GroupKey); err != nil {
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
		res, err := tx.ExecContext(ctx, s.q.get(qAlarmGroupSent), ms(now.Add(window)), ms(now), b.GroupKey, b.claim)
		if err != nil {
			return fmt.Errorf("record alarm delivery: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrLeaseLost
		}
		if _, err := tx.ExecContext(ctx, s.q.get(qAlarmDeliveriesSent), ms(now), b.claim); err != nil {
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
		res, err := tx.ExecContext(ctx, s.q.get(qAlarmGroupFailed), attempts, ms(retryAt), cause, b.GroupKey, b.claim)
		if err != nil {
			return fmt.Errorf("record alarm delivery failure: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrLeaseLost
		}
		if _, err := tx.ExecContext(ctx, s.q.get(qAlarmDeliveriesFailed), status, done, cause, b.claim); err != nil {
			return fmt.Errorf("record alarm delivery failure: %w", err)
		}
		return nil
	})
}

// AlarmDeliveryCounts counts deliveries by status.
func (s *Store) AlarmDeliveryCounts(ctx context.Context) (map[string]int, error) {
	var rows []struct {
		Status string `db:"status"`
		N      int    `db:"n"`
	}
	if err := s.db.SelectContext(ctx, &rows, s.q.get(qAlarmDeliveryCounts)); err != nil {
		return nil, fmt.Errorf("count alarm deliveries: %w", err)
	}
	out := map[string]int{}
	for _, r := range rows {
		out[r.Status] = r.N
	}
	return out, nil
}
