package builtin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/shardjob/shardjob/sdk"
)

// ShellConfig configures the shell handler, which runs commands on the
// executor's machine: remote code execution by design, so it is off unless
// the operator turns it on and names every program it may run.
type ShellConfig struct {
	// Enabled turns the handler on (flag --shell-enable). Default false:
	// every job naming it fails with "disabled on this executor".
	Enabled bool

	// Allow lists the programs jobs may run, as exact, clean absolute paths
	// (flag --shell-allow), e.g. /usr/local/bin/reindex. The params name one
	// of them byte for byte; no PATH lookup, no shell, no globbing. Default:
	// none.
	Allow []string

	// MaxLogLines caps the output lines (stdout and stderr together) that
	// go to the run log (default 1000); MaxLineBytes cuts longer lines
	// (default 4096). Further output is read and dropped.
	MaxLogLines  int
	MaxLineBytes int

	// DefaultTimeout bounds a command whose params give no timeout_ms
	// (default 1 hour); MaxTimeout is the largest timeout_ms accepted at run
	// time (default 24 hours, the largest ValidateParams accepts).
	DefaultTimeout time.Duration
	MaxTimeout     time.Duration

	// KillGrace is how long the process group has between SIGTERM (on
	// cancellation or timeout) and SIGKILL. Default 5s.
	KillGrace time.Duration

	// Dir is the working directory of the commands (default: the
	// executor's).
	Dir string
}

const shellMaxTimeout = 24 * time.Hour

// shellEnvPath is the PATH commands get; the executor's own environment
// (which may hold SHARDJOB_SECRET) is not passed on.
const shellEnvPath = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// Shell is the shell handler: runs one allow-listed program per slot, see
// docs/builtin-handlers.md.
type Shell struct {
	cfg   ShellConfig
	allow map[string]bool
}

// NewShell checks cfg and builds the handler.
func NewShell(cfg ShellConfig) (*Shell, error) {
	if cfg.MaxLogLines <= 0 {
		cfg.MaxLogLines = 1000
	}
	if cfg.MaxLineBytes <= 0 {
		cfg.MaxLineBytes = 4096
	}
	if cfg.DefaultTimeout <= 0 {
		cfg.DefaultTimeout = time.Hour
	}
	if cfg.MaxTimeout <= 0 {
		cfg.MaxTimeout = shellMaxTimeout
	}
	if cfg.KillGrace <= 0 {
		cfg.KillGrace = 5 * time.Second
	}
	s := &Shell{cfg: cfg, allow: map[string]bool{}}
	for _, p := range cfg.Allow {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		if !filepath.IsAbs(p) || filepath.Clean(p) != p {
			return nil, fmt.Errorf("shell allow-list entry %q: want a clean absolute path, e.g. /usr/local/bin/reindex", p)
		}
		s.allow[p] = true
	}
	if cfg.Enabled && len(s.allow) == 0 {
		return nil, errors.New("shell handler enabled (--shell-enable) with an empty allow-list: name the programs jobs may run with --shell-allow /abs/path,…")
	}
	return s, nil
}

// shellParams is the JSON params of the shell handler.
type shellParams struct {
	Command          string   `json:"command"`
	Args             []string `json:"args"`
	TimeoutMS        int64    `json:"timeout_ms"`
	RetryExitCodes   []int    `json:"retry_exit_codes"`
	SuccessExitCodes []int    `json:"success_exit_codes"`

	timeout time.Duration
}

