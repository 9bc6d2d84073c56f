package memory

import (
	"context"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
)

// table is one table of the memory database (workspaces, operations,
// products, stores, media, transfers, publications, syncs, AI tasks) as
// its repository sees it: the
// repositories share its reads and writes, with the same locking,
// visibility and unique keys PostgreSQL gives them, and add only their own
// columns and references.
type table[T any] struct {
	// noun names a row in errors ("catalog sync"); pkey is the name of
	// its primary key.
	noun, pkey string
	// rows are the table's rows (newRows).
	rows rowsOf[uuid.UUID, T]
	// ids are a row's id and workspace; copy copies a row deeply.
	ids  func(T) (id, workspace uuid.UUID)
	copy func(T) T
	// live is the partial unique index of live rows, if the table has one.
	live *liveIndex[T]
}

// taskTable is the table of a task type whose rows carry a
// model.TaskState (transfers, publications, syncs, AI tasks): their ids
// and the copy of their times come from the state. live is the table's
// partial unique index, nil if it has none.
func taskTable[T any, P taskRecord[T]](noun, pkey string, live *liveIndex[T]) table[T] {
	return table[T]{
		noun: noun, pkey: pkey, rows: newRows[uuid.UUID, T](), live: live,
		ids: func(row T) (uuid.UUID, uuid.UUID) {
			s := P(&row).State()
			return s.ID, s.WorkspaceID
		},
		copy: func(row T) T {
			s := P(&row).State()
			dbTimes(&s.CreatedAt, &s.UpdatedAt)
			return row
		},
	}
}

// taskRecord is a task row that embeds its model.TaskState. Its other
// columns are values, so a copy of the row copies them.
type taskRecord[T any] interface {
	*T
	State() *model.TaskState
}

// tableRepo is what the repository of a table in one transaction holds
// and does alike: its Get, and a Create of a row that references nothing
// (a repository whose rows do, or that has unique keys of its own,
// declares its own).
type tableRepo[T any] struct {
	t  *tx
	tb *table[T]
}

// in is tb's repository in t.
func (tb *table[T]) in(t *tx) tableRepo[T] { return tableRepo[T]{t, tb} }

func (r tableRepo[T]) Get(_ context.Context, id uuid.UUID) (T, error) { return r.tb.get(r.t, id) }

func (r tableRepo[T]) Create(_ context.Context, row T) error { return r.tb.create(r.t, row) }

// liveIndex is a partial unique index of PostgreSQL over a table's live
// rows (one live publication per product and store, one active sync per
// store). A row holds its key while live; the key is reserved when the
// row is written, so of two concurrent transactions only one can write a
// live row for it.
type liveIndex[T any] struct {
	key   func(T) uniqueKey
	holds func(T) bool // the row is live
	// taken is the error for a row whose key another live row holds.
	taken func(T) *domain.Error
}

// visibleLocked is the row with id that t sees in its workspace.
func (tb table[T]) visibleLocked(t *tx, id uuid.UUID) (T, bool) {
	mine, committed := tb.rows.mine(t), tb.rows.committed(t)
	row, ok := mine[id]
	if !ok {
		row, ok = committed[id]
	}
	if _, ws := tb.ids(row); !ok || ws != t.workspace {
		var none T
		return none, false
	}
	return row, true
}

func (tb table[T]) notFound(id uuid.UUID) error {
	return domain.Errorf(domain.CodeNotFound, "%s %s not found", tb.noun, id)
}

// get reads the row with id; CodeNotFound if t does not see it.
func (tb table[T]) get(t *tx, id uuid.UUID) (T, error) {
	return inLock(t, func() (T, error) {
		row, ok := tb.visibleLocked(t, id)
		if !ok {
			return row, tb.notFound(id)
		}
		return tb.copy(row), nil
	})
}

// ref is a row a new row references, by its name in errors and its id;
// exists says, under the lock, whether t sees it.
type ref struct {
	name   string
	id     uuid.UUID
	exists func(t *tx, id uuid.UUID) bool
}

func storeRef(id uuid.UUID) ref {
	return ref{"store", id, func(t *tx, id uuid.UUID) bool { _, ok := storeTable.visibleLocked(t, id); return ok }}
}

func productRef(id uuid.UUID) ref {
	return ref{"product", id, func(t *tx, id uuid.UUID) bool { _, ok := productTable.visibleLocked(t, id); return ok }}
}

// create writes a new row of t's workspace after checking, under the
// lock, that t sees the rows it references (as PostgreSQL's foreign keys
// with row-level security would).
func (tb table[T]) create(t *tx, row T, refs ...ref) error {
	id, ws := tb.ids(row)
	if err := t.lockOwn(tb.noun, ws); err != nil {
		return err
	}
	defer t.db.mu.Unlock()
	for _, r := range refs {
		if !r.exists(t, r.id) {
			return missingReference(tb.noun, r.name, r.id)
		}
	}
	keys := []uniqueKey{{tb.pkey, id.String()}}
	if tb.live != nil && tb.live.holds(row) {
		key := tb.live.key(row)
		if t.db.keyTakenForLocked(t, key) {
			return tb.takenLocked(t, row)
		}
		keys = append(keys, key)
	}
	if !t.db.reserveLocked(t, keys...) {
		return domain.Errorf(domain.CodeConflict, "%s %s already exists", tb.noun, id)
	}
	mine := tb.rows.mine(t)
	mine[id] = tb.copy(row)
	return nil
}

// update changes the row with id as apply says; a row that becomes live
// or stops being live takes or releases its live key.
func (tb table[T]) update(t *tx, id uuid.UUID, apply func(row *T)) error {
	return tb.change(t, id, func(row *T) error { apply(row); return nil })
}

// change is update with an apply that may refuse the change.
func (tb table[T]) change(t *tx, id uuid.UUID, apply func(row *T) error) error {
	return t.inLock(func() error {
		cur, ok := tb.visibleLocked(t, id)
		if !ok {
			return tb.notFound(id)
		}
		next := tb.copy(cur)
		if err := apply(&next); err != nil {
			return err
		}
		if l := tb.live; l != nil {
			switch key := l.key(cur); {
			case l.holds(cur) && !l.holds(next):
				t.db.releaseLocked(t, key)
			case !l.holds(cur) && l.holds(next):
				if !t.db.reserveLocked(t, key) {
					return tb.takenLocked(t, next)
				}
			}
		}
		mine := tb.rows.mine(t)
		mine[id] = tb.copy(next)
		return nil
	})
}

// takenLocked is the live index's error for row, naming the row that
// holds its key (committed, ours, or another open transaction's).
func (tb table[T]) takenLocked(t *tx, row T) error {
	l := tb.live
	key := l.key(row)
	rowID, _ := tb.ids(row)
	holder := uuid.Nil
	find := func(rows map[uuid.UUID]T, skip map[uuid.UUID]T) {
		for id, q := range rows {
			if _, mine := skip[id]; holder == uuid.Nil && !mine && id != rowID && l.holds(q) && l.key(q) == key {
				holder = id
			}
		}
	}
	mine, committed := tb.rows.mine(t), tb.rows.committed(t)
	if other := t.db.keyHolderLocked(key); other != nil {
		find(tb.rows.in(&other.taskRows), nil)
	}
	find(mine, nil)
	find(committed, mine)
	e := l.taken(row)
	if holder != uuid.Nil {
		e.ResourceID = holder.String()
	}
	return e
}
