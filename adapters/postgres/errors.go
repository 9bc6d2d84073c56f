package postgres

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
)

// storeUniqueConstraint is the name sql/001_foundation.sql gives the
// "one store per (workspace, platform, shop)" rule.
const storeUniqueConstraint = "stores_workspace_platform_shop_key"

// dbError is the cause kept inside a domain error: the SQLSTATE, the
// constraint and the server's one-line message, never the DETAIL (which
// quotes row values) or the query text (which bun interpolates arguments
// into).
type dbError struct {
	Code       string
	Constraint string
	Message    string
}

func (e *dbError) Error() string {
	if e.Constraint != "" {
		return fmt.Sprintf("postgres %s (%s): %s", e.Code, e.Constraint, e.Message)
	}
	return fmt.Sprintf("postgres %s: %s", e.Code, e.Message)
}

// mapError turns a database failure into a domain error. what names the
// operation in the client-safe message ("store", "outbox event"). Domain
// errors pass through unchanged.
func mapError(err error, what string) error {
	if err == nil {
		return nil
	}
	var de *domain.Error
	if errors.As(err, &de) {
		return err
	}
	if errors.Is(err, sql.ErrNoRows) {
		return domain.Errorf(domain.CodeNotFound, "%s not found", what)
	}
	if errors.As(err, new(*beginLostError)) {
		// Kept in the chain: Transact runs the transaction again on
		// another connection.
		return unavailableBecause(err)
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		cause := &dbError{Code: pgErr.Code, Constraint: pgErr.ConstraintName, Message: pgErr.Message}
		switch {
		case pgErr.Code == noDataFound:
			// A write that must change one row found none, and said so
			// itself (sql/035): the row is gone.
			return domain.Wrap(domain.CodeNotFound, cause, what+" not found")
		case pgErr.Code == operationRefused:
			return refusedUpdateSaying(pgErr.Message, model.OperationStatus(pgErr.Detail))
		case pgErr.Code == "23505" && pgErr.ConstraintName == storeUniqueConstraint:
			return domain.Wrap(domain.CodeStoreExists, cause, "a store for this platform and shop already exists in the workspace")
		case pgErr.Code == "23505":
			return domain.Wrap(domain.CodeConflict, cause, what+" already exists")
		case pgErr.Code == "23503":
			return domain.Wrap(domain.CodeConflict, cause, what+" refers to a missing row")
		case pgErr.Code == "23502", pgErr.Code == "23514", strings.HasPrefix(pgErr.Code, "22"):
			return domain.Wrap(domain.CodeValidation, cause, what+" is invalid")
		case pgErr.Code == "42501":
			// insufficient_privilege, which is also what "new row violates
			// row-level security policy" raises.
			return domain.Wrap(domain.CodeForbidden, cause, what+" is outside the workspace")
		case pgErr.Code == "40001", pgErr.Code == "40P01", pgErr.Code == "55P03", pgErr.Code == "57014",
			strings.HasPrefix(pgErr.Code, "08"), strings.HasPrefix(pgErr.Code, "53"),
			strings.HasPrefix(pgErr.Code, "57P"), pgErr.Code == "25P03", pgErr.Code == readOnlyTransaction,
			pgErr.Code == "0A000" && strings.Contains(pgErr.Message, "cached plan must not change result type"):
			// serialization failure, deadlock, lock not available, statement
			// timeout, connection, resources (53300: too many connections),
			// shutdown (57P01: a restart), idle-in-tx timeout, a write on
			// a standby (25006: a way in such as HAProxy still leading to
			// a leader Patroni just demoted, until its next check), a prepared
			// statement whose result type a migration changed (pgx drops it
			// on this error and prepares it again next time): nothing was
			// committed, trying again can work.
			return unavailableBecause(cause)
		}
		return domain.Wrap(domain.CodeInternal, cause, "database error")
	}
	// Network, context and driver errors carry no row values; keep them.
	if unavailable(err) {
		return unavailableBecause(err)
	}
	return domain.Wrap(domain.CodeInternal, err, "database error")
}

// unavailableError maps a begin or commit failure: whatever the cause, the
// transaction did not commit (or the outcome is unknown), and the caller may
// retry with the same idempotency key.
func unavailableError(err error) error {
	var de *domain.Error
	if errors.As(err, &de) {
		return err
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return unavailableBecause(&dbError{Code: pgErr.Code, Constraint: pgErr.ConstraintName, Message: pgErr.Message})
	}
	return unavailableBecause(err)
}

