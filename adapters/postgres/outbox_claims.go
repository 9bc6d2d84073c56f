package postgres

import (
	"context"
	"fmt"
	"reflect"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// OutboxClaims implements ports.OutboxClaims: the claim and the mark of
// outbox_dispatch_sql.go, each sent as a pgx batch of two statements,
// set_config of the workspace and the statement itself. A batch goes out
// as one pipeline ending in one Sync, which PostgreSQL runs as one implicit
// transaction: set_config(..., true) holds for the statement after it and
// ends with the transaction, exactly as in UnitOfWork, and either both ran
// and committed or nothing did. One round trip instead of four (BEGIN,
// set_config, statement, COMMIT). The statements are prepared once per
// connection (pgx's statement cache), their text the same whatever the
// batch.
type OutboxClaims struct {
	uow *UnitOfWork
}

var (
	_ ports.OutboxClaims            = (*OutboxClaims)(nil)
	_ interface{ Conn() *pgx.Conn } = (*stdlib.Conn)(nil)
)

// NewOutboxClaims returns the claims on the connections of uow (the
// application role).
func NewOutboxClaims(uow *UnitOfWork) *OutboxClaims { return &OutboxClaims{uow: uow} }

// The statements in pgx's placeholders ($1...), derived from bun's (?0...)
// so the two paths cannot drift apart.
var (
	claimDueEventsPgx = pgxPlaceholders(claimDueEvents)
	markDispatchedPgx = pgxPlaceholders(markDispatched)
	setWorkspacePgx   = `SELECT set_config('app.workspace_id', $1, true)`
)

// ClaimDue implements ports.OutboxClaims.
func (c *OutboxClaims) ClaimDue(ctx context.Context, workspace uuid.UUID, owner string, now time.Time, lease time.Duration, limit, maxAttempts int) (ports.Claim, error) {
	now, ok, err := checkClaim(owner, now, lease, limit, maxAttempts)
	if !ok {
		return ports.Claim{}, err
	}
	var rows []claimedRow
	err = c.send(ctx, workspace, func(br pgx.BatchResults) error {
		rows = rows[:0] // a retried batch (send) starts over
		r, err := br.Query()
		if err != nil {
			return err
		}
		defer r.Close()
		for r.Next() {
			var row claimedRow
			if err := r.Scan(&row.ID, &row.WorkspaceID, &row.EventType, &row.AggregateType, &row.AggregateID,
				&row.EventPayload, &row.Status, &row.AttemptCount, &row.NextAttemptAt, &row.LockedBy,
				&row.LockedUntil, &row.LastError, &row.Traceparent, &row.CreatedAt, &row.DispatchedAt,
				&row.Destination, &row.OrderingKey, &row.JobAttempts, &row.WaitKind, &row.WaitedFor,
				&row.DueAt, &row.TakenOver); err != nil {
				return err
			}
			rows = append(rows, row)
		}
		return r.Err()
	}, claimDueEventsPgx, pgxUUID(workspace), now, limit, owner, now.Add(lease), maxAttempts, model.LeaseExpiredErrorFormat)
	if err != nil {
		return ports.Claim{}, err
	}
	return splitClaim(rows), nil
}

// MarkDispatched implements ports.OutboxClaims.
func (c *OutboxClaims) MarkDispatched(ctx context.Context, workspace uuid.UUID, owner string, ids []uuid.UUID, at time.Time) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	if at.IsZero() {
		at = time.Now()
	}
	var n int
	err := c.send(ctx, workspace, func(br pgx.BatchResults) error {
		tag, err := br.Exec()
		n = int(tag.RowsAffected())
		return err
	}, markDispatchedPgx, at, pgxUUID(workspace), pgxUUIDs(ids), owner)
	return n, err
}

