package sdk

// Log shipping: every record logged through Task.Logger (the handler's own
// lines and the SDK's per-slot lines such as "slot started") goes to the
// configured slog handler as usual and, when its level is at least
// Config.LogShipLevel, into a bounded buffer of the executor. A loop of its
// own sends the buffer to an admin in batches (PathLogs), with the same
// failover between admins as results.
//
// The buffer never blocks a handler: adding a line takes a mutex for a few
// microseconds and never waits for the network. When the buffer is full
// (LogBufferLines or LogBufferBytes), the oldest line is dropped and counted
// per token; the counts travel with the next batch, so the console can say
// how many lines are missing. Delivery is best effort, unlike results: a
// batch no admin accepts goes back to the buffer, where it competes for
// room with newer lines.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/shardjob/shardjob/sdk/protocol"
)

// Defaults of the log shipping fields of Config.
const (
	DefaultLogBufferLines = 10_000
	DefaultLogBufferBytes = 4 << 20
	DefaultLogLineMax     = 4096
	DefaultLogBatch       = 500

	// LogFlushInterval is the longest a logged line waits in the buffer
	// before the first attempt to ship it (sooner when LogBatch lines are
	// buffered).
	LogFlushInterval = time.Second
)

const (
	// logBatchBytes bounds the lines of one request (the admin's default
	// body limit is 1 MiB).
	logBatchBytes = 256 << 10
	// logLineOverhead is what a line costs besides its message and
	// attributes, for LogBufferBytes.
	logLineOverhead = 64
	// maxDropTokens bounds the per-token drop counters waiting to be
	// reported; drops of further tokens are only counted in LogStats.
	maxDropTokens = 4096
	// logStopFlush bounds the last delivery of logs in Stop.
	logStopFlush = 5 * time.Second
)

// LogStats counts the log lines of an executor (Executor.LogStats).
type LogStats struct {
	Buffered int    // lines waiting to be shipped (including a batch on its way)
	Captured uint64 // lines captured from Task loggers
	Shipped  uint64 // lines an admin acknowledged (stored, over the run's cap, or of a token it refused)
	Dropped  uint64 // lines dropped because the buffer was full, or refused as malformed
	Batches  uint64 // requests an admin acknowledged
	Failures uint64 // requests no admin acknowledged (the lines went back to the buffer)
}

type bufLine struct {
	line protocol.LogLine
	size int
}

// logShipper is the bounded buffer of captured lines. Its methods are safe
// for concurrent use.
type logShipper struct {
	level              slog.Level
	maxLines, maxBytes int
	lineMax, batch     int
	flushInterval      time.Duration
	wake               chan struct{} // the first line, or a full batch, was buffered

	mu      sync.Mutex
	buf     []bufLine
	bytes   int
	dropped map[int64]int64 // token → lines dropped and not yet reported
	flying  int             // lines taken by the shipping loop, not yet acknowledged
	stats   LogStats
	changed chan struct{} // closed and replaced on every change (tests wait on it)
}

func newLogShipper(cfg Config) *logShipper {
	if cfg.DisableLogShipping {
		return nil
	}
	return &logShipper{
		level:         cfg.LogShipLevel,
		maxLines:      cfg.LogBufferLines,
		maxBytes:      cfg.LogBufferBytes,
		lineMax:       cfg.LogLineMax,
		batch:         cfg.LogBatch,
		flushInterval: LogFlushInterval,
		wake:          make(chan struct{}, 1),
		dropped:       map[int64]int64{},
		changed:       make(chan struct{}),
	}
}

func (s *logShipper) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// add buffers a line, dropping the oldest ones beyond the caps.
func (s *logShipper) add(l protocol.LogLine) {
	size := len(l.Message) + len(l.Attrs) + logLineOverhead
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf = append(s.buf, bufLine{line: l, size: size})
	s.bytes += size
	s.stats.Captured++
	s.trimLocked()
	if n := len(s.buf); n == 1 || n >= s.batch {
		kick(s.wake)
	}
	s.notifyLocked()
}

// trimLocked drops the oldest lines until the buffer is within its caps.
func (s *logShipper) trimLocked() {
	n := 0
	for size := s.bytes; n < len(s.buf) && (len(s.buf)-n > s.maxLines || size > s.maxBytes); n++ {
		size -= s.buf[n].size
		s.dropLocked(s.buf[n].line.Token, 1)
	}
	if n == 0 {
		return
	}
	for _, b := range s.buf[:n] {
		s.bytes -= b.size
	}
	clear(s.buf[:n])
	s.buf = s.buf[n:]
}

func (s *logShipper) dropLocked(token, n int64) {
	s.stats.Dropped += uint64(n)
	if _, ok := s.dropped[token]; ok || len(s.dropped) < maxDropTokens {
		s.dropped[token] += n
	}
}

func (s *logShipper) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.buf)
}

