package storm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"time"
)

// cluster is the bench's private PostgreSQL cluster: initdb into a temporary
// directory, started on a free port of its own with its socket in that
// directory, run as the postgres OS user when the bench runs as root
// (PostgreSQL refuses to run as root). Nothing of it is shared: the bench
// may exhaust its connection slots and restart it.
type cluster struct {
	bin      string
	dir      string
	port     int
	maxConns int
	// settings are more server settings, "name=value" each.
	settings []string
	// runAs is the OS user the server runs as; empty: the bench's own.
	runAs string
}

// startCluster makes and starts a cluster with more server settings
// ("name=value" each). The returned cluster must be removed even when err
// is not nil.
func startCluster(ctx context.Context, bin string, maxConns int, settings ...string) (*cluster, error) {
	if bin == "" {
		var err error
		if bin, err = findPostgresBin(); err != nil {
			return nil, err
		}
	}
	dir, err := os.MkdirTemp("", "once-storm-pg-")
	if err != nil {
		return nil, err
	}
	c := &cluster{bin: bin, dir: dir, maxConns: maxConns, settings: settings}
	if os.Geteuid() == 0 {
		c.runAs = "postgres"
		if err := chownTo(dir, c.runAs); err != nil {
			return c, err
		}
	}
	if c.port, err = freePort(); err != nil {
		return c, err
	}
	if err := c.run(ctx, "initdb", "--pgdata", c.dataDir(), "--username", "postgres", "--auth", "trust",
		"--encoding", "UTF8", "--no-sync", "--no-instructions"); err != nil {
		return c, err
	}
	return c, c.start(ctx)
}

func (c *cluster) dataDir() string { return filepath.Join(c.dir, "data") }

// SuperuserDSN connects as the cluster's superuser.
func (c *cluster) SuperuserDSN() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", c.port)
}

// start starts the server and waits until it accepts connections.
func (c *cluster) start(ctx context.Context) error {
	opts := fmt.Sprintf("-c port=%d -c listen_addresses=127.0.0.1 -c unix_socket_directories=%s -c max_connections=%d",
		c.port, c.dir, c.maxConns)
	for _, s := range c.settings {
		opts += " -c " + s
	}
	return c.run(ctx, "pg_ctl", "start", "--pgdata", c.dataDir(), "--log", filepath.Join(c.dir, "postgres.log"),
		"--wait", "--timeout", "120", "-o", opts)
}

// stop stops the server the way an operator's restart does: every session
// is ended at once, the data is kept.
func (c *cluster) stop(ctx context.Context) error {
	return c.run(ctx, "pg_ctl", "stop", "--pgdata", c.dataDir(), "--mode", "fast", "--wait", "--timeout", "120")
}

// remove stops the server without waiting for anyone and deletes its
// directory.
func (c *cluster) remove() error {
	if c == nil || c.dir == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := os.Stat(filepath.Join(c.dataDir(), "postmaster.pid")); err == nil {
		_ = c.run(ctx, "pg_ctl", "stop", "--pgdata", c.dataDir(), "--mode", "immediate", "--wait")
	}
	return os.RemoveAll(c.dir)
}

// run runs one of the PostgreSQL programs as the cluster's OS user.
func (c *cluster) run(ctx context.Context, program string, args ...string) error {
	path := filepath.Join(c.bin, program)
	var cmd *exec.Cmd
	if c.runAs != "" {
		cmd = exec.CommandContext(ctx, runuser(), append([]string{"-u", c.runAs, "--", path}, args...)...)
	} else {
		cmd = exec.CommandContext(ctx, path, args...)
	}
	// Output goes to a file, not a pipe: pg_ctl start leaves the server
	// running, and nothing may wait on what it inherited.
	logPath := filepath.Join(c.dir, "commands.log")
	out, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer out.Close()
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Dir = c.dir
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w (see %s and %s)", program, args[0], err,
			logPath, filepath.Join(c.dir, "postgres.log"))
	}
	return nil
}

// findPostgresBin finds the directory of pg_ctl: on the PATH, or the newest
// Debian-style /usr/lib/postgresql/<version>/bin.
func findPostgresBin() (string, error) {
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		return filepath.Dir(p), nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int { return versionOf(a) - versionOf(b) })
	for i := len(dirs) - 1; i >= 0; i-- {
		if _, err := os.Stat(filepath.Join(dirs[i], "pg_ctl")); err == nil {
			return dirs[i], nil
		}
	}
	return "", errors.New("pg_ctl not found on the PATH nor in /usr/lib/postgresql/*/bin; give --pg-bin")
}

func versionOf(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

func runuser() string {
	if p, err := exec.LookPath("runuser"); err == nil {
		return p
	}
	return "/usr/sbin/runuser"
}

func chownTo(dir, name string) error {
	u, err := user.Lookup(name)
	if err != nil {
		return fmt.Errorf("the bench runs as root and needs the %s OS user to run PostgreSQL: %w", name, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return os.Chown(dir, uid, gid)
}
