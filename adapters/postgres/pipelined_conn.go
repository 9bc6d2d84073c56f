package postgres

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/ports"
)

// Round trips are most of what a short write transaction costs here, in the
// service's CPU (a write and a read system call each, and the wake-ups) as
// in PostgreSQL's. bun runs on database/sql, which sends BEGIN on its own,
// so pgx's stdlib connection is wrapped to save two kinds of them:
//
//   - a transaction of a workspace starts with BEGIN and the workspace's
//     set_config sent as one simple-protocol query: one round trip instead
//     of two (txWorkspace, beginInWorkspace). They are sent with the
//     transaction's first statement: on their own before most, and in
//     the same round trip as a batch of pipelinedConn.sendBatch (the
//     idempotency claim's), so an idempotent request's claim costs no
//     round trip of its own;
//   - a query without arguments goes by the simple protocol. bun writes
//     every argument into the text of the statement, so pgx's default mode
//     (the extended protocol with a statement cache) saw a new text every
//     time and spent a round trip describing a statement it would never run
//     again, and then evicted another from its cache for it. Exec without
//     arguments already did this in pgx; Query did not;
//   - a statement whose outcome nothing waits for, marked by
//     withCommitTail (a product's or a task row's INSERT, the idempotency
//     record's completing UPDATE), is held back and sent with the COMMIT as
//     one simple-protocol query: a plain create makes two round trips, an
//     idempotent one three. Any other statement sent before the COMMIT
//     sends the held ones first, so the order of the statements never
//     changes; if one fails, the COMMIT does not run, the transaction is
//     rolled back and Commit returns a heldStatementError, which Transact
//     maps like the statement's own error;
//   - a statement with parameters whose outcome the next statement need
//     not wait for, but the COMMIT must (a store's UPDATE, whose one row
//     is checked; in a job's steps the operation's UPDATE too:
//     ports.WithRefusalsAtCommit), may be held by holdAhead and sent in
//     the same round trip as the transaction's next batch (sendBatch),
//     first, or with the COMMIT. Such a statement checks itself: one that
//     changed no row raises an error (sql/035), so PostgreSQL skips what
//     follows it in the round trip, the COMMIT included, and the
//     transaction rolls back; a job's start and end each commit in the
//     round trip of their last writes. It is held only while no
//     statement is held for the COMMIT as a simple query (one made after
//     it makes Commit send it first, on its own), so the held ones always
//     run in the order they were made;
//   - a job step's first reads, and then its writes held ahead, go in
//     batches with other steps' (step_groups.go): its own connection
//     sends nothing unless the step needs more.