// take removes the next batch (and every pending drop count) from the
// buffer. The caller ships it, then calls done or putBack.
func (s *logShipper) take() ([]protocol.LogLine, []protocol.LogDrop) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, size := 0, 0
	for n < len(s.buf) && n < s.batch && (n == 0 || size+s.buf[n].size <= logBatchBytes) {
		size += s.buf[n].size
		n++
	}
	lines := make([]protocol.LogLine, n)
	for i := range n {
		lines[i] = s.buf[i].line
	}
	clear(s.buf[:n])
	s.buf = s.buf[n:]
	s.bytes -= size
	s.flying = n
	var drops []protocol.LogDrop
	for tok, c := range s.dropped {
		drops = append(drops, protocol.LogDrop{Token: tok, Lines: c})
	}
	slices.SortFunc(drops, func(a, b protocol.LogDrop) int { return int(a.Token - b.Token) })
	clear(s.dropped)
	return lines, drops
}

// done records an acknowledged batch.
func (s *logShipper) done(lines int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stats.Shipped += uint64(lines)
	s.stats.Batches++
	s.flying = 0
	s.notifyLocked()
}

// putBack returns a batch no admin acknowledged to the front of the buffer
// (it is older than what was added meanwhile), then applies the caps.
func (s *logShipper) putBack(lines []protocol.LogLine, drops []protocol.LogDrop) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stats.Failures++
	s.flying = 0
	back := make([]bufLine, 0, len(lines)+len(s.buf))
	for _, l := range lines {
		size := len(l.Message) + len(l.Attrs) + logLineOverhead
		back = append(back, bufLine{line: l, size: size})
		s.bytes += size
	}
	s.buf = append(back, s.buf...)
	for _, d := range drops {
		s.stats.Dropped -= uint64(d.Lines) // counted again by dropLocked
		s.dropLocked(d.Token, d.Lines)
	}
	s.trimLocked()
	s.notifyLocked()
}

// discard gives up a batch the admins refused as malformed: its lines count
// as dropped.
func (s *logShipper) discard(lines []protocol.LogLine, drops []protocol.LogDrop) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.flying = 0
	for _, l := range lines {
		s.dropLocked(l.Token, 1)
	}
	for _, d := range drops {
		s.stats.Dropped -= uint64(d.Lines)
		s.dropLocked(d.Token, d.Lines)
	}
	s.notifyLocked()
}

func (s *logShipper) snapshot() LogStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats
	st.Buffered = len(s.buf) + s.flying
	return st
}

func (s *logShipper) observe() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changed
}

// LogStats returns the counters of log shipping (all zero when
// Config.DisableLogShipping is set).
func (e *Executor) LogStats() LogStats {
	if e.logs == nil {
		return LogStats{}
	}
	return e.logs.snapshot()
}

// taskLogger returns the Logger of a slot attempt: tagged with run_id, job,
// slot, token and attempt, and teeing its records into the log buffer.
func (e *Executor) taskLogger(ra *protocol.RunAssignment, sa protocol.SlotAttempt) *slog.Logger {
	l := e.log.With("run_id", ra.RunID, "job", ra.JobName, "slot", sa.Slot, "token", sa.Token, "attempt", sa.Attempt)
	if e.logs == nil {
		return l
	}
	return slog.New(&shipHandler{next: l.Handler(), ship: e.logs, token: sa.Token})
}

// shipHandler is a slog.Handler that passes records to next and copies
// those at the shipper's level into the shipper's buffer.
type shipHandler struct {
	next   slog.Handler
	ship   *logShipper
	token  int64
	prefix string   // group prefix of later attributes, "g." per open group
	attrs  [][]byte // attributes added by With, encoded as `"key":value`
}

func (h *shipHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.ship.level || h.next.Enabled(ctx, l)
}

func (h *shipHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= h.ship.level {
		h.ship.add(h.capture(r))
	}
	if h.next.Enabled(ctx, r.Level) {
		return h.next.Handle(ctx, r)
	}
	return nil
}

func (h *shipHandler) WithAttrs(as []slog.Attr) slog.Handler {
	if len(as) == 0 {
		return h
	}
	c := *h
	c.next = h.next.WithAttrs(as)
	c.attrs = slices.Clip(h.attrs)
	for _, a := range as {
		c.attrs = appendAttr(c.attrs, h.prefix, a, h.ship.lineMax)
	}
	return &c
}

func (h *shipHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	c := *h
	c.next = h.next.WithGroup(name)
	c.prefix = h.prefix + name + "."
	return &c
}