// retryUnavailable is the Retry-After of every CodeUnavailable this adapter
// returns: long enough for a busy pool to turn over, short enough that a
// client does not notice a restart.
const retryUnavailable = time.Second

// unavailableBecause is CodeUnavailable with a Retry-After: the database
// could not do it now (down, restarting, out of connections, busy), nothing
// was committed, and the same request with the same key may succeed later.
func unavailableBecause(cause error) error {
	return unavailableSaying("database unavailable, try again", cause)
}

// poolExhausted is what a transaction gets when no connection of the pool
// became free within the acquire timeout.
func poolExhausted(cause error) error {
	return unavailableSaying("the database is busy, try again", cause)
}

func unavailableSaying(message string, cause error) error {
	return &domain.Error{Code: domain.CodeUnavailable, Message: message, RetryAfter: retryUnavailable, Err: cause}
}

// connectionLost reports an error of the first statement on a pooled
// connection that says the connection itself is gone (the server
// restarted, or an administrator ended the session), so nothing ran and
// another connection may succeed.
func connectionLost(err error) bool {
	if errors.Is(err, driver.ErrBadConn) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return true
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return strings.HasPrefix(pgErr.Code, "57P") || strings.HasPrefix(pgErr.Code, "08")
	}
	var netErr net.Error
	return errors.As(err, &netErr) || pgconn.SafeToRetry(err)
}

// serverWentAway reports a failure that says the server end of a
// connection is gone: it crashed, restarted or failed over, an
// administrator ended the session, a pooler lost its server (class 57P, 08,
// which is also PgBouncer's "server conn crashed?"), the server is a
// standby now (25006), or the connection broke. Not a statement that
// failed, a timeout or a caller that gave up.
func serverWentAway(err error) bool {
	var cause *dbError
	if errors.As(err, &cause) {
		return goneCode(cause.Code)
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return goneCode(pgErr.Code)
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, driver.ErrBadConn) {
		return true
	}
	var netErr net.Error
	return errors.As(err, &netErr) && !netErr.Timeout()
}

// The SQLSTATEs of sql/035's writes that refuse themselves:
// no_data_found, and once_operation_refused's own, whose DETAIL is the
// operation's status.
const (
	noDataFound      = "P0002"
	operationRefused = "OC001"
)

// readOnlyTransaction is the SQLSTATE of a write on a standby.
const readOnlyTransaction = "25006"

// goneCode reports a SQLSTATE that says the server is gone or is no
// longer the primary: 57P (shut down, restarting), 08 (the connection),
// 25006 (a write refused by a standby: the leader was demoted under the
// connection, or a way in leads to a standby).
func goneCode(code string) bool {
	return strings.HasPrefix(code, "57P") || strings.HasPrefix(code, "08") || code == readOnlyTransaction
}

func unavailable(err error) bool {
	// pgconn.ErrConnClosed: a statement on a connection pgx closed after an
	// earlier one broke it (a failover under a transaction): nothing more
	// ran, the transaction cannot commit. An EOF: the server closed the
	// connection (a backend that crashed, a proxy that cut it), in a
	// COMMIT's round trip too (pgxTx.commitAhead), whose outcome is then
	// unknown.
	if errors.Is(err, driver.ErrBadConn) || errors.Is(err, sql.ErrConnDone) || errors.Is(err, sql.ErrTxDone) ||
		errors.Is(err, pgconn.ErrConnClosed) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return true
	}
	var netErr net.Error
	if errors.As(err, &netErr) {
		return true
	}
	var connErr *pgconn.ConnectError
	if errors.As(err, &connErr) {
		return true
	}
	return pgconn.Timeout(err) || pgconn.SafeToRetry(err)
}

// affectedOne maps the result of an UPDATE of one row by id: no row means
// domain.CodeNotFound (absent, or in another workspace, which row-level
// security makes the same thing).
func affectedOne(res sql.Result, err error, what string) error {
	if err != nil {
		return mapError(err, what)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return mapError(err, what)
	}
	if n == 0 {
		return domain.Errorf(domain.CodeNotFound, "%s not found", what)
	}
	return nil
}

// isLockNotAvailable reports lock_not_available, what FOR UPDATE NOWAIT
// raises when another transaction holds the row.
func isLockNotAvailable(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "55P03"
}
