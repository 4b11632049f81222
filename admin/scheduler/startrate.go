package scheduler

import (
	"time"

	"github.com/shardjob/shardjob/admin/msg"
)

// startBucket is a token bucket of the runs one app may start (its
// max_starts_per_second): it fills at rate tokens a second up to a burst of
// one second's worth (rate tokens), and each run started takes one. A new
// bucket is full. Pure: the caller gives the time.
type startBucket struct {
	tokens float64
	at     time.Time
}

// take takes a token at now for a rate of rate a second, reporting false
// (and taking nothing) when the bucket is empty.
func (b *startBucket) take(now time.Time, rate int64) bool {
	burst := float64(rate)
	if b.at.IsZero() {
		b.tokens = burst
	} else if d := now.Sub(b.at); d > 0 {
		b.tokens = min(burst, b.tokens+d.Seconds()*float64(rate))
	}
	if now.After(b.at) {
		b.at = now
	}
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// allowStart takes a start token of app if it has a start rate (rate 0:
// none); when the bucket is empty it returns the reason the run waits. The
// buckets are the term's (a new leader starts with full ones).
func (s *Scheduler) allowStart(app string, rate int64, now time.Time) (bool, msg.Msg) {
	if rate <= 0 {
		return true, msg.Msg{}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.startBuckets == nil {
		s.startBuckets = map[string]*startBucket{}
	}
	b := s.startBuckets[app]
	if b == nil {
		b = &startBucket{}
		s.startBuckets[app] = b
	}
	if b.take(now, rate) {
		return true, msg.Msg{}
	}
	return false, msg.New(msg.CauseAppRate, "app", app, "rate", rate)
}
