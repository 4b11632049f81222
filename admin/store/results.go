package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/jmoiron/sqlx"
)

// RunResults returns the results of the job runs ids that have one, by id
// (docs/workflows.md, "Results"): the result of a run is its slots'
// results — the handlers' JSON values kept with their succeeded current
// attempts. A run of one slot has that slot's value as its result; a run
// of several slots has a JSON object keyed by slot number ("0", "1", …)
// holding the slots that returned a result. A run no slot of which
// returned a result is absent.
func (s *Store) RunResults(ctx context.Context, ids []int64) (map[int64]json.RawMessage, error) {
	return s.runResults(ctx, s.db, ids)
}

// RunResults is Store.RunResults inside the transaction.
func (t *Tx) RunResults(ctx context.Context, ids []int64) (map[int64]json.RawMessage, error) {
	return t.s.runResults(ctx, t.tx, ids)
}

func (s *Store) runResults(ctx context.Context, db sqlx.ExtContext, ids []int64) (map[int64]json.RawMessage, error) {
	out := map[int64]json.RawMessage{}
	slots := map[int64]map[string]json.RawMessage{}
	for start := 0; start < len(ids); start += 1000 {
		rows, err := s.q.RunResults(ctx, db, ids[start:min(start+1000, len(ids))])
		if err != nil {
			return nil, fmt.Errorf("results of %d runs: %w", len(ids), err)
		}
		for _, r := range rows {
			if r.SlotCount <= 1 {
				out[r.RunID] = json.RawMessage(r.Result)
				continue
			}
			if slots[r.RunID] == nil {
				slots[r.RunID] = map[string]json.RawMessage{}
			}
			slots[r.RunID][strconv.Itoa(r.Slot)] = json.RawMessage(r.Result)
		}
	}
	for id, m := range slots {
		b, err := json.Marshal(m)
		if err != nil {
			return nil, fmt.Errorf("result of run %d: %w", id, err)
		}
		out[id] = b
	}
	return out, nil
}
