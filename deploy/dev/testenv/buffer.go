package testenv

import (
	"bytes"
	"sync"
)

// Buffer is a bytes.Buffer that goroutines may write while the test reads
// it: what a server under test logs or prints, a task's or a logger's
// output. Watch signals when a substring first appears, for tests that wait
// on it without polling. The zero value is ready to use.
type Buffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	watches map[string][]chan struct{}
}

// Write appends p and closes the channels of the substrings watched that
// the buffer now holds.
func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, err := s.b.Write(p)
	if len(s.watches) > 0 {
		text := s.b.Bytes() // read in place: no copy of the whole output per write
		for sub, cs := range s.watches {
			if bytes.Contains(text, []byte(sub)) {
				for _, c := range cs {
					close(c)
				}
				delete(s.watches, sub)
			}
		}
	}
	return n, err
}

// String returns everything written so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Watch returns a channel closed once the buffer contains sub: at once when
// it does already.
func (s *Buffer) Watch(sub string) <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := make(chan struct{})
	if bytes.Contains(s.b.Bytes(), []byte(sub)) {
		close(c)
		return c
	}
	if s.watches == nil {
		s.watches = map[string][]chan struct{}{}
	}
	s.watches[sub] = append(s.watches[sub], c)
	return c
}
