package contract

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// The live key contract: a task table whose live rows hold a key no other
// live row may hold (one live publication of a product to a store, one
// active sync of a store), as PostgreSQL's partial unique indexes make
// it. Written once, run for each such table from its entry.

// liveKey describes a task table with a live key to the live key contract.
type liveKey[E any] struct {
	table table[E]
	// twin is a new row of the same workspace for the same key as row.
	twin func(row E) E
	// taken is the code of a refusal; holding are the statuses in which a
	// row holds its key, freeing those in which it does not.
	taken            domain.Code
	holding, freeing []model.TaskStatus
}

// testLiveKeys runs the live key contract for every table with a live key.
func testLiveKeys(t *testing.T, h Harness) {
	forEachKind(t, func(c kindContract) func(t *testing.T, h Harness) { return c.live }, h)
}

// check runs the live key contract for c.
func (c liveKey[E]) check(t *testing.T, h Harness) {
	// create writes a row, which must succeed, and returns it.
	create := func(t *testing.T, row E) E {
		t.Helper()
		require.NoError(t, c.table.create(t, h, row))
		return row
	}
	// requireStatus asserts the stored status of row.
	requireStatus := func(t *testing.T, row E, want model.TaskStatus) {
		t.Helper()
		got, err := c.table.get(t, h, c.table.workspace(row), c.table.id(row))
		require.NoError(t, err)
		require.Equal(t, want, *c.table.status(&got))
	}
	withStatus := func(row E, s model.TaskStatus) E {
		*c.table.status(&row) = s
		return row
	}

	t.Run("a second row for a held key is refused, naming the holder, and the transaction goes on", func(t *testing.T) {
		first := create(t, c.table.row(t, h, newWorkspace(t, h)))
		second := c.twin(first)
		ws := c.table.workspace(first)
		// The use case can go on and read the row that holds the key.
		inTx(t, h, ws, func(ctx context.Context, tx ports.Tx) error {
			r := c.table.repo(tx)
			requireResource(t, r.Create(ctx, second), c.taken, c.table.id(first))
			_, err := r.Get(ctx, c.table.id(first))
			return err
		})
		_, err := c.table.get(t, h, ws, c.table.id(second))
		requireCode(t, err, domain.CodeNotFound)
	})

	for _, s := range c.holding {
		t.Run(fmt.Sprintf("a %s row holds its key", s), func(t *testing.T) {
			first := create(t, c.table.row(t, h, newWorkspace(t, h)))
			require.NoError(t, c.table.update(t, h, withStatus(first, s)))
			requireResource(t, c.table.create(t, h, c.twin(first)), c.taken, c.table.id(first))
		})
	}

	for _, s := range c.freeing {
		t.Run(fmt.Sprintf("a %s row frees its key and cannot take it back while another holds it", s), func(t *testing.T) {
			first := create(t, c.table.row(t, h, newWorkspace(t, h)))
			require.NoError(t, c.table.update(t, h, withStatus(first, s)))
			second := create(t, c.twin(first))
			requireResource(t, c.table.create(t, h, c.twin(first)), c.taken, c.table.id(second))
			// A row that holds no key may also be written directly.
			create(t, withStatus(c.twin(first), s))
			for _, back := range c.holding {
				requireCode(t, c.table.update(t, h, withStatus(first, back)), c.taken)
			}
			requireStatus(t, first, s)
		})
	}

	t.Run("free the key and take it again in one transaction", func(t *testing.T) {
		first := create(t, c.table.row(t, h, newWorkspace(t, h)))
		second := c.twin(first)
		inTx(t, h, c.table.workspace(first), func(ctx context.Context, tx ports.Tx) error {
			r := c.table.repo(tx)
			if err := r.Update(ctx, withStatus(first, c.freeing[0])); err != nil {
				return err
			}
			return r.Create(ctx, second)
		})
		requireResource(t, c.table.create(t, h, c.twin(first)), c.taken, c.table.id(second))
	})

	t.Run("of two concurrent creations for one key exactly one commits", func(t *testing.T) {
		first := c.table.row(t, h, newWorkspace(t, h))
		rows := [2]E{first, c.twin(first)}
		ws := c.table.workspace(first)
		winner, loserErr := oneWins(t, raceTwo(t, h, ws, func(i int, ctx context.Context, tx ports.Tx) error {
			return c.table.repo(tx).Create(ctx, rows[i])
		}))
		requireResource(t, loserErr, c.taken, c.table.id(rows[winner]))
		_, err := c.table.get(t, h, ws, c.table.id(rows[winner]))
		require.NoError(t, err)
		_, err = c.table.get(t, h, ws, c.table.id(rows[1-winner]))
		requireCode(t, err, domain.CodeNotFound)
	})
}
