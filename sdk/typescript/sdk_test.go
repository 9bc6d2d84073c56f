// Package typescript holds the TypeScript SDK (an npm package); this Go test
// runs its node tests against a real server behind a fault proxy, so `go
// test` (and `make test`) covers the SDK too.
package typescript

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/testsupport/apitest"
	"github.com/oncehq/once/testsupport/faultproxy"
)

// TestTypeScriptSDK builds the SDK with tsc --strict and runs its tests
// with node's test runner: the idempotent helper against a server whose
// answer the proxy cuts, against a server over its rate of writes, and the
// retry decision against stubs.
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
	// One write per second and no burst, on a clock that stands still
	// until the test moves it: a refused write stays refused until then.
	limitedCfg := apitest.Config("")
	limitedCfg.RateLimit = "1/s:1"
	clock := apitest.NewManualClock()
	limited := apitest.Start(t, limitedCfg, nil, apitest.WithClock(clock))
	// Operations the waiting tests start and end on s, by id.
	var opsMu sync.Mutex
	ops := map[string]model.Operation{}
	fault := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodPost && r.URL.Path == "/operations":
			op := s.PendingOperation(t)
			opsMu.Lock()
			ops[op.ID.String()] = op
			opsMu.Unlock()
			_, _ = io.WriteString(w, op.ID.String())
			return
		case r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/operations/") && strings.HasSuffix(r.URL.Path, "/succeed"):
			opsMu.Lock()
			op, ok := ops[strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/operations/"), "/succeed")]
			opsMu.Unlock()
			if !ok {
				http.NotFound(w, r)
				return
			}
			s.SucceedOperation(t, op)
		case r.Method == http.MethodGet && r.URL.Path == "/waiting":
			_, _ = io.WriteString(w, strconv.Itoa(s.Waiters.Waiting()))
			return
		case r.Method == http.MethodPost && r.URL.Path == "/cut":
			proxy.CutNextResponses(1)
		case r.Method == http.MethodPost && r.URL.Path == "/clock":
			secs, err := strconv.Atoi(r.URL.Query().Get("seconds"))
			if err != nil || secs < 0 {
				http.Error(w, "seconds: a whole number", http.StatusBadRequest)
				return
			}
			clock.Advance(time.Duration(secs) * time.Second)
		default:
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(fault.Close)

	// An API key of s's admin, for the client made with one.
	keyRes := s.Do(t, http.MethodPost, "/v1/api-keys", map[string]any{"name": "sdk test", "scopes": []string{"keys:read"}},
		map[string]string{"Idempotency-Key": uuid.NewString()})
	var key struct {
		Secret string `json:"secret"`
	}
	keyRes.JSON(t, &key)
	if keyRes.Status != http.StatusCreated || key.Secret == "" {
		t.Fatalf("create an API key: %d %s", keyRes.Status, keyRes.Body)
	}

	cmd := exec.CommandContext(t.Context(), npm, "test")
	cmd.Env = append(os.Environ(),
		"ONCE_URL=http://"+proxy.Addr(),
		"ONCE_DIRECT_URL="+s.URL,
		"ONCE_TOKEN="+s.Token,
		"ONCE_FAULT_URL="+fault.URL,
		"ONCE_LIMITED_URL="+limited.URL,
		"ONCE_LIMITED_TOKEN="+limited.Token,
		"ONCE_API_KEY="+key.Secret,
	)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "# fail 0") || strings.Contains(string(out), "# pass 0") {
		t.Fatalf("npm test: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "# SKIP") {
		t.Fatalf("npm test skipped a suite:\n%s", out)
	}
	for _, name := range []string{
		"retries a call whose answer was cut",
		"waits out a 429's Retry-After",
		"gives up at maxElapsedMs with the last 429",
		"gives up when its signal times out, with the last 429",
		"waitForOperation returns when the operation ends",
		"waitForOperation throws at its deadline with the last state",
		"authenticates the client it is given to",
	} {
		if !strings.Contains(string(out), " - "+name) {
			t.Fatalf("npm test did not run %q against a server:\n%s", name, out)
		}
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