func parseShellParams(params string) (*shellParams, error) {
	var p shellParams
	if err := decodeParams(NameShell, params, &p); err != nil {
		return nil, err
	}
	if p.Command == "" {
		return nil, paramsErr(NameShell, "command", "shell.command_required")
	}
	if !filepath.IsAbs(p.Command) || filepath.Clean(p.Command) != p.Command {
		return nil, paramsErr(NameShell, "command", "shell.command_path", "value", strconv.Quote(p.Command))
	}
	if len(p.Args) > 256 {
		return nil, paramsErr(NameShell, "args", "shell.args_count", "count", len(p.Args), "max", 256)
	}
	for i, a := range p.Args {
		if strings.IndexByte(a, 0) >= 0 {
			return nil, paramsErr(NameShell, fmt.Sprintf("args[%d]", i), "shell.arg_nul")
		}
	}
	for _, f := range []struct {
		field string
		codes []int
	}{{"retry_exit_codes", p.RetryExitCodes}, {"success_exit_codes", p.SuccessExitCodes}} {
		for _, c := range f.codes {
			if c < 1 || c > 255 {
				return nil, paramsErr(NameShell, f.field, "shell.exit_code", "value", c)
			}
		}
	}
	var err error
	if p.timeout, err = timeoutParam(NameShell, p.TimeoutMS, 0, shellMaxTimeout); err != nil {
		return nil, err
	}
	return &p, nil
}

// argv returns the arguments for the task: the placeholders of expandSlot
// are replaced in each; when none of them appears,
// the slot and the total are appended as the last two arguments.
func (p *shellParams) argv(t *sdk.Task) []string {
	out := make([]string, 0, len(p.Args)+2)
	any := false
	for _, a := range p.Args {
		e, changed := expandSlot(a, t)
		any = any || changed
		out = append(out, e)
	}
	if !any {
		out = append(out, strconv.Itoa(t.Slot), strconv.Itoa(t.SlotCount))
	}
	return out
}

// Handle runs the command of the task's params.
func (s *Shell) Handle(ctx context.Context, t *sdk.Task) error {
	if !s.cfg.Enabled {
		return refused("the shell handler is disabled on this executor; an operator enables it with --shell-enable and names the allowed programs with --shell-allow")
	}
	p, err := parseShellParams(t.Params)
	if err != nil {
		return err
	}
	if !s.allow[p.Command] {
		allowed := make([]string, 0, len(s.allow))
		for a := range s.allow {
			allowed = append(allowed, a)
		}
		sort.Strings(allowed)
		return refused("shell command %q is not on this executor's allow-list (--shell-allow %s)", p.Command, strings.Join(allowed, ","))
	}
	timeout := p.timeout
	if timeout == 0 {
		timeout = s.cfg.DefaultTimeout
	}
	if timeout > s.cfg.MaxTimeout {
		return paramsErr(NameShell, "timeout_ms", "params.timeout_executor", "value", p.TimeoutMS, "max", s.cfg.MaxTimeout)
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	log := logger(t)
	out := &lineLogger{log: log, maxLines: s.cfg.MaxLogLines, maxBytes: s.cfg.MaxLineBytes}
	cmd := exec.CommandContext(cctx, p.Command, p.argv(t)...)
	cmd.Dir = s.cfg.Dir
	cmd.Env = []string{
		shellEnvPath,
		"SHARDJOB_SLOT=" + strconv.Itoa(t.Slot),
		"SHARDJOB_TOTAL=" + strconv.Itoa(t.SlotCount),
		"SHARDJOB_RUN_ID=" + strconv.FormatInt(t.RunID, 10),
		"SHARDJOB_JOB_ID=" + strconv.FormatInt(t.JobID, 10),
		"SHARDJOB_ATTEMPT=" + strconv.Itoa(t.Attempt),
		"SHARDJOB_TOKEN=" + strconv.FormatInt(t.Token, 10),
	}
	if t.Workflow != nil {
		ctxJSON, _ := json.Marshal(t.Workflow) // strings, an integer and JSON results
		w := workflowOf(t)
		cmd.Env = append(cmd.Env,
			"SHARDJOB_BUSINESS_DATE="+w.BusinessDate,
			"SHARDJOB_WORKFLOW_RUN_ID="+w.runID(),
			"SHARDJOB_WORKFLOW_NODE="+w.Node,
			"SHARDJOB_WORKFLOW="+string(ctxJSON))
	}
	cmd.Stdout = out.stream("stdout")
	cmd.Stderr = out.stream("stderr")
	killed := setProcessGroup(cmd, s.cfg.KillGrace)
	start := time.Now()
	log.Info("shell command starting", "command", p.Command, "args", cmd.Args[1:])
	err = cmd.Run()
	killed()
	out.flush()
	attrs := []any{"command", p.Command, "duration", time.Since(start).Round(time.Millisecond).String(), "output_lines", out.total()}
	if out.dropped() > 0 {
		attrs = append(attrs, "output_lines_not_logged", out.dropped())
	}
	code := -1
	if cmd.ProcessState != nil {
		code = cmd.ProcessState.ExitCode()
		attrs = append(attrs, "exit_code", code)
	}
	log.Info("shell command finished", attrs...)
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("shell %s: %w (process group killed)", p.Command, ctx.Err())
	case cctx.Err() != nil:
		return retryable("shell %s: not finished within timeout %s (process group killed)", p.Command, timeout)
	}
	if err != nil && cmd.ProcessState == nil {
		return fmt.Errorf("shell %s: %w", p.Command, err) // did not start
	}
	if code == 0 || contains(p.SuccessExitCodes, code) {
		t.AddProcessed(1)
		t.Progress(1, 1)
		return nil
	}
	if contains(p.RetryExitCodes, code) {
		return retryable("shell %s: exit code %d", p.Command, code)
	}
	if code < 0 {
		return fmt.Errorf("shell %s: %w", p.Command, err) // killed by a signal
	}
	if p.RetryExitCodes != nil {
		// The job lists its retryable codes (even as []): any other
		// non-zero code is permanent (docs/failures.md). Without the
		// field every failure stays retryable, as before error classes.
		return permanent("shell %s: exit code %d (not in retry_exit_codes)", p.Command, code)
	}
	return fmt.Errorf("shell %s: exit code %d", p.Command, code)
}