// txWorkspace asks the next BeginTx on one of our connections to set the
// workspace in the BEGIN's own round trip. Applied reports whether it did,
// so that a UnitOfWork on a pool opened some other way still sets it with
// a statement of its own.
type txWorkspace struct {
	id      uuid.UUID
	applied bool
	// conn is the connection whose transaction it is, when it is one of
	// ours: what sendBatch is called on.
	conn *pipelinedConn
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
// With a ServerIdentity, each new connection first tells it which server
// it reached, and each found dead when the pool hands it out again tells it
// so (ResetSession).
type pipelinedConnector struct {
	driver.Connector
	server *ServerIdentity
	// groups is where the pool's job steps batch their first reads and
	// their commits (step_groups.go).
	groups *poolGroups
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
	withUUIDCodec(sc.Conn().TypeMap())
	if c.server != nil {
		if err := c.server.identify(ctx, sc.Conn()); err != nil {
			_ = sc.Close()
			return nil, err
		}
	}
	return &pipelinedConn{Conn: sc, server: c.server, groups: c.groups}, nil
}

// commitTail marks an Exec that may wait for the COMMIT (see above).
// What names what it writes, for the error should it fail there. Deferred
// reports whether it waited: its rows affected are then not known when
// Exec returns, and its failure is Commit's. On a pool not opened by
// OpenPool, or outside a transaction of ours, it runs at once.
type commitTail struct {
	what     string
	deferred bool
}

type commitTailKey struct{}

func withCommitTail(ctx context.Context, t *commitTail) context.Context {
	return context.WithValue(ctx, commitTailKey{}, t)
}

// heldStatementError is the failure of a statement held for the COMMIT,
// reported by PostgreSQL: the transaction was rolled back, so the outcome
// is known (not that of a commit that may or may not have happened). What
// names the first held statement: the held inserts are the ones data can
// make fail; the completing UPDATE of an idempotency record cannot miss.
type heldStatementError struct {
	what string
	err  error
}

func (e *heldStatementError) Error() string { return e.err.Error() }
func (e *heldStatementError) Unwrap() error { return e.err }

// pipelinedConn is a pgx stdlib connection with the savings above;
// everything else is stdlib's.
type pipelinedConn struct {
	*stdlib.Conn
	// tx is the transaction begun by BeginTx in a workspace, until its
	// Commit or Rollback.
	tx *pgxTx
	// server, if not nil, hears of the connection's death (ResetSession).
	server *ServerIdentity
	// groups, if not nil, batch job steps together (step_groups.go).
	groups *poolGroups
}

// ResetSession implements driver.SessionResetter: stdlib's check before
// the pool hands the connection out again, which pings one that was idle
// for over a second. A connection that looked alive and idle but does not
// answer the ping died under us: its server went away (crashed, restarted,
// failed over, ended the session), which the ServerIdentity hears. One that
// pgx closed itself (a query whose context ended) is not news.
func (c *pipelinedConn) ResetSession(ctx context.Context) error {
	alive := !c.Conn.Conn().IsClosed() && c.Conn.Conn().PgConn().TxStatus() == 'I'
	err := c.Conn.ResetSession(ctx)
	if err != nil && alive && c.server != nil && ctx.Err() == nil {
		c.server.lost()
	}
	return err
}

// BeginTx implements driver.ConnBeginTx.
func (c *pipelinedConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	w, ok := ctx.Value(txWorkspaceKey{}).(*txWorkspace)
	if !ok || w.applied || opts.ReadOnly || sql.IsolationLevel(opts.Isolation) != sql.LevelDefault {
		tx, err := c.Conn.BeginTx(ctx, opts)
		if err != nil {
			return nil, err
		}
		return unconfirmedTx{Tx: tx, pc: c.Conn.Conn().PgConn()}, nil
	}
	if c.Conn.Conn().IsClosed() {
		return nil, driver.ErrBadConn
	}
	// Nothing is sent yet: BEGIN goes with the first statement.
	w.applied, w.conn = true, c
	c.tx = &pgxTx{ctx: ctx, conn: c, workspace: w.id}
	return c.tx, nil
}

// beginLostError is the failure of the round trip that carried a
// transaction's BEGIN because the connection is gone: nothing of the
// transaction can have committed, so Transact may run it again on another
// connection, as when BEGIN went alone.
type beginLostError struct{ err error }

func (e *beginLostError) Error() string { return e.err.Error() }
func (e *beginLostError) Unwrap() error { return e.err }

// began sends the transaction's BEGIN and set_config on their own if they
// were not sent yet.
func (c *pipelinedConn) began(ctx context.Context) error {
	if c.tx == nil || c.tx.sent {
		return nil
	}
	c.tx.sent = true
	if _, err := c.Conn.Conn().Exec(ctx, beginInWorkspace(c.tx.workspace)); err != nil {
		if connectionLost(err) {
			return &beginLostError{err: err}
		}
		return err
	}
	return nil
}

// sendBatch sends b's statements in one round trip, on the transaction's
// connection, as pgx runs a batch (prepared once per connection in its
// default mode): after the statements held for the COMMIT (on their own,
// so the order never changes), and led by BEGIN and the workspace's
// set_config when they were not sent yet, which costs no round trip of
// their own then. The caller reads b's results from the BatchResults
// (BEGIN's and set_config's are read here) and closes it before any
// other statement.
func (c *pipelinedConn) sendBatch(ctx context.Context, b *pgx.Batch) (pgx.BatchResults, error) {
	return c.sendPlanned(ctx, b, false)
}

// sendPlannedOnce is sendBatch for statements planned once per connection
// (params.go): b goes after planOnce unless the transaction said it
// already.
func (c *pipelinedConn) sendPlannedOnce(ctx context.Context, b *pgx.Batch) (pgx.BatchResults, error) {
	return c.sendPlanned(ctx, b, true)
}

// readFirst sends a job step's first reads, b, and scan reads their
// results in order (Tx.PrefetchJob). Sent first in a transaction whose
// writes may commit with others' (ports.RefusalsAtCommit), they go in a
// batch of the pool's read group (step_groups.go), in a transaction of
// their own; otherwise as sendPlannedOnce.
func (c *pipelinedConn) readFirst(ctx context.Context, b *pgx.Batch, scan func(pgx.BatchResults) error) error {
	alone := func() error {
		br, err := c.sendPlannedOnce(ctx, b)
		if err != nil {
			return err
		}
		return errors.Join(scan(br), br.Close())
	}
	t := c.tx
	if t == nil || c.groups == nil || t.sent || len(t.ahead) > 0 || t.tail.Len() > 0 || !ports.RefusalsAtCommit(t.ctx) {
		return alone()
	}
	err := c.groups.reads.join(c.Conn.Conn(), &groupedStep{ctx: ctx, workspace: t.workspace, reads: b, scan: scan})
	if errors.As(err, new(*lockWaitedError)) {
		// A table lock held them up (a migration's): alone, on this
		// connection, so that other steps' reads do not wait with them.
		return alone()
	}
	// Nothing was sent on this connection: what follows begins the
	// transaction here, unless it is writes held ahead and the COMMIT.
	t.readsEnded = true
	return err
}

// sendPlanned is sendBatch with b's statements planned once (generic) or
// for their arguments.
func (c *pipelinedConn) sendPlanned(ctx context.Context, b *pgx.Batch, generic bool) (pgx.BatchResults, error) {
	if c.tx == nil {
		return nil, errors.New("postgres: a batch outside a transaction of a workspace")
	}
	if c.tx.tail.Len() > 0 {
		if err := c.flushTail(ctx); err != nil {
			return nil, err
		}
	}
	return c.sendLed(ctx, b, generic)
}

// sendLed is sendPlanned once no statement is held for the COMMIT: b led
// by BEGIN and set_config if they were not sent, by the statements held
// ahead (holdAhead), whose outcomes are read and checked here, and by the
// switch of plan_cache_mode its statements need, if the transaction is
// not in it (params.go): a job's transactions switch once, with BEGIN.
func (c *pipelinedConn) sendLed(ctx context.Context, b *pgx.Batch, generic bool) (pgx.BatchResults, error) {
	conn := c.Conn.Conn()
	if c.tx.sent && len(c.tx.ahead) == 0 && c.tx.generic == generic {
		return conn.SendBatch(ctx, b), nil
	}
	ahead := c.tx.ahead
	c.tx.ahead = nil
	led := &pgx.Batch{QueuedQueries: make([]*pgx.QueuedQuery, 0, len(b.QueuedQueries)+len(ahead)+4)}
	lead := 0
	if !c.tx.sent {
		// set_config is planned once too (params.go): one plan fits
		// every workspace.
		c.tx.sent = true
		led.Queue("BEGIN")
		c.tx.plan(led, true)
		led.Queue(setWorkspaceNumbered, c.tx.workspace.String())
		lead = len(led.QueuedQueries)
	}
	aheadMode := 0
	if len(ahead) > 0 {
		// By primary key, as the statements of params.go.
		aheadMode = c.tx.plan(led, true)
		for _, a := range ahead {
			led.Queue(a.query, a.args...)
		}
	}
	mode := c.tx.plan(led, generic)
	led.QueuedQueries = append(led.QueuedQueries, b.QueuedQueries...)
	br := conn.SendBatch(ctx, led)
	for range lead {
		if _, err := br.Exec(); err != nil {
			_ = br.Close()
			if connectionLost(err) {
				return nil, &beginLostError{err: err}
			}
			return nil, err
		}
	}
	fail := func(err error, what string) (pgx.BatchResults, error) {
		// The rest of the batch ran, or was refused in the aborted
		// transaction: either way the caller's error rolls it back.
		_ = br.Close()
		return nil, mapError(err, what)
	}
	what := "statement"
	if len(ahead) > 0 {
		what = ahead[0].what
	}
	for range aheadMode {
		if _, err := br.Exec(); err != nil {
			return fail(err, what)
		}
	}
	for _, a := range ahead {
		if err := a.read(br); err != nil {
			return fail(err, a.what)
		}
	}
	for range mode {
		if _, err := br.Exec(); err != nil {
			return fail(err, what)
		}
	}
	return br, nil
}

// aheadStatement is a statement held by holdAhead, one that finds its
// rows by primary key (it is planned once, params.go) and raises an error
// itself when it changes no row (sql/035). What names it for its errors;
// rows, if set, is handed the rows it returns.
type aheadStatement struct {
	query string
	args  []any
	what  string
	rows  func(scan func(dest ...any) error) error
}

// read reads a's result from br.
func (a aheadStatement) read(br pgx.BatchResults) error {
	if a.rows == nil {
		_, err := br.Exec()
		return err
	}
	rows, err := br.Query()
	if err != nil {
		return err
	}
	for err == nil && rows.Next() {
		err = a.rows(rows.Scan)
	}
	rows.Close()
	if err != nil {
		return err
	}
	return rows.Err()
}

// holdAhead holds a's statement (numbered, with its arguments) for the
// transaction's next statement (see above). The statements held for the
// COMMIT, made before it, are sent first.
func (c *pipelinedConn) holdAhead(ctx context.Context, a aheadStatement) error {
	if c.tx == nil {
		return errors.New("postgres: a statement held outside a transaction of a workspace")
	}
	if c.tx.tail.Len() > 0 {
		if err := c.flushTail(ctx); err != nil {
			return err
		}
	}
	c.tx.ahead = append(c.tx.ahead, a)
	return nil
}

// flushAhead sends the statements held ahead on their own (with BEGIN if
// it was not sent).
func (c *pipelinedConn) flushAhead(ctx context.Context) error {
	if c.tx == nil || len(c.tx.ahead) == 0 {
		return nil
	}
	// Planned as the held statements are: no switch after them.
	br, err := c.sendLed(ctx, &pgx.Batch{}, true)
	if err != nil {
		return err
	}
	return br.Close()
}

// setWorkspaceNumbered is setWorkspace for pgx.
var setWorkspaceNumbered = numberedPlaceholders(setWorkspace)

// ExecContext implements driver.ExecerContext.
func (c *pipelinedConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	if t, ok := ctx.Value(commitTailKey{}).(*commitTail); ok && len(args) == 0 && c.tx != nil {
		c.tx.hold(query, t.what)
		t.deferred = true
		return driver.RowsAffected(0), nil
	}
	if err := c.began(ctx); err != nil {
		return nil, err
	}
	if err := c.flushAhead(ctx); err != nil {
		return nil, err
	}
	if c.tx != nil && c.tx.tail.Len() > 0 && len(args) == 0 {
		// One simple-protocol query, the held statements first; the result
		// is the caller's statement's, and so is the error, whichever of
		// them failed.
		query = c.tx.takeTail() + query
	} else if err := c.flushTail(ctx); err != nil {
		return nil, err
	}
	if err := c.planForArgs(ctx, args); err != nil {
		return nil, err
	}
	return c.Conn.ExecContext(ctx, query, args)
}

// QueryContext implements driver.QueryerContext.
func (c *pipelinedConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	if err := c.began(ctx); err != nil {
		return nil, err
	}
	if err := c.flushTail(ctx); err != nil {
		return nil, err
	}
	if err := c.planForArgs(ctx, args); err != nil {
		return nil, err
	}
	if len(args) == 0 {
		// pgx reads a QueryExecMode among the leading arguments as an
		// option, not as a parameter.
		args = []driver.NamedValue{{Ordinal: 1, Value: pgx.QueryExecModeSimpleProtocol}}
	}
	return c.Conn.QueryContext(ctx, query, args)
}

// planForArgs puts back plan_cache_mode's default before a statement
// with arguments that is not ours to plan once (none today: bun writes
// its arguments into the text), if the transaction switched it.
func (c *pipelinedConn) planForArgs(ctx context.Context, args []driver.NamedValue) error {
	if len(args) == 0 || c.tx == nil || !c.tx.generic {
		return nil
	}
	c.tx.generic = false
	_, err := c.Conn.Conn().Exec(ctx, planEach)
	return err
}

// flushTail sends the held statements on their own, before a statement it
// cannot share a query with (one with arguments, or a query whose rows are
// read: pgx reads only the first result of a simple-protocol query).
func (c *pipelinedConn) flushTail(ctx context.Context) error {
	if err := c.flushAhead(ctx); err != nil {
		return err
	}
	if c.tx == nil || c.tx.tail.Len() == 0 {
		return nil
	}
	if err := c.began(ctx); err != nil {
		return err
	}
	_, err := c.Conn.Conn().Exec(ctx, c.tx.takeTail())
	return err
}

// pgxTx is a pgx transaction as database/sql wants it (stdlib's own
// wrapper is unexported), with the statements held for its COMMIT.
type pgxTx struct {
	ctx  context.Context
	conn *pipelinedConn
	// workspace is the transaction's; sent says whether its BEGIN and
	// set_config were.
	workspace uuid.UUID
	sent      bool
	// tail is the held statements, each followed by ";\n"; what names
	// the first.
	tail strings.Builder
	what string
	// ahead is the statements held by holdAhead, all made before any
	// held in tail.
	ahead []aheadStatement
	// generic says the transaction set plan_cache_mode to planOnce's
	// (params.go); a SET LOCAL lasts until it ends.
	generic bool
	// readsEnded says the transaction's first reads went in a read
	// group's transaction (readFirst): its writes held ahead may commit
	// in a commit group.
	readsEnded bool
}

// plan queues on b the switch of plan_cache_mode to generic's if the
// transaction is not in it, and returns how many statements it queued.
func (t *pgxTx) plan(b *pgx.Batch, generic bool) int {
	if t.generic == generic {
		return 0
	}
	t.generic = generic
	if generic {
		b.Queue(planOnce)
	} else {
		b.Queue(planEach)
	}
	return 1
}

func (t *pgxTx) hold(query, what string) {
	if t.tail.Len() == 0 {
		t.what = what
	}
	t.tail.WriteString(query)
	t.tail.WriteString(";\n")
}

func (t *pgxTx) takeTail() string {
	s := t.tail.String()
	t.tail.Reset()
	return s
}

// Commit sends the held statements and COMMIT as one query, and otherwise
// is pgx's own Commit.
func (t *pgxTx) Commit() error {
	if t.readsEnded && !t.sent && t.tail.Len() == 0 {
		// Its reads ended the transaction and nothing was sent since:
		// what it writes commits with other steps' (step_groups.go).
		if len(t.ahead) == 0 {
			t.conn.tx = nil
			return nil
		}
		if t.conn.Conn.Conn().IsClosed() {
			// Its connection died since its reads (it led a batch that
			// lost it): nothing of the step ran on it, and a batch it led
			// there would fail every member's commit. The step runs
			// again on another connection.
			t.conn.tx, t.ahead = nil, nil
			return &beginLostError{err: driver.ErrBadConn}
		}
		c := &groupedStep{ctx: t.ctx, workspace: t.workspace, ahead: t.ahead}
		err := t.conn.groups.commits.join(t.conn.Conn.Conn(), c)
		if !errors.As(err, new(*lockWaitedError)) {
			t.conn.tx, t.ahead = nil, nil
			return err
		}
		// A row lock held its writes up: they go alone, below, and
		// wait there as before batches, the others' without them.
	}
	// A transaction that sent nothing still begins and commits: that is
	// how a dead connection (and a server gone away) is found by a
	// transaction with nothing to say, as before BEGIN waited.
	if err := t.conn.began(t.ctx); err != nil {
		t.conn.tx = nil
		return err
	}
	if len(t.ahead) > 0 && t.tail.Len() == 0 {
		return t.commitAhead()
	}
	if len(t.ahead) > 0 {
		// Statements held for the COMMIT as a simple query came after
		// the ones held ahead: those go first, on their own, so the order
		// never changes.
		what := t.ahead[0].what
		if err := t.conn.flushAhead(t.ctx); err != nil {
			return t.aheadFailed(what, err)
		}
	}
	t.conn.tx = nil
	conn := t.conn.Conn.Conn()
	forgetUnconfirmedCommit(conn.PgConn())
	what := t.what
	tag, err := conn.Exec(t.ctx, t.takeTail()+"COMMIT")
	if err != nil {
		// As pgx does: a connection left inside the transaction (a held
		// statement failed, so COMMIT never ran) is closed, which rolls it
		// back, and the pool drops it.
		if conn.PgConn().TxStatus() != 'I' {
			_ = conn.Close(t.ctx)
		}
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && what != "" {
			return &heldStatementError{what: what, err: err}
		}
		return err
	}
	if tag.String() == "ROLLBACK" {
		return pgx.ErrTxCommitRollback
	}
	return unconfirmedCommit(conn.PgConn())
}

// commitAhead is Commit with statements held ahead and none held as a
// simple query after them: they and COMMIT in one round trip. One that changed
// no row raised an error, and PostgreSQL skipped the COMMIT: the
// transaction is rolled back here, its outcome known, as if the statement
// had failed when it was made.
func (t *pgxTx) commitAhead() error {
	what := t.ahead[0].what
	conn := t.conn.Conn.Conn()
	forgetUnconfirmedCommit(conn.PgConn())
	b := &pgx.Batch{}
	b.Queue("COMMIT")
	// BEGIN went before (Commit's began): a connection lost here may
	// have committed, which sendLed's error says (CodeUnavailable).
	br, err := t.conn.sendLed(t.ctx, b, true)
	if err != nil {
		return t.aheadFailed(what, err)
	}
	t.conn.tx = nil
	tag, err := br.Exec()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		// As Commit does: the outcome of a COMMIT that failed is unknown
		// unless PostgreSQL said why; a connection left inside the
		// transaction is closed, which rolls it back.
		if conn.PgConn().TxStatus() != 'I' {
			_ = conn.Close(t.ctx)
		}
		return err
	}
	if tag.String() == "ROLLBACK" {
		return pgx.ErrTxCommitRollback
	}
	return unconfirmedCommit(conn.PgConn())
}

