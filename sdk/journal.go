package sdk

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/shardjob/shardjob/sdk/protocol"
)

// journalFile is the name of the results journal inside Config.ResultsDir.
const journalFile = "results.jsonl"

// journal keeps results that no admin has acknowledged yet on disk, so that
// they survive a restart of the executor. It is an append-only file of JSON
// lines — {"r": result} when a slot finishes, {"a": [tokens]} when an admin
// acknowledges — compacted on open and when it grows past compactAfter
// lines. Writes are flushed to the OS (not fsynced per line): a result is
// lost only if the machine itself crashes within the page-cache window.
type journal struct {
	mu           sync.Mutex
	path         string
	f            *os.File
	w            *bufio.Writer
	lines        int
	compactAfter int
}

type journalLine struct {
	R *protocol.SlotResult `json:"r,omitempty"`
	A []int64              `json:"a,omitempty"`
}

// openJournal opens (creating) the journal in dir and returns the results
// it holds that were never acknowledged, oldest first.
func openJournal(dir string, compactAfter int) (*journal, []protocol.SlotResult, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, nil, fmt.Errorf("results dir %s: %w", dir, err)
	}
	path := filepath.Join(dir, journalFile)
	pending, err := readJournal(path)
	if err != nil {
		return nil, nil, err
	}
	j := &journal{path: path, compactAfter: max(compactAfter, 1000)}
	if err := j.rewrite(pending); err != nil {
		return nil, nil, err
	}
	return j, pending, nil
}

func readJournal(path string) ([]protocol.SlotResult, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("open results journal: %w", err)
	}
	defer func() { _ = f.Close() }() // read-only
	var order []int64
	results := map[int64]protocol.SlotResult{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		var l journalLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			break // a torn last line from a crash: everything before it counts
		}
		if l.R != nil {
			if _, dup := results[l.R.Token]; !dup {
				order = append(order, l.R.Token)
			}
			results[l.R.Token] = *l.R
		}
		for _, tok := range l.A {
			delete(results, tok)
		}
	}
	out := make([]protocol.SlotResult, 0, len(results))
	for _, tok := range order {
		if r, ok := results[tok]; ok {
			out = append(out, r)
			delete(results, tok)
		}
	}
	return out, nil
}

// rewrite replaces the file with just the pending results (atomically).
func (j *journal) rewrite(pending []protocol.SlotResult) error {
	tmp := j.path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("write results journal: %w", err)
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	for i := range pending {
		if err := enc.Encode(journalLine{R: &pending[i]}); err != nil {
			_ = f.Close()
			return err
		}
	}
	if err := w.Flush(); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, j.path); err != nil {
		return fmt.Errorf("replace results journal: %w", err)
	}
	if j.f != nil {
		_ = j.f.Close()
	}
	j.f, err = os.OpenFile(j.path, os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("open results journal: %w", err)
	}
	j.w = bufio.NewWriter(j.f)
	j.lines = len(pending)
	return nil
}

func (j *journal) append(l journalLine) error {
	b, err := json.Marshal(l)
	if err != nil {
		return err
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return errors.New("results journal closed")
	}
	if _, err := j.w.Write(append(b, '\n')); err != nil {
		return err
	}
	j.lines++
	return j.w.Flush()
}

// add records a finished slot's result.
func (j *journal) add(r protocol.SlotResult) error { return j.append(journalLine{R: &r}) }

// ack records acknowledged tokens; pending is what is still unacknowledged,
// used to compact the file when it has grown.
func (j *journal) ack(tokens []int64, pending func() []protocol.SlotResult) error {
	if err := j.append(journalLine{A: tokens}); err != nil {
		return err
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.lines < j.compactAfter {
		return nil
	}
	return j.rewrite(pending())
}

func (j *journal) close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return nil
	}
	err := j.w.Flush()
	if cerr := j.f.Close(); err == nil {
		err = cerr
	}
	j.f = nil
	return err
}
