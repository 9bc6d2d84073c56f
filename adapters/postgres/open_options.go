package postgres

import "github.com/jackc/pgx/v5"

// OpenOption sets up the connections OpenPool makes, beyond the pool.
type OpenOption func(*pgx.ConnConfig)

// WithQueryTracer hands every statement of every connection to t (a
// pgx.QueryTracer, and a pgx.BatchTracer if it is one too): the
// OpenTelemetry adapter's spans when tracing is on. Without it nothing is
// traced, at no cost.
func WithQueryTracer(t pgx.QueryTracer) OpenOption {
	return func(c *pgx.ConnConfig) { c.Tracer = t }
}
