//go:build !linux

package redistest

import "os/exec"

// dieWithParent has no portable equivalent: Main stops the servers.
func dieWithParent(*exec.Cmd) {}