// pgxUUID is id as pgx encodes a uuid parameter directly. Given a
// uuid.UUID (a driver.Valuer), pgx first tries the binary format, fails
// with an error it formats and throws away, then sends text: about a tenth
// of a Dispatcher's CPU in a profile of `once-bench steady` (small batches,
// two such calls each); no difference in a drain of full batches. A
// pgtype.UUID, unlike a bare [16]byte, also encodes in the exec modes that
// do not describe the statement first (default_query_exec_mode=exec or
// simple_protocol, as behind a transaction-pooling PgBouncer). pgxUUIDs
// does the same for a uuid[] parameter.
func pgxUUID(id uuid.UUID) pgtype.UUID { return pgtype.UUID{Bytes: id, Valid: true} }

func pgxUUIDs(ids []uuid.UUID) []pgtype.UUID {
	out := make([]pgtype.UUID, len(ids))
	for i, id := range ids {
		out[i] = pgxUUID(id)
	}
	return out
}

// send runs set_config and query as one batch on a connection of the
// unit of work's pool (its acquire timeout applies) and hands read the
// query's result.
func (c *OutboxClaims) send(ctx context.Context, workspace uuid.UUID, read func(pgx.BatchResults) error, query string, args ...any) error {
	if workspace == uuid.Nil {
		return domain.Errorf(domain.CodeValidation, "a transaction needs a workspace")
	}
	b := &pgx.Batch{}
	b.Queue(setWorkspacePgx, workspace.String())
	b.Queue(query, args...)
	return c.uow.sendBatch(ctx, b, func(br pgx.BatchResults) error {
		if _, err := br.Exec(); err != nil {
			return err
		}
		return read(br)
	})
}

// sendBatch sends b as one pipeline (one round trip, one implicit
// transaction) on a connection of the pool, waiting at most the acquire
// timeout for it, and hands read the results in order.
func (u *UnitOfWork) sendBatch(ctx context.Context, b *pgx.Batch, read func(pgx.BatchResults) error) error {
	conn, err := u.acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	// The batch is a transaction of its own: when it met an event another
	// transaction was moving to another partition, run it again
	// (moved_rows.go); read starts over with it.
	for attempt := 0; ; attempt++ {
		err = sendBatchOnce(ctx, conn, b, read)
		if !rowMoved(err) || attempt == movedRetries {
			break
		}
	}
	if err != nil {
		return mapError(u.unconfirmed(ctx, err), "outbox event")
	}
	return nil
}

// sendBatchOnce is one attempt of sendBatch, on conn.
func sendBatchOnce(ctx context.Context, conn bun.Conn, b *pgx.Batch, read func(pgx.BatchResults) error) error {
	return conn.Raw(func(driverConn any) error {
		pc, ok := pgxConnOf(driverConn)
		if !ok {
			return fmt.Errorf("postgres: outbox claims need the pgx driver, not %T", driverConn)
		}
		// The batch's implicit transaction commits at its end: a claim
		// whose commit the synchronous standby did not confirm read events
		// that may be lost with it, and publishes none of them
		// (unconfirmed_commit.go).
		forgetUnconfirmedCommit(pc.PgConn())
		br := pc.SendBatch(ctx, b)
		if err := read(br); err != nil {
			_ = br.Close()
			return err
		}
		if err := br.Close(); err != nil {
			return err
		}
		return unconfirmedCommit(pc.PgConn())
	})
}

// pgxConnOf finds the pgx connection under a database/sql driver
// connection: pgx's stdlib connection itself, or a struct wrapping it in a
// field (a wrapper that embeds *stdlib.Conn hides its Conn method behind
// the field of the same name).
func pgxConnOf(driverConn any) (*pgx.Conn, bool) {
	if sc, ok := driverConn.(*stdlib.Conn); ok {
		return sc.Conn(), true
	}
	v := reflect.ValueOf(driverConn)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return nil, false
	}
	for i := range v.Elem().NumField() {
		if f := v.Elem().Field(i); f.CanInterface() {
			if sc, ok := f.Interface().(*stdlib.Conn); ok && sc != nil {
				return sc.Conn(), true
			}
		}
	}
	return nil, false
}
