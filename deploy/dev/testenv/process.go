package testenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// DefaultStopTimeout is how long Process.Stop waits after SIGTERM before it
// sends SIGKILL.
const DefaultStopTimeout = 10 * time.Second

// Process is a program started by StartProcess. Its stdout and stderr are
// kept in memory line by line and appended to a log file under the test's
// temporary directory. It is stopped when the test ends, and its last output
// lines are logged if the test failed.
type Process struct {
	p       *proc
	logPath string
}

// StartProcess starts bin with args. env entries ("KEY=value") are added to
// the environment of the test process, overriding it. The working directory
// is the test's (the package directory under go test). Start errors stop the
// test.
func StartProcess(t testing.TB, bin string, args []string, env []string) *Process {
	t.Helper()
	name := filepath.Base(bin)
	logPath := filepath.Join(t.TempDir(), name+".log") // removed after the cleanup below ran
	p, err := startProc(procSpec{
		name:      name,
		path:      bin,
		args:      args,
		env:       env,
		logPath:   logPath,
		keepLines: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.stop(DefaultStopTimeout); err != nil {
			t.Error(err)
		}
		if t.Failed() {
			t.Logf("testenv: last output of %s (pid %d, %s):\n%s", name, p.pid, p.exitText(), p.out.tailText(tailLines))
		}
	})
	return &Process{p: p, logPath: logPath}
}

// PID returns the process id.
func (p *Process) PID() int { return p.p.pid }

// LogPath returns the file receiving stdout and stderr. It lives in the
// test's temporary directory.
func (p *Process) LogPath() string { return p.logPath }

// Signal sends sig to the process (not to its children).
func (p *Process) Signal(sig os.Signal) error { return p.p.signal(sig) }

// Kill sends SIGKILL to the process and the children in its process group
// and waits until it was reaped.
func (p *Process) Kill() error { return p.p.kill(10 * time.Second) }

// Stop sends SIGTERM, waits up to DefaultStopTimeout for the process to exit
// and kills it after that. It returns an error only if it had to kill. The
// exit status is available from Wait.
func (p *Process) Stop() error { return p.p.stop(DefaultStopTimeout) }

// Wait blocks until the process exited and returns its exit error: nil
// after exit code 0, an *exec.ExitError otherwise.
func (p *Process) Wait() error {
	<-p.p.done
	return p.p.waitErr
}

// Done is closed when the process exited and its output was collected.
func (p *Process) Done() <-chan struct{} { return p.p.done }

// ExitCode returns the exit code, or -1 while running or when the process
// was ended by a signal.
func (p *Process) ExitCode() int {
	if !p.p.exited() {
		return -1
	}
	return p.p.cmd.ProcessState.ExitCode()
}

// Output returns stdout and stderr so far, interleaved line by line.
func (p *Process) Output() string { return p.p.out.text(streamStdout, streamStderr) }

// Stdout returns stdout so far.
func (p *Process) Stdout() string { return p.p.out.text(streamStdout) }

// WaitForLine blocks until a line of stdout or stderr contains substr and
// returns that line. Lines printed before the call count. It fails when
// ctx is done or when the process exits without printing such a line; the
// error then includes the last lines of output.
func (p *Process) WaitForLine(ctx context.Context, substr string) (string, error) {
	line, err := p.p.out.waitLine(ctx, func(l string) bool { return strings.Contains(l, substr) })
	if err != nil {
		return "", p.waitError(fmt.Sprintf("a line containing %q", substr), err)
	}
	return line, nil
}

// WaitForRegexp is WaitForLine with a regular expression; it returns the
// submatches of the first matching line (index 0 is the whole match).
func (p *Process) WaitForRegexp(ctx context.Context, re *regexp.Regexp) ([]string, error) {
	line, err := p.p.out.waitLine(ctx, re.MatchString)
	if err != nil {
		return nil, p.waitError(fmt.Sprintf("a line matching %q", re), err)
	}
	return re.FindStringSubmatch(line), nil
}

func (p *Process) waitError(what string, err error) error {
	if errors.Is(err, ErrExited) {
		<-p.p.done // the output is flushed just before the exit status is known
		return fmt.Errorf("testenv: %s (pid %d) ended (%s) before printing %s: %w; last output:\n%s",
			p.p.name, p.p.pid, p.p.exitText(), what, err, p.p.out.tailText(tailLines))
	}
	return fmt.Errorf("testenv: waiting for %s (pid %d) to print %s: %w; last output:\n%s",
		p.p.name, p.p.pid, what, err, p.p.out.tailText(tailLines))
}
