package sdk

import (
	"fmt"
	"math/bits"
)

// FNV-1a, 32 bits (http://www.isthe.com/chongo/tech/comp/fnv/). Written out
// rather than taken from hash/fnv so that the slot of a key is visibly part
// of this package's compatibility promise.
const (
	fnvOffset32 = 2166136261
	fnvPrime32  = 16777619
)

// SlotOf returns the slot, in [0, total), that owns key.
//
// The mapping is a compatibility promise: it is FNV-1a (32 bits) of the bytes
// of key, modulo total, and will never change, so a record keeps its slot
// across releases, processes and machines as long as total is unchanged.
// Changing a job's slot count remaps keys.
//
// SlotOf panics if total < 1 (a Task's SlotCount is always >= 1).
func SlotOf(key string, total int) int {
	if total < 1 {
		panic(fmt.Sprintf("sdk.SlotOf: total is %d, must be >= 1", total))
	}
	h := uint32(fnvOffset32)
	for i := 0; i < len(key); i++ {
		h ^= uint32(key[i])
		h *= fnvPrime32
	}
	return int(uint64(h) % uint64(total))
}

// IDRange returns the closed range [lo, hi] of IDs owned by slot when the
// closed range [minID, maxID] is cut into total contiguous parts.
//
// The parts are in slot order, their sizes differ by at most one (the first
// (maxID-minID+1) mod total slots get one more), and together they cover
// [minID, maxID] exactly once, including the full int64 range. An empty range
// is always reported as (0, -1), so lo > hi means "nothing to do": that is
// the case of the surplus slots when there are fewer IDs than slots, and of
// every slot when maxID < minID (for example MIN(id) and MAX(id) of an empty
// table).
//
// Use it as `WHERE id BETWEEN lo AND hi`, or `for id := lo; id <= hi; id++`
// when hi < math.MaxInt64.
//
// IDRange panics if total < 1 or slot is outside [0, total).
func IDRange(slot, total int, minID, maxID int64) (lo, hi int64) {
	if total < 1 {
		panic(fmt.Sprintf("sdk.IDRange: total is %d, must be >= 1", total))
	}
	if slot < 0 || slot >= total {
		panic(fmt.Sprintf("sdk.IDRange: slot %d is outside [0, %d)", slot, total))
	}
	if maxID < minID {
		return 0, -1
	}
	if total == 1 {
		return minID, maxID
	}
	// n = maxID-minID+1 may be 2^64 (the full int64 range): keep it as a
	// 65-bit number (carry, low) and divide with bits.Div64; carry < total
	// holds because total >= 2.
	d := uint64(maxID) - uint64(minID)
	low, carry := bits.Add64(d, 1, 0)
	q, r := bits.Div64(carry, low, uint64(total))
	s := uint64(slot)
	if q == 0 && s >= r {
		return 0, -1 // more slots than IDs: this one has none
	}
	start := func(i uint64) uint64 { return i*q + min(i, r) }
	lo = int64(uint64(minID) + start(s))
	hi = int64(uint64(minID) + start(s+1) - 1)
	return lo, hi
}
