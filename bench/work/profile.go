package work

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/oncehq/once/adapters/opshttp"
	"github.com/oncehq/once/bench/storm"
)

// With --profile-dir the throughput scenario writes, per run, a CPU
// profile of `once work` (its ops listener's /debug/pprof/profile,
// ONCE_OPS_PPROF), its allocations over the run (-work-allocs.pprof),
// where it waited for locks (-work-mutex.pprof),
// and the run database's pg_stat_statements (the private cluster then
// preloads it) into that directory.

// StatementsSettings are the cluster settings pg_stat_statements needs,
// with planning tracked: a statement sent as text is parsed and planned
// each time, and the plan time is what tells it from a prepared one.
var StatementsSettings = []string{
	"shared_preload_libraries=pg_stat_statements",
	"pg_stat_statements.track_planning=on",
}

// profilerToken is the operator token the bench gives `once work`: pprof
// is an operator route of the ops listener.
const profilerToken = "once-bench-work-profiler-token"

// profileEnv is the worker's environment for a profile: env with the
// profiler on (a copy: env is the bench's).
func profileEnv(env []string) []string {
	return slices.Concat(env, []string{"ONCE_OPS_PPROF", "true", "ONCE_OPERATORS", opshttp.Entry("bench", profilerToken)})
}

// profileWork takes a CPU profile of seconds from the worker whose
// /metrics is metrics, retrying while its listener is not up yet, into
// path; wait returns its error.
func profileWork(ctx context.Context, metrics string, seconds int, path string) (wait func() error) {
	done := make(chan error, 1)
	go func() {
		url := fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", strings.TrimSuffix(metrics, "/metrics"), seconds)
		deadline := time.Now().Add(30 * time.Second)
		for {
			err := storm.FetchProfile(ctx, url, profilerToken, path)
			if err == nil || time.Now().After(deadline) || ctx.Err() != nil {
				done <- err
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	return func() error { return <-done }
}

// profileMutex writes where the worker's goroutines waited for a lock
// since it started (its /debug/pprof/mutex, sampled: app's
// mutexSampling) to path: a lock that serializes the jobs shows there,
// not in the CPU profile.
func profileMutex(ctx context.Context, metrics, path string) error {
	url := strings.TrimSuffix(metrics, "/metrics") + "/debug/pprof/mutex"
	return storm.FetchProfile(ctx, url, profilerToken, path)
}

// profileAllocs writes the worker's allocations since it started (its
// /debug/pprof/allocs, with the jobs all ended) to path: what a job
// allocates, for `go tool pprof -sample_index alloc_space`.
func profileAllocs(ctx context.Context, metrics, path string) error {
	url := strings.TrimSuffix(metrics, "/metrics") + "/debug/pprof/allocs"
	return storm.FetchProfile(ctx, url, profilerToken, path)
}

// statementsRun is pg_stat_statements over one run; nil when the bench
// does not profile.
type statementsRun struct{ dir string }

// startStatements resets pg_stat_statements (with --profile-dir).
func (r *runner) startStatements(ctx context.Context, super *sql.DB) (*statementsRun, error) {
	if r.cfg.ProfileDir == "" {
		return nil, nil
	}
	if _, err := super.ExecContext(ctx, `CREATE EXTENSION IF NOT EXISTS pg_stat_statements`); err != nil {
		return nil, err
	}
	if _, err := super.ExecContext(ctx, `SELECT pg_stat_statements_reset()`); err != nil {
		return nil, err
	}
	return &statementsRun{dir: r.cfg.ProfileDir}, nil
}

// write writes the run database's statements since the reset, by total
// time, per job of n, to <dir>/<label>-statements.md.
func (s *statementsRun) write(ctx context.Context, super *sql.DB, label string, n int) error {
	if s == nil {
		return nil
	}
	rows, err := super.QueryContext(ctx, `SELECT calls, plans, total_plan_time, total_exec_time, rows,
		left(regexp_replace(query, '\s+', ' ', 'g'), 400)
		FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
		ORDER BY total_plan_time + total_exec_time DESC`)
	if err != nil {
		return err
	}
	defer rows.Close()
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d jobs; pg_stat_statements of the run's database, by total planning and execution time\n\n", label, n)
	fmt.Fprintln(&b, "| calls per job | plans per job | plan ms per job | exec ms per job | mean exec ms | rows per call | statement |")
	fmt.Fprintln(&b, "|---:|---:|---:|---:|---:|---:|---|")
	var calls, plans, planMS, execMS float64
	for rows.Next() {
		var c, p, rs int64
		var plan, exec float64
		var query string
		if err := rows.Scan(&c, &p, &plan, &exec, &rs, &query); err != nil {
			return err
		}
		calls, plans, planMS, execMS = calls+float64(c), plans+float64(p), planMS+plan, execMS+exec
		fmt.Fprintf(&b, "| %.2f | %.2f | %.3f | %.3f | %.3f | %.1f | `%s` |\n", float64(c)/float64(n), float64(p)/float64(n),
			plan/float64(n), exec/float64(n), exec/float64(max(c, 1)), float64(rs)/float64(max(c, 1)), strings.ReplaceAll(query, "|", `\|`))
	}
	if err := rows.Err(); err != nil {
		return err
	}
	fmt.Fprintf(&b, "\nAll statements: %.2f calls and %.2f plans per job; %.3f ms of planning and %.3f ms of execution per job.\n",
		calls/float64(n), plans/float64(n), planMS/float64(n), execMS/float64(n))
	if err := writeTableWrites(ctx, super, &b, n); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(s.dir, label+"-statements.md"), []byte(b.String()), 0o644)
}

// writeTableWrites appends the rows the run's database wrote per job of
// n, by table, since it was made (pg_stat_user_tables, as far as the
// sessions have reported them): an UPDATE that changes no indexed column
// can be written beside its row (HOT), with no index entry.
func writeTableWrites(ctx context.Context, super *sql.DB, b *strings.Builder, n int) error {
	rows, err := super.QueryContext(ctx, `SELECT relname, n_tup_ins, n_tup_upd, n_tup_hot_upd, n_tup_del
		FROM pg_stat_user_tables WHERE n_tup_ins + n_tup_upd + n_tup_del > 0
		ORDER BY n_tup_upd + n_tup_ins DESC, relname`)
	if err != nil {
		return err
	}
	defer rows.Close()
	fmt.Fprintf(b, "\n| table | inserted per job | updated per job | of which HOT | deleted per job |\n|---|---:|---:|---:|---:|\n")
	for rows.Next() {
		var table string
		var ins, upd, hot, del int64
		if err := rows.Scan(&table, &ins, &upd, &hot, &del); err != nil {
			return err
		}
		fmt.Fprintf(b, "| %s | %.2f | %.2f | %.2f | %.2f |\n", table, float64(ins)/float64(n), float64(upd)/float64(n), float64(hot)/float64(n), float64(del)/float64(n))
	}
	return rows.Err()
}
