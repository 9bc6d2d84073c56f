package memory

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/ports"
)

type mediaRepo struct{ t *tx }

var _ ports.MediaRepository = mediaRepo{}

func mediaKey(id uuid.UUID) uniqueKey { return uniqueKey{"media_pkey", id.String()} }

func (r mediaRepo) Create(_ context.Context, m domain.Media) error {
	t := r.t
	if err := t.lock(); err != nil {
		return err
	}
	defer t.db.mu.Unlock()
	if err := t.ownWorkspace("media", m.WorkspaceID); err != nil {
		return err
	}
	if !t.db.reserveLocked(t, mediaKey(m.ID)) {
		return domain.Errorf(domain.CodeConflict, "media %s already exists", m.ID)
	}
	t.media[m.ID] = copyMedia(m)
	return nil
}

func (r mediaRepo) Get(_ context.Context, id uuid.UUID) (domain.Media, error) {
	t := r.t
	if err := t.lock(); err != nil {
		return domain.Media{}, err
	}
	defer t.db.mu.Unlock()
	m, ok := r.visibleLocked(id)
	if !ok {
		return domain.Media{}, mediaNotFound(id)
	}
	return copyMedia(m), nil
}

func (r mediaRepo) Update(_ context.Context, m domain.Media) error {
	t := r.t
	if err := t.lock(); err != nil {
		return err
	}
	defer t.db.mu.Unlock()
	cur, ok := r.visibleLocked(m.ID)
	if !ok {
		return mediaNotFound(m.ID)
	}
	cur.Status = m.Status
	cur.Variants = m.Variants
	cur.Reason = m.Reason
	cur.UpdatedAt = m.UpdatedAt
	t.media[m.ID] = copyMedia(cur)
	return nil
}

// Transition is a compare-and-set on the status. It takes the media's row
// lock, so of two open transactions moving the same media only the first
// gets past it; the second sees CodeInvalidState, as it would in PostgreSQL
// after waiting for the first to commit and finding the new status.
func (r mediaRepo) Transition(_ context.Context, id uuid.UUID, from, to domain.MediaStatus, at time.Time) error {
	t := r.t
	if err := t.lock(); err != nil {
		return err
	}
	defer t.db.mu.Unlock()
	cur, ok := r.visibleLocked(id)
	if !ok {
		return mediaNotFound(id)
	}
	if cur.Status != from {
		return mediaNotIn(id, from, cur.Status)
	}
	if !t.db.lockRowLocked(t, mediaRowLock(id)) {
		return domain.Errorf(domain.CodeInvalidState, "media %s is being changed by a concurrent request", id)
	}
	cur.Status = to
	cur.UpdatedAt = at
	t.media[id] = copyMedia(cur)
	return nil
}

func mediaRowLock(id uuid.UUID) uniqueKey { return uniqueKey{"media_row", id.String()} }

func (r mediaRepo) visibleLocked(id uuid.UUID) (domain.Media, bool) {
	m, ok := r.t.media[id]
	if !ok {
		m, ok = r.t.db.media[id]
	}
	if !ok || m.WorkspaceID != r.t.workspace {
		return domain.Media{}, false
	}
	return m, true
}

func mediaNotIn(id uuid.UUID, want, got domain.MediaStatus) error {
	return domain.Errorf(domain.CodeInvalidState, "media %s is %s, not %s", id, got, want)
}

func mediaNotFound(id uuid.UUID) error {
	return domain.Errorf(domain.CodeNotFound, "media %s not found", id)
}
