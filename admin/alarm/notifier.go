package alarm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/shardjob/shardjob/admin/internal/clock"
	"github.com/shardjob/shardjob/admin/store"
)

// Config of the notifier. Zero fields take the documented defaults.
type Config struct {
	// ID of the admin replica, used in leases and test messages. Required.
	ID string
	// Channels are the configured channels (LoadFile). At least one.
	Channels []Endpoint
	// Window is the throttling window: per channel, recipient and job (or
	// alarm kind, for alarms without a job) at most one message per
	// window; the alarms raised meanwhile go out as one digest when it
	// ends. Default 1m.
	Window time.Duration
	// Interval between delivery rounds. Default 2s.
	Interval time.Duration
	// BatchSize is how many alarms one fan-out transaction takes. Default 200.
	BatchSize int
	// Parallel is how many messages are sent at once (and how many groups
	// one claim takes). Default 8.
	Parallel int
	// MaxAttempts to deliver a message before its alarms are marked failed
	// with the last error. Default 8.
	MaxAttempts int
	// RetryBase is the wait after the first failed attempt; it doubles per
	// attempt up to RetryMax. Defaults 10s and 10m.
	RetryBase, RetryMax time.Duration
	// SendTimeout bounds one delivery attempt. Default 30s.
	SendTimeout time.Duration
	// Lease is how long a claimed message belongs to this replica; another
	// replica may send it after that. At least 2×SendTimeout. Default 2m.
	Lease time.Duration
	// MaxAge: alarms older than this when first seen are not sent (a
	// backlog after channels were configured, or after a long outage of
	// every admin, stays in the console). Default 1h.
	MaxAge time.Duration
	// SampleSize is how many alarms a digest lists in full. Default 10.
	SampleSize int
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// Clock is the clock of windows, backoff and leases. Default
	// clock.System.
	Clock clock.Clock
}

// WithDefaults fills zero fields.
func (c Config) WithDefaults() Config {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.Window, time.Minute)
	def(&c.Interval, 2*time.Second)
	def(&c.RetryBase, 10*time.Second)
	def(&c.RetryMax, 10*time.Minute)
	def(&c.SendTimeout, 30*time.Second)
	def(&c.Lease, 2*time.Minute)
	def(&c.MaxAge, time.Hour)
	if c.BatchSize <= 0 {
		c.BatchSize = 200
	}
	if c.Parallel <= 0 {
		c.Parallel = 8
	}
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = 8
	}
	if c.SampleSize <= 0 {
		c.SampleSize = 10
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Clock == nil {
		c.Clock = clock.System
	}
	return c
}

func (c Config) validate() error {
	if c.ID == "" {
		return errors.New("alarm: Config.ID is required")
	}
	if len(c.Channels) == 0 {
		return errors.New("alarm: no channels configured")
	}
	if c.Lease < 2*c.SendTimeout {
		return fmt.Errorf("alarm: Lease %s must be at least twice SendTimeout %s", c.Lease, c.SendTimeout)
	}
	seen := map[string]bool{}
	for _, e := range c.Channels {
		if e.Name == "" || e.Channel == nil {
			return fmt.Errorf("alarm: channel %q: name and channel are required", e.Name)
		}
		if seen[e.Name] {
			return fmt.Errorf("alarm: channel %q defined twice", e.Name)
		}
		seen[e.Name] = true
	}
	return nil
}

// ErrUnknownChannel is returned for a channel name that is not configured.
var ErrUnknownChannel = errors.New("no such alarm channel")

// Notifier delivers alarm events to channels. Every admin replica runs one;
// the database makes each alarm go out once (see the package doc).
type Notifier struct {
	cfg      Config
	st       *store.Store
	log      *slog.Logger
	channels map[string]Endpoint
	defaults []string
}

// New returns a Notifier; call Run to start it.
func New(cfg Config, st *store.Store) (*Notifier, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if st == nil {
		return nil, errors.New("alarm: a store is required")
	}
	n := &Notifier{cfg: cfg, st: st, log: cfg.Logger.With("component", "alarm"), channels: map[string]Endpoint{}}
	for _, e := range cfg.Channels {
		n.channels[e.Name] = e
		if e.Default {
			n.defaults = append(n.defaults, e.Name)
		}
	}
	return n, nil
}

// AlarmChannel reports whether a channel is configured and whether it takes
// email recipients (the API validates routes with it).
func (n *Notifier) AlarmChannel(name string) (exists, email bool) {
	e, ok := n.channels[name]
	return ok, ok && e.Email()
}

// SendTest sends a test message through a channel, now, bypassing the
// database and throttling.
func (n *Notifier) SendTest(ctx context.Context, name, actor string) error {
	e, ok := n.channels[name]
	if !ok {
		return fmt.Errorf("%w: %q", ErrUnknownChannel, name)
	}
	ctx, cancel := context.WithTimeout(ctx, n.cfg.SendTimeout)
	defer cancel()
	return e.Channel.Send(ctx, testMessage(name, actor, n.cfg.ID))
}

