package memory_test

import (
	"testing"

	"github.com/oncehq/once/adapters/memory"
	"github.com/oncehq/once/testsupport/contract"
)

func TestContract(t *testing.T) {
	contract.Run(t, func(t *testing.T) contract.Harness {
		db := memory.NewDB()
		return contract.Harness{
			UoW:              memory.NewUnitOfWork(db),
			Discovery:        memory.NewDiscovery(db),
			OutboxDiscovery:  memory.NewOutboxDiscovery(db),
			OutboxBacklog:    memory.NewOutboxDiscovery(db),
			OutboxPartitions: memory.NewOutboxPartitions(),
			RelayMarks:       memory.NewOutboxRelayMarks(db),
			CatalogItems:     memory.CountCatalogItems,
			APIKeyDirectory:  memory.NewAPIKeyDirectory(db),
		}
	})
}

// In one process the sender is the receiver.
func TestOperationEndsContract(t *testing.T) {
	s := memory.NewSignal()
	contract.OperationEnds(t, s, s)
}
