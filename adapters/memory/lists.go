package memory

import (
	"bytes"
	"context"
	"sort"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/ports"
)

// listShape says how list reads one kind of row: its id and workspace, and
// whether it passes the query's filters.
type listShape[T any] struct {
	id, workspace func(T) uuid.UUID
	match         func(T, ports.ListQuery) bool
	copy          func(T) T
}

// listNewest is the one list of every resource: what t sees (its own writes
// over the committed rows) in its workspace, newest first by id as
// PostgreSQL orders uuids (byte by byte), older than the cursor.
func listNewest[T any](t *tx, committed, mine map[uuid.UUID]T, q ports.ListQuery, s listShape[T]) ([]T, error) {
	if err := t.lock(); err != nil {
		return nil, err
	}
	defer t.db.mu.Unlock()
	if q.Limit <= 0 {
		return nil, nil
	}
	var out []T
	add := func(v T) {
		id := s.id(v)
		if s.workspace(v) != t.workspace || !s.match(v, q) ||
			(q.StartingAfter != uuid.Nil && bytes.Compare(id[:], q.StartingAfter[:]) >= 0) {
			return
		}
		out = append(out, s.copy(v))
	}
	for id, v := range committed {
		if _, own := mine[id]; !own {
			add(v)
		}
	}
	for _, v := range mine {
		add(v)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := s.id(out[i]), s.id(out[j])
		return bytes.Compare(a[:], b[:]) > 0
	})
	if len(out) > q.Limit {
		out = out[:q.Limit]
	}
	return out, nil
}

// is reports whether a filter value is unset or equal to the row's.
func is[V comparable](filter, value V) bool {
	var zero V
	return filter == zero || filter == value
}

func (r storeRepo) List(_ context.Context, q ports.ListQuery) ([]domain.Store, error) {
	return listNewest(r.t, r.t.db.stores, r.t.stores, q, listShape[domain.Store]{
		id: func(s domain.Store) uuid.UUID { return s.ID }, workspace: func(s domain.Store) uuid.UUID { return s.WorkspaceID },
		match: func(s domain.Store, q ports.ListQuery) bool {
			return is(q.Status, string(s.Status)) && is(q.Platform, s.Platform)
		},
		copy: copyStore,
	})
}

func (r productRepo) List(_ context.Context, q ports.ListQuery) ([]domain.Product, error) {
	return listNewest(r.t, r.t.db.products, r.t.products, q, listShape[domain.Product]{
		id: func(p domain.Product) uuid.UUID { return p.ID }, workspace: func(p domain.Product) uuid.UUID { return p.WorkspaceID },
		match: func(domain.Product, ports.ListQuery) bool { return true },
		copy:  copyProduct,
	})
}

func (r mediaRepo) List(_ context.Context, q ports.ListQuery) ([]domain.Media, error) {
	return listNewest(r.t, r.t.db.media, r.t.media, q, listShape[domain.Media]{
		id: func(m domain.Media) uuid.UUID { return m.ID }, workspace: func(m domain.Media) uuid.UUID { return m.WorkspaceID },
		match: func(m domain.Media, q ports.ListQuery) bool { return is(q.Status, string(m.Status)) },
		copy:  copyMedia,
	})
}

func (r transferRepo) List(_ context.Context, q ports.ListQuery) ([]domain.MaterialTransfer, error) {
	return listNewest(r.t, r.t.db.transfers, r.t.transfers, q, listShape[domain.MaterialTransfer]{
		id:        func(m domain.MaterialTransfer) uuid.UUID { return m.ID },
		workspace: func(m domain.MaterialTransfer) uuid.UUID { return m.WorkspaceID },
		match:     func(m domain.MaterialTransfer, q ports.ListQuery) bool { return is(q.Status, string(m.Status)) },
		copy: func(m domain.MaterialTransfer) domain.MaterialTransfer {
			m = copyTransfer(m)
			m.Items = nil // lists do not load items
			return m
		},
	})
}

func (r publicationRepo) List(_ context.Context, q ports.ListQuery) ([]domain.Publication, error) {
	return listNewest(r.t, r.t.db.publications, r.t.publications, q, listShape[domain.Publication]{
		id:        func(p domain.Publication) uuid.UUID { return p.ID },
		workspace: func(p domain.Publication) uuid.UUID { return p.WorkspaceID },
		match: func(p domain.Publication, q ports.ListQuery) bool {
			return is(q.Status, string(p.Status)) && is(q.StoreID, p.StoreID) && is(q.ProductID, p.ProductID)
		},
		copy: copyPublication,
	})
}

func (r syncRepo) List(_ context.Context, q ports.ListQuery) ([]domain.CatalogSync, error) {
	return listNewest(r.t, r.t.db.syncs, r.t.syncs, q, listShape[domain.CatalogSync]{
		id: func(s domain.CatalogSync) uuid.UUID { return s.ID }, workspace: func(s domain.CatalogSync) uuid.UUID { return s.WorkspaceID },
		match: func(s domain.CatalogSync, q ports.ListQuery) bool {
			return is(q.Status, string(s.Status)) && is(q.StoreID, s.StoreID)
		},
		copy: copySync,
	})
}

func (r aiTaskRepo) List(_ context.Context, q ports.ListQuery) ([]domain.AITask, error) {
	return listNewest(r.t, r.t.db.aiTasks, r.t.aiTasks, q, listShape[domain.AITask]{
		id: func(a domain.AITask) uuid.UUID { return a.ID }, workspace: func(a domain.AITask) uuid.UUID { return a.WorkspaceID },
		match: func(a domain.AITask, q ports.ListQuery) bool {
			return is(q.Status, string(a.Status)) && is(q.ProductID, a.ProductID) && is(q.Kind, string(a.Kind))
		},
		copy: copyAITask,
	})
}
