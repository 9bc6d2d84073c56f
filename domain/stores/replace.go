package stores

import (
	"context"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// ReplaceAuthorization writes, in tx, new credentials for a connected store
// and starts their verification: the credential version goes up by one, the
// credentials are sealed anew under that version (the AAD binds it, so the
// old ciphertext can no longer stand in for the new one), the store is
// pending_verification again, and a new store.verify operation and
// store.credentials.verify event are written for the new version. A
// verification job still queued for an older version finds the version
// moved on and fails its operation as superseded without calling the
// platform (see VerifyHandler), so only the new credentials are
// ever verified. It runs inside the caller's transaction so the
// idempotency record commits with it.
//
// Two replaces of the same store that race are both based on the version
// they read; the later commit wins the row, and each wrote a job for the
// same new version, so the surviving credentials are verified (possibly
// twice). The idempotency layer makes a retried request a replay, not a
// second replace.
//
// Errors: CodeValidation for an incomplete authorization, CodeNotFound if
// the workspace has no such store. The credentials appear in no error,
// event or operation.
func (s *Service) ReplaceAuthorization(ctx context.Context, tx ports.Tx, p model.Principal, storeID uuid.UUID, creds model.StoreCredentials) (Created, error) {
	if err := validateCredentials(creds); err != nil {
		return Created{}, err
	}
	store, err := tx.Stores().Get(ctx, storeID)
	if err != nil {
		return Created{}, err
	}
	now := s.Clock.Now()
	store.CredentialVersion++
	store.Status = model.StorePendingVerification
	store.UpdatedAt = now
	return s.writeToVerify(ctx, tx, p, store, creds, now, tx.Stores().Update)
}
