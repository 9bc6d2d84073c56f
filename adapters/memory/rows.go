package memory

import "maps"

// The rows of the tables (workspaces, operations, products, the task
// tables and what they own: a transfer's items, the catalogue a sync
// fills, an AI task's billing record) are kept table by table: each table
// registers its rows once where it is declared (newRows), so a task table
// is declared in its own file alone, and a transaction publishes every
// table's writes at commit without naming them.

// taskRows are the rows of every registered table: a transaction's own
// writes, or the database's committed rows.
type taskRows struct {
	sets []rowSet // by rowsOf
}

func newTaskRows() taskRows {
	r := taskRows{sets: make([]rowSet, len(registeredRows))}
	for i, empty := range registeredRows {
		r.sets[i] = empty()
	}
	return r
}

// commitTo publishes a transaction's rows into the committed ones.
func (r taskRows) commitTo(committed taskRows) {
	for i, rows := range r.sets {
		rows.commitTo(committed.sets[i])
	}
}

// rowSet is one table's rows in a taskRows.
type rowSet interface {
	// commitTo writes these rows over committed, the same table's.
	commitTo(committed rowSet)
}

type rowMap[K comparable, V any] map[K]V

func (m rowMap[K, V]) commitTo(committed rowSet) { maps.Copy(committed.(rowMap[K, V]), m) }

// registeredRows make each registered table's empty rows, by rowsOf.
var registeredRows []func() rowSet

// rowsOf is where a registered table's rows are in every taskRows.
type rowsOf[K comparable, V any] int

// newRows registers a table of Vs keyed by K. Call it once per table, in
// the package-level declaration of the table.
func newRows[K comparable, V any]() rowsOf[K, V] {
	registeredRows = append(registeredRows, func() rowSet { return rowMap[K, V]{} })
	return rowsOf[K, V](len(registeredRows) - 1)
}

// in is the table's rows in r.
func (s rowsOf[K, V]) in(r *taskRows) map[K]V { return r.sets[s].(rowMap[K, V]) }

// mine is what t wrote to the table; committed the database's rows.
func (s rowsOf[K, V]) mine(t *tx) map[K]V      { return s.in(&t.taskRows) }
func (s rowsOf[K, V]) committed(t *tx) map[K]V { return s.in(&t.db.taskRows) }
