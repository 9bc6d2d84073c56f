package s3test

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes the kernel kill the server when the test binary
// dies, so a killed test run leaves no server behind.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
