package store

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"github.com/shardjob/shardjob/sql/namedsql"
	"slices"
)

// Smoothing of the measured statistics (weight of the newest sample).
const (
	CostAlpha  = 0.3
	SpeedAlpha = 0.2
)

// SlotStat is the measured cost of one slot of a job.
type SlotStat struct {
	Slot         int           `db:"slot"`
	CostMS       float64       `db:"cost_ms"` // EWMA duration on a speed-1 executor
	Records      float64       `db:"records"`
	Samples      int           `db:"samples"`
	LastExecutor sql.NullInt64 `db:"last_executor"`
}

// SlotStats returns the measured slots of a job, by slot.
func (s *Store) SlotStats(ctx context.Context, jobID int64) ([]SlotStat, error) {
	out, err := s.q.SlotStatsOfJob(ctx, s.db, jobID)
	if err != nil {
		return nil, fmt.Errorf("slot stats of job %d: %w", jobID, err)
	}
	return out, nil
}

// SetPredicted records the makespan the placement predicted for a run.
func (s *Store) SetPredicted(ctx context.Context, runID, predictedMS int64) error {
	_, err := s.q.RunSetPredicted(ctx, s.db, runSetPredictedParams{PredictedMS: predictedMS, ID: runID})
	return err
}

// AttemptInfo is what finishing an attempt needs to know about it: its
// run, job and slot, its executor's speed, the slot's measured cost, and
// the retry budget.
type AttemptInfo struct {
	Token      int64           `db:"id"`
	RunID      int64           `db:"run_id"`
	Slot       int             `db:"slot"`
	ExecutorID int64           `db:"executor_id"`
	JobID      int64           `db:"job_id"`
	Speed      float64         `db:"speed"`
	CostMS     sql.NullFloat64 `db:"cost_ms"`
	LastExec   sql.NullInt64   `db:"last_executor"`
	Failures   int             `db:"failures"`
	RetryMax   int             `db:"retry_max"`
	JobName    string          `db:"job_name"`
	App        string          `db:"app"` // of the run, for its alarms
	// BreakerThreshold is the job's (0: no circuit breaker).
	BreakerThreshold int `db:"breaker_threshold"`
}

// AttemptInfos reads, in one query without locks, what finishing the
// attempts of tokens needs (AttemptInfo), by token; unknown tokens are
// absent.
func (t *Tx) AttemptInfos(ctx context.Context, tokens []int64) (map[int64]AttemptInfo, error) {
	rows, err := t.s.q.AttemptForStats(ctx, t.tx, tokens)
	if err != nil {
		return nil, fmt.Errorf("attempts of %d results: %w", len(tokens), err)
	}
	out := make(map[int64]AttemptInfo, len(rows))
	for _, r := range rows {
		out[r.Token] = r
	}
	return out, nil
}

// slotStatsPerStatement bounds the samples of one SlotStatsUpsert.
const slotStatsPerStatement = 1000

// slotSample is a measured cost of a slot.
type slotSample struct {
	jobID      int64
	slot       int
	costMS     float64
	records    float64
	executorID int64
}

// upsertRounds orders samples for SlotStatsUpsert and cuts them into
// statements: each statement holds a slot at most once (PostgreSQL refuses
// an upsert that touches a row twice; MySQL would apply both, in order) and
// at most slotStatsPerStatement samples, in (job, slot) order. The first
// sample of every slot goes in the first statements, a slot's second in
// those after them, and so on: the samples of a slot are applied in batch
// order, and a later statement locks only rows an earlier one locked.
func upsertRounds(samples []slotSample) [][]slotSample {
	slices.SortStableFunc(samples, func(a, b slotSample) int {
		return cmp.Or(cmp.Compare(a.jobID, b.jobID), cmp.Compare(a.slot, b.slot))
	})
	round := make([]int, len(samples)) // how many samples of the slot came before
	for i := 1; i < len(samples); i++ {
		if samples[i].jobID == samples[i-1].jobID && samples[i].slot == samples[i-1].slot {
			round[i] = round[i-1] + 1
		}
	}
	byRound := map[int][]slotSample{}
	rounds := 0
	for i, x := range samples {
		byRound[round[i]] = append(byRound[round[i]], x)
		rounds = max(rounds, round[i]+1)
	}
	var out [][]slotSample
	for r := range rounds {
		for rest := byRound[r]; len(rest) > 0; {
			n := min(len(rest), slotStatsPerStatement)
			out = append(out, rest[:n])
			rest = rest[n:]
		}
	}
	return out
}

// RecordSlotStats updates the slots' costs and the executors' speeds from the
// succeeded outcomes among applied: the duration normalised by the
// executor's speed is a sample of the slot's cost; predicted cost over
// actual duration is a sample of the executor's speed. The slot samples go
// in one upsert (one per round when a slot has several: upsertRounds), in
// (job, slot) order so that concurrent batches lock the stats rows in one
// order; samples of the same slot are applied one after the other, in batch
// order.
func (t *Tx) RecordSlotStats(ctx context.Context, applied []SlotOutcome, info map[int64]AttemptInfo) error {
	s, tx := t.s, t.tx
	var samples []slotSample
	for _, o := range applied {
		a := info[o.Token]
		durMS := float64(o.FinishedAt - o.StartedAt)
		if o.Status != AttemptSucceeded || o.StartedAt <= 0 || durMS < 0 || a.ExecutorID == 0 {
			continue
		}
		durMS = max(durMS, 1)
		speed := a.Speed
		if speed <= 0 {
			speed = 1
		}
		records := float64(o.Processed + o.Skipped + o.Failed + o.Uncertain)
		samples = append(samples, slotSample{a.JobID, a.Slot, durMS * speed, records, a.ExecutorID})
		// Speed sample: the cost the model predicted (before this batch)
		// over the time it actually took — only when that cost was measured
		// on another executor (otherwise it merely echoes this executor's
		// own estimate). Ignore tiny slots: timer noise dominates. Rare: one
		// statement each.
		if a.CostMS.Valid && a.LastExec.Valid && a.LastExec.Int64 != a.ExecutorID && a.CostMS.Float64 >= 20 && durMS >= 20 {
			sample := min(max(a.CostMS.Float64/durMS, 0.05), 20)
			newSpeed := speed*(1-SpeedAlpha) + sample*SpeedAlpha
			if _, err := s.q.ExecutorSetSpeed(ctx, tx, executorSetSpeedParams{Speed: newSpeed, ID: a.ExecutorID}); err != nil {
				return fmt.Errorf("update executor speed: %w", err)
			}
		}
	}
	for _, chunk := range upsertRounds(samples) {
		args := make([]any, 0, 5*len(chunk)+4)
		for _, x := range chunk {
			args = append(args, x.jobID, x.slot, x.costMS, x.records, x.executorID)
		}
		args = append(args, CostAlpha, CostAlpha, CostAlpha, CostAlpha)
		if _, err := tx.ExecContext(ctx, namedsql.MultiRow(s.q.get(qSlotStatsUpsert), len(chunk)), args...); err != nil {
			return fmt.Errorf("update the stats of %d slots: %w", len(chunk), err)
		}
	}
	return nil
}
