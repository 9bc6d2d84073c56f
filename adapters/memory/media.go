package memory

import (
	"context"
	"math"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// mediaTable is the media table.
var mediaTable = table[model.Media]{
	noun: "media", pkey: "media_pkey", copy: copyMedia,
	rows: newRows[uuid.UUID, model.Media](),
	ids:  func(m model.Media) (uuid.UUID, uuid.UUID) { return m.ID, m.WorkspaceID },
}

// mediaRepo is the media table in one transaction.
type mediaRepo struct{ tableRepo[model.Media] }

func (t *tx) Media() ports.MediaRepository { return mediaRepo{mediaTable.in(t)} }

func (r mediaRepo) Update(_ context.Context, m model.Media) error {
	return mediaTable.update(r.t, m.ID, func(cur *model.Media) {
		cur.Status, cur.Variants, cur.Reason, cur.UpdatedAt = m.Status, m.Variants, m.Reason, m.UpdatedAt
	})
}

// Transition is a compare-and-set on the status. It takes the media's row
// lock, so of two open transactions moving the same media only the first
// gets past it; the second sees CodeInvalidState, as it would in PostgreSQL
// after waiting for the first to commit and finding the new status.
func (r mediaRepo) Transition(_ context.Context, id uuid.UUID, from, to model.MediaStatus, at time.Time) error {
	return mediaTable.change(r.t, id, func(cur *model.Media) error {
		if cur.Status != from {
			return mediaNotIn(id, from, cur.Status)
		}
		if !r.t.db.lockRowLocked(r.t, mediaRowLock(id)) {
			return domain.Errorf(domain.CodeInvalidState, "media %s is being changed by a concurrent request", id)
		}
		cur.Status, cur.UpdatedAt = to, at
		return nil
	})
}

// Delete is Transition's compare-and-set, with its row lock, ending in a
// removal: the row moves out of every workspace, which is what a deleted
// row is to the memory tables (see webhookEndpointRepo.Delete).
func (r mediaRepo) Delete(_ context.Context, id uuid.UUID, from model.MediaStatus) error {
	return mediaTable.change(r.t, id, func(cur *model.Media) error {
		if cur.Status != from {
			return mediaNotIn(id, from, cur.Status)
		}
		if !r.t.db.lockRowLocked(r.t, mediaRowLock(id)) {
			return domain.Errorf(domain.CodeInvalidState, "media %s is being changed by a concurrent request", id)
		}
		cur.WorkspaceID = uuid.Nil
		return nil
	})
}

func mediaRowLock(id uuid.UUID) uniqueKey { return uniqueKey{"media_row", id.String()} }

func mediaNotIn(id uuid.UUID, want, got model.MediaStatus) error {
	return domain.Errorf(domain.CodeInvalidState, "media %s is %s, not %s", id, got, want)
}

func (r mediaRepo) AwaitingUploadSince(ctx context.Context, before time.Time, limit int) ([]model.Media, error) {
	all, err := mediaTable.list(r.t, ports.ListQuery{Status: string(model.MediaAwaitingUpload), Limit: math.MaxInt}, func(m model.Media, q ports.ListQuery) bool {
		return is(q.Status, string(m.Status)) && m.CreatedAt.Before(before)
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(all, func(a, b model.Media) int { return a.CreatedAt.Compare(b.CreatedAt) })
	return all[:min(len(all), max(limit, 0))], nil
}

func (r mediaRepo) List(_ context.Context, q ports.ListQuery) ([]model.Media, error) {
	return mediaTable.list(r.t, q, func(m model.Media, q ports.ListQuery) bool { return is(q.Status, string(m.Status)) })
}