// capture turns a record into a line: the message cut to lineMax bytes, the
// attributes as a flat JSON object (groups as dotted keys) of at most
// lineMax bytes.
func (h *shipHandler) capture(r slog.Record) protocol.LogLine {
	at := r.Time
	if at.IsZero() {
		at = time.Now()
	}
	l := protocol.LogLine{Token: h.token, AtMS: at.UnixMilli(), Level: int(r.Level), Message: truncateUTF8(r.Message, h.ship.lineMax)}
	fields := h.attrs
	if r.NumAttrs() > 0 {
		fields = slices.Clip(fields)
		r.Attrs(func(a slog.Attr) bool {
			fields = appendAttr(fields, h.prefix, a, h.ship.lineMax)
			return true
		})
	}
	if len(fields) == 0 {
		return l
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range fields {
		if b.Len()+len(f)+2 > h.ship.lineMax {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`"attrs_truncated":true`)
			break
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(f)
	}
	b.WriteByte('}')
	l.Attrs = b.String()
	return l
}

// appendAttr appends a resolved to out as `"prefix+key":value` fields (a
// group becomes one field per member, with dotted keys).
func appendAttr(out [][]byte, prefix string, a slog.Attr, limit int) [][]byte {
	v := a.Value.Resolve()
	if v.Kind() == slog.KindGroup {
		p := prefix
		if a.Key != "" {
			p += a.Key + "."
		}
		for _, m := range v.Group() {
			out = appendAttr(out, p, m, limit)
		}
		return out
	}
	if a.Key == "" && v.Any() == nil {
		return out // an empty Attr is ignored, as slog's handlers do
	}
	key, _ := json.Marshal(prefix + a.Key)
	limit = max(16, limit-len(key)-8) // room for the key and the braces: a long value alone still fits
	var val []byte
	switch v.Kind() {
	case slog.KindInt64:
		val = strconv.AppendInt(nil, v.Int64(), 10)
	case slog.KindUint64:
		val = strconv.AppendUint(nil, v.Uint64(), 10)
	case slog.KindFloat64:
		if f := v.Float64(); !math.IsInf(f, 0) && !math.IsNaN(f) {
			val = strconv.AppendFloat(nil, f, 'g', -1, 64)
		} else {
			val, _ = json.Marshal(strconv.FormatFloat(f, 'g', -1, 64))
		}
	case slog.KindBool:
		val = strconv.AppendBool(nil, v.Bool())
	case slog.KindDuration:
		val, _ = json.Marshal(v.Duration().String())
	case slog.KindTime:
		val, _ = json.Marshal(v.Time().Format(time.RFC3339Nano))
	case slog.KindString:
		val, _ = json.Marshal(truncateUTF8(v.String(), limit))
	default:
		var s string
		switch x := v.Any().(type) {
		case error:
			s = x.Error()
		case fmt.Stringer:
			s = x.String()
		default:
			s = fmt.Sprintf("%+v", x)
		}
		val, _ = json.Marshal(truncateUTF8(s, limit))
	}
	f := make([]byte, 0, len(key)+1+len(val))
	f = append(append(append(f, key...), ':'), val...)
	return append(out, f)
}

// truncateUTF8 cuts s to at most limit bytes on a rune boundary, marking
// the cut with "…".
func truncateUTF8(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	const mark = "…"
	cut := limit - len(mark)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:max(cut, 0)] + mark
}

// logLoop ships buffered lines (see deliveryLoop), with the results'
// backoff while no admin acknowledges them.
func (e *Executor) logLoop(ctx context.Context) {
	defer e.loops.Done()
	s := e.logs
	e.deliveryLoop(ctx, queue{
		pending: s.count, batch: s.batch, linger: s.flushInterval, wake: s.wake, deliver: e.shipLogs,
		failed: func(attempt int, _ time.Duration, err error) {
			if attempt == 1 {
				e.log.Warn("logs not shipped: retrying (lines beyond the buffer's cap are dropped and counted)", "buffered", s.count(), "err", err)
			}
		},
	})
}

// shipLogs sends batches until the buffer is empty or a batch fails; a
// failed batch goes back to the buffer.
func (e *Executor) shipLogs(ctx context.Context) error {
	s := e.logs
	for {
		lines, drops := s.take()
		if len(lines) == 0 && len(drops) == 0 {
			return nil
		}
		var resp protocol.LogsResponse
		_, err := e.client.post(ctx, protocol.PathLogs, protocol.LogsRequest{InstanceID: e.cfg.InstanceID, Lines: lines, Dropped: drops}, &resp)
		var ae *AdminError
		switch {
		case err == nil:
			s.done(len(lines))
		case errors.As(err, &ae) && (ae.StatusCode == http.StatusBadRequest || ae.StatusCode == http.StatusRequestEntityTooLarge) && ctx.Err() == nil:
			// Retrying cannot help: count the lines as dropped.
			e.log.Warn("admin refused a batch of logs: dropping it", "lines", len(lines), "err", err)
			s.discard(lines, drops)
		default:
			s.putBack(lines, drops)
			return err
		}
	}
}

// flushLogs makes one last attempt to ship the buffer, for Stop.
func (e *Executor) flushLogs(ctx context.Context) {
	if e.logs == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, min(logStopFlush, e.cfg.DrainTimeout))
	defer cancel()
	if err := e.shipLogs(ctx); err != nil {
		e.log.Warn("logs not shipped before stopping: they are lost", "lines", e.logs.count(), "err", err)
	}
}
