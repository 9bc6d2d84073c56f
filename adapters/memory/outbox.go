package memory

import (
	"cmp"
	"context"
	"slices"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

type outboxRepo struct{ t *tx }

var _ ports.Outbox = outboxRepo{}

// eventRow is a stored event with the order it was written in, which breaks
// ties between events created at the same instant.
type eventRow struct {
	event model.OutboxEvent
	seq   int64
	// keySeq is the event's place in its ordering key's commit order,
	// given at commit (tx.commit), as PostgreSQL's key_seq
	// (sql/021_ordering_in_the_outbox.sql); 0 without a key, or until the
	// appending transaction commits.
	keySeq int64
}

func eventKey(id uuid.UUID) uniqueKey { return uniqueKey{"outbox_events_pkey", id.String()} }

// Append stages events as pending. The batch is written whole or not at all.
func (r outboxRepo) Append(_ context.Context, events ...model.OutboxEvent) error {
	t := r.t
	return t.inLock(func() error {
		keys := make([]uniqueKey, 0, len(events))
		for _, e := range events {
			if err := t.ownWorkspace("outbox event", e.WorkspaceID); err != nil {
				return err
			}
			if e.JobAttempts < 0 {
				return domain.Errorf(domain.CodeValidation, "outbox event %s: a job's attempts cannot be negative", e.ID)
			}
			if err := model.CheckPayloadSafe(e.Payload); err != nil {
				return err
			}
			keys = append(keys, eventKey(e.ID))
		}
		if !t.db.reserveLocked(t, keys...) {
			return domain.Errorf(domain.CodeConflict, "an outbox event with one of these ids already exists")
		}
		for _, e := range events {
			e = copyEvent(e)
			e.Status = model.OutboxPending
			t.events[e.ID] = eventRow{event: e, seq: t.db.nextSeqLocked()}
			if e.OrderingKey != "" {
				t.keyed = append(t.keyed, e.ID)
			}
		}
		return nil
	})
}

func (r outboxRepo) Get(_ context.Context, id uuid.UUID) (model.OutboxEvent, error) {
	t := r.t
	return inLock(t, func() (model.OutboxEvent, error) {
		row, ok := t.visibleEventLocked(id)
		if !ok {
			return model.OutboxEvent{}, domain.Errorf(domain.CodeNotFound, "outbox event %s not found", id)
		}
		return copyEvent(row.event), nil
	})
}

func (r outboxRepo) List(_ context.Context, status model.OutboxStatus, limit int) ([]model.OutboxEvent, error) {
	t := r.t
	return inLock(t, func() ([]model.OutboxEvent, error) {
		var rows []eventRow
		add := func(row eventRow) {
			if row.event.WorkspaceID == t.workspace && (status == "" || row.event.Status == status) {
				rows = append(rows, row)
			}
		}
		for _, row := range t.visibleEventsLocked() {
			add(row)
		}
		slices.SortFunc(rows, func(a, b eventRow) int {
			return cmp.Or(a.event.CreatedAt.Compare(b.event.CreatedAt), cmp.Compare(a.seq, b.seq))
		})
		return firstEvents(rows, limit), nil
	})
}

// firstEvents copies the first limit events of rows (none for limit <= 0).
func firstEvents(rows []eventRow, limit int) []model.OutboxEvent {
	rows = rows[:min(len(rows), max(limit, 0))]
	events := make([]model.OutboxEvent, len(rows))
	for i, row := range rows {
		events[i] = copyEvent(row.event)
	}
	return events
}

// visibleEventLocked returns event id as t sees it: its own write, else the
// committed row, unless t deleted it, and only in t's workspace. Call with
// db.mu held.
func (t *tx) visibleEventLocked(id uuid.UUID) (eventRow, bool) {
	if t.eventDeletes[id] {
		return eventRow{}, false
	}
	row, ok := t.events[id]
	if !ok {
		row, ok = t.db.events[id]
	}
	if !ok || row.event.WorkspaceID != t.workspace {
		return eventRow{}, false
	}
	return row, true
}

// visibleEventsLocked returns every event of t's workspace as t sees it, in
// no particular order. Call with db.mu held.
func (t *tx) visibleEventsLocked() []eventRow {
	var rows []eventRow
	for id, row := range t.db.events {
		if _, staged := t.events[id]; !staged && !t.eventDeletes[id] && row.event.WorkspaceID == t.workspace {
			rows = append(rows, row)
		}
	}
	for id, row := range t.events {
		if !t.eventDeletes[id] && row.event.WorkspaceID == t.workspace {
			rows = append(rows, row)
		}
	}
	return rows
}
