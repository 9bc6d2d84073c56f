package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

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

// groupLimit is the most steps one batch carries: a batch's row locks
// are held until its COMMIT, and a long one would hold them longer.
const groupLimit = 64

// DefaultStepLockWait is how long a batch's statement waits for a lock
// (a row another transaction is writing, a table a migration holds)
// unless Pool.StepLockWait says otherwise: its step is then sent alone,
// on its own connection (lockWaitedError), and waits there as it did
// before batches, while the others' go on without it. A batch waits for
// its slowest statement, and every step of the pool waits for the batch
// out.
const DefaultStepLockWait = 500 * time.Millisecond

// lockWaitedError is a step's outcome in a batch whose statement waited
// longer than its lock wait: nothing of it ran; it is sent again alone.
type lockWaitedError struct{ err error }

func (e *lockWaitedError) Error() string { return e.err.Error() }
func (e *lockWaitedError) Unwrap() error { return e.err }

// lockWaited reports a lock_not_available: the batch's lock wait ran out.
func lockWaited(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "55P03"
}

// poolGroups is where the job steps of one pool batch their first reads
// and their writes: two groups, so that a batch of each may be out at
// once.
type poolGroups struct {
	reads, commits group
}

// newPoolGroups is the groups of a pool whose batches wait lockWait for
// a lock (0: DefaultStepLockWait).
func newPoolGroups(lockWait time.Duration) *poolGroups {
	if lockWait <= 0 {
		lockWait = DefaultStepLockWait
	}
	lockTimeout := fmt.Sprintf("SET LOCAL lock_timeout = %d", lockWait.Milliseconds())
	return &poolGroups{
		reads: group{send: func(conn *pgx.Conn, batch []*groupedStep) {
			readGroup(conn, lockTimeout, batch)
		}},
		commits: group{send: func(conn *pgx.Conn, batch []*groupedStep) {
			commitGroup(conn, lockTimeout, batch)
		}},
	}
}

// groupLanes is how many batches of a group may be out at once: who
// arrives while they are waits for one to return and leads the next. Two
// gave the throughput bench the same jobs/s for 15 % more of PostgreSQL's
// CPU per job (smaller batches; docs/benchmarks.md, round six).
const groupLanes = 1

// group is the batches of one kind.
type group struct {
	mu sync.Mutex
	// out is how many batches are out; queue is who waits for a lane.
	out   int
	queue []*groupedStep
	// send sends a batch on the leader's connection and sets each
	// member's err.
	send func(conn *pgx.Conn, batch []*groupedStep)
}

// groupedStep is one step's writes, or its first reads, waiting in a
// group.
type groupedStep struct {
	ctx       context.Context
	workspace uuid.UUID
	// ahead is a commit's writes.
	ahead []aheadStatement
	// reads are the first reads, and scan reads their results, in order,
	// from the batch's.
	reads *pgx.Batch
	scan  func(pgx.BatchResults) error
	// turn is told true when the step is to lead the next batch, false
	// when its outcome, err, is known.
	turn chan bool
	err  error
}

// join sends c with whatever others wait, leading on conn if its turn
// comes: the connection of c's own step, which has no transaction open.
func (g *group) join(conn *pgx.Conn, c *groupedStep) error {
	c.turn = make(chan bool, 1)
	g.mu.Lock()
	if g.out < groupLanes {
		g.out++
		g.mu.Unlock()
	} else {
		g.queue = append(g.queue, c)
		g.mu.Unlock()
		if lead := <-c.turn; !lead {
			return c.err
		}
	}
	// c leads, with whoever waits.
	g.mu.Lock()
	n := min(len(g.queue), groupLimit-1)
	batch := append([]*groupedStep{c}, g.queue[:n]...)
	g.queue = g.queue[n:]
	g.mu.Unlock()

	panicked := g.sendSafely(conn, batch)

	g.mu.Lock()
	if len(g.queue) > 0 {
		// Its lane goes to the first waiting, taken off the queue now
		// so that no other lane hands it a turn too.
		next := g.queue[0]
		g.queue = g.queue[1:]
		next.turn <- true
	} else {
		g.out--
	}
	g.mu.Unlock()
	for _, m := range batch {
		if m != c {
			m.turn <- false
		}
	}
	if panicked != nil {
		panic(panicked)
	}
	return c.err
}

// sendSafely is send, which calls the members' code (scan, a held
// statement's rows): a panic there fails the whole batch, whose
// connection is closed (its state is unknown), and is returned, for the
// leader to panic with once the others are let go, so that none waits
// for ever.
func (g *group) sendSafely(conn *pgx.Conn, batch []*groupedStep) (panicked any) {
	defer func() {
		if panicked = recover(); panicked != nil {
			if conn != nil {
				_ = conn.Close(context.Background())
			}
			for _, m := range batch {
				m.err = fmt.Errorf("postgres: a batch of job steps failed: %v", panicked)
			}
		}
	}()
	g.send(conn, batch)
	return nil
}

// waiting is how many steps wait for a batch, the one out not counted.
func (g *group) waiting() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.queue)
}

