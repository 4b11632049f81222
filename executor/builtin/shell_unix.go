//go:build unix

package builtin

import (
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// setProcessGroup puts the command in a process group of its own and makes
// the cancellation of its context kill the whole group: SIGTERM at once,
// SIGKILL after grace or as soon as the command has been waited for,
// whichever comes first. Call the returned function after cmd.Wait (or
// Run) returned.
func setProcessGroup(cmd *exec.Cmd, grace time.Duration) func() {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	waited := make(chan struct{})
	var wg sync.WaitGroup
	cmd.Cancel = func() error {
		pgid := cmd.Process.Pid
		err := syscall.Kill(-pgid, syscall.SIGTERM)
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := time.NewTimer(grace)
			defer t.Stop()
			select {
			case <-t.C:
			case <-waited:
			}
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
		}()
		return err
	}
	// Wait gives up on output still held open by survivors after this long.
	cmd.WaitDelay = grace
	return func() {
		close(waited)
		wg.Wait()
	}
}
