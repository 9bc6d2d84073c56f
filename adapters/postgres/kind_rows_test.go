package postgres_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain/kinds"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// kindRows are the rows the tests write for each kind of kinds.All, by
// its table (kinds.Kind.Table). Each kind's own test file adds its entry
// (catalog_syncs_test.go): the tests that range over the list fail, naming
// the kind, when one has none.
var kindRows = map[string]kindRow{}

// registerKindRow declares the rows of the kind whose table is table; it
// returns true, so a kind's test file declares them at package level.
func registerKindRow(table string, row kindRow) bool {
	kindRows[table] = row
	return true
}

// kindRow is what the tests write for one kind.
type kindRow struct {
	// cols and vals are the columns a row of the kind's task table needs
	// besides its task state, with their values: $6 names a store and $7
	// a product of the row's workspace, each new for the row (so no live
	// index is taken). The retention test writes rows of every expiring
	// kind with them.
	cols, vals string
	// seed writes, in tx, one row of the kind and of each table it fills,
	// so that a seeded workspace has a row in every tenant table (nil: the
	// workspace's own rows are the kind's, as a store's are).
	seed func(ctx context.Context, tx ports.Tx, refs seedRefs) error
	// ownRetention writes, for the retention test, what the kind's own
	// retention rule decides on (in workspace ws, besides its rows by
	// status in gone and kept, which it may move), and returns the check
	// to run after the cleanup (nil for none); nil for a kind without a
	// rule of its own.
	ownRetention func(w retentionWorld, ws uuid.UUID, gone, kept tableRows) (check func())
	// discoveryTables are the tables besides its own whose scheduling
	// columns the kind's own retention rule lets the discovery role read.
	discoveryTables []string
}

// tableRows are row ids by table.
type tableRows = map[string][]uuid.UUID

// seedRefs are the rows of a seeded workspace a kind's rows reference.
type seedRefs struct {
	ws, store, product uuid.UUID
	// task is a new task state of the workspace, tracked by its operation.
	task func() model.TaskState
}

// kindRowOf is the kindRow of k, an error naming k if its test file
// declares none.
func kindRowOf(k kinds.Kind) (kindRow, error) {
	row, ok := kindRows[k.Table]
	if !ok {
		return kindRow{}, fmt.Errorf("task kind %s has no rows for the tests: its test file adds its kindRows entry", k.EventType)
	}
	return row, nil
}

// mustKindRow is the kindRow of k, failing t if its test file declares
// none.
func mustKindRow(t *testing.T, k kinds.Kind) kindRow {
	t.Helper()
	row, err := kindRowOf(k)
	if err != nil {
		t.Fatal(err)
	}
	return row
}
