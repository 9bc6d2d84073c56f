// Package pgcluster runs private PostgreSQL clusters for the tests and
// benches that must do to a server what no test may do to the shared one:
// exhaust its connection slots, restart it, kill it -9, fail it over to a
// streaming standby. A cluster is initdb'd into a temporary directory and
// started on a free loopback port of its own with its socket in that
// directory, as the postgres OS user when the caller runs as root
// (PostgreSQL refuses to run as root).
package pgcluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"time"
)

// Cluster is one private PostgreSQL cluster.
type Cluster struct {
	bin      string
	dir      string
	port     int
	maxConns int
	// settings are more server settings, "name=value" each.
	settings []string
	// runAs is the OS user the server runs as; empty: the caller's own.
	runAs string
}

// Start makes and starts a cluster in a new temporary directory, with
// PostgreSQL's programs from bin (empty: FindBin) and more server settings
// ("name=value" each). The returned cluster must be removed even when err
// is not nil.
func Start(ctx context.Context, bin string, maxConns int, settings ...string) (*Cluster, error) {
	c, err := newCluster(bin, maxConns, settings)
	if err != nil {
		return c, err
	}
	if err := c.run(ctx, "initdb", "--pgdata", c.DataDir(), "--username", "postgres", "--auth", "trust",
		"--encoding", "UTF8", "--no-sync", "--no-instructions"); err != nil {
		return c, err
	}
	return c, c.Start(ctx)
}

// newCluster is a cluster not made yet: its directory (owned by the
// server's OS user) and its port.
func newCluster(bin string, maxConns int, settings []string) (*Cluster, error) {
	if bin == "" {
		var err error
		if bin, err = FindBin(); err != nil {
			return nil, err
		}
	}
	dir, err := os.MkdirTemp("", "once-pg-")
	if err != nil {
		return nil, err
	}
	c := &Cluster{bin: bin, dir: dir, maxConns: maxConns, settings: settings, runAs: ServerUser()}
	if err := Own(dir); err != nil {
		return c, err
	}
	if c.port, err = FreePort(); err != nil {
		return c, err
	}
	return c, nil
}

// DataDir is the cluster's data directory.
func (c *Cluster) DataDir() string { return filepath.Join(c.dir, "data") }

// Addr is host:port of the server.
func (c *Cluster) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(c.port)) }

// SuperuserDSN connects as the cluster's superuser.
func (c *Cluster) SuperuserDSN() string {
	return fmt.Sprintf("postgres://postgres@%s/postgres?sslmode=disable", c.Addr())
}

// Start starts the server and waits until it accepts connections.
func (c *Cluster) Start(ctx context.Context) error {
	opts := fmt.Sprintf("-c port=%d -c listen_addresses=127.0.0.1 -c unix_socket_directories=%s -c max_connections=%d",
		c.port, c.dir, c.maxConns)
	for _, s := range c.settings {
		opts += " -c " + s
	}
	return c.run(ctx, "pg_ctl", "start", "--pgdata", c.DataDir(), "--log", c.LogPath(),
		"--wait", "--timeout", "120", "-o", opts)
}

// LogPath is the server's log file.
func (c *Cluster) LogPath() string { return filepath.Join(c.dir, "postgres.log") }

// Stop stops the server the way an operator's restart does: every session
// is ended at once, the data is kept.
func (c *Cluster) Stop(ctx context.Context) error {
	return c.run(ctx, "pg_ctl", "stop", "--pgdata", c.DataDir(), "--mode", "fast", "--wait", "--timeout", "120")
}

// Remove stops the server without waiting for anyone and deletes its
// directory.
func (c *Cluster) Remove() error {
	if c == nil || c.dir == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := os.Stat(filepath.Join(c.DataDir(), "postmaster.pid")); err == nil {
		_ = c.run(ctx, "pg_ctl", "stop", "--pgdata", c.DataDir(), "--mode", "immediate", "--wait")
	}
	return os.RemoveAll(c.dir)
}

// run runs one of the PostgreSQL programs as the cluster's OS user.
func (c *Cluster) run(ctx context.Context, program string, args ...string) error {
	cmd := Command(ctx, c.runAs, filepath.Join(c.bin, program), args...)
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
		said, _ := os.ReadFile(logPath)
		return fmt.Errorf("%s %s: %w: %s", program, args[0], err, tail(said, 2000))
	}
	return nil
}

// FindBin finds the directory of pg_ctl, where the other programs are
// too: the one pg_ctl on the PATH links to (a bin directory of links may
// hold some of them only), or the newest Debian-style
// /usr/lib/postgresql/<version>/bin.
func FindBin() (string, error) {
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		return filepath.Dir(p), nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int { return versionOf(a) - versionOf(b) })
	for i := len(dirs) - 1; i >= 0; i-- {
		if _, err := os.Stat(filepath.Join(dirs[i], "pg_ctl")); err == nil {
			return dirs[i], nil
		}
	}
	return "", errors.New("pg_ctl not found on the PATH nor in /usr/lib/postgresql/*/bin")
}

func versionOf(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

// FreePort asks the kernel for a free loopback port. Whoever is given it
// listens a moment later; another process taking it in between is possible
// and makes that start fail loudly, never silently share.
func FreePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
