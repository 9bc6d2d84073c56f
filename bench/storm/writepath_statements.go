package storm

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// With --profile-dir the http bench also keeps, per measured run (one
// variant at one connection count), what PostgreSQL spent on each
// statement: the cluster preloads pg_stat_statements with planning
// tracked, the run's database is reset before the run and read after it,
// per request answered, into <dir>/<label>-<variant>-<conns>c-statements.md.

// statementsSettings are the cluster settings pg_stat_statements needs.
var statementsSettings = []string{
	"shared_preload_libraries=pg_stat_statements",
	"pg_stat_statements.track_planning=on",
}

// statementsRecorder reads pg_stat_statements of one database; nil when
// the bench does not profile.
type statementsRecorder struct {
	dir, label string
	super      *sql.DB
	database   string
}

func newStatementsRecorder(ctx context.Context, dir, label string, super *sql.DB, database string) (*statementsRecorder, error) {
	if dir == "" {
		return nil, nil
	}
	if _, err := super.ExecContext(ctx, `CREATE EXTENSION IF NOT EXISTS pg_stat_statements`); err != nil {
		return nil, err
	}
	return &statementsRecorder{dir: dir, label: label, super: super, database: database}, nil
}

// reset forgets what the database's statements cost so far.
func (s *statementsRecorder) reset(ctx context.Context) error {
	if s == nil {
		return nil
	}
	_, err := s.super.ExecContext(ctx, `SELECT pg_stat_statements_reset(0, (SELECT oid FROM pg_database WHERE datname = $1), 0)`, s.database)
	return err
}

// write writes the statements since reset, by total time, per request of
// n answered.
func (s *statementsRecorder) write(ctx context.Context, variant string, conns int, n float64) error {
	if s == nil || n <= 0 {
		return nil
	}
	rows, err := s.super.QueryContext(ctx, `SELECT calls, total_plan_time, total_exec_time, rows,
		left(regexp_replace(query, '\s+', ' ', 'g'), 300)
		FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = $1)
		ORDER BY total_plan_time + total_exec_time DESC`, s.database)
	if err != nil {
		return err
	}
	defer rows.Close()
	var b strings.Builder
	fmt.Fprintf(&b, "%s, %s, %d connections: %.0f requests; pg_stat_statements of the run's database, by total time\n\n", s.label, variant, conns, n)
	fmt.Fprintln(&b, "| calls per request | plan µs per request | exec µs per request | rows per call | statement |")
	fmt.Fprintln(&b, "|---:|---:|---:|---:|---|")
	var calls, plan, exec float64
	for rows.Next() {
		var c, rs int64
		var p, e float64
		var query string
		if err := rows.Scan(&c, &p, &e, &rs, &query); err != nil {
			return err
		}
		calls, plan, exec = calls+float64(c), plan+p, exec+e
		fmt.Fprintf(&b, "| %.2f | %.1f | %.1f | %.1f | `%s` |\n", float64(c)/n, 1000*p/n, 1000*e/n,
			float64(rs)/float64(max(c, 1)), strings.ReplaceAll(query, "|", `\|`))
	}
	if err := rows.Err(); err != nil {
		return err
	}
	fmt.Fprintf(&b, "\nAll statements: %.2f calls, %.1f µs planning and %.1f µs executing per request.\n", calls/n, 1000*plan/n, 1000*exec/n)
	name := fmt.Sprintf("%s-%s-%dc-statements.md", s.label, strings.ReplaceAll(variant, " ", "-"), conns)
	return os.WriteFile(filepath.Join(s.dir, name), []byte(b.String()), 0o644)
}
