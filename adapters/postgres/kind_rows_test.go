package postgres_test

import "testing"

// kindRowColumns are the columns a row of a kind's task table needs
// besides its task state, with their values: $6 names a store and $7 a
// product of the row's workspace, each new for the row (so no live index
// is taken). A kind whose table is not here fails the test that asks.
func kindRowColumns(t *testing.T, table string) (cols, vals string) {
	t.Helper()
	switch table {
	case "material_transfers":
		return "", ""
	case "publications":
		return ", product_id, store_id, product_revision", ", $7, $6, 1"
	case "catalog_syncs":
		return ", store_id", ", $6"
	case "ai_tasks":
		return ", product_id, kind", ", $7, 'text'"
	}
	t.Fatalf("no row of %s for the tests: add its columns to kindRowColumns", table)
	return "", ""
}
