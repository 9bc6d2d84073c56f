package app_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/app"
	"github.com/oncehq/once/internal/apitest"
	"github.com/oncehq/once/internal/pgtest"
)

// readmeWalkthrough returns the README's walkthrough script and what its
// `# →` comments say it prints, in order.
func readmeWalkthrough(t *testing.T) (script string, want []string) {
	t.Helper()
	raw, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	_, rest, ok := strings.Cut(string(raw), "### A walk through one scenario")
	require.True(t, ok, "README.md has no walkthrough")
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

// TestREADMEWalkthrough runs the README's walkthrough verbatim with bash
// against the service on the memory configuration (memory store and queue,
// with the Dispatcher and the workers, as `make run`) and checks that it
// prints exactly what its comments say. It runs twice on the same server:
// the walkthrough is self-contained and can be run again.
func TestREADMEWalkthrough(t *testing.T) {
	for _, tool := range []string{"bash", "curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	t.Run("memory", func(t *testing.T) {
		cfg := apitest.Config("")
		cfg.Dispatcher, cfg.Worker = true, true
		runWalkthrough(t, apitest.Start(t, cfg, nil))
	})
	t.Run("postgres and redis", func(t *testing.T) {
		db := pgtest.New(t)
		cfg := apitest.Config(db.AppDSN)
		cfg.Dispatcher, cfg.Worker = true, true
		cfg.Queue = app.QueueRedis
		cfg.QueuePrefix = "walkthrough." + uuid.NewString() + "."
		runWalkthrough(t, apitest.Start(t, cfg, db))
	})
}

func runWalkthrough(t *testing.T, s *apitest.Server) {
	t.Helper()
	script, want := readmeWalkthrough(t)

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
