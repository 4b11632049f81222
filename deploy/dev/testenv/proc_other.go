//go:build !linux

package testenv

import "syscall"

func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// killGroup kills only the leader on systems without waitid(WNOWAIT): its
// group id could otherwise be reused once it is reaped.
func killGroup(pid int) {
	_ = syscall.Kill(pid, syscall.SIGKILL)
}

const canWaitNoReap = false

func waitExitNoReap(int) {}
