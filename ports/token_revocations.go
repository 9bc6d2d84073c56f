package ports

import (
	"context"
	"time"

	"github.com/oncehq/once/domain/model"
)

// TokenRevocations keeps the revoked access tokens and the users' cutoffs
// for the whole fleet: every process that verifies tokens reads the
// changes every few seconds into memory (domain/revocation), so no request
// reads the store. The records are the fleet's, not a tenant's, and are
// read and written outside any workspace's transaction.
//
// Errors: only that the store could not be asked (unreachable, timed out,
// ctx ended); nothing was written then.
type TokenRevocations interface {
	// RevokeToken records t. Recording a token already recorded is no
	// error (the first record stays).
	RevokeToken(ctx context.Context, t model.RevokedToken) error
	// RevokeTokensBefore records c; a later cutoff of the same workspace
	// and user recorded before is kept (the latest wins).
	RevokeTokensBefore(ctx context.Context, c model.TokenCutoff) error
	// Changes returns the revocations recorded since cursor since (0:
	// every one) and the cursor to pass next. A revocation may come back
	// again in a later call (applying one twice is harmless); none
	// recorded after a call is missing from the next. A cutoff comes back
	// with its latest NotBefore.
	Changes(ctx context.Context, since int64) (changes model.Revocations, next int64, err error)
	// SweepExpired deletes up to limit revoked tokens whose ExpiresAt is
	// before before, and says how many went. Cutoffs are kept: one per
	// (workspace, user) at most.
	SweepExpired(ctx context.Context, before time.Time, limit int) (int, error)
}

// TokenVerifier reads a bearer token as an access token of this service.
// Errors: domain.CodeUnauthenticated when it is not one (bad signature,
// wrong issuer or audience, expired, malformed); the message never echoes
// the token.
type TokenVerifier interface {
	VerifyToken(ctx context.Context, token string) (model.AccessToken, error)
}
