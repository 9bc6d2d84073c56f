package contract

import (
	"testing"

	"github.com/oncehq/once/domain/kinds"
)

// kindContract is what the suite checks of one kind of task, declared in
// the kind's own file of this package (registerKind), so the suite's
// lists name no kind and range over kinds.All instead.
type kindContract struct {
	// table runs the table contract (tables.go) on the kind's table.
	table func(t *testing.T, h Harness)
	// live runs the live key contract (live.go); nil without a live index.
	live func(t *testing.T, h Harness)
	// list runs the list contract (lists.go) on the table's List.
	list func(t *testing.T, h Harness)
	// own runs the tests of what is the kind's own.
	own func(t *testing.T, h Harness)
}

// kindContracts are the kinds' contracts by their table (kinds.Kind.Table).
var kindContracts = map[string]kindContract{}

// registerKind declares the contract of the kind whose table is table. It
// returns true, so a kind's file registers from a package-level
// declaration (read when the suite runs, after every one has).
func registerKind(table string, c kindContract) bool {
	kindContracts[table] = c
	return true
}

// forEachKind runs check, in a subtest named after its table, for every
// kind of kinds.All; a declared kind without a contract fails the suite.
func forEachKind(t *testing.T, check func(c kindContract) func(t *testing.T, h Harness), h Harness) {
	for _, k := range kinds.All {
		c, ok := kindContracts[k.Table]
		if !ok {
			t.Errorf("task kind %s has no contract: register one in its file of testsupport/contract", k.EventType)
			continue
		}
		if run := check(c); run != nil {
			t.Run(k.Table, func(t *testing.T) { run(t, h) })
		}
	}
}

// testKinds runs the tests of what is each kind's own.
func testKinds(t *testing.T, h Harness) {
	forEachKind(t, func(c kindContract) func(t *testing.T, h Harness) { return c.own }, h)
}
