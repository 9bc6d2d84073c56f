// Package redistest starts private Redis topologies for the tests of one
// package: a Redis Cluster of three masters (Cluster) and a primary managed
// by a Sentinel (Sentinel). Every redis-server is a child of the test
// binary, on free loopback ports with a temporary directory of its own, so
// the shared Redis on 6379 is never touched and test packages running side
// by side never meet.
//
// A topology starts the first time a test asks for it, once per test
// binary, and stops when the package's tests are done: the package calls
// Main from its TestMain. The servers die with the test binary too, should
// it be killed (Linux: the parent-death signal).
//
// Without redis-server 7 or later on PATH (--cluster-port, CLUSTER
// ADDSLOTSRANGE) the tests that ask skip, unless CI is set: there they
// fail. scripts/services.sh installs it.
//
// Tests that do write to the shared Redis delete what they wrote with
// DeleteKeysLater.
package redistest

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

var (
	inMain atomic.Bool

	mu      sync.Mutex
	servers []*server // every server started, stopped by Main
	dirs    []string  // their directories, removed by Main

	cluster  = &shared[ClusterTopology]{name: "a Redis Cluster", start: startCluster}
	sentinel = &shared[SentinelTopology]{name: "a Sentinel", start: startSentinel}
)

// Main runs the package's tests and stops every server they started. Call
// it from TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(redistest.Main(m)) }
func Main(m *testing.M) int {
	inMain.Store(true)
	code := m.Run()
	stopAll()
	return code
}

// Cluster returns the package's Redis Cluster, starting it on first use.
func Cluster(t testing.TB) *ClusterTopology { return cluster.get(t) }

// Sentinel returns the package's Sentinel-managed primary, starting it on
// first use.
func Sentinel(t testing.TB) *SentinelTopology { return sentinel.get(t) }

// shared is a topology of the package, started once.
type shared[T any] struct {
	name  string
	start func() (*T, error)
	once  sync.Once
	value *T
	err   error
}

func (s *shared[T]) get(t testing.TB) *T {
	t.Helper()
	require(t)
	s.once.Do(func() { s.value, s.err = s.start() })
	if s.err != nil {
		t.Fatalf("redistest: start %s: %v", s.name, s.err)
	}
	return s.value
}

// require skips t without redis-server 7 or later (fails it on CI), and
// fails it when the package does not stop its servers through Main.
func require(t testing.TB) {
	t.Helper()
	if !inMain.Load() {
		t.Fatal("redistest: call redistest.Main from the package's TestMain, so the servers stop with the tests")
	}
	if err := checkServer(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("redistest: %v (CI is set)", err)
		}
		t.Skipf("redistest: %v (these tests fail instead when CI is set; scripts/services.sh installs it)", err)
	}
}

// checkServer finds redis-server and checks its major version.
func checkServer() error {
	out, err := exec.Command("redis-server", "--version").Output()
	if err != nil {
		return fmt.Errorf("redis-server is not installed: %w", err)
	}
	// "Redis server v=7.0.15 sha=..."
	_, v, _ := strings.Cut(string(out), "v=")
	major, _, _ := strings.Cut(v, ".")
	if n, err := strconv.Atoi(major); err != nil || n < 7 {
		return fmt.Errorf("redis-server 7 or later is needed, found %q", strings.TrimSpace(string(out)))
	}
	return nil
}

// tempDir is a directory of the package's servers, removed by Main.
func tempDir(pattern string) (string, error) {
	dir, err := os.MkdirTemp("", pattern)
	if err != nil {
		return "", err
	}
	mu.Lock()
	dirs = append(dirs, dir)
	mu.Unlock()
	return dir, nil
}

func track(s *server) {
	mu.Lock()
	servers = append(servers, s)
	mu.Unlock()
}

func stopAll() {
	mu.Lock()
	defer mu.Unlock()
	for _, s := range servers {
		s.stop()
	}
	for _, d := range dirs {
		if err := os.RemoveAll(d); err != nil {
			fmt.Fprintf(os.Stderr, "redistest: remove %s: %v\n", d, err)
		}
	}
	servers, dirs = nil, nil
}
