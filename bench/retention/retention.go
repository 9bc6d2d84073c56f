package retention

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"runtime"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver

	"github.com/oncehq/once/adapters/postgres"
	"github.com/oncehq/once/bench/stats"
	"github.com/oncehq/once/domain/dispatch"
	"github.com/oncehq/once/domain/idempotency"
	"github.com/oncehq/once/testsupport/pgcluster"
	"github.com/oncehq/once/testsupport/pgsandbox"
)

// Config is one `once-bench retention`.
type Config struct {
	// Rows removed per measurement.
	Rows int
	// Reps of the three measurements, interleaved.
	Reps int
	// Workspaces the rows are spread over.
	Workspaces int
	// Batch of the batched DELETEs (ONCE_CLEANUP_BATCH's default).
	Batch       int
	PostgresBin string
}

// The three ways of removing rows, in the order of the table.
const (
	dropPartition   = "outbox: drop the partition (sql/009)"
	deleteDispatch  = "outbox: batched DELETE (before sql/009; now the default partition only)"
	deleteIdempKeys = "idempotency: batched DELETE (the cleaner)"
)

var ways = []string{dropPartition, deleteDispatch, deleteIdempKeys}

// measurement is one removal.
type measurement struct {
	wal     int64
	took    time.Duration
	removed int
	// sizeBefore and sizeAfter: the table with its indexes (the outbox: all
	// its partitions), after a VACUUM following the removal.
	sizeBefore, sizeAfter int64
}

// Run runs cfg.Reps repetitions of the three measurements on a private
// cluster and prints the table to out.
func Run(ctx context.Context, cfg Config, out, progress io.Writer) (err error) {
	if cfg.Rows <= 0 || cfg.Reps <= 0 || cfg.Workspaces <= 0 || cfg.Batch <= 0 {
		return errors.New("--rows, --reps, --workspaces and --batch must be positive")
	}
	fmt.Fprintln(progress, "== private PostgreSQL cluster")
	cluster, err := pgcluster.Start(ctx, cfg.PostgresBin, 20)
	defer func() {
		if cerr := cluster.Remove(); cerr != nil {
			err = errors.Join(err, cerr)
		}
	}()
	if err != nil {
		return err
	}
	results := map[string][]measurement{}
	for rep := 1; rep <= cfg.Reps; rep++ {
		for _, way := range ways {
			fmt.Fprintf(progress, "== rep %d: %s, %d rows\n", rep, way, cfg.Rows)
			m, err := measureOnce(ctx, cluster, cfg, way)
			if err != nil {
				return fmt.Errorf("%s: %w", way, err)
			}
			fmt.Fprintf(progress, "   %d removed, %s of WAL, %s\n", m.removed, mb(float64(m.wal)), m.took.Round(time.Millisecond))
			results[way] = append(results[way], m)
		}
	}
	writeTable(out, cfg, results)
	return nil
}

// measureOnce makes a fresh database, writes the rows and removes them the
// way named, measuring the WAL and the time of the removal alone.
func measureOnce(ctx context.Context, cluster *pgcluster.Cluster, cfg Config, way string) (m measurement, err error) {
	db, err := pgsandbox.Create(ctx, cluster.SuperuserDSN(), "once_retention")
	defer func() { err = errors.Join(err, db.Drop(context.WithoutCancel(ctx))) }()
	if err != nil {
		return m, err
	}
	super, err := sql.Open("pgx", db.SuperuserDSN())
	if err != nil {
		return m, err
	}
	defer super.Close()
	super.SetMaxOpenConns(1)

	// The rows are a day old; a partition of that day holds the dispatched
	// events when the way is the drop, none when it is the DELETE (they
	// are then in the default partition, as every event was in one table
	// before sql/009).
	day := time.Now().UTC().Add(-72 * time.Hour).Truncate(24 * time.Hour)
	partitions := postgres.NewOutboxPartitions(db.App, 24*time.Hour)
	if way == dropPartition {
		if _, err := partitions.Prepare(ctx, day); err != nil {
			return m, err
		}
	}
	fill, table := fillOutbox, "outbox_events"
	if way == deleteIdempKeys {
		fill, table = fillIdempotency, "idempotency_requests"
	}
	if _, err := super.ExecContext(ctx, fill, day, cfg.Rows, cfg.Workspaces); err != nil {
		return m, err
	}
	if _, err := super.ExecContext(ctx, "VACUUM ANALYZE "+table); err != nil {
		return m, err
	}
	if _, err := super.ExecContext(ctx, "CHECKPOINT"); err != nil {
		return m, err
	}
	if m.sizeBefore, err = sizeOf(ctx, super, table); err != nil {
		return m, err
	}

	uow := postgres.NewUnitOfWork(db.App)
	var remove func(context.Context) (int, error)
	switch way {
	case dropPartition, deleteDispatch:
		// The service's own cleaner: drops what it can, deletes the rest.
		remove = dispatch.NewRetentionCleaner(postgres.NewOutboxDiscovery(db.App), partitions, uow,
			fixedClock(day.Add(48*time.Hour)), 24*time.Hour, cfg.Batch).RunOnce
	default:
		remove = idempotency.NewCleaner(postgres.NewDiscovery(db.App), uow, fixedClock(day.Add(48*time.Hour)), cfg.Batch).RunOnce
	}
	lsn, err := walPosition(ctx, super)
	if err != nil {
		return m, err
	}
	start := time.Now()
	if m.removed, err = remove(ctx); err != nil {
		return m, err
	}
	m.took = time.Since(start)
	if err := super.QueryRowContext(ctx, `SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), $1::pg_lsn)::bigint`, lsn).Scan(&m.wal); err != nil {
		return m, err
	}
	if _, err := super.ExecContext(ctx, "VACUUM "+table); err != nil {
		return m, err
	}
	m.sizeAfter, err = sizeOf(ctx, super, table)
	return m, err
}

