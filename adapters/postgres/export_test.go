package postgres

import (
	"context"
	"database/sql"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/uptrace/bun"
)

// NewOutboxDispatchOn binds an OutboxDispatch to db for workspace without
// setting app.workspace_id, so tests can show that row-level security, not
// the adapter's own workspace predicate, is what keeps workspaces apart.
func NewOutboxDispatchOn(db bun.IDB, workspace uuid.UUID) *OutboxDispatch {
	return &OutboxDispatch{db: db, workspace: workspace}
}

// MapError is mapError, for the table of database failures.
var MapError = mapError

// TxDB is the transaction a Tx of Transact runs its statements on.
func TxDB(tx *Tx) bun.IDB { return tx.products.db }

// HoldForCommit marks the next Exec on ctx as one that may go with the
// COMMIT (pipelined_conn.go).
func HoldForCommit(ctx context.Context) context.Context {
	return withCommitTail(ctx, &commitTail{})
}

// ServerOf is what s learnt of the last server: its system identifier,
// timeline and address.
func ServerOf(s *ServerIdentity) (system, timeline, addr string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.known.system, s.known.timeline, s.known.addr
}

// ObserveServer records a new connection to the server so described.
func ObserveServer(s *ServerIdentity, system, timeline, addr string) {
	s.observe(serverFingerprint{system: system, timeline: timeline, addr: addr})
}

// ServerWentAway is serverWentAway, for the table of failures.
var ServerWentAway = serverWentAway

// ClaimDueEventsSQL is the claim's statement in pgx placeholders ($1…), for
// EXPLAIN.
var ClaimDueEventsSQL = claimDueEventsPgx

// WakeParkedSQL is the wake's statement in pgx placeholders, for the same.
var WakeParkedSQL = pgxPlaceholders(wakeParked)

// OwnExpiry are the retention statements kinds keep of their own, by table.
var OwnExpiry = ownExpiry

// UndeliveredByDestinationSQL is the count behind the operator's view of
// the webhook deliveries, in pgx placeholders, for its plan.
var UndeliveredByDestinationSQL = numberedPlaceholders(selectUndeliveredByDestination)

// LoseServer records that a connection of the pool died under the
// process (its server went away).
func LoseServer(s *ServerIdentity) { s.lost() }

// PrefetchEventQuery is the statement PrefetchJob reads a job's event with.
var PrefetchEventQuery = prefetchEvent

// TypeMapOf is the pgx type map of one of db's connections (opened by
// OpenPool), for the tests of how parameters are encoded.
func TypeMapOf(ctx context.Context, db *bun.DB) (*pgtype.Map, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	var m *pgtype.Map
	err = conn.Raw(func(dc any) error {
		m = dc.(*pipelinedConn).Conn.Conn().TypeMap()
		return nil
	})
	return m, err
}

// DeleteExpiredSQL are the retention's statements, by kind.
var DeleteExpiredSQL = deleteExpired

// CommitsWaiting is how many job steps wait for pool's next commit
// batch, and ReadsWaiting for its next batch of first reads
// (step_groups.go), read on a connection of the pool.
func CommitsWaiting(ctx context.Context, pool *sql.DB) (int, error) {
	return stepsWaiting(ctx, pool, func(g *poolGroups) *group { return &g.commits })
}

func ReadsWaiting(ctx context.Context, pool *sql.DB) (int, error) {
	return stepsWaiting(ctx, pool, func(g *poolGroups) *group { return &g.reads })
}

func stepsWaiting(ctx context.Context, pool *sql.DB, which func(*poolGroups) *group) (int, error) {
	conn, err := pool.Conn(ctx)
	if err != nil {
		return 0, err
	}
	defer func() { _ = conn.Close() }()
	n := 0
	err = conn.Raw(func(dc any) error {
		if g := dc.(*pipelinedConn).groups; g != nil {
			n = which(g).waiting()
		}
		return nil
	})
	return n, err
}

// CloseConnOf closes the connection of tx's transaction under it, as a
// batch it led that lost its connection leaves it.
func CloseConnOf(ctx context.Context, tx *Tx) error {
	return tx.conn.Conn.Conn().Close(ctx)
}
