package postgres

import (
	"context"
	"database/sql"
	"errors"

	"github.com/jackc/pgx/v5"
)

// The statements of a job's hot path (an operation's conditional UPDATE,
// a store's read and UPDATE) go with their arguments as parameters, not
// written into the text by bun: the same text on every call, so pgx's
// statement cache prepares each once per connection and PostgreSQL no
// longer parses, analyses and rewrites it (row-level security included)
// for every job. Each is written once in bun's placeholders and numbered
// for pgx (placeholders.go).

// They find their rows by primary key, so one plan is right for every
// argument, yet the application role plans each prepared statement for its
// arguments, every time (Bootstrap: plan_cache_mode = force_custom_plan,
// for the queue's claims, whose best plan depends on how full the queue
// is), and planning was most of what PostgreSQL spent on them: about
// 0.1 ms a statement, against 0.02-0.1 ms of execution. So on a
// connection of ours they are sent after planOnce, which lets PostgreSQL
// keep one generic plan per connection for them, and any other statement
// with parameters after planEach, so that nothing else is planned once:
// a SET LOCAL lasts until the transaction ends (or a failed statement
// ends it). The transaction switches only when the next statement needs
// the other mode (pgxTx.plan): a job's, whose every statement is planned
// once, says planOnce once, with its BEGIN, where each batch said both
// (twelve statements a job). Neither is planned itself.
const (
	planOnce = `SET LOCAL plan_cache_mode = force_generic_plan`
	planEach = `SET LOCAL plan_cache_mode TO DEFAULT`
)

// txParams runs a transaction's statements with parameters: on a
// connection of ours by pipelinedConn.sendBatch (with the transaction's
// BEGIN when it is its first statement, after the statements held before
// it), else on the transaction by database/sql, which pgx runs the same
// way.
type txParams struct {
	tx   *sql.Tx
	conn *pipelinedConn
}

// query runs query (numbered) with args and calls scan for each row with
// the row's Scan.
func (p txParams) query(ctx context.Context, query string, args []any, scan func(func(dest ...any) error) error) error {
	if p.conn == nil {
		rows, err := p.tx.QueryContext(ctx, query, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			if err := scan(rows.Scan); err != nil {
				return err
			}
		}
		return rows.Err()
	}
	b := &pgx.Batch{}
	b.Queue(query, args...)
	br, err := p.conn.sendPlannedOnce(ctx, b)
	if err != nil {
		return err
	}
	var rows pgx.Rows
	if rows, err = br.Query(); err == nil {
		for err == nil && rows.Next() {
			err = scan(rows.Scan)
		}
		rows.Close()
		if err == nil {
			err = rows.Err()
		}
	}
	return errors.Join(err, br.Close())
}

// queryRow is query for a statement that returns at most one row:
// sql.ErrNoRows when it returns none.
func (p txParams) queryRow(ctx context.Context, query string, args []any, dest ...any) error {
	found := false
	err := p.query(ctx, query, args, func(scan func(dest ...any) error) error {
		found = true
		return scan(dest...)
	})
	if err == nil && !found {
		return sql.ErrNoRows
	}
	return err
}

// execOneAhead runs query (numbered), which changes exactly one row of
// what or raises an error (sql/035: once_expect_row, no_data_found is
// CodeNotFound): on a connection of ours held for the transaction's next
// statement or its COMMIT (pipelinedConn.holdAhead), else at once. Rows,
// if set, is handed the rows it returns, when it runs.
func (p txParams) execOneAhead(ctx context.Context, what, query string, rows func(scan func(dest ...any) error) error, args ...any) error {
	if p.conn == nil {
		if rows == nil {
			_, err := p.tx.ExecContext(ctx, query, args...)
			return mapError(err, what)
		}
		return mapError(p.query(ctx, query, args, rows), what)
	}
	return mapError(p.conn.holdAhead(ctx, aheadStatement{query: query, args: args, what: what, rows: rows}), what)
}
