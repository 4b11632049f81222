package partition

import (
	"container/heap"
	"errors"
	"fmt"
	"slices"
)

// DefaultCount is the number of partitions of an installation unless
// configured otherwise.
const DefaultCount = 256

// MaxCount bounds Count (validation): 4096.
const MaxCount = 4096

// fibMul is the multiplier of Of's multiplicative (Fibonacci) hash:
// 2^32/φ² rounded to an odd integer. Consecutive multiples of it, taken
// modulo 2^32, stay as far apart as any n points can (the three-distance
// theorem), so consecutive job ids spread evenly over the partitions, and
// it is below 2^31, so that the hash fits in the signed 64-bit arithmetic
// of every SQL dialect (store computes the same function in SQL).
const fibMul = 1640531527

const mask32 = 1<<32 - 1

// seqBits is the width of the sequence part of an epoch (see NextEpoch);
// maxTerm is the largest term whose epochs still fit in an int64.
const (
	seqBits = 32
	maxSeq  = 1<<seqBits - 1
	maxTerm = 1<<(63-seqBits) - 1
)

// Of returns the partition of a job: the job id folded to 32 bits (its
// low and high halves added), multiplied by fibMul modulo 2^32, scaled to
// 0..count-1 by its high bits (h·count/2^32). Consecutive ids land about
// count·0.38 partitions apart, so every partition gets its share of the
// jobs created together. The same function is written in SQL (the store's
// partition_hash macro) for the database to fill a job's partition_id;
// they agree on every positive id. It panics when count is below 1: that
// is a programming error, since a count comes from a validated
// configuration or Assignment.Count.
func Of(jobID int64, count int) int {
	if count < 1 {
		panic(fmt.Sprintf("partition.Of: count %d is below 1", count))
	}
	u := uint64(jobID)
	h := (u&mask32 + u>>32) & mask32
	h = h * fibMul & mask32
	return int(h * uint64(count) >> 32)
}

// NextEpoch composes the epoch for the seq-th assignment written during the
// leader term `term`: term<<32 | seq. term is the leader's election epoch,
// from 1 to 1<<31 - 1; seq counts the assignments of that term from 1 and
// stays below 1<<32. Epochs so built strictly increase across successive
// leaders whose terms increase. It panics on out-of-range input.
func NextEpoch(term int64, seq int64) int64 {
	if term < 1 || term > maxTerm {
		panic(fmt.Sprintf("partition.NextEpoch: term %d is out of range 1-%d", term, int64(maxTerm)))
	}
	if seq < 1 || seq > maxSeq {
		panic(fmt.Sprintf("partition.NextEpoch: seq %d is out of range 1-%d", seq, int64(maxSeq)))
	}
	return term<<seqBits | seq
}

// Assignment says which admin replica owns each partition and the epoch of
// that ownership.
type Assignment struct {
	Owners []string `json:"owners"` // Owners[p]: the admin id owning partition p; "" = nobody
	Epochs []int64  `json:"epochs"` // Epochs[p]: raised each time partition p changes owner
}

// Owned is one partition owned by an admin replica, with the epoch of that
// ownership: the epoch the owner claims in the database.
type Owned struct {
	Partition int
	Epoch     int64
}

// Validate reports an error when len(Owners) != len(Epochs), when the count
// is below 1 or above MaxCount, or when an epoch is negative.
func (a Assignment) Validate() error {
	if err := a.validate(); err != nil {
		return fmt.Errorf("partition: invalid assignment: %w", err)
	}
	return nil
}

func (a Assignment) validate() error {
	if len(a.Owners) != len(a.Epochs) {
		return fmt.Errorf("%d owners but %d epochs: give every partition one owner (\"\" for none) and one epoch",
			len(a.Owners), len(a.Epochs))
	}
	if err := checkCount(len(a.Owners)); err != nil {
		return err
	}
	for p, e := range a.Epochs {
		if e < 0 {
			return fmt.Errorf("partition %d has epoch %d: epochs start at 0 and only grow", p, e)
		}
	}
	return nil
}

// checkCount reports a partition count out of range 1-MaxCount.
func checkCount(count int) error {
	if count < 1 || count > MaxCount {
		return fmt.Errorf("partition count %d is out of range 1-%d: configure a count in that range (default %d)",
			count, MaxCount, DefaultCount)
	}
	return nil
}

// Count is len(Owners): the number of partitions.
func (a Assignment) Count() int { return len(a.Owners) }

// Owned returns the partitions owned by id with their epochs, in partition
// order; nil when id owns none. "" owns nothing (it means nobody).
func (a Assignment) Owned(id string) []Owned {
	if id == "" {
		return nil
	}
	var out []Owned
	for p, o := range a.Owners {
		if o == id {
			out = append(out, Owned{Partition: p, Epoch: a.epoch(p)})
		}
	}
	return out
}

// epoch is Epochs[p], or 0 when an invalid assignment has no epoch for p.
func (a Assignment) epoch(p int) int64 {
	if p < len(a.Epochs) {
		return a.Epochs[p]
	}
	return 0
}

// Loads returns how many partitions each owner holds. Owners with none are
// absent and "" (no owner) is not counted.
func (a Assignment) Loads() map[string]int {
	loads := make(map[string]int)
	for _, o := range a.Owners {
		if o != "" {
			loads[o]++
		}
	}
	return loads
}

