package memory

import (
	"context"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/ports"
)

type publicationRepo struct{ t *tx }

var _ ports.PublicationRepository = publicationRepo{}

func publicationKey(id uuid.UUID) uniqueKey { return uniqueKey{"publications_pkey", id.String()} }

// publicationActiveKey is the partial unique index of PostgreSQL: one
// publication per (workspace, product, store) that is not failed. A
// publication holds the key while it is not failed.
func publicationActiveKey(p domain.Publication) uniqueKey {
	return uniqueKey{"publications_active_key",
		p.WorkspaceID.String() + "\x00" + p.ProductID.String() + "\x00" + p.StoreID.String()}
}

func publicationActive(p domain.Publication) bool { return p.Status != domain.TaskFailed }

func (r publicationRepo) Create(_ context.Context, p domain.Publication) error {
	t := r.t
	if err := t.lock(); err != nil {
		return err
	}
	defer t.db.mu.Unlock()
	if err := t.ownWorkspace("publication", p.WorkspaceID); err != nil {
		return err
	}
	if _, ok := t.productLocked(p.ProductID); !ok {
		return missingReference("publication", "product", p.ProductID)
	}
	if _, ok := (storeRepo{t}).visibleLocked(p.StoreID); !ok {
		return missingReference("publication", "store", p.StoreID)
	}
	keys := []uniqueKey{publicationKey(p.ID)}
	if publicationActive(p) {
		active := publicationActiveKey(p)
		if t.db.keyTakenForLocked(t, active) {
			return r.alreadyPublishedLocked(p)
		}
		keys = append(keys, active)
	}
	if !t.db.reserveLocked(t, keys...) {
		return domain.Errorf(domain.CodeConflict, "publication %s already exists", p.ID)
	}
	t.publications[p.ID] = copyPublication(p)
	return nil
}

func (r publicationRepo) Get(_ context.Context, id uuid.UUID) (domain.Publication, error) {
	t := r.t
	if err := t.lock(); err != nil {
		return domain.Publication{}, err
	}
	defer t.db.mu.Unlock()
	p, ok := r.visibleLocked(id)
	if !ok {
		return domain.Publication{}, publicationNotFound(id)
	}
	return copyPublication(p), nil
}

func (r publicationRepo) Update(_ context.Context, p domain.Publication) error {
	t := r.t
	if err := t.lock(); err != nil {
		return err
	}
	defer t.db.mu.Unlock()
	cur, ok := r.visibleLocked(p.ID)
	if !ok {
		return publicationNotFound(p.ID)
	}
	next := cur
	next.Status = p.Status
	next.ExternalListingID = p.ExternalListingID
	next.Reason = p.Reason
	next.UpdatedAt = p.UpdatedAt
	key := publicationActiveKey(cur)
	switch {
	case publicationActive(cur) && !publicationActive(next):
		t.db.releaseLocked(t, key)
	case !publicationActive(cur) && publicationActive(next):
		if !t.db.reserveLocked(t, key) {
			return r.alreadyPublishedLocked(next)
		}
	}
	t.publications[p.ID] = copyPublication(next)
	return nil
}

// alreadyPublishedLocked is the error for p's key being held, naming the
// publication that holds it (committed, ours, or another open
// transaction's).
func (r publicationRepo) alreadyPublishedLocked(p domain.Publication) error {
	t := r.t
	key := publicationActiveKey(p)
	holds := func(q domain.Publication) bool {
		return q.ID != p.ID && publicationActive(q) && publicationActiveKey(q) == key
	}
	var holder uuid.UUID
	if other := t.db.keyHolderLocked(key); other != nil {
		for _, q := range other.publications {
			if holds(q) {
				holder = q.ID
			}
		}
	}
	if holder == uuid.Nil {
		for _, q := range t.publications {
			if holds(q) {
				holder = q.ID
			}
		}
	}
	if holder == uuid.Nil {
		for id, q := range t.db.publications {
			if _, mine := t.publications[id]; !mine && holds(q) {
				holder = q.ID
			}
		}
	}
	e := domain.Errorf(domain.CodeAlreadyPublished, "product %s is already published to store %s", p.ProductID, p.StoreID)
	if holder != uuid.Nil {
		e.ResourceID = holder.String()
	}
	return e
}

func (r publicationRepo) visibleLocked(id uuid.UUID) (domain.Publication, bool) {
	p, ok := r.t.publications[id]
	if !ok {
		p, ok = r.t.db.publications[id]
	}
	if !ok || p.WorkspaceID != r.t.workspace {
		return domain.Publication{}, false
	}
	return p, true
}

func publicationNotFound(id uuid.UUID) error {
	return domain.Errorf(domain.CodeNotFound, "publication %s not found", id)
}
