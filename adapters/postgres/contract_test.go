package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/oncehq/once/adapters/postgres"
	"github.com/oncehq/once/ports"
	"github.com/oncehq/once/testsupport/contract"
	"github.com/oncehq/once/testsupport/pgtest"
)

// The shared suite of the persistence ports, against PostgreSQL as the
// application role: one fresh database per harness.
func TestContract(t *testing.T) {
	t.Parallel()
	contract.Run(t, func(t *testing.T) contract.Harness {
		db := pgtest.New(t)
		return contract.Harness{
			UoW:             postgres.NewUnitOfWork(db.App),
			Discovery:       postgres.NewDiscovery(db.App),
			OutboxDiscovery: postgres.NewOutboxDiscovery(db.App),
			OutboxBacklog:   postgres.NewOutboxDiscovery(db.App),
			// Hours, so the suite's events an hour apart land in different
			// partitions.
			OutboxPartitions: postgres.NewOutboxPartitions(db.App, time.Hour),
			RelayMarks:       postgres.NewOutboxRelayMarks(postgres.NewUnitOfWork(db.App)),
			CatalogItems:     countCatalogItems,
			APIKeyDirectory:  postgres.NewAPIKeyDirectory(db.App),
		}
	})
}

// countCatalogItems counts a store's catalogue in tx, under its
// workspace's row-level security.
func countCatalogItems(ctx context.Context, tx ports.Tx, store uuid.UUID) (int, error) {
	n, err := postgres.TxDB(tx.(*postgres.Tx)).NewSelect().Table("catalog_items").Where("store_id = ?", store).Count(ctx)
	return int(n), err
}
