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
	op := domain.Operation{
		ID:           s.ids.NewID(),
		WorkspaceID:  p.WorkspaceID,
		Kind:         domain.OperationStoreVerify,
		Status:       domain.OperationPending,
		ResourceType: "store",
		ResourceID:   store.ID,
		CreatedBy:    p.UserID,
		CreatedAt:    now,
		UpdatedAt:    now,
	}
	event, err := domain.NewOutboxEvent(s.ids.NewID(), p.WorkspaceID, domain.EventStoreCredentialsVerify, "store", store.ID,
		domain.StoreCredentialsVerify{StoreID: store.ID, CredentialVersion: store.CredentialVersion, OperationID: op.ID}, now)
	if err != nil {
		return domain.Operation{}, domain.OutboxEvent{}, err
	}
	event.Traceparent = domain.TraceparentFrom(ctx)
	return op, event, nil
}

// writeVerifyJob writes the operation and appends the event in tx.
func writeVerifyJob(ctx context.Context, tx ports.Tx, op domain.Operation, event domain.OutboxEvent) error {
	if err := tx.Operations().Create(ctx, op); err != nil {
		return err
	}
	return tx.Outbox().Append(ctx, event)
}
