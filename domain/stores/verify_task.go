package stores

import (
	"time"

	"github.com/oncehq/once/domain/jobs"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// VerifyTask is a store's verification as the steps every job shares see it: a
// job given up leaves the store verification_failed, a re-drive puts it
// back to pending_verification.
var VerifyTask = jobs.StatusTable(jobs.Names{
	EventType: model.EventStoreCredentialsVerify, OperationKind: model.OperationStoreVerify, ResourceType: "store",
}, ports.Tx.Stores,
	func(s *model.Store) (*model.StoreStatus, *string, *time.Time) { return &s.Status, nil, &s.UpdatedAt },
	model.StorePendingVerification, model.StoreVerificationFailed)

// VerifyKind is the store verification in the list of task kinds
// (app/kinds.go).
var VerifyKind = VerifyTask.Kind()
