package stores

import (
	"context"
	"time"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/ports"
)

// verifyJob builds the operation that tracks one verification of store's
// current credential version and the store.credentials.verify event that
// starts it. The event names the store, the version and the operation:
// nothing of the credentials, which the worker reads sealed from the row.
func (s *Service) verifyJob(ctx context.Context, p domain.Principal, store domain.Store, now time.Time) (domain.Operation, domain.OutboxEvent, error) {
	return domain.NewJob(ctx, s.IDs, p, now, domain.JobSpec{
		OperationKind: domain.OperationStoreVerify,
		ResourceType:  "store",
		ResourceID:    store.ID,
		EventType:     domain.EventStoreCredentialsVerify,
		Payload: func(op domain.JobOperation) any {
			return domain.StoreCredentialsVerify{StoreID: store.ID, CredentialVersion: store.CredentialVersion, JobOperation: op}
		},
	})
}

// writeVerifyJob writes the operation and appends the event in tx.
func writeVerifyJob(ctx context.Context, tx ports.Tx, op domain.Operation, event domain.OutboxEvent) error {
	if err := tx.Operations().Create(ctx, op); err != nil {
		return err
	}
	return tx.Outbox().Append(ctx, event)
}
