package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/shardjob/shardjob/sdk"
)

// SumHandler is the name of Sum.
const SumHandler = "demo.sum"

// sumResult is the result of Sum.
type sumResult struct {
	Sum int64 `json:"sum"`
}

// Sum shows results flowing down a workflow (docs/workflows.md,
// "Results"): its params are a JSON object (or none); it adds "add" (an
// integer, default 0) to the sums its parents returned — the workflow
// context's Upstream maps each parent node to its result, {"sum": n} from
// a one-slot parent or an object of such results by slot from a parent of
// several slots — logs what it read, and returns {"sum": total} as its
// slot's result. Params that are not such an object fail the slot.
func Sum(_ context.Context, t *sdk.Task) error {
	var p struct {
		Add int64 `json:"add"`
	}
	if strings.TrimSpace(t.Params) != "" {
		if err := json.Unmarshal([]byte(t.Params), &p); err != nil {
			return fmt.Errorf("demo.sum: params must be a JSON object with an integer add: %w", err)
		}
	}
	var upstream map[string]json.RawMessage
	if t.Workflow != nil {
		upstream = t.Workflow.Upstream
	}
	total := p.Add
	for parent, raw := range upstream {
		n, err := upstreamSum(raw)
		if err != nil {
			return fmt.Errorf("demo.sum: result of %s: %w", parent, err)
		}
		total += n
	}
	t.Logger.Info("demo.sum", "add", p.Add, "parents", len(upstream), "sum", total)
	return t.SetResult(sumResult{Sum: total})
}

// upstreamSum reads a parent's result: {"sum": n}, or {"0": {"sum": n}, …}.
func upstreamSum(raw json.RawMessage) (int64, error) {
	var one struct {
		Sum *int64 `json:"sum"`
	}
	if err := json.Unmarshal(raw, &one); err == nil && one.Sum != nil {
		return *one.Sum, nil
	}
	var slots map[string]sumResult
	if err := json.Unmarshal(raw, &slots); err != nil {
		return 0, fmt.Errorf(`want {"sum": n} or an object of those by slot: %w`, err)
	}
	var total int64
	for _, s := range slots {
		total += s.Sum
	}
	return total, nil
}
