package testenv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// tailLines is how many lines of a process's output error messages show.
const tailLines = 40

// maxPartialLine splits lines that never end (progress bars, binary junk).
const maxPartialLine = 64 << 10

type streamID uint8

const (
	streamStdout streamID = iota
	streamStderr
)

type line struct {
	stream streamID
	text   string
}

// output collects the stdout and stderr of one process run line by line: it
// appends them to the log file, keeps them in memory and wakes up goroutines
// waiting for a line.
type output struct {
	mu       sync.Mutex
	file     io.Writer
	keep     bool
	lines    []line   // every line if keep
	tail     []string // ring of the last tailLines lines
	tailNext int
	changed  chan struct{} // closed and replaced on every new line
	finished bool          // the process exited and its output was flushed
	partial  [2][]byte     // incomplete last line per stream
}

func newOutput(file io.Writer, keep bool) *output {
	return &output{file: file, keep: keep, changed: make(chan struct{})}
}

func (o *output) stream(id streamID) io.Writer {
	return streamWriter{o: o, id: id}
}

type streamWriter struct {
	o  *output
	id streamID
}

func (w streamWriter) Write(b []byte) (int, error) {
	o := w.o
	o.mu.Lock()
	defer o.mu.Unlock()
	buf := append(o.partial[w.id], b...) //nolint:gocritic // appendAssign: reusing the partial line's array is the point; o.partial[w.id] is set from buf below
	start := 0
	for i, c := range buf {
		if c == '\n' {
			o.addLocked(w.id, buf[start:i])
			start = i + 1
		}
	}
	rest := buf[start:]
	if len(rest) > maxPartialLine {
		o.addLocked(w.id, rest)
		rest = rest[:0]
	}
	n := copy(buf, rest)
	o.partial[w.id] = buf[:n]
	return len(b), nil
}

func (o *output) addLocked(id streamID, b []byte) {
	text := strings.TrimSuffix(string(b), "\r")
	_, _ = io.WriteString(o.file, text+"\n")
	if o.keep {
		o.lines = append(o.lines, line{stream: id, text: text})
	}
	if len(o.tail) < tailLines {
		o.tail = append(o.tail, text)
	} else {
		o.tail[o.tailNext] = text
		o.tailNext = (o.tailNext + 1) % tailLines
	}
	close(o.changed)
	o.changed = make(chan struct{})
}

// note writes a line of testenv's own to the log file only.
func (o *output) note(text string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	_, _ = fmt.Fprintf(o.file, "=== testenv %s: %s\n", time.Now().Format("15:04:05.000"), text)
}

// finish flushes incomplete lines and wakes up every waiter for good.
func (o *output) finish() {
	o.mu.Lock()
	defer o.mu.Unlock()
	for id := range o.partial {
		if len(o.partial[id]) > 0 {
			o.addLocked(streamID(id), o.partial[id])
			o.partial[id] = nil
		}
	}
	o.finished = true
	close(o.changed)
	o.changed = make(chan struct{})
}

// tailText returns the last n (at most tailLines) lines, one per line.
func (o *output) tailText(n int) string {
	o.mu.Lock()
	defer o.mu.Unlock()
	ordered := append(append([]string(nil), o.tail[o.tailNext:]...), o.tail[:o.tailNext]...)
	if len(ordered) > n {
		ordered = ordered[len(ordered)-n:]
	}
	if len(ordered) == 0 {
		return "(no output)"
	}
	return strings.Join(ordered, "\n")
}

// text returns the kept lines of the given streams.
func (o *output) text(streams ...streamID) string {
	o.mu.Lock()
	defer o.mu.Unlock()
	var b strings.Builder
	for _, l := range o.lines {
		for _, s := range streams {
			if l.stream == s {
				b.WriteString(l.text)
				b.WriteByte('\n')
				break
			}
		}
	}
	return b.String()
}

// ErrExited is wrapped by the errors of Process.WaitForLine and
// Process.WaitForRegexp when the process ended without printing the line.
var ErrExited = errors.New("process exited")

// waitLine blocks until a line (printed at any time since the start)
// satisfies match, the process exits or ctx is done.
func (o *output) waitLine(ctx context.Context, match func(string) bool) (string, error) {
	next := 0
	for {
		o.mu.Lock()
		for ; next < len(o.lines); next++ {
			if match(o.lines[next].text) {
				text := o.lines[next].text
				o.mu.Unlock()
				return text, nil
			}
		}
		finished, changed := o.finished, o.changed
		o.mu.Unlock()
		if finished {
			return "", ErrExited
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
}
