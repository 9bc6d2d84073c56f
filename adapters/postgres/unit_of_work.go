package postgres

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// setWorkspace is the first statement of every transaction. The third
// argument (is_local = true) scopes it to the transaction: a pooled
// connection never carries one workspace's context into another's
// transaction (afterwards the setting reads ”, which the policies turn into
// "no rows").
const setWorkspace = `SELECT set_config('app.workspace_id', ?, true)`

// UnitOfWork runs use cases in one transaction of one workspace, as the
// application role, under row-level security.
type UnitOfWork struct {
	db             *bun.DB
	acquireTimeout time.Duration
	// server, if set, hears of transactions that failed because their
	// server went away.
	server *ServerIdentity
	// log and commits, if set, hear of commits the synchronous standby
	// did not confirm (unconfirmed_commit.go).
	log     *slog.Logger
	commits CommitObserver
}

var _ ports.UnitOfWork = (*UnitOfWork)(nil)

// UnitOfWorkOption configures a UnitOfWork.
type UnitOfWorkOption func(*UnitOfWork)

// WithAcquireTimeout bounds how long a transaction waits for a free
// connection of the pool (Pool.AcquireTimeout); d <= 0 keeps the default,
// DefaultAcquireTimeout.
func WithAcquireTimeout(d time.Duration) UnitOfWorkOption {
	return func(u *UnitOfWork) {
		if d > 0 {
			u.acquireTimeout = d
		}
	}
}

// WithServerIdentity tells server of every transaction that failed because
// its server went away (serverWentAway): a process whose connections reach
// PostgreSQL through a pooler may keep them across a failover behind it,
// so its ServerIdentity would learn of the change from no new connection.
func WithServerIdentity(server *ServerIdentity) UnitOfWorkOption {
	return func(u *UnitOfWork) { u.server = server }
}

// NewUnitOfWork returns a UnitOfWork on db, which must be connected as the
// application role.
func NewUnitOfWork(db *bun.DB, opts ...UnitOfWorkOption) *UnitOfWork {
	u := &UnitOfWork{db: db, acquireTimeout: DefaultAcquireTimeout}
	for _, opt := range opts {
		opt(u)
	}
	return u
}

// Transact implements ports.UnitOfWork.
//
// It takes a connection from the pool first, waiting at most the acquire
// timeout: a saturated pool answers CodeUnavailable with a Retry-After
// instead of queueing the request for as long as the client waits. The
// transaction itself then runs on that connection with ctx.
//
// A pooled connection can be dead without knowing it (PostgreSQL restarted,
// an administrator ended the session): its first statement fails. Nothing
// ran, so Transact drops it and takes another, at most once per connection
// the pool can hold; the pool recovers from a restart without a client
// seeing it. A failure after fn started is never retried here.
func (u *UnitOfWork) Transact(ctx context.Context, workspace uuid.UUID, fn func(ctx context.Context, tx ports.Tx) error) error {
	if workspace == uuid.Nil {
		return domain.Errorf(domain.CodeValidation, "a transaction needs a workspace")
	}
	attempts := u.db.Stats().MaxOpenConnections + 1
	for attempt := 1; ; attempt++ {
		deadConn, err := u.transactOnce(ctx, workspace, fn)
		if err != nil && u.server != nil && ctx.Err() == nil && serverWentAway(err) {
			u.server.lost()
		}
		if !deadConn || attempt >= attempts || ctx.Err() != nil {
			return err
		}
	}
}

// acquire takes a connection of the pool, waiting at most acquireTimeout.
func (u *UnitOfWork) acquire(ctx context.Context) (bun.Conn, error) {
	actx, cancel := context.WithTimeout(ctx, u.acquireTimeout)
	defer cancel()
	conn, err := u.db.Conn(actx)
	if err == nil {
		return conn, nil
	}
	if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
		return bun.Conn{}, poolExhausted(err)
	}
	return bun.Conn{}, unavailableError(err)
}

