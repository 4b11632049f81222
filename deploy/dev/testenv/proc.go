package testenv

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// procSpec describes a process to start.
type procSpec struct {
	name    string   // short name for messages, e.g. "mariadbd"
	path    string   // executable
	args    []string // arguments, without the executable
	env     []string // added to the environment of the test process
	dir     string   // working directory; "" = the test's
	logPath string   // combined stdout+stderr is appended to this file
	// keepLines keeps the whole output in memory (for WaitForLine);
	// otherwise only the last tailLines lines are kept.
	keepLines bool
	// stopSignal asks the process to stop (Stop); 0 means SIGTERM.
	// PostgreSQL's fast shutdown is SIGINT (SIGTERM waits for its clients).
	stopSignal syscall.Signal
	// credential runs the process as another user (PostgreSQL refuses to
	// run as root); nil: as the test process's user.
	credential *syscall.Credential
}

// proc is one run of a process started by this package. It is registered
// in reg from start until it has been reaped, and only processes in that
// registry are ever signalled.
//
// Every process runs in its own process group, so that Kill also ends the
// children it forked (a shell running "sleep"), and gets SIGKILL from the
// kernel if the test process dies without running its cleanups.
type proc struct {
	name string
	pid  int
	cmd  *exec.Cmd
	out  *output

	stopSignal syscall.Signal // what stop sends first

	mu     sync.Mutex
	reaped bool // set just before the leader is reaped; its pid may be reused after

	done    chan struct{} // closed after the process was reaped and its output flushed
	waitErr error         // valid after done
}

// waitDelay bounds how long Wait waits for the output pipes after the
// process exited (a grandchild outside the group could hold them open).
const waitDelay = 2 * time.Second

func startProc(spec procSpec) (*proc, error) {
	logFile, err := os.OpenFile(spec.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("testenv: open log of %s: %w", spec.name, err)
	}
	out := newOutput(logFile, spec.keepLines)
	out.note("starting " + spec.path + " " + strings.Join(spec.args, " "))

	cmd := exec.Command(spec.path, spec.args...)
	cmd.Dir = spec.dir
	cmd.Env = append(os.Environ(), spec.env...)
	cmd.Stdout = out.stream(streamStdout)
	cmd.Stderr = out.stream(streamStderr)
	cmd.SysProcAttr = sysProcAttr()
	cmd.SysProcAttr.Credential = spec.credential
	cmd.WaitDelay = waitDelay

	reg.mu.Lock()
	if reg.tornDown {
		reg.mu.Unlock()
		_ = logFile.Close()
		return nil, errors.New("testenv: the tests of this package already ended")
	}
	if err := cmd.Start(); err != nil {
		reg.mu.Unlock()
		_ = logFile.Close()
		return nil, fmt.Errorf("testenv: start %s (%s): %w", spec.name, spec.path, err)
	}
	p := &proc{name: spec.name, pid: cmd.Process.Pid, cmd: cmd, out: out, done: make(chan struct{}), stopSignal: spec.stopSignal}
	if p.stopSignal == 0 {
		p.stopSignal = syscall.SIGTERM
	}
	reg.procs[p] = struct{}{}
	reg.mu.Unlock()

	go p.wait(logFile)
	return p, nil
}

// wait reaps the process. Before reaping the group leader it kills what is
// left of its process group: while the leader is an unreaped zombie its pid,
// and so the group id, cannot belong to anybody else.
func (p *proc) wait(logFile *os.File) {
	if canWaitNoReap {
		waitExitNoReap(p.pid)
		p.mu.Lock()
		killGroup(p.pid)
		p.reaped = true
		p.mu.Unlock()
	}

	err := p.cmd.Wait()
	p.mu.Lock()
	p.reaped = true
	p.mu.Unlock()
	if errors.Is(err, exec.ErrWaitDelay) {
		err = nil
	}
	p.out.finish()
	p.out.note(fmt.Sprintf("%s (pid %d) exited: %s", p.name, p.pid, p.cmd.ProcessState))
	_ = logFile.Close() // the process wrote it, and has exited

	reg.mu.Lock()
	delete(reg.procs, p)
	reg.mu.Unlock()

	p.waitErr = err
	close(p.done)
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// signal sends sig to the process itself (not its group).
func (p *proc) signal(sig os.Signal) error {
	err := p.cmd.Process.Signal(sig)
	if errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("testenv: signal %s to %s (pid %d): %w", sig, p.name, p.pid, err)
	}
	return err
}

// kill sends SIGKILL to the process group and waits until the leader was
// reaped.
func (p *proc) kill(timeout time.Duration) error {
	p.mu.Lock()
	if !p.reaped {
		killGroup(p.pid)
	}
	p.mu.Unlock()
	select {
	case <-p.done:
		return nil
	case <-time.After(timeout):
		return fmt.Errorf("testenv: %s (pid %d) still not reaped %s after SIGKILL", p.name, p.pid, timeout)
	}
}

// stop sends SIGTERM (and SIGCONT, in case a test stopped the process),
// waits up to timeout and then kills the process group. It returns an error
// only if the process had to be killed.
func (p *proc) stop(timeout time.Duration) error {
	if p.exited() {
		return nil
	}
	_ = p.cmd.Process.Signal(p.stopSignal)
	_ = p.cmd.Process.Signal(syscall.SIGCONT)
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-p.done:
		return nil
	case <-timer.C:
	}
	if err := p.kill(10 * time.Second); err != nil {
		return err
	}
	return fmt.Errorf("testenv: %s (pid %d) did not exit within %s after %s; sent SIGKILL\n%s",
		p.name, p.pid, timeout, p.stopSignal, p.out.tailText(tailLines))
}

// exitText describes how the process ended, for messages.
func (p *proc) exitText() string {
	if !p.exited() {
		return "running"
	}
	if st := p.cmd.ProcessState; st != nil {
		return st.String()
	}
	return fmt.Sprint(p.waitErr)
}