type fixedClock time.Time

func (c fixedClock) Now() time.Time { return time.Time(c) }

func walPosition(ctx context.Context, db *sql.DB) (string, error) {
	var lsn string
	err := db.QueryRowContext(ctx, `SELECT pg_current_wal_insert_lsn()::text`).Scan(&lsn)
	return lsn, err
}

// sizeOf is a table's size with indexes and TOAST, summed over its
// partitions.
func sizeOf(ctx context.Context, db *sql.DB, table string) (int64, error) {
	var n int64
	err := db.QueryRowContext(ctx, `
SELECT CASE WHEN c.relkind = 'p'
            THEN (SELECT coalesce(sum(pg_total_relation_size(relid)), 0) FROM pg_partition_tree(c.oid) WHERE isleaf)
            ELSE pg_total_relation_size(c.oid) END::bigint
  FROM pg_class c WHERE c.oid = $1::regclass`, table).Scan(&n)
	return n, err
}

// fillOutbox writes $2 dispatched events of the day $1 over $3 workspaces,
// shaped as the service writes them (a job payload of ids).
const fillOutbox = `
INSERT INTO outbox_events (id, workspace_id, event_type, aggregate_type, aggregate_id, event_payload, status,
                           attempt_count, next_attempt_at, created_at, dispatched_at, traceparent)
SELECT gen_random_uuid(), ('00000000-0000-7000-8000-' || lpad(to_hex(i % $3), 12, '0'))::uuid,
       'store.credentials.verify', 'store', gen_random_uuid(),
       jsonb_build_object('store_id', gen_random_uuid(), 'credential_version', 1, 'operation_id', gen_random_uuid()),
       'dispatched', 1, t, t, t + interval '50 milliseconds',
       '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'
  FROM generate_series(1, $2::int) AS i,
       LATERAL (SELECT $1::timestamptz + interval '1 day' * i / $2 AS t) x`

// fillIdempotency writes $2 completed idempotency records of the day $1
// (expired a day later) over $3 workspaces, with a saved response of the
// size a create answers.
const fillIdempotency = `
INSERT INTO idempotency_requests (workspace_id, user_id, method, path, idempotency_key, fingerprint_key_id,
                                  request_fingerprint, status, response_status, response_headers, response_body,
                                  created_at, completed_at, expires_at)
SELECT ('00000000-0000-7000-8000-' || lpad(to_hex(i % $3), 12, '0'))::uuid, gen_random_uuid(), 'POST', '/v1/stores',
       gen_random_uuid(), 'k1', sha256(i::text::bytea), 'completed', 202,
       '{"Location": ["/v1/operations/0191d7c4-7a0e-7cc1-9d51-1c1f4a7b2a11"]}'::jsonb,
       convert_to(repeat('x', 240), 'UTF8'), t, t, t + interval '1 day'
  FROM generate_series(1, $2::int) AS i,
       LATERAL (SELECT $1::timestamptz + interval '1 day' * i / $2 AS t) x`

func writeTable(out io.Writer, cfg Config, results map[string][]measurement) {
	fmt.Fprintf(out, "| removal of %d rows | WAL | WAL per row | time | size before → after VACUUM |\n", cfg.Rows)
	fmt.Fprintln(out, "|---|---:|---:|---:|---|")
	for _, way := range ways {
		var wal, perRow, took, before, after []float64
		for _, m := range results[way] {
			wal = append(wal, float64(m.wal))
			perRow = append(perRow, float64(m.wal)/float64(max(m.removed, 1)))
			took = append(took, m.took.Seconds())
			before = append(before, float64(m.sizeBefore))
			after = append(after, float64(m.sizeAfter))
		}
		fmt.Fprintf(out, "| %s | %s | %s | %s | %s → %s |\n", way, stats.Of(wal).Format(mb), stats.Of(perRow).Format(bytes),
			stats.Of(took).Format(seconds), stats.Of(before).Format(mb), stats.Of(after).Format(mb))
	}
	fmt.Fprintln(out)
	fmt.Fprintf(out, "Median (min–max) of %d interleaved repetitions, each on a fresh database of a private PostgreSQL cluster "+
		"(WAL: pg_current_wal_insert_lsn() before and after the removal, nothing else writing). Rows spread over %d workspaces; "+
		"batched DELETEs %d rows a transaction, as the service's cleaners do. %d cores, %s.\n",
		cfg.Reps, cfg.Workspaces, cfg.Batch, runtime.NumCPU(), runtime.Version())
}

func mb(v float64) string      { return fmt.Sprintf("%.2f MB", v/(1<<20)) }
func bytes(v float64) string   { return fmt.Sprintf("%.1f B", v) }
func seconds(v float64) string { return fmt.Sprintf("%.2f s", v) }