// Run delivers every Interval until ctx ends, then returns (a send in
// flight is cancelled and retried later).
func (n *Notifier) Run(ctx context.Context) {
	t := time.NewTicker(n.cfg.Interval)
	defer t.Stop()
	for {
		if _, err := n.RunOnce(ctx); err != nil && ctx.Err() == nil {
			n.log.Error("alarm delivery round failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Round counts what one RunOnce did.
type Round struct {
	Alarms   int // alarms fanned out
	Sent     int // messages sent
	Failed   int // failed attempts (retried later)
	GaveUp   int // messages given up
	Messages int // claimed messages
}

// RunOnce fans out new alarms, then sends every message that is due, and
// returns when nothing more is due.
func (n *Notifier) RunOnce(ctx context.Context) (Round, error) {
	var r Round
	for {
		a, _, err := n.st.FanOutAlarms(ctx, n.cfg.Clock.Now(), n.cfg.BatchSize, n.dests)
		r.Alarms += a
		if err != nil {
			return r, err
		}
		if a < n.cfg.BatchSize {
			break
		}
	}
	for {
		batches, err := n.st.ClaimAlarmBatches(ctx, n.cfg.Clock.Now(), n.cfg.ID, n.cfg.Lease, n.cfg.Parallel, n.cfg.SampleSize)
		if err != nil {
			return r, err
		}
		if len(batches) == 0 {
			return r, nil
		}
		r.Messages += len(batches)
		var mu sync.Mutex
		var wg sync.WaitGroup
		for _, b := range batches {
			wg.Go(func() {
				outcome := n.deliver(ctx, b)
				mu.Lock()
				defer mu.Unlock()
				switch outcome {
				case outcomeSent:
					r.Sent++
				case outcomeFailed:
					r.Failed++
				case outcomeGaveUp:
					r.GaveUp++
				}
			})
		}
		wg.Wait()
		if ctx.Err() != nil {
			return r, ctx.Err()
		}
	}
}

// dests are the default channels plus the job's routes.
func (n *Notifier) dests(a store.Alarm, routes []store.AlarmRoute) []store.AlarmDest {
	if age := n.cfg.Clock.Now().Sub(time.UnixMilli(a.At)); age > n.cfg.MaxAge {
		n.log.Warn("alarm too old to send; see the console", "alarm_id", a.ID, "kind", a.Kind, "age", age.Round(time.Second))
		return nil
	}
	out := make([]store.AlarmDest, 0, len(n.defaults)+len(routes))
	seen := map[store.AlarmDest]bool{}
	add := func(d store.AlarmDest) {
		if !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	for _, name := range n.defaults {
		add(store.AlarmDest{Channel: name})
	}
	for _, r := range routes {
		exists, email := n.AlarmChannel(r.Channel)
		if !exists || (r.Recipient != "" && !email) {
			n.log.Warn("alarm route names a channel that is not configured (any more); skipped",
				"job_id", r.JobID, "channel", r.Channel, "recipient", r.Recipient)
			continue
		}
		add(store.AlarmDest{Channel: r.Channel, Recipient: r.Recipient})
	}
	return out
}

type outcome int

const (
	outcomeSent outcome = iota
	outcomeFailed
	outcomeGaveUp
	outcomeLost
)

// deliver sends one claimed batch and records the outcome.
func (n *Notifier) deliver(ctx context.Context, b store.AlarmBatch) outcome {
	log := n.log.With("channel", b.Channel, "recipient", b.Recipient, "alarms", b.Count, "digest", b.Digest)
	var err error
	e, ok := n.channels[b.Channel]
	if !ok {
		err = fmt.Errorf("%w: %q is not configured on admin %s (any more)", ErrUnknownChannel, b.Channel, n.cfg.ID)
	} else {
		m := render(b)
		if b.Recipient != "" {
			m.To = []string{b.Recipient}
		}
		sctx, cancel := context.WithTimeout(ctx, n.cfg.SendTimeout)
		err = e.Channel.Send(sctx, m)
		cancel()
	}
	// Record even when ctx ended (shutdown), so that the batch is retried
	// at once elsewhere instead of after the lease.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	now := n.cfg.Clock.Now()
	var res outcome
	if err == nil {
		err = n.st.AlarmBatchSent(rctx, now, b, n.cfg.Window)
		res = outcomeSent
		if err == nil {
			log.Info("alarm message sent")
		}
	} else {
		attempts := b.Attempts + 1
		giveUp := attempts >= n.cfg.MaxAttempts || !ok
		retryAt := now.Add(n.backoff(attempts))
		if giveUp {
			res = outcomeGaveUp
			log.Error("alarm message not delivered; giving up", "attempts", attempts, "err", err)
		} else {
			res = outcomeFailed
			log.Warn("alarm message not delivered; will retry", "attempts", attempts, "retry_at", retryAt, "err", err)
		}
		err = n.st.AlarmBatchFailed(rctx, now, b, err.Error(), retryAt, giveUp)
	}
	if errors.Is(err, store.ErrLeaseLost) {
		log.Warn("alarm message lease expired before its outcome was recorded; another replica may send it again", "lease", n.cfg.Lease)
		return outcomeLost
	}
	if err != nil {
		log.Error("record alarm delivery", "err", err)
		return outcomeLost
	}
	return res
}

// backoff is the wait after the attempt-th failure.
func (n *Notifier) backoff(attempt int) time.Duration {
	d := n.cfg.RetryBase
	for i := 1; i < attempt && d < n.cfg.RetryMax; i++ {
		d *= 2
	}
	return min(d, n.cfg.RetryMax)
}
