package postgres

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/oncehq/once/ports"
)

// OutboxRelayMarks implements ports.OutboxRelayMarks with the statements
// of outbox_relay_sql.go: one pgx batch for any number of workspaces,
// set_config of each workspace followed by its statement, sent as one
// pipeline that PostgreSQL runs as one implicit transaction (a later
// set_config(..., true) replaces the earlier one for the statements after
// it). Row-level security applies to each statement as in a transaction
// of its workspace: no new privilege, no cross-workspace function.
type OutboxRelayMarks struct {
	uow *UnitOfWork
}

var _ ports.OutboxRelayMarks = (*OutboxRelayMarks)(nil)

// NewOutboxRelayMarks returns the relay's marks on the connections of uow
// (the application role).
func NewOutboxRelayMarks(uow *UnitOfWork) *OutboxRelayMarks { return &OutboxRelayMarks{uow: uow} }

// MarkRelayed implements ports.OutboxRelayMarks.
func (m *OutboxRelayMarks) MarkRelayed(ctx context.Context, holder string, events map[uuid.UUID][]uuid.UUID, at time.Time) (int, error) {
	if at.IsZero() {
		at = time.Now()
	}
	return m.each(ctx, holder, events, func(ws uuid.UUID, ids []uuid.UUID) (string, []any) {
		return markRelayed, []any{at, pgxUUID(ws), pgxUUIDs(ids), holder}
	})
}

// ReleaseHeld implements ports.OutboxRelayMarks.
func (m *OutboxRelayMarks) ReleaseHeld(ctx context.Context, holder string, events map[uuid.UUID][]uuid.UUID, nextAttemptAt time.Time, lastError string) (int, error) {
	if nextAttemptAt.IsZero() {
		nextAttemptAt = time.Now()
	}
	var lastErr *string
	if lastError != "" {
		lastErr = &lastError
	}
	return m.each(ctx, holder, events, func(ws uuid.UUID, ids []uuid.UUID) (string, []any) {
		return releaseHeld, []any{nextAttemptAt, pgxUUID(ws), pgxUUIDs(ids), holder, lastErr}
	})
}

// each sends, in one batch, set_config and the statement of each
// workspace, and adds up the rows they changed.
func (m *OutboxRelayMarks) each(ctx context.Context, holder string, events map[uuid.UUID][]uuid.UUID,
	statement func(ws uuid.UUID, ids []uuid.UUID) (string, []any),
) (int, error) {
	b := &pgx.Batch{}
	for ws, ids := range events {
		if len(ids) == 0 || ws == uuid.Nil {
			continue
		}
		query, args := statement(ws, ids)
		b.Queue(setWorkspacePgx, ws.String())
		b.Queue(query, args...)
	}
	if holder == "" || b.Len() == 0 {
		return 0, nil
	}
	n := 0
	err := m.uow.sendBatch(ctx, b, func(br pgx.BatchResults) error {
		n = 0 // a retried batch (sendBatch) counts again
		for i := 0; i < b.Len(); i += 2 {
			if _, err := br.Exec(); err != nil {
				return err
			}
			tag, err := br.Exec()
			if err != nil {
				return err
			}
			n += int(tag.RowsAffected())
		}
		return nil
	})
	return n, err
}
