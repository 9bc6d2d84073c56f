package postgres

import (
	"context"
	"errors"
	"log/slog"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/oncehq/once/domain"
)

// A commit under synchronous replication waits until the synchronous
// standby has its WAL. When that wait is cancelled (a cancel request, a
// statement_timeout, an operator's pg_cancel_backend), PostgreSQL cannot
// undo the commit, which is already in its WAL and visible to everyone:
// it answers the COMMIT with success and sends only a WARNING, "canceling
// wait for synchronous replication due to user request", DETAIL "The
// transaction has already committed locally, but might not have been
// replicated to the standby." (syncrep.c, SyncRepWaitForLSN). The standby
// may never get it: a failover right after loses it. So such a commit is
// no success: its outcome is unknown, as with a connection lost during
// the COMMIT, and is answered as one (CodeUnavailable: retry with the same
// key). A retry with the same key replays the record if the commit
// survived, and executes again if it was lost; the record is only ever
// committed completed, together with the work (domain/idempotency), so
// the key is never left claimed.
//
// The warning reaches pgx as a notice, handed to the connection's OnNotice
// while the COMMIT's response is read, before the COMMIT returns. The
// handler marks the connection (PgConn.CustomData); whoever sent the COMMIT
// clears the mark before and reads it right after (unconfirmedTx,
// pgxTx.Commit, sendBatchOnce), so the mark is that commit's and no other
// connection's.
//
// (If the backend is terminated instead, or the server shuts down during
// the wait, the connection is closed without the warning reaching the
// client: the COMMIT fails, which Transact already answers as
// CodeUnavailable.)

// unconfirmedCommitKey is the connection's mark in PgConn.CustomData.
const unconfirmedCommitKey = "once.unconfirmed_commit"

// markUnconfirmedCommits is the OnNotice of every connection OpenPool
// makes; next, if any, hears every notice after it.
func markUnconfirmedCommits(next pgconn.NoticeHandler) pgconn.NoticeHandler {
	return func(pc *pgconn.PgConn, n *pgconn.Notice) {
		if syncRepWaitCancelled(n) {
			pc.CustomData()[unconfirmedCommitKey] = n.Message
		}
		if next != nil {
			next(pc, n)
		}
	}
}

// syncRepWaitCancelled reports whether n is PostgreSQL's warning that a
// commit's wait for the synchronous standby was cancelled. Its SQLSTATE is
// no help (01000, the generic warning) and its text is translated
// (lc_messages), so it is known by the source file and function that
// raised it, fields PostgreSQL sends untranslated with every message; the
// English text is a fallback for a server or proxy that leaves them out.
func syncRepWaitCancelled(n *pgconn.Notice) bool {
	if n.SeverityUnlocalized != "" && n.SeverityUnlocalized != "WARNING" {
		return false
	}
	if n.File == "syncrep.c" || n.Routine == "SyncRepWaitForLSN" {
		return true
	}
	return strings.Contains(n.Message, "synchronous replication") && strings.Contains(n.Detail, "committed locally")
}

// forgetUnconfirmedCommit clears pc's mark before a commit, so that a
// warning an earlier statement left (one nobody read) is not taken for its.
func forgetUnconfirmedCommit(pc *pgconn.PgConn) { delete(pc.CustomData(), unconfirmedCommitKey) }

// unconfirmedCommit is the error of a commit that just returned on pc
// (nil: it was confirmed), and clears the mark.
func unconfirmedCommit(pc *pgconn.PgConn) error {
	data := pc.CustomData()
	message, ok := data[unconfirmedCommitKey].(string)
	if !ok {
		return nil
	}
	delete(data, unconfirmedCommitKey)
	return &unconfirmedCommitError{warning: message}
}

// unconfirmedCommitError is a commit PostgreSQL made locally whose wait
// for the synchronous standby was cancelled.
type unconfirmedCommitError struct {
	warning string
}

func (e *unconfirmedCommitError) Error() string {
	return "committed on the primary only, the synchronous standby may not have it: " + e.warning
}

// unconfirmedCommitMessage is what the client is told: retrying with the
// same key is what makes the outcome known.
const unconfirmedCommitMessage = "the outcome of this request is unknown (the database's standby did not confirm its commit); retry with the same Idempotency-Key"

// CommitObserver hears of every commit whose wait for the synchronous
// standby was cancelled (a metric). It must return quickly.
type CommitObserver interface {
	UnconfirmedCommit()
}

// WithUnconfirmedCommitLog logs each unconfirmed commit once, at WARN,
// with the context of the request or job that made it (its request_id),
// and tells observer, if not nil.
func WithUnconfirmedCommitLog(log *slog.Logger, observer CommitObserver) UnitOfWorkOption {
	return func(u *UnitOfWork) {
		if log != nil {
			u.log = log.With(slog.String("component", "postgres"))
		}
		u.commits = observer
	}
}

// unconfirmed maps an unconfirmed commit to CodeUnavailable, logs it and
// counts it; any other error is returned as it is.
func (u *UnitOfWork) unconfirmed(ctx context.Context, err error) error {
	var e *unconfirmedCommitError
	if !errors.As(err, &e) {
		return err
	}
	if u.log != nil {
		u.log.WarnContext(ctx, "commit not confirmed by the synchronous standby: its outcome is unknown until a retry",
			slog.String("warning", e.warning))
	}
	if u.commits != nil {
		u.commits.UnconfirmedCommit()
	}
	return &domain.Error{Code: domain.CodeUnavailable, Message: unconfirmedCommitMessage, RetryAfter: retryUnavailable, Err: e}
}
