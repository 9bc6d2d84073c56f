package memory

import (
	"context"

	"github.com/google/uuid"

	"github.com/oncehq/once/ports"
)

// CountCatalogItems counts the catalogue of storeID as the transaction tx
// sees it (the contract suite's view; the port has no read of it).
func CountCatalogItems(_ context.Context, transaction ports.Tx, storeID uuid.UUID) (int, error) {
	t := transaction.(*tx)
	return inLock(t, func() (int, error) {
		n := 0
		for k := range catalogItems.committed(t) {
			if _, mine := catalogItems.mine(t)[k]; !mine && k.workspace == t.workspace && k.store == storeID {
				n++
			}
		}
		for k := range catalogItems.mine(t) {
			if k.workspace == t.workspace && k.store == storeID {
				n++
			}
		}
		return n, nil
	})
}
