// Package typescript holds the TypeScript SDK (an npm package); this Go test
// runs its node tests against a real server behind a fault proxy, so `go
// test` (and `make test`) covers the SDK too.
package typescript

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/oncehq/once/testsupport/apitest"
	"github.com/oncehq/once/testsupport/faultproxy"
)

// TestTypeScriptSDK builds the SDK with tsc --strict and runs its tests
// with node's test runner: the idempotent helper against a server whose
// answer the proxy cuts, and the retry decision against stubs.
func TestTypeScriptSDK(t *testing.T) {
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("npm is not installed")
	}
	if _, err := os.Stat("node_modules"); err != nil {
		run(t, npm, "ci", "--no-audit", "--no-fund")
	}

	s := apitest.Memory(t)
	proxy := faultproxy.Start(t, strings.TrimPrefix(s.URL, "http://"))
	fault := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/cut" {
			http.NotFound(w, r)
			return
		}
		proxy.CutNextResponses(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(fault.Close)

	cmd := exec.CommandContext(t.Context(), npm, "test")
	cmd.Env = append(os.Environ(),
		"ONCE_URL=http://"+proxy.Addr(),
		"ONCE_DIRECT_URL="+s.URL,
		"ONCE_TOKEN="+s.Token,
		"ONCE_FAULT_URL="+fault.URL,
	)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "# fail 0") || strings.Contains(string(out), "# pass 0") {
		t.Fatalf("npm test: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "# SKIP") || !strings.Contains(string(out), "ok 1 - retries a call whose answer was cut") {
		t.Fatalf("npm test did not run the server suite:\n%s", out)
	}
}

// run runs a command in this directory and returns its output.
func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.CommandContext(t.Context(), name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}