func contains(list []int, v int) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// lineLogger turns a command's output into log lines, at most maxLines in
// all (then counts what it drops), each cut at maxBytes.
type lineLogger struct {
	log      *slog.Logger
	maxLines int
	maxBytes int

	mu      sync.Mutex
	lines   int
	skipped int
	streams []*lineStream
}

type lineStream struct {
	l       *lineLogger
	name    string
	partial []byte
	cut     bool // the current line is longer than maxBytes: rest dropped
}

func (l *lineLogger) stream(name string) *lineStream {
	s := &lineStream{l: l, name: name}
	l.streams = append(l.streams, s)
	return s
}

// Write is called by one goroutine of os/exec per stream.
func (s *lineStream) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		chunk := p
		if i >= 0 {
			chunk = p[:i]
		}
		if room := max(s.l.maxBytes-len(s.partial), 0); len(chunk) > room {
			chunk, s.cut = chunk[:room], true
		}
		s.partial = append(s.partial, chunk...)
		if i < 0 {
			break
		}
		s.emit()
		p = p[i+1:]
	}
	return n, nil
}

func (s *lineStream) emit() {
	line := strings.TrimSuffix(string(bytes.ToValidUTF8(s.partial, []byte("\uFFFD"))), "\r")
	cut := s.cut
	s.partial, s.cut = s.partial[:0], false
	s.l.mu.Lock()
	defer s.l.mu.Unlock()
	s.l.lines++
	if s.l.lines > s.l.maxLines {
		s.l.skipped++
		if s.l.skipped == 1 {
			s.l.log.Warn("shell output: line limit reached, further lines are not logged", "max_lines", s.l.maxLines)
		}
		return
	}
	if cut {
		s.l.log.Info("shell "+s.name, "line", line+"…", "line_cut", true)
		return
	}
	s.l.log.Info("shell "+s.name, "line", line)
}

// flush logs unterminated last lines; call after the command finished.
func (l *lineLogger) flush() {
	for _, s := range l.streams {
		if len(s.partial) > 0 || s.cut {
			s.emit()
		}
	}
}

func (l *lineLogger) total() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lines
}

func (l *lineLogger) dropped() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.skipped
}
