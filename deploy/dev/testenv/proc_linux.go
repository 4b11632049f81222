//go:build linux

package testenv

import (
	"syscall"
	"unsafe"
)

func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{
		Setpgid:   true,            // own group: Kill reaches the children too
		Pdeathsig: syscall.SIGKILL, // the test process died without cleanup
	}
}

// killGroup sends SIGKILL to the process group led by pid. The caller
// guarantees that pid has not been reaped yet.
func killGroup(pid int) {
	_ = syscall.Kill(-pid, syscall.SIGKILL)
}

// canWaitNoReap: waitExitNoReap works here, so leftovers of a process
// group can be killed safely after its leader exited.
const canWaitNoReap = true

const (
	pPID    = 1          // P_PID from <sys/wait.h>
	wNoWait = 0x01000000 // WNOWAIT
)

// waitExitNoReap blocks until the child pid exited, leaving it a zombie so
// that its pid stays reserved until os/exec reaps it.
func waitExitNoReap(pid int) {
	var info [128]byte // siginfo_t
	for {
		_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(pid),
			uintptr(unsafe.Pointer(&info)), syscall.WEXITED|wNoWait, 0, 0)
		if errno != syscall.EINTR {
			return
		}
	}
}
