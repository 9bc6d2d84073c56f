package postgres

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/uptrace/bun"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// IdempotencyStore implements ports.IdempotencyStore for one transaction.
// The statements and why they are shaped so are in idempotency_sql.go.
type IdempotencyStore struct {
	// db is the transaction; conn, when it is one of ours (OpenPool), is
	// its connection, which sends the claim's statements in one round
	// trip with the transaction's BEGIN (pipelinedConn.sendBatch).
	db        bun.Tx
	conn      *pipelinedConn
	workspace uuid.UUID
	// claimed holds the records this transaction claimed, by scope, for
	// Complete to write: it refuses a scope it does not hold.
	claimed map[model.IdempotencyScope]model.IdempotencyRecord
}

var _ ports.IdempotencyStore = (*IdempotencyStore)(nil)

// retryInProgress is how long a client should wait before retrying a
// request whose twin is still executing.
const retryInProgress = time.Second

func inProgress() error {
	return &domain.Error{
		Code:       domain.CodeIdempotencyInProgress,
		Message:    "a request with this idempotency key is still being processed",
		RetryAfter: retryInProgress,
	}
}

// scopeLockKey is the text hashed into the advisory lock key. The method is
// length-prefixed and the key is fixed-length, so distinct scopes give
// distinct strings.
func scopeLockKey(s model.IdempotencyScope) string {
	return fmt.Sprintf("once.idempotency:%s:%s:%d:%s:%s:%s", s.WorkspaceID, s.UserID, len(s.Method), s.Method, s.Path, s.Key)
}

type idempotencyRow struct {
	Status           string     `bun:"status"`
	FingerprintKeyID string     `bun:"fingerprint_key_id"`
	Fingerprint      []byte     `bun:"request_fingerprint"`
	ResponseStatus   *int       `bun:"response_status"`
	ResponseHeaders  []byte     `bun:"response_headers"`
	ResponseBody     []byte     `bun:"response_body"`
	CreatedAt        *time.Time `bun:"created_at"`
	CompletedAt      *time.Time `bun:"completed_at"`
	ExpiresAt        *time.Time `bun:"expires_at"`
	Expired          bool       `bun:"expired"`
}

// Claim implements ports.IdempotencyStore. The order of its statements,
// and why, is in idempotency_sql.go: the scope's try-lock, then the read
// of its row, which the lock does not decide for a completed record.
func (s *IdempotencyStore) Claim(ctx context.Context, rec model.IdempotencyRecord) (*model.IdempotencyRecord, error) {
	sc := rec.Scope
	if sc.WorkspaceID != s.workspace {
		return nil, domain.Errorf(domain.CodeForbidden, "idempotency scope is outside the transaction's workspace")
	}
	now := timePtr(rec.CreatedAt)
	locked, row, found, err := s.lockAndRead(ctx, sc, now)
	if err != nil {
		return nil, mapError(err, "idempotency record")
	}
	switch {
	case found && !row.Expired && row.Status == string(model.IdempotencyCompleted):
		return s.replay(ctx, sc, row.record) // whoever holds the lock
	case found && !row.Expired:
		// A committed in_progress row (written by a version that claimed
		// with one): the scope stays closed.
		return nil, inProgress()
	case !locked:
		return nil, inProgress()
	}
	if found { // expired: replaced by Complete's INSERT
		_, err := s.db.ExecContext(ctx, deleteExpiredIdempotencyRow,
			sc.WorkspaceID, sc.UserID, sc.Method, sc.Path, sc.Key, now)
		if isLockNotAvailable(err) {
			return nil, inProgress() // the cleaner is deleting it right now
		}
		if err != nil {
			return nil, mapError(err, "idempotency record")
		}
	}
	if rec.Fingerprint == nil {
		rec.Fingerprint = []byte{}
	}
	s.claimed[sc] = rec
	return nil, nil
}

// replay returns the completed record of sc that record makes, once the
// transaction is bound to confirm it (confirmReplicated, held for the
// COMMIT like the completing INSERT).
func (s *IdempotencyStore) replay(ctx context.Context, sc model.IdempotencyScope,
	record func(model.IdempotencyScope) (*model.IdempotencyRecord, error),
) (*model.IdempotencyRecord, error) {
	rec, err := record(sc)
	if err != nil {
		return nil, err
	}
	if _, err := s.db.ExecContext(withCommitTail(ctx, &commitTail{what: "idempotency replay"}), confirmReplicated); err != nil {
		return nil, mapError(err, "idempotency replay")
	}
	return rec, nil
}