// Rebalance returns the assignment of count partitions over the live
// members given the previous assignment, and the number of partitions whose
// owner changed. It does not modify prev. prev may be the zero Assignment;
// when its count is not count, Rebalance starts from an assignment of count
// unowned partitions of epoch 0 instead.
//
// Members are admin ids in any order; duplicates and "" are ignored. The
// result is balanced (every member owns floor(count/n) or ceil(count/n)
// partitions), moves as few partitions as that allows, and depends only on
// the inputs: see the package documentation. Every partition whose owner
// changed gets epoch; the others keep theirs.
//
// epoch must be at least 1 and greater than every epoch of prev (build it
// with NextEpoch), and count must be in 1-MaxCount; otherwise, or when prev
// is invalid, Rebalance returns an error.
func Rebalance(prev Assignment, members []string, count int, epoch int64) (Assignment, int, error) {
	if err := checkCount(count); err != nil {
		return Assignment{}, 0, fmt.Errorf("partition: %w", err)
	}
	if len(prev.Owners) != 0 || len(prev.Epochs) != 0 {
		if err := prev.validate(); err != nil {
			return Assignment{}, 0, fmt.Errorf("partition: invalid previous assignment: %w", err)
		}
	}
	if epoch < 1 {
		return Assignment{}, 0, fmt.Errorf("partition: epoch %d is below 1: build epochs with NextEpoch", epoch)
	}
	for p, e := range prev.Epochs {
		if e >= epoch {
			return Assignment{}, 0, fmt.Errorf("partition: epoch %d is not greater than epoch %d of partition %d "+
				"in the previous assignment: build epochs with NextEpoch from the current leader term and a "+
				"sequence number that grows with every assignment", epoch, e, p)
		}
	}

	next := Assignment{Owners: make([]string, count), Epochs: make([]int64, count)}
	if prev.Count() == count {
		copy(next.Owners, prev.Owners)
		copy(next.Epochs, prev.Epochs)
	}
	live := liveMembers(members)
	if len(live) == 0 {
		changed := 0
		for p, o := range next.Owners {
			if o != "" {
				next.Owners[p], next.Epochs[p] = "", epoch
				changed++
			}
		}
		return next, changed, nil
	}

	// What each member keeps, and the partitions of nobody alive.
	index := make(map[string]int, len(live))
	for i, m := range live {
		index[m] = i
	}
	held := make([][]int, len(live))
	var pool []int
	for p, o := range next.Owners {
		if i, ok := index[o]; ok {
			held[i] = append(held[i], p)
		} else {
			pool = append(pool, p)
		}
	}

	// Over-loaded members give up their surplus, spread over what they hold.
	target := targets(held, count)
	load := make([]int, len(live))
	for i, h := range held {
		load[i] = len(h)
		if surplus := len(h) - target[i]; surplus > 0 {
			pool = append(pool, spread(h, surplus)...)
			load[i] = target[i]
		}
	}
	slices.Sort(pool)

	// Hand the pool out, lowest partition first, each to the least-loaded
	// member still below its target (ties: the lower id).
	rs := &receivers{load: load}
	for i := range live {
		if load[i] < target[i] {
			rs.idx = append(rs.idx, i)
		}
	}
	heap.Init(rs)
	for _, p := range pool {
		if rs.Len() == 0 {
			// Unreachable: the targets sum to count, so the deficits sum
			// to the size of the pool.
			return Assignment{}, 0, errors.New("partition: internal error: more partitions to hand out than room for them")
		}
		i := rs.idx[0]
		next.Owners[p], next.Epochs[p] = live[i], epoch
		load[i]++
		if load[i] == target[i] {
			heap.Pop(rs)
		} else {
			heap.Fix(rs, 0)
		}
	}
	return next, len(pool), nil
}

// liveMembers returns the members sorted, without duplicates and without "".
func liveMembers(members []string) []string {
	live := make([]string, 0, len(members))
	for _, m := range members {
		if m != "" {
			live = append(live, m)
		}
	}
	slices.Sort(live)
	return slices.Compact(live)
}

// targets returns how many partitions each member is to own: count/n, and
// one more for count%n of them. The extra ones go to the members that hold
// the most already (ties: the lower id), which is what keeps the moves to a
// minimum: a member above count/n that gets the extra one keeps one more.
func targets(held [][]int, count int) []int {
	n := len(held)
	base, extra := count/n, count%n
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return len(held[b]) - len(held[a]) })
	target := make([]int, n)
	for rank, i := range order {
		target[i] = base
		if rank < extra {
			target[i]++
		}
	}
	return target
}

// spread returns k of the partitions in held (sorted, len(held) >= k >= 1)
// evenly spaced over it: the one in the middle of each of k equal stretches.
func spread(held []int, k int) []int {
	out := make([]int, k)
	for j := range out {
		out[j] = held[(2*j+1)*len(held)/(2*k)]
	}
	return out
}

// receivers is a min-heap of member indexes ordered by load, then index
// (members are sorted, so the index order is the id order).
type receivers struct {
	idx  []int
	load []int
}

func (r *receivers) Len() int { return len(r.idx) }

func (r *receivers) Less(a, b int) bool {
	i, j := r.idx[a], r.idx[b]
	if r.load[i] != r.load[j] {
		return r.load[i] < r.load[j]
	}
	return i < j
}

func (r *receivers) Swap(a, b int) { r.idx[a], r.idx[b] = r.idx[b], r.idx[a] }

func (r *receivers) Push(x any) { r.idx = append(r.idx, x.(int)) }

func (r *receivers) Pop() any {
	last := r.idx[len(r.idx)-1]
	r.idx = r.idx[:len(r.idx)-1]
	return last
}
