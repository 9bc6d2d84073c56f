package postgres

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// Round trips are most of what a short write transaction costs here, in the
// service's CPU (a write and a read system call each, and the wake-ups) as
// in PostgreSQL's. bun runs on database/sql, which sends BEGIN on its own,
// so pgx's stdlib connection is wrapped to save two kinds of them:
//
//   - a transaction of a workspace starts with BEGIN and the workspace's
//     set_config sent as one simple-protocol query: one round trip instead
//     of two (txWorkspace, beginInWorkspace);
//   - a query without arguments goes by the simple protocol. bun writes
//     every argument into the text of the statement, so pgx's default mode
//     (the extended protocol with a statement cache) saw a new text every
//     time and spent a round trip describing a statement it would never run
//     again, and then evicted another from its cache for it. Exec without
//     arguments already did this in pgx; Query did not.

// txWorkspace asks the next BeginTx on one of our connections to set the
// workspace in the BEGIN's own round trip. Applied reports whether it did,
// so that a UnitOfWork on a pool opened some other way still sets it with
// a statement of its own.
type txWorkspace struct {
	id      uuid.UUID
	applied bool
}

type txWorkspaceKey struct{}

func withTxWorkspace(ctx context.Context, w *txWorkspace) context.Context {
	return context.WithValue(ctx, txWorkspaceKey{}, w)
}

// beginInWorkspace is BEGIN and setWorkspace as one query. The id is a
// parsed uuid.UUID, printed by uuid: nothing but hex digits and dashes
// reaches the text.
func beginInWorkspace(id uuid.UUID) string {
	return "BEGIN; SELECT set_config('app.workspace_id', '" + id.String() + "', true)"
}

// pipelinedConnector makes the connections of a pool opened by OpenPool.
type pipelinedConnector struct {
	driver.Connector
}

func (c pipelinedConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	sc, ok := conn.(*stdlib.Conn)
	if !ok {
		_ = conn.Close()
		return nil, errors.New("postgres: the pgx connector returned an unexpected connection type")
	}
	return &pipelinedConn{Conn: sc}, nil
}

// pipelinedConn is a pgx stdlib connection with the two savings above;
// everything else is stdlib's.
type pipelinedConn struct {
	*stdlib.Conn
}

// BeginTx implements driver.ConnBeginTx.
func (c *pipelinedConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	w, ok := ctx.Value(txWorkspaceKey{}).(*txWorkspace)
	if !ok || w.applied || opts.ReadOnly || sql.IsolationLevel(opts.Isolation) != sql.LevelDefault {
		return c.Conn.BeginTx(ctx, opts)
	}
	conn := c.Conn.Conn()
	if conn.IsClosed() {
		return nil, driver.ErrBadConn
	}
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{BeginQuery: beginInWorkspace(w.id)})
	if err != nil {
		return nil, err
	}
	w.applied = true
	return pgxTx{ctx: ctx, tx: tx}, nil
}

// QueryContext implements driver.QueryerContext.
func (c *pipelinedConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	if len(args) == 0 {
		// pgx reads a QueryExecMode among the leading arguments as an
		// option, not as a parameter.
		args = []driver.NamedValue{{Ordinal: 1, Value: pgx.QueryExecModeSimpleProtocol}}
	}
	return c.Conn.QueryContext(ctx, query, args)
}

// pgxTx is a pgx transaction as database/sql wants it (stdlib's own
// wrapper is unexported).
type pgxTx struct {
	ctx context.Context
	tx  pgx.Tx
}

func (t pgxTx) Commit() error   { return t.tx.Commit(t.ctx) }
func (t pgxTx) Rollback() error { return t.tx.Rollback(t.ctx) }
