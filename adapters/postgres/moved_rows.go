package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/uptrace/bun"
)

// An UPDATE that changes an event's status can move it to another
// partition of outbox_events (sql/009_outbox_partitions.sql): the mark
// moves it from outbox_events_live to the dispatched history, a dead
// letter to outbox_events_dead, a redrive back. A statement that meets
// such a row while the move is being committed (it waited for the row's
// lock, or locks rows FOR UPDATE) cannot follow it, as it would follow an
// update within one table, and PostgreSQL fails it with a serialization
// failure, even in READ COMMITTED: SQLSTATE 40001, "tuple to be locked was
// already moved to another partition due to concurrent update".
//
// Nothing was changed by the failed statement, and the move has committed,
// so running the statement again sees the row where it now is: a fenced
// UPDATE (status = 'dispatching' AND locked_by = me) then leaves it alone,
// a claim skips it, a job's dead letter finds it in the history. That is
// what retryMoved does, a few times, without failing the caller's
// transaction: inside a transaction the statement runs under a savepoint
// that is rolled back before the retry.

// movedRetries bounds the retries: each needs a concurrent move of a row
// of the same statement, committed in between; more than a few in a row
// means something else is wrong.
const movedRetries = 3

// rowMoved reports the serialization failure of a row moved to another
// partition by a concurrent update: SQLSTATE 40001, whatever the message
// says. The message is worded in the server's lc_messages, so its text
// cannot tell (a German server says "in eine andere Partition
// verschoben"), and the code alone suffices here: the units of work run in
// READ COMMITTED, where a primary raises 40001 for nothing but such a move
// (the other serialization failures need REPEATABLE READ or SERIALIZABLE;
// a standby's recovery conflict cannot meet a write). Were the database's
// default isolation set stricter, a retry would still be safe: the failed
// statement changed nothing, and under one snapshot it fails again until
// movedRetries hands the error on, as before.
// It looks at the server's error or at the cause mapError kept of it.
func rowMoved(err error) bool {
	const serializationFailure = "40001"
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code == serializationFailure
	}
	var cause *dbError
	return errors.As(err, &cause) && cause.Code == serializationFailure
}

// retryMoved runs stmt, one statement on db, again while it fails with
// rowMoved. In a transaction (a bun.Tx) each attempt runs under a
// savepoint, so the failure does not abort the transaction.
func retryMoved(ctx context.Context, db bun.IDB, stmt func() error) error {
	tx, inTx := db.(bun.Tx)
	for attempt := 0; ; attempt++ {
		if !inTx {
			if err := stmt(); err == nil || !rowMoved(err) || attempt == movedRetries {
				return err
			}
			continue
		}
		if _, err := tx.ExecContext(ctx, "SAVEPOINT once_row_moved"); err != nil {
			return err
		}
		err := stmt()
		if err == nil {
			_, err = tx.ExecContext(ctx, "RELEASE SAVEPOINT once_row_moved")
			return err
		}
		if !rowMoved(err) || attempt == movedRetries {
			return err
		}
		if _, err := tx.ExecContext(ctx, "ROLLBACK TO SAVEPOINT once_row_moved"); err != nil {
			return err
		}
	}
}
