//go:build !unix

package builtin

import (
	"os/exec"
	"time"
)

// setProcessGroup: without Unix process groups only the command itself is
// killed on cancellation (os/exec's default), after grace at the latest.
func setProcessGroup(cmd *exec.Cmd, grace time.Duration) func() {
	cmd.WaitDelay = grace
	return func() {}
}
