package verification

import (
	"time"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/jobs"
	"github.com/oncehq/once/ports"
)

// Task is a store's verification as the steps every job shares see it: a
// job given up leaves the store verification_failed, a re-drive puts it
// back to pending_verification.
var Task = jobs.StatusTable(domain.OperationStoreVerify, ports.Tx.Stores,
	func(s *domain.Store) (*domain.StoreStatus, *string, *time.Time) { return &s.Status, nil, &s.UpdatedAt },
	domain.StorePendingVerification, domain.StoreVerificationFailed)
