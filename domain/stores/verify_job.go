package stores

import (
	"context"
	"time"

	"github.com/oncehq/once/domain/jobs"
	"github.com/oncehq/once/domain/kinds"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// VerifyTask is a store's verification as the steps every job shares see it: a
// job given up leaves the store verification_failed, a re-drive puts it
// back to pending_verification.
var VerifyTask = jobs.StatusTable(kinds.StoreVerify, ports.Tx.Stores,
	func(s *model.Store) (*model.StoreStatus, *string, *time.Time) { return &s.Status, nil, &s.UpdatedAt },
	model.StorePendingVerification, model.StoreVerificationFailed)

// VerifyKind is the store verification (names and failure hook), listed with
// its use case and worker handler in app/kind_list.go.
var VerifyKind = VerifyTask.Kind()

// verifyJob builds the operation that tracks one verification of store's
// current credential version and the store.credentials.verify event that
// starts it. The event names the store, the version and the operation:
// nothing of the credentials, which the worker reads sealed from the row.
func (s *Service) verifyJob(ctx context.Context, p model.Principal, store model.Store, now time.Time) (model.Operation, model.OutboxEvent, error) {
	return model.NewJob(ctx, s.IDs, p, now, VerifyTask.Spec(store.ID, jobs.StoreRoute(store, ""), func(op model.JobOperation) any {
		return model.StoreCredentialsVerify{StoreID: store.ID, CredentialVersion: store.CredentialVersion, JobOperation: op}
	}))
}

// writeVerifyJob writes the operation and appends the event in tx.
func writeVerifyJob(ctx context.Context, tx ports.Tx, op model.Operation, event model.OutboxEvent) error {
	if err := tx.Operations().Create(ctx, op); err != nil {
		return err
	}
	return tx.Outbox().Append(ctx, event)
}
