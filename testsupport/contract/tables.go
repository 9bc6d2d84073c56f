package contract

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// The table contract: what every table of workspace rows does alike
// (stores, operations, products, media, material transfers, publications,
// catalog syncs, AI tasks), written once and run for each table from its
// entry. What a table does beyond it (unique keys, transitions, items,
// billing) is tested in the table's own file.

// table describes one table of workspace rows to the table contract.
type table[E any] struct {
	// repo is the table's repository in tx.
	repo func(tx ports.Tx) tableRepo[E]
	// keys point at a row's id and workspace; state at a task row's
	// model.TaskState (nil for a table of other rows).
	keys  func(row *E) (id, workspace *uuid.UUID)
	state func(row *E) *model.TaskState
	// row is a new, unsaved row of ws, the rows it references written.
	row func(t *testing.T, h Harness, ws uuid.UUID) E
	// full sets a row's optional fields, so a round trip covers them all;
	// nil if a new row has them all.
	full func(row *E)
	// stored is row as the table gives it back (times in UTC at
	// microseconds, lists in their order, empty lists nil), sharing no
	// memory with row.
	stored func(row E) E
	// scramble changes what a row holds by reference, to show that the
	// table keeps and returns copies; nil if a row holds nothing so.
	scramble func(row *E)
	// updates says what Update does (the update test's name, after
	// "update"). mutable sets the fields Update replaces to new values,
	// immutable those it must leave as they were; bump is what Update
	// changes of itself (a product's revision), nil if nothing.
	updates            string
	mutable, immutable func(row *E)
	bump               func(row *E)
}

// tableRepo is what the table contract calls of a table's repository.
type tableRepo[E any] interface {
	Create(ctx context.Context, row E) error
	Get(ctx context.Context, id uuid.UUID) (E, error)
	Update(ctx context.Context, row E) error
}

// testTables runs the table contract for every table of workspace rows:
// those no kind owns, then every kind's.
func testTables(t *testing.T, h Harness) {
	t.Run("operations", func(t *testing.T) { operationTable.check(t, h) })
	t.Run("products", func(t *testing.T) { productTable.check(t, h) })
	forEachKind(t, func(c kindContract) func(t *testing.T, h Harness) { return c.table }, h)
}

// check runs the table contract for c.
func (c table[E]) check(t *testing.T, h Harness) {
	t.Run("create then get keeps every field", func(t *testing.T) {
		ws := newWorkspace(t, h)
		row := c.row(t, h, ws)
		if c.full != nil {
			c.full(&row)
		}
		want := c.stored(row)
		require.NoError(t, c.create(t, h, row))
		// What the table keeps shares no memory with the caller's value,
		// nor with what Get returned.
		c.scrambled(&row)
		got, err := c.get(t, h, ws, c.id(row))
		require.NoError(t, err)
		require.Equal(t, want, got)
		c.scrambled(&got)
		got, err = c.get(t, h, ws, c.id(row))
		require.NoError(t, err)
		require.Equal(t, want, got)
	})

	t.Run("update "+c.updates, func(t *testing.T) {
		ws := newWorkspace(t, h)
		row := c.row(t, h, ws)
		require.NoError(t, c.create(t, h, row))
		changed, want := c.change(row)
		require.NoError(t, c.update(t, h, changed))
		got, err := c.get(t, h, ws, c.id(row))
		require.NoError(t, err)
		require.Equal(t, want, got)
	})

	t.Run("missing is not found", func(t *testing.T) {
		ws := newWorkspace(t, h)
		_, err := c.get(t, h, ws, uuid.New())
		requireCode(t, err, domain.CodeNotFound)
		requireCode(t, c.update(t, h, c.row(t, h, ws)), domain.CodeNotFound)
	})

	t.Run("an existing id is a conflict", func(t *testing.T) {
		ws := newWorkspace(t, h)
		row := c.row(t, h, ws)
		require.NoError(t, c.create(t, h, row))
		again := c.row(t, h, ws)
		id, _ := c.keys(&again)
		*id = c.id(row)
		requireCode(t, c.create(t, h, again), domain.CodeConflict)
	})

	t.Run("a row of another workspace is invisible", func(t *testing.T) {
		wsA, wsB := newWorkspace(t, h), newWorkspace(t, h)
		row := c.row(t, h, wsA)
		require.NoError(t, c.create(t, h, row))
		_, err := c.get(t, h, wsB, c.id(row))
		requireCode(t, err, domain.CodeNotFound)

		// Updating it from the other workspace finds nothing, whichever
		// workspace the row names.
		hijack, _ := c.change(row)
		err = c.in(t, h, wsB, func(ctx context.Context, r tableRepo[E]) error { return r.Update(ctx, hijack) })
		requireCode(t, err, domain.CodeNotFound)
		_, ws := c.keys(&hijack)
		*ws = wsB
		requireCode(t, c.update(t, h, hijack), domain.CodeNotFound)
		// Nor can the other workspace write a row of this one.
		stranger := c.row(t, h, wsA)
		err = c.in(t, h, wsB, func(ctx context.Context, r tableRepo[E]) error { return r.Create(ctx, stranger) })
		requireCode(t, err, domain.CodeForbidden)

		got, err := c.get(t, h, wsA, c.id(row))
		require.NoError(t, err)
		require.Equal(t, c.stored(row), got)
	})
}