// commitGroup commits batch on conn, its statements waiting for a lock
// as lockTimeout says, sending it again without a step
// whose statement refused itself, and sets every member's err.
func commitGroup(conn *pgx.Conn, lockTimeout string, batch []*groupedStep) {
	ctx, stop := batchContext(batch)
	defer stop()
	pending := batch
	for len(pending) > 0 {
		refused, err := sendGroup(ctx, conn, lockTimeout, pending)
		if refused < 0 {
			for _, m := range pending {
				m.err = err
			}
			return
		}
		pending[refused].err = err
		pending = append(append([]*groupedStep(nil), pending[:refused]...), pending[refused+1:]...)
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
func batchContext(batch []*groupedStep) (context.Context, func()) {
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
func sendGroup(ctx context.Context, conn *pgx.Conn, lockTimeout string, pending []*groupedStep) (refused int, err error) {
	b := batchLead(lockTimeout)
	for _, m := range pending {
		b.Queue(setWorkspaceNumbered, m.workspace.String())
		for _, a := range m.ahead {
			b.Queue(a.query, a.args...)
		}
	}
	b.Queue("COMMIT")
	forgetUnconfirmedCommit(conn.PgConn())
	br := conn.SendBatch(ctx, b)
	unknown := func(err error) (int, error) {
		// As Commit does: a connection left inside the transaction is
		// closed, which rolls it back; the outcome of a COMMIT that
		// failed is unknown unless PostgreSQL said why.
		if conn.PgConn().TxStatus() != 'I' {
			_ = conn.Close(ctx)
		}
		return -1, err
	}
	// fail is a failure before the COMMIT's result.
	fail := func(i int, what string, err error) (int, error) {
		_ = br.Close()
		var pgErr *pgconn.PgError
		if ctx.Err() == nil && errors.As(err, &pgErr) && strings.HasPrefix(pgErr.Code, "57P") {
			// PostgreSQL itself ended the session (an administrator, a
			// shutdown) before the COMMIT, whose results come after this
			// one's: nothing of the batch committed. The leader's
			// connection may have sat unused since its step's reads went
			// in another's batch; each step runs again on another
			// connection, as when its BEGIN finds its connection dead. (A
			// pooler's own 08P01 says nothing of what its server ran.)
			_, err := unknown(err)
			return -1, &beginLostError{err: err}
		}
		if i >= 0 && ctx.Err() == nil && errors.As(err, &pgErr) && !connectionLost(err) {
			if lockWaited(err) {
				return i, &lockWaitedError{err: err}
			}
			return i, &heldStatementError{what: what, err: mapError(err, what)}
		}
		return unknown(err)
	}
	for range batchLeadStatements {
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
		return unknown(err)
	}
	if tag.String() == "ROLLBACK" {
		return -1, pgx.ErrTxCommitRollback
	}
	return -1, unconfirmedCommit(conn.PgConn())
}

// readGroup reads batch's first reads on conn in one round trip, waiting
// for a lock as lockTimeout says, each
// step's under its workspace's set_config, in a transaction that writes
// nothing. A step whose reads fail gets its error, those before it have
// their rows, and those after it are sent again (after a lock wait, each
// alone, as it is). A connection lost is a
// beginLostError for every step not read: nothing of theirs ran, and
// Transact runs each again on another connection.
func readGroup(conn *pgx.Conn, lockTimeout string, batch []*groupedStep) {
	ctx, stop := batchContext(batch)
	defer stop()
	pending := batch
	for len(pending) > 0 {
		b := batchLead(lockTimeout)
		for _, m := range pending {
			b.Queue(setWorkspaceNumbered, m.workspace.String())
			b.QueuedQueries = append(b.QueuedQueries, fresh(m.reads.QueuedQueries)...)
		}
		b.Queue("COMMIT")
		br := conn.SendBatch(ctx, b)
		read, own := 0, false
		var err error
		for range batchLeadStatements {
			if _, err = br.Exec(); err != nil {
				break
			}
		}
		for err == nil && read < len(pending) {
			if _, err = br.Exec(); err != nil {
				break
			}
			if err = pending[read].scan(br); err != nil {
				own = true
				break
			}
			read++
		}
		if err == nil {
			// Every step has its rows; the COMMIT of a transaction that
			// wrote nothing changes nothing they read.
			_, _ = br.Exec()
		}
		_ = br.Close()
		lost := err != nil && (connectionLost(err) || conn.IsClosed())
		if conn.PgConn().TxStatus() != 'I' {
			if _, rerr := conn.Exec(ctx, "ROLLBACK"); rerr != nil {
				_ = conn.Close(ctx)
				lost, err = true, errors.Join(err, rerr)
			}
		}
		switch {
		case err == nil:
			return
		case lost:
			for _, m := range pending[read:] {
				m.err = &beginLostError{err: err}
			}
			return
		case !own:
			for _, m := range pending[read:] {
				m.err = err
			}
			return
		}
		if lockWaited(err) {
			// Reads wait for nothing but a table's lock (a migration's),
			// which the steps after this one read too, most likely: each
			// would hold the batch, and every step of the pool behind it,
			// for a lock wait of its own. They all read alone, and wait
			// there, as before batches.
			for _, m := range pending[read:] {
				m.err = &lockWaitedError{err: err}
			}
			return
		}
		pending[read].err = err
		pending = pending[read+1:]
	}
}

// fresh is copies of qs as Queue made them: pgx keeps in a sent
// QueuedQuery the statement it prepared for it on that connection, and
// sends it by that name again, without preparing it, wherever it is sent
// next. A batch that failed makes pgx deallocate its statements, and a
// step's own connection may never have prepared them: the reads sent
// again (the rest of a batch, a step alone) would name a statement that
// does not exist (26000).
func fresh(qs []*pgx.QueuedQuery) []*pgx.QueuedQuery {
	out := make([]*pgx.QueuedQuery, len(qs))
	for i, q := range qs {
		out[i] = &pgx.QueuedQuery{SQL: q.SQL, Arguments: q.Arguments, Fn: q.Fn}
	}
	return out
}

// batchLead is a batch's first statements, batchLeadStatements of them:
// BEGIN, the plan mode of its statements (planned once, params.go, as
// set_config) and its lock wait.
func batchLead(lockTimeout string) *pgx.Batch {
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	b.Queue(planOnce)
	b.Queue(lockTimeout)
	return b
}

const batchLeadStatements = 3
