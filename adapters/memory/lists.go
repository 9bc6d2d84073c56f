package memory

import (
	"bytes"
	"context"
	"sort"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// listShape says how list reads one kind of row: its id and workspace,
// whether it passes the query's filters, and how it is copied out.
type listShape[T any] struct {
	ids   func(T) (id, workspace uuid.UUID)
	match func(T, ports.ListQuery) bool
	copy  func(T) T
}

// listNewest is the one list of every resource: what t sees (its own writes
// over the committed rows) in its workspace, newest first by id as
// PostgreSQL orders uuids (byte by byte), older than the cursor.
func listNewest[T any](t *tx, committed, mine map[uuid.UUID]T, q ports.ListQuery, s listShape[T]) ([]T, error) {
	return inLock(t, func() ([]T, error) {
		if q.Limit <= 0 {
			return nil, nil
		}
		var out []T
		add := func(v T) {
			id, workspace := s.ids(v)
			if workspace != t.workspace || !s.match(v, q) ||
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
			a, _ := s.ids(out[i])
			b, _ := s.ids(out[j])
			return bytes.Compare(a[:], b[:]) > 0
		})
		if len(out) > q.Limit {
			out = out[:q.Limit]
		}
		return out, nil
	})
}

// is reports whether a filter value is unset or equal to the row's.
func is[V comparable](filter, value V) bool {
	var zero V
	return filter == zero || filter == value
}

// list is listNewest over the rows of tb that pass match.
func (tb table[T]) list(t *tx, q ports.ListQuery, match func(T, ports.ListQuery) bool) ([]T, error) {
	return listNewest(t, tb.rows(&t.db.taskRows), tb.rows(&t.taskRows), q, listShape[T]{ids: tb.ids, match: match, copy: tb.copy})
}

func (r storeRepo) List(_ context.Context, q ports.ListQuery) ([]model.Store, error) {
	return storeTable.list(r.t, q, func(s model.Store, q ports.ListQuery) bool {
		return is(q.Status, string(s.Status)) && is(q.Platform, s.Platform)
	})
}

func (r productRepo) List(_ context.Context, q ports.ListQuery) ([]model.Product, error) {
	return productTable.list(r.t, q, func(model.Product, ports.ListQuery) bool { return true })
}

func (r mediaRepo) List(_ context.Context, q ports.ListQuery) ([]model.Media, error) {
	return mediaTable.list(r.t, q, func(m model.Media, q ports.ListQuery) bool { return is(q.Status, string(m.Status)) })
}

// List reads transfers without their items (the rows never hold them).
func (r transferRepo) List(_ context.Context, q ports.ListQuery) ([]model.MaterialTransfer, error) {
	return transferTable.list(r.t, q, func(m model.MaterialTransfer, q ports.ListQuery) bool { return is(q.Status, string(m.Status)) })
}

func (r publicationRepo) List(_ context.Context, q ports.ListQuery) ([]model.Publication, error) {
	return publicationTable.list(r.t, q, func(p model.Publication, q ports.ListQuery) bool {
		return is(q.Status, string(p.Status)) && is(q.StoreID, p.StoreID) && is(q.ProductID, p.ProductID)
	})
}

func (r syncRepo) List(_ context.Context, q ports.ListQuery) ([]model.CatalogSync, error) {
	return syncTable.list(r.t, q, func(s model.CatalogSync, q ports.ListQuery) bool {
		return is(q.Status, string(s.Status)) && is(q.StoreID, s.StoreID)
	})
}

func (r aiTaskRepo) List(_ context.Context, q ports.ListQuery) ([]model.AITask, error) {
	return aiTaskTable.list(r.t, q, func(a model.AITask, q ports.ListQuery) bool {
		return is(q.Status, string(a.Status)) && is(q.ProductID, a.ProductID) && is(q.Kind, string(a.Kind))
	})
}
