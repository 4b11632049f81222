package placement

import "sort"

// Executor is a placement target.
type Executor struct {
	ID       int64
	Capacity int // slots it runs at once; values < 1 count as 1
}

// Spread assigns slots 0..slots-1 to executors and returns the executor ID
// of each slot. Each executor receives a contiguous block whose size is
// proportional to its capacity (largest remainder rounding). The block order
// is rotated by offset (use the job id), so that single-slot jobs of many
// jobs land on different executors. Executors are ordered by ID first so the
// result does not depend on the input order. It returns nil when there is no
// executor or no slot.
func Spread(slots int, executors []Executor, offset int64) []int64 {
	if slots <= 0 || len(executors) == 0 {
		return nil
	}
	ex := append([]Executor(nil), executors...)
	sort.Slice(ex, func(i, j int) bool { return ex[i].ID < ex[j].ID })
	n := len(ex)
	rot := int(((offset % int64(n)) + int64(n)) % int64(n))
	ex = append(ex[rot:], ex[:rot]...)

	total := 0
	for i := range ex {
		if ex[i].Capacity < 1 {
			ex[i].Capacity = 1
		}
		total += ex[i].Capacity
	}
	// Quotas by largest remainder: sum of quotas == slots exactly.
	quota := make([]int, n)
	type rem struct{ idx, num int }
	rems := make([]rem, n)
	given := 0
	for i, e := range ex {
		quota[i] = slots * e.Capacity / total
		given += quota[i]
		rems[i] = rem{i, slots * e.Capacity % total}
	}
	sort.SliceStable(rems, func(a, b int) bool { return rems[a].num > rems[b].num })
	for k := 0; given < slots; k++ {
		quota[rems[k%n].idx]++
		given++
	}
	out := make([]int64, 0, slots)
	for i, e := range ex {
		for range quota[i] {
			out = append(out, e.ID)
		}
	}
	return out
}