// change returns row with every field changed that Update might touch,
// and the row Update must leave, as the table gives it back.
func (c table[E]) change(row E) (changed, want E) {
	changed, want = row, row
	c.mutable(&changed)
	c.immutable(&changed)
	c.mutable(&want)
	if c.bump != nil {
		c.bump(&want)
	}
	return changed, c.stored(want)
}

// status points at a task row's status.
func (c table[E]) status(row *E) *model.TaskStatus { return &c.state(row).Status }

func (c table[E]) id(row E) uuid.UUID {
	id, _ := c.keys(&row)
	return *id
}

func (c table[E]) workspace(row E) uuid.UUID {
	_, ws := c.keys(&row)
	return *ws
}

func (c table[E]) scrambled(row *E) {
	if c.scramble != nil {
		c.scramble(row)
	}
}

// in runs fn with the table's repository in a transaction of ws and
// returns Transact's error.
func (c table[E]) in(t *testing.T, h Harness, ws uuid.UUID, fn func(ctx context.Context, r tableRepo[E]) error) error {
	t.Helper()
	return transact(t, h, ws, func(ctx context.Context, tx ports.Tx) error { return fn(ctx, c.repo(tx)) })
}

// create writes row in a transaction of its workspace.
func (c table[E]) create(t *testing.T, h Harness, row E) error {
	t.Helper()
	return c.in(t, h, c.workspace(row), func(ctx context.Context, r tableRepo[E]) error { return r.Create(ctx, row) })
}

// update updates row in a transaction of its workspace.
func (c table[E]) update(t *testing.T, h Harness, row E) error {
	t.Helper()
	return c.in(t, h, c.workspace(row), func(ctx context.Context, r tableRepo[E]) error { return r.Update(ctx, row) })
}

// get reads the row with id in a transaction of ws.
func (c table[E]) get(t *testing.T, h Harness, ws, id uuid.UUID) (E, error) {
	t.Helper()
	return query(t, h, ws, func(ctx context.Context, tx ports.Tx) (E, error) { return c.repo(tx).Get(ctx, id) })
}

// taskTable completes the entry of a task table, whose rows embed a
// model.TaskState: a row's keys and stored times are its state's, a full
// row has a status and a reason, and Update replaces status, reason and
// updated_at of the state and must leave the operation and created_at.
func taskTable[E any, P interface {
	*E
	State() *model.TaskState
}](c table[E]) table[E] {
	c.state = func(row *E) *model.TaskState { return P(row).State() }
	c.keys = func(row *E) (*uuid.UUID, *uuid.UUID) {
		s := P(row).State()
		return &s.ID, &s.WorkspaceID
	}
	stored, full, mutable, immutable := c.stored, c.full, c.mutable, c.immutable
	c.stored = func(row E) E {
		if stored != nil {
			row = stored(row)
		}
		s := P(&row).State()
		s.CreatedAt, s.UpdatedAt = dbTime(s.CreatedAt), dbTime(s.UpdatedAt)
		return row
	}
	c.full = func(row *E) {
		s := P(row).State()
		s.Status, s.Reason = model.TaskRunning, "r"
		if full != nil {
			full(row)
		}
	}
	c.mutable = func(row *E) {
		s := P(row).State()
		s.Status, s.Reason, s.UpdatedAt = model.TaskSucceeded, "done", s.UpdatedAt.Add(time.Minute)
		if mutable != nil {
			mutable(row)
		}
	}
	c.immutable = func(row *E) {
		s := P(row).State()
		s.OperationID, s.CreatedAt = uuid.New(), s.CreatedAt.Add(-time.Hour)
		if immutable != nil {
			immutable(row)
		}
	}
	return c
}
