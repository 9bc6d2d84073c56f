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

// listCase describes one table's List to the list contract.
type listCase[E any] struct {
	table table[E]
	// mark makes row i of a workspace one that filter keeps if i is even,
	// and one it drops if i is odd; filter narrows a query of ws to the
	// even rows. Both nil if the table's List has no filter.
	mark   func(row *E, i int)
	filter func(q *ports.ListQuery, ws uuid.UUID)
}

// testLists runs the list contract for every listed table.
func testLists(t *testing.T, h Harness) {
	t.Run("products", func(t *testing.T) {
		checkList(t, h, listCase[model.Product]{table: productTable})
	})
	forEachKind(t, func(c kindContract) func(t *testing.T, h Harness) { return c.list }, h)
}

// listing is the list contract of c, for a kind's contract (kinds.go).
func listing[E any](c listCase[E]) func(t *testing.T, h Harness) {
	return func(t *testing.T, h Harness) { checkList(t, h, c) }
}

// byStatus is the list case of a table filtered by status: the even rows
// have status in, the odd ones out.
func byStatus[E any, S ~string](c table[E], status func(row *E) *S, in, out S) listCase[E] {
	return listCase[E]{
		table:  c,
		mark:   func(row *E, i int) { *status(row) = pick(i, in, out) },
		filter: func(q *ports.ListQuery, _ uuid.UUID) { q.Status = string(in) },
	}
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
func checkList[E any](t *testing.T, h Harness, c listCase[E]) {
	t.Helper()
	const rows = 5
	ws, other := newWorkspace(t, h), newWorkspace(t, h)
	var want, wantEven []uuid.UUID
	write := func(ws uuid.UUID, i int) uuid.UUID {
		row := c.table.row(t, h, ws)
		if c.mark != nil {
			c.mark(&row, i)
		}
		require.NoError(t, c.table.create(t, h, row))
		return c.table.id(row)
	}
	for i := range rows {
		id := write(ws, i)
		want = append(want, id)
		if i%2 == 0 {
			wantEven = append(wantEven, id)
		}
	}
	write(other, 0)
	newestFirst := func(ids []uuid.UUID) []uuid.UUID {
		ids = slices.Clone(ids)
		slices.SortFunc(ids, func(a, b uuid.UUID) int { return bytes.Compare(b[:], a[:]) })
		return ids
	}

	// Every listed table's repository is a ports.Resources.
	list := func(q ports.ListQuery) []E {
		return mustQuery(t, h, ws, func(ctx context.Context, tx ports.Tx) ([]E, error) {
			return c.table.repo(tx).(ports.Resources[E]).List(ctx, q)
		})
	}
	walk := func(q ports.ListQuery) []uuid.UUID {
		var got []uuid.UUID
		for range rows + 1 {
			page := list(q)
			require.LessOrEqual(t, len(page), q.Limit)
			got = append(got, ids(page, c.table.id)...)
			if len(page) < q.Limit {
				return got
			}
			q.StartingAfter = c.table.id(page[len(page)-1])
		}
		t.Fatalf("the pages never ended: %v", got)
		return nil
	}
	require.Equal(t, newestFirst(want), walk(ports.ListQuery{Limit: 2}), "every row once, newest first")

	require.Empty(t, list(ports.ListQuery{}), "a zero limit lists nothing")

	if c.filter != nil {
		q := ports.ListQuery{Limit: 2}
		c.filter(&q, ws)
		require.Equal(t, newestFirst(wantEven), walk(q), "the filter keeps exactly its rows")
	}
}
