package postgres

import (
	"context"
	"database/sql"
	"errors"
	"strings"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
)

// What the task repositories (stores, media, transfers, publications,
// syncs, AI tasks) share: a row of the transaction's workspace read by id,
// a statement that must change exactly one row, and a create or update
// that a partial unique index may refuse in favour of a live row.

// The shared part of each task repository: its domain type and row model
// (the task kinds' tables declare theirs in their own files).
type (
	storeTable = taskRepo[model.Store, storeRow, *storeRow]
	mediaTable = taskRepo[model.Media, mediaRow, *mediaRow]
)

// The task repositories, each implementing its port of the same name
// (Tx hands them out as those ports, so the compiler checks it).
type (
	StoreRepository struct {
		storeTable
		// prefetch holds the store PrefetchJob read, if any.
		prefetch *jobPrefetch
		params   txParams
	}
	MediaRepository struct{ mediaTable }
)

// taskRepo is what every task repository holds and does alike: the
// transaction and its workspace, the noun its errors use, Get, and the
// insert of a new row from its model.
type taskRepo[D, R any, P taskRow[R, D]] struct {
	db        bun.IDB
	workspace uuid.UUID
	noun      string
}

// Get reads the row with id of the transaction's workspace; CodeNotFound
// if there is none.
func (r taskRepo[D, R, P]) Get(ctx context.Context, id uuid.UUID) (D, error) {
	return getRow[D, R, P](ctx, r.db, r.workspace, id, r.noun)
}

// insert writes row (insertHeld).
func (r taskRepo[D, R, P]) insert(ctx context.Context, row P) error {
	return insertHeld(ctx, r.db, row, r.noun)
}

// update runs query, which changes exactly one row (execOne).
func (r taskRepo[D, R, P]) update(ctx context.Context, query string, args ...any) error {
	return execOne(ctx, r.db, r.noun, query, args...)
}

// updateTaskRow is the statement that changes a task row's own columns
// (each "column = ?") and its updated_at, in one workspace. Its arguments
// are the columns' values, updated_at (nil: now()), the workspace and the
// id.
func updateTaskRow(table string, columns ...string) string {
	return "UPDATE " + table + " SET " + strings.Join(columns, ", ") +
		", updated_at = coalesce(?::timestamptz, now()) WHERE workspace_id = ? AND id = ?"
}

// taskRow is a row model (e.g. *syncRow) that turns into its domain value.
type taskRow[R, D any] interface {
	*R
	domain() D
}

// getRow reads the row of workspace with id; CodeNotFound (naming noun)
// if there is none.
func getRow[D, R any, P taskRow[R, D]](ctx context.Context, db bun.IDB, workspace, id uuid.UUID, noun string) (D, error) {
	return selectRow[D, R, P](ctx, db, noun, "workspace_id = ? AND id = ?", workspace, id)
}

// execOne runs a statement that changes exactly one row; none is
// CodeNotFound (naming noun).
func execOne(ctx context.Context, db bun.IDB, noun, query string, args ...any) error {
	res, err := db.ExecContext(ctx, query, args...)
	return affectedOne(res, err, noun)
}

// conflictRetries bounds the "insert or find the winner" loop: the winner
// found by the INSERT may finish (leave the partial index) before the
// SELECT looks for it; then the INSERT is tried again.
const conflictRetries = 3

// insertUnlessLive runs insert, an INSERT ... ON CONFLICT DO NOTHING on a
// partial unique index of live rows (one live publication per product and
// store, one active sync per store). When it inserts nothing, live finds
// the row that holds the index and taken names it in the error. The loop
// is bounded (conflictRetries): the holder may finish (leave the index)
// before live looks for it; then the insert is tried again.
//
// Why ON CONFLICT DO NOTHING and not "INSERT, catch 23505": in PostgreSQL a
// failed statement aborts the whole transaction, so after a unique
// violation the repository could not even look up the row it collided with,
// and the use case could not go on (say, to complete an idempotency record
// with the 409). ON CONFLICT names the partial index by its columns and
// predicate (index inference); a conflicting row written by a transaction
// still in progress makes the INSERT wait for it, then skip if it
// committed, or insert if it rolled back. So two concurrent creations
// cannot both win, and neither sees an error from the database. A conflict
// on any other constraint (the primary key) still raises.
func insertUnlessLive(ctx context.Context, db bun.IDB, noun string, insert func() (sql.Result, error),
	live *bun.RawQuery, taken func(holder uuid.UUID) *domain.Error,
) error {
	for range conflictRetries {
		res, err := insert()
		if err != nil {
			return mapError(err, noun)
		}
		if n, err := res.RowsAffected(); err != nil || n == 1 {
			return mapError(err, noun)
		}
		var holder uuid.UUID
		err = live.Scan(ctx, &holder)
		if errors.Is(err, sql.ErrNoRows) {
			continue // the holder finished in between: try again
		}
		if err != nil {
			return mapError(err, noun)
		}
		e := taken(holder)
		e.ResourceID = holder.String()
		return e
	}
	return domain.Errorf(domain.CodeUnavailable, "%s: concurrent changes, try again", noun)
}

// liveIndexTaken is err as code with message if it is a unique violation
// of the partial unique index of live rows named index: an Update that
// moves a row back into the index while another row holds its key
// (a Create never raises it, see insertUnlessLive). The error then has no
// ResourceID. Other errors are returned as they are.
func liveIndexTaken(err error, index string, code domain.Code, message string) error {
	var cause *dbError
	if errors.As(err, &cause) && cause.Code == "23505" && cause.Constraint == index {
		return domain.Wrap(code, cause, message)
	}
	return err
}
