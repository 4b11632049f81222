package cluster

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/shardjob/shardjob/deploy/dev/testenv"
)

// Proc is a process of the cluster: a testenv.Process that remembers
// whether the test killed or froze it.
type Proc struct {
	*testenv.Process
	killed, frozen bool
}

// start starts bin through testenv.StartProcess, keeps its output in
// logDir/name.log when logDir is set, and thaws it before the cleanup stops
// it (SIGTERM would wait for nothing on a frozen process).
func start(t testing.TB, bin string, args, env []string, logDir, name string) *Proc {
	t.Helper()
	p := &Proc{}
	keepOutput(t, logDir, name, p)
	p.Process = testenv.StartProcess(t, bin, args, env)
	t.Cleanup(func() {
		if p.frozen {
			_ = p.Signal(syscall.SIGCONT)
		}
	})
	return p
}

// keepOutput copies the output of p to dir/name.log when the test ends. It
// is registered before the process starts, so that it runs after the
// process was stopped.
func keepOutput(t testing.TB, dir, name string, p *Proc) {
	if dir == "" {
		return
	}
	t.Cleanup(func() {
		if p.Process == nil {
			return
		}
		err := os.MkdirAll(dir, 0o755)
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, name+".log"), []byte(p.Output()), 0o644)
		}
		if err != nil {
			t.Logf("cluster: cannot keep the output of %s in %s: %v", name, dir, err)
		}
	})
}

// Kill sends SIGKILL (kill -9) and waits until the process was reaped.
func (p *Proc) Kill() error {
	p.killed = true
	return p.Process.Kill()
}

// Freeze sends SIGSTOP.
func (p *Proc) Freeze() error {
	if err := p.Signal(syscall.SIGSTOP); err != nil {
		return err
	}
	p.frozen = true
	return nil
}

// Thaw sends SIGCONT to a frozen process.
func (p *Proc) Thaw() error {
	if err := p.Signal(syscall.SIGCONT); err != nil {
		return err
	}
	p.frozen = false
	return nil
}

// Killed tells whether Kill was called.
func (p *Proc) Killed() bool { return p.killed }

// Frozen tells whether the process is frozen (Freeze without Thaw).
func (p *Proc) Frozen() bool { return p.frozen }

// Ctx returns a context that ends after d or with the test.
func Ctx(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