// lockAndRead runs lockIdempotencyScope and then selectIdempotency, their
// arguments as parameters (the uuids as pgxUUID), not through bun, which
// would write them into the text: on a connection of ours as one batch,
// in one round trip with the transaction's BEGIN, else one after the
// other on the transaction.
func (s *IdempotencyStore) lockAndRead(ctx context.Context, sc model.IdempotencyScope, now *time.Time) (locked bool, row idempotencyRow, found bool, err error) {
	ws, user, key := pgxUUID(sc.WorkspaceID), pgxUUID(sc.UserID), pgxUUID(sc.Key)
	readArgs := []any{now, ws, user, sc.Method, sc.Path, key}
	var status, storedKeyID string
	dest := []any{&status, &storedKeyID, &row.Fingerprint, &row.ResponseStatus, &row.ResponseHeaders, &row.ResponseBody,
		&row.CreatedAt, &row.CompletedAt, &row.ExpiresAt, &row.Expired}
	if s.conn == nil {
		if err = s.db.Tx.QueryRowContext(ctx, lockIdempotencyPrepared, scopeLockKey(sc)).Scan(&locked); err != nil {
			return false, row, false, err
		}
		err = s.db.Tx.QueryRowContext(ctx, selectIdempotencyPrepared, readArgs...).Scan(dest...)
	} else {
		b := &pgx.Batch{}
		b.Queue(lockIdempotencyPrepared, scopeLockKey(sc))
		b.Queue(selectIdempotencyPrepared, readArgs...)
		var br pgx.BatchResults
		if br, err = s.conn.sendBatch(ctx, b); err != nil {
			return false, row, false, err
		}
		if err = br.QueryRow().Scan(&locked); err == nil {
			err = br.QueryRow().Scan(dest...)
		}
		err = errors.Join(err, br.Close())
		if errors.Is(err, pgx.ErrNoRows) {
			err = sql.ErrNoRows
		}
	}
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return locked, row, false, nil
	case err != nil:
		return false, row, false, err
	}
	row.Status, row.FingerprintKeyID = status, storedKeyID
	return locked, row, true, nil
}

func (r *idempotencyRow) record(sc model.IdempotencyScope) (*model.IdempotencyRecord, error) {
	rec := &model.IdempotencyRecord{
		Scope:            sc,
		FingerprintKeyID: r.FingerprintKeyID,
		Fingerprint:      r.Fingerprint,
		Status:           model.IdempotencyStatus(r.Status),
		Response:         model.SavedResponse{Body: r.ResponseBody},
		CreatedAt:        timeVal(r.CreatedAt),
		CompletedAt:      timeVal(r.CompletedAt),
		ExpiresAt:        timeVal(r.ExpiresAt),
	}
	if r.ResponseStatus != nil {
		rec.Response.Status = *r.ResponseStatus
	}
	if r.ResponseHeaders != nil {
		if err := json.Unmarshal(r.ResponseHeaders, &rec.Response.Headers); err != nil {
			return nil, domain.Wrap(domain.CodeInternal, err, "stored response headers are unreadable")
		}
	}
	return rec, nil
}

// Complete implements ports.IdempotencyStore: it writes the record this
// transaction claimed, completed, once (insertCompletedIdempotency).
func (s *IdempotencyStore) Complete(ctx context.Context, sc model.IdempotencyScope, resp model.SavedResponse, at time.Time) error {
	rec, ok := s.claimed[sc]
	if !ok {
		return domain.Errorf(domain.CodeNotFound, "this transaction holds no claim for the idempotency scope")
	}
	var headers *string
	if resp.Headers != nil {
		b, err := json.Marshal(resp.Headers)
		if err != nil {
			return domain.Wrap(domain.CodeInternal, err, "response headers cannot be encoded")
		}
		h := string(b)
		headers = &h
	}
	// On a pool of OpenPool the INSERT goes with the COMMIT, or before any
	// statement that follows it (pipelined_conn.go); its failure is then
	// the transaction's, which rolls back with it.
	_, err := s.db.ExecContext(withCommitTail(ctx, &commitTail{what: "idempotency record"}), insertCompletedIdempotency,
		sc.WorkspaceID, sc.UserID, sc.Method, sc.Path, sc.Key, rec.FingerprintKeyID, rec.Fingerprint,
		resp.Status, headers, resp.Body, timePtr(rec.CreatedAt), timePtr(at), timePtr(rec.ExpiresAt))
	if err != nil {
		return mapError(err, "idempotency record")
	}
	delete(s.claimed, sc)
	return nil
}

// DeleteExpired implements ports.IdempotencyStore.
func (s *IdempotencyStore) DeleteExpired(ctx context.Context, now time.Time, limit int) (int, error) {
	if limit <= 0 {
		return 0, nil
	}
	if now.IsZero() {
		now = time.Now()
	}
	res, err := s.db.ExecContext(ctx, deleteExpiredIdempotency, s.workspace, now, limit)
	return affected(res, err, "idempotency record")
}
