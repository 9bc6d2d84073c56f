package pgcluster

import (
	"context"
	"os"
	"testing"
	"time"
)

// StartForTest is Start for a test: it skips t when PostgreSQL's programs
// are not installed (fails it when CI is set), and removes the cluster when
// t ends.
func StartForTest(t testing.TB, settings ...string) *Cluster {
	t.Helper()
	bin, err := FindBin()
	if err != nil {
		Missing(t, "pgcluster", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := Start(ctx, bin, 100, settings...)
	RemoveAtEnd(t, c)
	if err != nil {
		t.Fatalf("pgcluster: %v", err)
	}
	return c
}

// RemoveAtEnd removes c when t ends, keeping its log in t's output if t
// failed.
func RemoveAtEnd(t testing.TB, c *Cluster) {
	t.Helper()
	t.Cleanup(func() {
		if c == nil {
			return
		}
		if t.Failed() {
			if log, err := os.ReadFile(c.LogPath()); err == nil {
				t.Logf("PostgreSQL log of %s:\n%s", c.Addr(), tail(log, 8000))
			}
		}
		if err := c.Remove(); err != nil {
			t.Errorf("pgcluster: remove: %v", err)
		}
	})
}

// tail is the end of b, at most n bytes.
func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// Missing ends t for a tool that is not installed: a skip on a developer's
// machine, a failure where CI is set (CI installs everything, so a test
// that skips there hides a broken setup).
func Missing(t testing.TB, who string, err error) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf("%s: %v", who, err)
	}
	t.Skipf("%s: %v (CI=1 makes this fatal)", who, err)
}
