package schedule

import (
	"encoding/binary"
	"hash/fnv"
	"strconv"
	"time"

	"github.com/shardjob/shardjob/admin/msg"
)

// MaxJitterWindow is the longest jitter window a job may have
// (docs/schedules.md, "Jitter window"). A window must also be no longer than
// the shortest gap between two firings of the job's schedule (checked by
// admin/jobdef when the job is saved), so that a firing never starts after
// the next one is due.
const MaxJitterWindow = 12 * time.Hour

// ParseJitterWindow parses a job's jitter window: "" or "0" (none) or a Go
// duration such as "90s", "10m" or "1h30m", from 1ms to MaxJitterWindow.
func ParseJitterWindow(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	switch {
	case err != nil:
		return 0, invalid(0, "jitter window", s, msg.New(msg.JitterNotDuration, "value", strconv.Quote(s), "max", fmtHours(MaxJitterWindow)))
	case d < 0 || d > MaxJitterWindow:
		return 0, invalid(0, "jitter window", s, msg.New(msg.JitterOutside, "value", strconv.Quote(s), "max", fmtHours(MaxJitterWindow)))
	}
	return d.Truncate(time.Millisecond), nil
}

// JitterOffset is the offset in [0, window) at which the firing of the job
// with key jobKey ("app/name", as Spec.JobKey) scheduled at at starts, at
// millisecond precision; 0 when window is under 1ms. It depends only on its
// arguments (a hash of the key and the scheduled instant in Unix ms), so
// that every leader, a replay, a failover and the job's preview pick the
// same offset, and the offsets of a job's firings spread evenly over the
// window.
func JitterOffset(jobKey string, at time.Time, window time.Duration) time.Duration {
	ms := window.Milliseconds()
	if ms <= 0 {
		return 0
	}
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(at.UnixMilli()))
	h := fnv.New64a()
	_, _ = h.Write([]byte(jobKey))
	_, _ = h.Write([]byte{0})
	_, _ = h.Write(b[:])
	return time.Duration(mix64(h.Sum64())%uint64(ms)) * time.Millisecond
}

// mix64 is a 64-bit finalizer (the MurmurHash3 one): FNV alone leaves its
// low bits, which the modulo keeps, poorly mixed for inputs that differ
// only in a few bits.
func mix64(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}
