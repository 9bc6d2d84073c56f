package app_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/simulator/simhttp"
	"github.com/oncehq/once/app"
	"github.com/oncehq/once/testsupport/apitest"
	"github.com/oncehq/once/testsupport/pgtest"
)

// apiWalkthrough returns the walkthrough script of docs/api.md and what
// its `# →` comments say it prints, in order.
func apiWalkthrough(t *testing.T) (script string, want []string) {
	t.Helper()
	raw, err := os.ReadFile("../docs/api.md")
	require.NoError(t, err)
	_, rest, ok := strings.Cut(string(raw), "\n## A walk through one scenario\n")
	require.True(t, ok, "docs/api.md has no walkthrough")
	_, rest, ok = strings.Cut(rest, "```sh\n")
	require.True(t, ok)
	script, _, ok = strings.Cut(rest, "```\n")
	require.True(t, ok)
	for _, line := range strings.Split(script, "\n") {
		if _, expect, ok := strings.Cut(line, "# → "); ok {
			want = append(want, strings.TrimSpace(expect))
		}
	}
	require.NotEmpty(t, want)
	return script, want
}

// readmeFirstRequest returns the first request of the README, the block
// a new user copies first.
func readmeFirstRequest(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	_, rest, ok := strings.Cut(string(raw), "\n## The first request\n")
	require.True(t, ok, "README.md has no first request")
	_, rest, ok = strings.Cut(rest, "```sh\n")
	require.True(t, ok)
	script, _, ok := strings.Cut(rest, "```\n")
	require.True(t, ok)
	return script
}

// TestAPIWalkthrough runs the walkthrough of docs/api.md verbatim with bash
// against the service and checks that it prints exactly what its comments
// say, and the README's first request verbatim too, twice (runREADME): on the memory configuration (memory store and queue, with the
// Dispatcher and the workers, as `make run`) and on PostgreSQL and Redis,
// each with the in-process simulators and with `once sim` served over
// HTTP (cfg.SimURL). It runs twice on the same server: the walkthrough is
// self-contained and can be run again.
func TestAPIWalkthrough(t *testing.T) {
	for _, tool := range []string{"bash", "curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	for _, tc := range []struct {
		name     string
		postgres bool
		simHTTP  bool
	}{
		{name: "memory"},
		{name: "memory, simulator over HTTP", simHTTP: true},
		{name: "postgres and redis", postgres: true},
		{name: "postgres and redis, simulator over HTTP", postgres: true, simHTTP: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var db *pgtest.DB
			cfg := apitest.Config("")
			if tc.postgres {
				db = pgtest.New(t)
				cfg = apitest.Config(db.AppDSN)
				cfg.Queue = app.QueueRedis
				cfg.QueuePrefix = "walkthrough." + uuid.NewString() + "."
			}
			var ledgerPath string
			if tc.simHTTP {
				cfg.SimURL, ledgerPath = simServer(t)
			}
			cfg.Dispatcher, cfg.Worker = true, true
			runWalkthrough(t, apitest.Start(t, cfg, db))
			if tc.simHTTP {
				ledger, err := simhttp.ReadLedger(ledgerPath)
				require.NoError(t, err)
				assert.NotEmpty(t, simhttp.Select(ledger, simhttp.Filter{Kind: simhttp.KindVerify, EffectsOnly: true}),
					"the stores were verified by the simulator over HTTP")
			}
		})
	}
}

func runWalkthrough(t *testing.T, s *apitest.Server) {
	t.Helper()
	// Pasted twice, the README's block makes two stores: it picks a new
	// key and a new shop id each time.
	first, second := runREADME(t, s, 1), runREADME(t, s, 2)
	assert.NotEqual(t, first, second, "the second paste made a store of its own")
	script, want := apiWalkthrough(t)

	for run := range 2 {
		cmd := exec.CommandContext(t.Context(), "bash", "-c", script)
		cmd.Env = append(os.Environ(), "B="+s.URL, "TOKEN="+s.Token)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		require.NoError(t, err, "run %d stopped: %s\nstdout:\n%s", run+1, stderr.String(), out)
		assert.Equal(t, want, strings.Split(strings.TrimSpace(string(out)), "\n"), "run %d", run+1)
	}
}

// runREADME runs the README's first request as it is written, with the
// service's addresses and a token in the variables it reads, and checks
// the copy-paste path: the store is created (201, Location), the operation
// id the block reads from that answer names the store's operation, which
// it reads back and which then succeeds, and the metrics are there. It
// returns the store's id.
func runREADME(t *testing.T, s *apitest.Server, run int) uuid.UUID {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "bash", "-e", "-o", "pipefail", "-c", readmeFirstRequest(t))
	cmd.Env = append(os.Environ(), "B="+s.URL, "TOKEN="+s.Token, "OPS="+s.OpsURL)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "the README's first request (run %d) stopped: %s\nstdout:\n%s", run, stderr.String(), out)

	dec := json.NewDecoder(bytes.NewReader(out))
	var created storeCreated
	require.NoError(t, dec.Decode(&created), "run %d: echo \"$RES\" | jq . prints the answer:\n%s", run, out)
	var status string
	require.NoError(t, dec.Decode(&status), "run %d: the operation's status follows:\n%s", run, out)
	assert.Contains(t, []string{"pending", "running", "succeeded"}, status, "run %d", run)
	headers := strings.ToLower(stderr.String())
	assert.Contains(t, headers, "http/1.1 201 created", "run %d", run)
	assert.Contains(t, headers, "location: /v1/stores/"+created.Store.ID.String(), "run %d", run)
	metrics := strings.TrimSpace(string(out[dec.InputOffset():]))
	require.NotEmpty(t, metrics)
	for _, line := range strings.Split(metrics, "\n") {
		assert.True(t, strings.HasPrefix(line, "once_"), "a metrics line: %q", line)
	}
	assert.Equal(t, "succeeded", s.WaitOperation(t, created.Operation.ID, 30*time.Second).Status,
		"run %d: the operation the README read back", run)
	return created.Store.ID
}
