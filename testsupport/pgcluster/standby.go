package pgcluster

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
)

// StartStandby makes a streaming standby of c and starts it: a copy of c
// taken with pg_basebackup from source (c's address, or a proxy in front of
// it, through which the standby then streams too) with -R, so that it
// connects as application_name name and follows c until promoted. It has
// c's programs and the server settings given here ("name=value" each), not
// c's: a primary's synchronous_standby_names would make the promoted
// standby wait for a standby of its own. The returned cluster must be
// removed even when err is not nil.
func (c *Cluster) StartStandby(ctx context.Context, source, name string, settings ...string) (*Cluster, error) {
	s, err := newCluster(c.bin, c.maxConns, settings)
	if err != nil {
		return s, err
	}
	host, port, err := net.SplitHostPort(source)
	if err != nil {
		return s, err
	}
	conninfo := fmt.Sprintf("host=%s port=%s user=postgres application_name=%s", host, port, name)
	if err := s.run(ctx, "pg_basebackup", "--dbname", conninfo, "--pgdata", s.DataDir(),
		"--write-recovery-conf", "--wal-method", "stream", "--checkpoint", "fast", "--no-sync"); err != nil {
		return s, err
	}
	return s, s.Start(ctx)
}

// Promote ends the standby's recovery and waits until it accepts writes.
func (c *Cluster) Promote(ctx context.Context) error {
	return c.run(ctx, "pg_ctl", "promote", "--pgdata", c.DataDir(), "--wait", "--timeout", "120")
}

// Kill ends the server as a crash of its machine would: the postmaster and
// every process of the server at once with SIGKILL, no shutdown of any
// kind. Commits not yet written elsewhere are what a failover loses.
func (c *Cluster) Kill() error {
	raw, err := os.ReadFile(filepath.Join(c.DataDir(), "postmaster.pid"))
	if err != nil {
		return err
	}
	first, _, _ := strings.Cut(string(raw), "\n")
	var pid int
	if _, err := fmt.Sscan(first, &pid); err != nil {
		return fmt.Errorf("postmaster.pid: %w", err)
	}
	return killTree(pid)
}