// transactOnce runs fn in one transaction on a connection of its own.
// deadConn says that the transaction failed before fn started because the
// connection is dead: nothing of the caller's ran, and another connection
// may do.
func (u *UnitOfWork) transactOnce(ctx context.Context, workspace uuid.UUID,
	fn func(ctx context.Context, tx ports.Tx) error,
) (deadConn bool, err error) {
	conn, err := u.acquire(ctx)
	if err != nil {
		return false, err
	}
	// Back to the pool, or dropped if it broke; a panic in fn included.
	defer conn.Close()
	var fnErr error
	fnCalled := false
	// On a pool of OpenPool, BEGIN carries the workspace's set_config in
	// the same round trip (pipelined_conn.go); on any other pool it is the
	// first statement, as before. fn gets ctx without the request, so a
	// transaction fn might begin itself is not given this workspace.
	w := &txWorkspace{id: workspace}
	err = conn.RunInTx(withTxWorkspace(ctx, w), nil, func(_ context.Context, btx bun.Tx) error {
		if !w.applied {
			if _, err := btx.ExecContext(ctx, setWorkspace, workspace.String()); err != nil {
				return err
			}
		}
		fnCalled = true
		// A panic in fn propagates; RunInTx's deferred rollback undoes the
		// transaction on the way out.
		fnErr = fn(ctx, newTx(btx, workspace, w.conn))
		return fnErr
	})
	if errors.As(err, new(*beginLostError)) {
		// The connection was dead when the transaction's first round
		// trip (BEGIN with a statement of fn's) reached it: nothing of it
		// committed, and another connection may do.
		return true, unavailableError(err)
	}
	if fnCalled && fnErr != nil {
		return false, fnErr // unchanged, as the port promises
	}
	var held *heldStatementError
	if errors.As(err, &held) {
		// A statement held for the COMMIT failed there: rolled back, as
		// if it had failed in fn.
		return false, mapError(held.err, held.what)
	}
	if errors.As(err, new(*unconfirmedCommitError)) {
		// Committed here, perhaps not on the standby: no success.
		return false, u.unconfirmed(ctx, err)
	}
	if err != nil {
		// begin, set_config or commit failed: nothing was committed (or the
		// outcome is unknown); a retry with the same key is safe.
		return !fnCalled && connectionLost(err), unavailableError(err)
	}
	return false, nil
}

// Tx is one transaction of one workspace and the repositories bound to it.
// The repositories of the task kinds' tables are made when asked for, by
// the accessor in each table's file (catalog_syncs.go), from db and
// workspace.
type Tx struct {
	db        bun.Tx
	workspace uuid.UUID

	workspaces  *WorkspaceRepository
	members     *MemberRepository
	idempotency *IdempotencyStore
	outbox      *Outbox
	dispatch    *OutboxDispatch
	operations  *OperationRepository
	stores      *StoreRepository
	products    *ProductRepository
	media       *MediaRepository
	// endpoints is what the operations' UPDATEs said of the workspace's
	// webhook endpoints (webhook_presence.go).
	endpoints *endpointPresence
	// conn is the transaction's connection when it is one of ours
	// (OpenPool), for PrefetchJob; prefetch is what that read, for the
	// Gets.
	conn     *pipelinedConn
	prefetch *jobPrefetch
}

var _ ports.Tx = (*Tx)(nil)

func newTx(db bun.Tx, workspace uuid.UUID, conn *pipelinedConn) *Tx {
	endpoints, prefetch, params := &endpointPresence{}, &jobPrefetch{}, txParams{tx: db.Tx, conn: conn}
	return &Tx{
		db: db, workspace: workspace, endpoints: endpoints, conn: conn, prefetch: prefetch,
		workspaces:  &WorkspaceRepository{db: db, workspace: workspace},
		members:     &MemberRepository{db: db, workspace: workspace},
		idempotency: &IdempotencyStore{db: db, conn: conn, workspace: workspace, claimed: map[model.IdempotencyScope]model.IdempotencyRecord{}},
		outbox:      &Outbox{db: db, workspace: workspace, prefetch: prefetch},
		dispatch:    &OutboxDispatch{db: db, workspace: workspace},
		operations:  &OperationRepository{db: db, workspace: workspace, endpoints: endpoints, prefetch: prefetch, params: params},
		stores:      &StoreRepository{storeTable: storeTable{db, workspace, "store"}, prefetch: prefetch, params: params},
		products:    &ProductRepository{db: db, workspace: workspace},
		media:       &MediaRepository{mediaTable{db, workspace, "media"}},
	}
}

func (t *Tx) Workspaces() ports.WorkspaceRepository { return t.workspaces }
func (t *Tx) Members() ports.MemberRepository       { return t.members }
func (t *Tx) Idempotency() ports.IdempotencyStore   { return t.idempotency }
func (t *Tx) Outbox() ports.Outbox                  { return t.outbox }
func (t *Tx) OutboxDispatch() ports.OutboxDispatch  { return t.dispatch }
func (t *Tx) Operations() ports.OperationRepository { return t.operations }
func (t *Tx) Stores() ports.StoreRepository         { return t.stores }
func (t *Tx) Products() ports.ProductRepository     { return t.products }
func (t *Tx) Media() ports.MediaRepository          { return t.media }
