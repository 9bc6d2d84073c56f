package simhttp_test

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/simulator/simhttp"
	"github.com/oncehq/once/testsupport/testkit"
)

// sim is a running simulator server on a ledger file.
type sim struct {
	path   string
	ledger *simhttp.Ledger
	server *simhttp.Server
	http   *httptest.Server
	admin  *simhttp.Admin
	logs   *testkit.LogBuffer
	stop   func()
}

// startSim serves the simulators on the ledger at path (a new one in a
// temp dir if empty) until the test ends or stop is called.
func startSim(t *testing.T, path string) *sim {
	t.Helper()
	return startSimWith(t, path, simhttp.ServerOptions{})
}

// startSimWith is startSim with opts (its Logger is the test's).
func startSimWith(t *testing.T, path string, opts simhttp.ServerOptions) *sim {
	t.Helper()
	if path == "" {
		path = filepath.Join(t.TempDir(), "ledger.jsonl")
	}
	ledger, err := simhttp.OpenLedger(path)
	require.NoError(t, err)
	logs := &testkit.LogBuffer{}
	opts.Logger = slog.New(slog.NewJSONHandler(logs, nil))
	server, err := simhttp.NewServer(ledger, opts)
	require.NoError(t, err)
	ts := httptest.NewServer(server)
	var once sync.Once
	s := &sim{path: path, ledger: ledger, server: server, http: ts, admin: simhttp.NewAdmin(ts.URL), logs: logs}
	s.stop = func() {
		once.Do(func() {
			server.Close() // ends held calls, so the HTTP server can close
			ts.Close()
			require.NoError(t, ledger.Close())
		})
	}
	t.Cleanup(s.stop)
	return s
}

// client is a Client of the simulator with timeout.
func (s *sim) client(t *testing.T, timeout time.Duration) *simhttp.Client {
	t.Helper()
	c, err := simhttp.NewClient(simhttp.ClientConfig{URL: s.http.URL, Timeout: timeout})
	require.NoError(t, err)
	return c
}

// effects counts the ledger's side effects of token, read over HTTP.
func (s *sim) effects(t *testing.T, token string) int {
	t.Helper()
	entries, err := s.admin.Ledger(context.Background(), simhttp.Filter{Token: token, EffectsOnly: true})
	require.NoError(t, err)
	return len(entries)
}

func (s *sim) inject(t *testing.T, f simhttp.Fault) {
	t.Helper()
	require.NoError(t, s.admin.Inject(context.Background(), f))
}

// waitHeld waits until n calls are held open.
func (s *sim) waitHeld(t *testing.T, n int) []simhttp.HeldCall {
	t.Helper()
	var held []simhttp.HeldCall
	require.Eventually(t, func() bool {
		var err error
		held, err = s.admin.Held(context.Background())
		require.NoError(t, err)
		return len(held) == n
	}, 10*time.Second, 5*time.Millisecond, "%d held calls", n)
	return held
}
