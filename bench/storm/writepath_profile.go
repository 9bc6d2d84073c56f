package storm

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/oncehq/once/adapters/opshttp"
	"github.com/oncehq/once/testsupport/pgcluster"
)

// serveProfiler takes CPU profiles of `once serve` through its ops
// listener's /debug/pprof/profile (ONCE_OPS_PPROF), one per measured run,
// so that a profile holds one variant at one connection count.
type serveProfiler struct {
	dir, label, opsAddr string
}

func newServeProfiler(dir, label string) (*serveProfiler, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	port, err := pgcluster.FreePort()
	if err != nil {
		return nil, err
	}
	return &serveProfiler{dir: dir, label: label, opsAddr: fmt.Sprintf("127.0.0.1:%d", port)}, nil
}

// profilerToken is the token of the operator "bench" the bench gives
// `once serve`: pprof is an operator route of the ops listener.
const profilerToken = "once-bench-profiler-operator-token"

// env is what `once serve` needs to serve the profiler on a known port.
func (p *serveProfiler) env() []string {
	return []string{"ONCE_OPS_ADDR", p.opsAddr, "ONCE_OPS_PPROF", "true", "ONCE_OPERATORS", opshttp.Entry("bench", profilerToken)}
}

// start begins a CPU profile as long as the measured run (pprof counts
// whole seconds) and returns a function that waits for it and writes it to
// <dir>/<label>-<variant>-<conns>c.pprof. A nil profiler does nothing.
func (p *serveProfiler) start(ctx context.Context, variant string, conns int, d time.Duration) (wait func() error) {
	if p == nil {
		return func() error { return nil }
	}
	seconds := max(1, int(d.Round(time.Second)/time.Second))
	name := fmt.Sprintf("%s-%s-%dc.pprof", p.label, strings.ReplaceAll(variant, " ", "-"), conns)
	done := make(chan error, 1)
	go func() {
		done <- p.fetch(ctx, seconds, filepath.Join(p.dir, name))
	}()
	return func() error { return <-done }
}

func (p *serveProfiler) fetch(ctx context.Context, seconds int, path string) error {
	return FetchProfile(ctx, fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", p.opsAddr, seconds), profilerToken, path)
}

// FetchProfile gets a pprof profile from url, an operator route of a once
// process's ops listener (ONCE_OPS_PPROF on, token an operator's), into
// path.
func FetchProfile(ctx context.Context, url, token, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("CPU profile: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("CPU profile: %s (is ONCE_OPS_PPROF on?)", resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
