package records

import (
	"context"
	"math"
	"strconv"
)

// Source yields the keys of the records of one slot, in batches.
//
// Next returns up to max keys. It signals the end with an empty batch and a
// nil error, or with io.EOF (keys returned together with io.EOF are
// processed). Any other error stops Process, which returns it. Next is
// called from one goroutine at a time and should honour ctx.
//
// Keys are byte strings of 1 to MaxKeyLen (255) bytes, compared exactly. A
// key repeated within a batch, or while it is being processed, is counted
// once as skipped; a key repeated later is looked up again (done: skipped).
//
// A Source that also implements Sized reports the number of keys it will
// yield, and Process reports progress as done/total.
type Source interface {
	Next(ctx context.Context, max int) (keys []string, err error)
}

// Sized is implemented by Sources that know how many keys they have left
// to yield. Process calls Len once, before the first Next.
type Sized interface {
	Len() int64
}

// SourceFunc adapts a function to Source, e.g. a keyset-paginated query:
//
//	last := int64(0)
//	src := records.SourceFunc(func(ctx context.Context, max int) ([]string, error) {
//		rows, err := db.QueryContext(ctx, "SELECT id FROM invoice WHERE id > ? AND id BETWEEN ? AND ? ORDER BY id LIMIT ?", last, lo, hi, max)
//		… append strconv.FormatInt(id, 10), last = id …
//	})
type SourceFunc func(ctx context.Context, max int) ([]string, error)

// Next calls f.
func (f SourceFunc) Next(ctx context.Context, max int) ([]string, error) { return f(ctx, max) }

// KeysOf returns a Source yielding keys in order. It keeps a reference to
// the slice.
func KeysOf(keys []string) Source { return &sliceSource{keys: keys} }

type sliceSource struct {
	keys []string
	pos  int
}

func (s *sliceSource) Next(_ context.Context, max int) ([]string, error) {
	n := min(max, len(s.keys)-s.pos)
	out := s.keys[s.pos : s.pos+n : s.pos+n]
	s.pos += n
	return out, nil
}

func (s *sliceSource) Len() int64 { return int64(len(s.keys) - s.pos) }

// IDRangeSource returns a Source yielding the decimal IDs lo, lo+1, …, hi
// (closed range), such as the part of a slot from sdk.Task.IDRange. It
// yields nothing when lo > hi (IDRange's "(0, -1)" for an empty part).
func IDRangeSource(lo, hi int64) Source { return &rangeSource{next: lo, hi: hi, done: lo > hi} }

type rangeSource struct {
	next, hi int64
	done     bool
}

func (s *rangeSource) Next(_ context.Context, max int) ([]string, error) {
	if s.done || max <= 0 {
		return nil, nil
	}
	out := make([]string, 0, min(int64(max), s.left()))
	for len(out) < max {
		out = append(out, strconv.FormatInt(s.next, 10))
		if s.next == s.hi {
			s.done = true
			break
		}
		s.next++
	}
	return out, nil
}

// left is the number of IDs not yielded yet, capped at MaxInt64.
func (s *rangeSource) left() int64 {
	if s.done {
		return 0
	}
	d := uint64(s.hi) - uint64(s.next)
	if d >= math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(d) + 1
}

func (s *rangeSource) Len() int64 { return s.left() }
