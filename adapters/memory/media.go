package memory

import (
	"context"

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

func mediaNotFound(id uuid.UUID) error {
	return domain.Errorf(domain.CodeNotFound, "media %s not found", id)
}
