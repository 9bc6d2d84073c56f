package postgres

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// IdempotencyStore implements ports.IdempotencyStore for one transaction.
// The statements and why they are shaped so are in idempotency_sql.go.
type IdempotencyStore struct {
	// db is the transaction: the claim goes to its *sql.Tx with parameters
	// (readOrClaim), everything else through bun.
	db        bun.Tx
	workspace uuid.UUID
	// claimed holds the scopes this transaction claimed, so Complete can
	// refuse a scope it does not hold.
	claimed map[model.IdempotencyScope]bool
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

// claimRow is a row of readOrClaimIdempotency: the record's columns (all
// NULL, so zero, when there is no record), whether the scope's lock was
// taken (NULL when it was not tried) and whether our row was inserted.
type claimRow struct {
	idempotencyRow
	Locked   *bool
	Inserted *bool
}

// Claim implements ports.IdempotencyStore. The order of its statements,
// and why, is in idempotency_sql.go: read first without any lock, lock only
// a scope that has no completed record.
func (s *IdempotencyStore) Claim(ctx context.Context, rec model.IdempotencyRecord) (*model.IdempotencyRecord, error) {
	sc := rec.Scope
	if sc.WorkspaceID != s.workspace {
		return nil, domain.Errorf(domain.CodeForbidden, "idempotency scope is outside the transaction's workspace")
	}
	now := timePtr(rec.CreatedAt)

	fingerprint := rec.Fingerprint
	if fingerprint == nil {
		fingerprint = []byte{}
	}
	insertArgs := []any{sc.WorkspaceID, sc.UserID, sc.Method, sc.Path, sc.Key,
		rec.FingerprintKeyID, fingerprint, now, timePtr(rec.ExpiresAt)}

	row, err := s.readOrClaim(ctx, sc, now, rec.FingerprintKeyID, fingerprint, timePtr(rec.ExpiresAt))
	if err != nil {
		return nil, mapError(err, "idempotency record")
	}
	found := row.Status != ""
	switch {
	case found && !row.Expired && row.Status == string(model.IdempotencyCompleted):
		return s.replay(ctx, sc, row.record) // no lock taken
	case found && !row.Expired:
		// in_progress and committed, or claimed by this very transaction:
		// either way it must not run again.
		return nil, inProgress()
	case row.Locked == nil || !*row.Locked:
		return nil, inProgress()
	}

	inserted := row.Inserted != nil && *row.Inserted
	if found { // expired: replace it
		_, err := s.db.ExecContext(ctx, deleteExpiredIdempotencyRow,
			sc.WorkspaceID, sc.UserID, sc.Method, sc.Path, sc.Key, now)
		if isLockNotAvailable(err) {
			return nil, inProgress() // the cleaner is deleting it right now
		}
		if err != nil {
			return nil, mapError(err, "idempotency record")
		}
		res, err := s.db.ExecContext(ctx, insertIdempotency, insertArgs...)
		if err != nil {
			return nil, mapError(err, "idempotency record")
		}
		n, err := res.RowsAffected()
		if err != nil {
			return nil, mapError(err, "idempotency record")
		}
		inserted = n == 1
	}
	if !inserted {
		// A twin completed and committed between our read and our lock.
		row, found, err := s.read(ctx, sc, now)
		if err != nil {
			return nil, err
		}
		if found && !row.Expired && row.Status == string(model.IdempotencyCompleted) {
			return s.replay(ctx, sc, row.record)
		}
		return nil, inProgress()
	}
	s.claimed[sc] = true
	return nil, nil
}

// replay returns the completed record of sc that record makes, once the
// transaction is bound to confirm it (confirmReplicated, held for the
// COMMIT like the completing UPDATE).
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

// readOrClaim runs readOrClaimPrepared on the transaction's *sql.Tx, its
// arguments as parameters (the uuids as pgxUUID), not through bun, which
// would write them into the text.
func (s *IdempotencyStore) readOrClaim(ctx context.Context, sc model.IdempotencyScope, now *time.Time,
	keyID string, fingerprint []byte, expires *time.Time,
) (claimRow, error) {
	var row claimRow
	ws, user, key := pgxUUID(sc.WorkspaceID), pgxUUID(sc.UserID), pgxUUID(sc.Key)
	var status, storedKeyID *string
	var expired *bool
	err := s.db.Tx.QueryRowContext(ctx, readOrClaimPrepared,
		now, ws, user, sc.Method, sc.Path, key, scopeLockKey(sc),
		ws, user, sc.Method, sc.Path, key, keyID, fingerprint, now, expires,
	).Scan(&status, &storedKeyID, &row.Fingerprint, &row.ResponseStatus, &row.ResponseHeaders, &row.ResponseBody,
		&row.CreatedAt, &row.CompletedAt, &row.ExpiresAt, &expired, &row.Locked, &row.Inserted)
	// The columns of a record that is not there are NULL: zero values.
	row.Status, row.FingerprintKeyID = strVal(status), strVal(storedKeyID)
	row.Expired = expired != nil && *expired
	return row, err
}

// read is the plain, lock-free read of the scope's row.
func (s *IdempotencyStore) read(ctx context.Context, sc model.IdempotencyScope, now *time.Time) (row idempotencyRow, found bool, err error) {
	err = s.db.NewRaw(selectIdempotency, now, sc.WorkspaceID, sc.UserID, sc.Method, sc.Path, sc.Key).Scan(ctx, &row)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return row, false, nil
	case err != nil:
		return row, false, mapError(err, "idempotency record")
	}
	return row, true, nil
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

// Complete implements ports.IdempotencyStore.
func (s *IdempotencyStore) Complete(ctx context.Context, sc model.IdempotencyScope, resp model.SavedResponse, at time.Time) error {
	if !s.claimed[sc] {
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
	// On a pool of OpenPool the UPDATE goes with the COMMIT, or before any
	// statement that follows it (pipelined_conn.go), and its rows affected
	// are not known here. It cannot miss: the row was inserted in_progress
	// by this transaction (s.claimed), and no other transaction sees it
	// before the commit.
	tail := &commitTail{what: "idempotency claim"}
	res, err := s.db.ExecContext(withCommitTail(ctx, tail), completeIdempotency,
		resp.Status, headers, resp.Body, timePtr(at),
		sc.WorkspaceID, sc.UserID, sc.Method, sc.Path, sc.Key)
	if err != nil {
		return mapError(err, "idempotency claim")
	}
	if !tail.deferred {
		if err := affectedOne(res, nil, "idempotency claim"); err != nil {
			return err
		}
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
