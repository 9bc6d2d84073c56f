package pgcluster

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"strconv"
)

// serverOSUser is the OS user PostgreSQL and PgBouncer run as when the
// caller is root: both refuse to run as root.
const serverOSUser = "postgres"

// ServerUser is the OS user a private server runs as: serverOSUser when
// the caller is root, empty (the caller's own) otherwise.
func ServerUser() string {
	if os.Geteuid() == 0 {
		return serverOSUser
	}
	return ""
}

// Own gives path to the server's OS user, when that is not the caller.
func Own(path string) error {
	name := ServerUser()
	if name == "" {
		return nil
	}
	u, err := user.Lookup(name)
	if err != nil {
		return fmt.Errorf("running as root needs the %s OS user to run the server: %w", name, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return os.Chown(path, uid, gid)
}

// Command is program with args, run as the OS user runAs (empty: the
// caller).
func Command(ctx context.Context, runAs, program string, args ...string) *exec.Cmd {
	if runAs == "" {
		return exec.CommandContext(ctx, program, args...)
	}
	return exec.CommandContext(ctx, runuser(), append([]string{"-u", runAs, "--", program}, args...)...)
}

func runuser() string {
	if p, err := exec.LookPath("runuser"); err == nil {
		return p
	}
	return "/usr/sbin/runuser"
}
