package contract

import (
	"bytes"
	"context"
	"slices"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// listCase describes one resource's List to the shared list contract.
type listCase[T any] struct {
	// make writes row i in ws and returns its id; rows with an even i match
	// filter, odd ones do not.
	make func(t *testing.T, h Harness, ws uuid.UUID, i int) uuid.UUID
	list func(tx ports.Tx) func(context.Context, ports.ListQuery) ([]T, error)
	id   func(T) uuid.UUID
	// filter selects the even rows; nil if the resource has no filter.
	filter func(q *ports.ListQuery)
}

// testLists runs the list contract for every listed resource.
func testLists(t *testing.T, h Harness) {
	t.Run("stores", func(t *testing.T) {
		checkList(t, h, listCase[model.Store]{
			make: func(t *testing.T, h Harness, ws uuid.UUID, i int) uuid.UUID {
				s := newStore(ws)
				s.Status = pick(i, model.StoreVerified, model.StorePendingVerification)
				createStore(t, h, s)
				return s.ID
			},
			list: func(tx ports.Tx) func(context.Context, ports.ListQuery) ([]model.Store, error) {
				return tx.Stores().List
			},
			id:     func(s model.Store) uuid.UUID { return s.ID },
			filter: func(q *ports.ListQuery) { q.Status = string(model.StoreVerified) },
		})
	})
	t.Run("products", func(t *testing.T) {
		checkList(t, h, listCase[model.Product]{
			make: func(t *testing.T, h Harness, ws uuid.UUID, _ int) uuid.UUID { return newProductIn(t, h, ws).ID },
			list: func(tx ports.Tx) func(context.Context, ports.ListQuery) ([]model.Product, error) {
				return tx.Products().List
			},
			id: func(p model.Product) uuid.UUID { return p.ID },
		})
	})
	t.Run("media", func(t *testing.T) {
		checkList(t, h, listCase[model.Media]{
			make: func(t *testing.T, h Harness, ws uuid.UUID, i int) uuid.UUID {
				m := newMedia(ws)
				m.Status = pick(i, model.MediaReady, model.MediaAwaitingUpload)
				inTx(t, h, ws, func(ctx context.Context, tx ports.Tx) error { return tx.Media().Create(ctx, m) })
				return m.ID
			},
			list: func(tx ports.Tx) func(context.Context, ports.ListQuery) ([]model.Media, error) {
				return tx.Media().List
			},
			id:     func(m model.Media) uuid.UUID { return m.ID },
			filter: func(q *ports.ListQuery) { q.Status = string(model.MediaReady) },
		})
	})
	t.Run("material transfers", func(t *testing.T) {
		checkList(t, h, listCase[model.MaterialTransfer]{
			make: func(t *testing.T, h Harness, ws uuid.UUID, i int) uuid.UUID {
				tr := newTransfer(ws)
				tr.Status = pick(i, model.TaskSucceeded, model.TaskPending)
				inTx(t, h, ws, func(ctx context.Context, tx ports.Tx) error { return tx.MaterialTransfers().Create(ctx, tr) })
				return tr.ID
			},
			list: func(tx ports.Tx) func(context.Context, ports.ListQuery) ([]model.MaterialTransfer, error) {
				return tx.MaterialTransfers().List
			},
			id:     func(m model.MaterialTransfer) uuid.UUID { return m.ID },
			filter: func(q *ports.ListQuery) { q.Status = string(model.TaskSucceeded) },
		})
	})
	t.Run("publications", func(t *testing.T) {
		var store uuid.UUID
		checkList(t, h, listCase[model.Publication]{
			make: func(t *testing.T, h Harness, ws uuid.UUID, i int) uuid.UUID {
				if i%2 == 0 || store == uuid.Nil {
					store = newStoreIn(t, h, ws) // even rows each on a store of their own
				}
				p := newPublication(ws, newProductIn(t, h, ws).ID, store)
				p.Status = pick(i, model.TaskSucceeded, model.TaskFailed)
				inTx(t, h, ws, func(ctx context.Context, tx ports.Tx) error { return tx.Publications().Create(ctx, p) })
				return p.ID
			},
			list: func(tx ports.Tx) func(context.Context, ports.ListQuery) ([]model.Publication, error) {
				return tx.Publications().List
			},
			id:     func(p model.Publication) uuid.UUID { return p.ID },
			filter: func(q *ports.ListQuery) { q.Status = string(model.TaskSucceeded) },
		})
	})
	t.Run("catalog syncs", func(t *testing.T) {
		stores := map[uuid.UUID]uuid.UUID{}
		checkList(t, h, listCase[model.CatalogSync]{
			make: func(t *testing.T, h Harness, ws uuid.UUID, i int) uuid.UUID {
				if stores[ws] == uuid.Nil {
					stores[ws] = newStoreIn(t, h, ws)
				}
				s := newSync(ws, stores[ws])
				s.Status = pick(i, model.TaskSucceeded, model.TaskFailed)
				inTx(t, h, ws, func(ctx context.Context, tx ports.Tx) error { return tx.Syncs().Create(ctx, s) })
				return s.ID
			},
			list: func(tx ports.Tx) func(context.Context, ports.ListQuery) ([]model.CatalogSync, error) {
				return tx.Syncs().List
			},
			id:     func(s model.CatalogSync) uuid.UUID { return s.ID },
			filter: func(q *ports.ListQuery) { q.Status = string(model.TaskSucceeded) },
		})
	})
	t.Run("AI tasks", func(t *testing.T) {
		products := map[uuid.UUID][2]uuid.UUID{}
		var even uuid.UUID
		checkList(t, h, listCase[model.AITask]{
			make: func(t *testing.T, h Harness, ws uuid.UUID, i int) uuid.UUID {
				ps, ok := products[ws]
				if !ok {
					ps = [2]uuid.UUID{newProductIn(t, h, ws).ID, newProductIn(t, h, ws).ID}
					products[ws] = ps
					if even == uuid.Nil {
						even = ps[0]
					}
				}
				a := newAITask(ws, ps[i%2])
				inTx(t, h, ws, func(ctx context.Context, tx ports.Tx) error { return tx.AITasks().Create(ctx, a) })
				return a.ID
			},
			list: func(tx ports.Tx) func(context.Context, ports.ListQuery) ([]model.AITask, error) {
				return tx.AITasks().List
			},
			id:     func(a model.AITask) uuid.UUID { return a.ID },
			filter: func(q *ports.ListQuery) { q.ProductID = even },
		})
	})
}

func pick[S any](i int, even, odd S) S {
	if i%2 == 0 {
		return even
	}
	return odd
}

// checkList: pages of two walk every row of the workspace exactly once,
// newest (largest id) first, and nothing of another workspace; a filter
// keeps exactly the rows it names.
func checkList[T any](t *testing.T, h Harness, c listCase[T]) {
	t.Helper()
	const rows = 5
	ws, other := newWorkspace(t, h), newWorkspace(t, h)
	var want, wantEven []uuid.UUID
	for i := range rows {
		id := c.make(t, h, ws, i)
		want = append(want, id)
		if i%2 == 0 {
			wantEven = append(wantEven, id)
		}
	}
	c.make(t, h, other, 0)
	newestFirst := func(ids []uuid.UUID) []uuid.UUID {
		ids = slices.Clone(ids)
		slices.SortFunc(ids, func(a, b uuid.UUID) int { return bytes.Compare(b[:], a[:]) })
		return ids
	}

	walk := func(q ports.ListQuery) []uuid.UUID {
		var got []uuid.UUID
		for range rows + 1 {
			var page []T
			mustTransact(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
				var err error
				page, err = c.list(tx)(ctx, q)
				return err
			})
			require.LessOrEqual(t, len(page), q.Limit)
			for _, v := range page {
				got = append(got, c.id(v))
			}
			if len(page) < q.Limit {
				return got
			}
			q.StartingAfter = c.id(page[len(page)-1])
		}
		t.Fatalf("the pages never ended: %v", got)
		return nil
	}
	require.Equal(t, newestFirst(want), walk(ports.ListQuery{Limit: 2}), "every row once, newest first")

	var none []T
	mustTransact(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
		var err error
		none, err = c.list(tx)(ctx, ports.ListQuery{})
		return err
	})
	require.Empty(t, none, "a zero limit lists nothing")

	if c.filter != nil {
		q := ports.ListQuery{Limit: 2}
		c.filter(&q)
		require.Equal(t, newestFirst(wantEven), walk(q), "the filter keeps exactly its rows")
	}
}