// aheadFailed rolls the transaction back after err, the failure of the
// round trip of statements held ahead (the first named what), and
// returns it: a statement's own failure (PostgreSQL said why) is a known
// rollback, as if it had failed when it was made (heldStatementError); a
// lost connection is not, if the COMMIT went with them, and stays
// CodeUnavailable as mapped.
func (t *pgxTx) aheadFailed(what string, err error) error {
	_ = t.Rollback()
	if domain.IsCode(err, domain.CodeUnavailable) {
		return err
	}
	return &heldStatementError{what: what, err: err}
}

// unconfirmedTx is stdlib's transaction whose Commit also reports a
// commit the synchronous standby did not confirm (unconfirmed_commit.go).
type unconfirmedTx struct {
	driver.Tx
	pc *pgconn.PgConn
}

func (t unconfirmedTx) Commit() error {
	forgetUnconfirmedCommit(t.pc)
	if err := t.Tx.Commit(); err != nil {
		return err
	}
	return unconfirmedCommit(t.pc)
}

// Rollback drops the held statements with the transaction. As pgx does,
// a connection the ROLLBACK failed on is closed (the pool drops it).
func (t *pgxTx) Rollback() error {
	t.conn.tx = nil
	t.tail.Reset()
	t.ahead = nil
	if !t.sent {
		return nil
	}
	conn := t.conn.Conn.Conn()
	if _, err := conn.Exec(t.ctx, "ROLLBACK"); err != nil {
		_ = conn.Close(t.ctx)
		return err
	}
	return nil
}

// insertHeld inserts the row model, whose caller reads nothing back, so
// that on a pool of OpenPool the INSERT goes with the COMMIT (above): a
// failure (a constraint) is then the transaction's, mapped as it would be
// here, naming what. Returning("NULL") keeps bun from asking for the
// defaults with RETURNING, which would make it a query.
func insertHeld(ctx context.Context, db bun.IDB, row any, what string) error {
	_, err := db.NewInsert().Model(row).Returning("NULL").Exec(withCommitTail(ctx, &commitTail{what: what}))
	return mapError(err, what)
}
