package queuetest

import (
	"net"
	"os"
	"testing"
	"time"
)

// RequireBroker skips the test when nothing listens at addr (host:port),
// or fails it when the CI environment variable is set: on CI a missing
// broker is a broken pipeline, not a reason to pass.
func RequireBroker(t testing.TB, name, addr string) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err == nil {
		_ = conn.Close()
		return
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%s is not reachable at %s (CI is set): %v", name, addr, err)
	}
	t.Skipf("%s is not reachable at %s: %v; start it to run these tests (they fail instead when CI is set)", name, addr, err)
}
