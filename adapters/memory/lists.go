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
	return listNewest(t, tb.rows.committed(t), tb.rows.mine(t), q, listShape[T]{ids: tb.ids, match: match, copy: tb.copy})
}

func (r productRepo) List(_ context.Context, q ports.ListQuery) ([]model.Product, error) {
	return productTable.list(r.t, q, func(model.Product, ports.ListQuery) bool { return true })
}
