package postgres

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// A job's start and end are each a transaction of a few reads and the
// writes held for its COMMIT (pipelined_conn.go), and most of what such a
// transaction costs PostgreSQL beyond its statements is the COMMIT: a WAL
// flush, a wake-up of its backend, a round trip of the worker's. So the
// writes of many jobs' steps commit together, as River's batch completer
// does, in one transaction on one connection:
//
//   - a job step's first reads (Tx.PrefetchJob, PrefetchJobEnd) take no
//     lock, so they end their own transaction in their round trip
//     (sendReads): under READ COMMITTED each statement reads its own
//     snapshot anyway, and the writes held ahead check again what they
//     depend on (sql/035: once_expect_row, once_operation_refused);
//   - its COMMIT, when all it has left is statements held ahead, joins
//     the commitGroup: the first to arrive leads, sending its own and
//     those of whoever arrived meanwhile on its own connection, each led
//     by its workspace's set_config (row-level security applies to each
//     statement as to the step's own transaction); who arrives while a
//     batch is out waits for it to return and then leads the next, so a
//     lone commit waits for nobody;
//   - a statement that refuses itself (PostgreSQL said why) aborts the
//     batch: its step gets that refusal, as if committed alone, and the
//     others are sent again without it. Anything else (the connection
//     lost, the COMMIT refused, a commit the synchronous standby did not
//     confirm) is every member's outcome, as it would have been each
//     one's alone.
//
// A step that makes any other statement after its reads begins its
// transaction again on its own connection, and commits it there, as
// before.

// groupLimit is the most steps one batch commits: a batch's row locks
// are held until its COMMIT, and a long one would hold them longer.
const groupLimit = 64

// commitGroup is the batches of one pool.
type commitGroup struct {
	mu sync.Mutex
	// leading says a batch is out; queue is who waits for the next.
	leading bool
	queue   []*groupedCommit
}

// groupedCommit is one step's writes waiting in a commitGroup.
type groupedCommit struct {
	ctx       context.Context
	workspace uuid.UUID
	ahead     []aheadStatement
	// turn is told true when the step is to lead the next batch, false
	// when its outcome, err, is known.
	turn chan bool
	err  error
}

// commit commits c's writes with whatever others wait, leading on conn if
// its turn comes: the connection of c's own step, whose transaction is
// over (sendReads).
func (g *commitGroup) commit(conn *pgx.Conn, c *groupedCommit) error {
	c.turn = make(chan bool, 1)
	g.mu.Lock()
	g.queue = append(g.queue, c)
	wait := g.leading
	g.leading = true
	g.mu.Unlock()
	if wait {
		if lead := <-c.turn; !lead {
			return c.err
		}
	}
	g.mu.Lock()
	n := min(len(g.queue), groupLimit)
	batch := g.queue[:n:n]
	g.queue = g.queue[n:]
	g.mu.Unlock()

	g.run(conn, batch)

	g.mu.Lock()
	if len(g.queue) > 0 {
		g.queue[0].turn <- true
	} else {
		g.leading = false
	}
	g.mu.Unlock()
	for _, m := range batch {
		if m != c {
			m.turn <- false
		}
	}
	return c.err
}

// waiting is how many steps wait for a batch, the one out not counted.
func (g *commitGroup) waiting() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.queue)
}

// run commits batch on conn, sending it again without a step whose
// statement refused itself, and sets every member's err.
func (g *commitGroup) run(conn *pgx.Conn, batch []*groupedCommit) {
	ctx, stop := batchContext(batch)
	defer stop()
	pending := batch
	for len(pending) > 0 {
		refused, err := sendGroup(ctx, conn, pending)
		if refused < 0 {
			for _, m := range pending {
				m.err = err
			}
			return
		}
		pending[refused].err = err
		pending = append(append([]*groupedCommit(nil), pending[:refused]...), pending[refused+1:]...)
		// PostgreSQL skipped the rest and the COMMIT: the transaction
		// waits for its ROLLBACK.
		if _, err := conn.Exec(ctx, "ROLLBACK"); err != nil {
			_ = conn.Close(ctx)
			for _, m := range pending {
				m.err = err
			}
			return
		}
	}
}

// batchContext is what a batch is sent in: its leader's values (its
// trace), cancelled only when every member's context is, so that one
// job's end does not stop the others' commits.
func batchContext(batch []*groupedCommit) (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(batch[0].ctx))
	left := atomic.Int32{}
	left.Store(int32(len(batch)))
	stops := make([]func() bool, 0, len(batch))
	for _, m := range batch {
		stops = append(stops, context.AfterFunc(m.ctx, func() {
			if left.Add(-1) == 0 {
				cancel()
			}
		}))
	}
	return ctx, func() {
		for _, stop := range stops {
			stop()
		}
		cancel()
	}
}

// sendGroup sends pending's writes in one transaction and one round trip.
// A statement that refused itself rolls it back: refused is its step's
// index and err its error, the others' writes to be sent again. Otherwise
// refused is -1 and err is every step's outcome.
func sendGroup(ctx context.Context, conn *pgx.Conn, pending []*groupedCommit) (refused int, err error) {
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	// The held statements are planned once (params.go), as set_config.
	b.Queue(planOnce)
	for _, m := range pending {
		b.Queue(setWorkspaceNumbered, m.workspace.String())
		for _, a := range m.ahead {
			b.Queue(a.query, a.args...)
		}
	}
	b.Queue("COMMIT")
	forgetUnconfirmedCommit(conn.PgConn())
	br := conn.SendBatch(ctx, b)
	fail := func(i int, what string, err error) (int, error) {
		_ = br.Close()
		var pgErr *pgconn.PgError
		if i >= 0 && ctx.Err() == nil && errors.As(err, &pgErr) && !connectionLost(err) {
			return i, &heldStatementError{what: what, err: mapError(err, what)}
		}
		// As Commit does: a connection left inside the transaction is
		// closed, which rolls it back; the outcome of a COMMIT that
		// failed is unknown unless PostgreSQL said why.
		if conn.PgConn().TxStatus() != 'I' {
			_ = conn.Close(ctx)
		}
		return -1, err
	}
	for range 2 {
		if _, err := br.Exec(); err != nil {
			return fail(-1, "", err)
		}
	}
	for i, m := range pending {
		if _, err := br.Exec(); err != nil {
			return fail(-1, "", err)
		}
		for _, a := range m.ahead {
			if err := a.read(br); err != nil {
				return fail(i, a.what, err)
			}
		}
	}
	tag, err := br.Exec()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fail(-1, "", err)
	}
	if tag.String() == "ROLLBACK" {
		return -1, pgx.ErrTxCommitRollback
	}
	return -1, unconfirmedCommit(conn.PgConn())
}
