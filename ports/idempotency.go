package ports

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain/model"
)

// IdempotencyStore keeps request outcomes, bound to one transaction of the
// workspace of the scope.
type IdempotencyStore interface {
	// Claim reserves rec.Scope for the calling transaction, without waiting
	// on any lock. rec carries the fingerprint and the expiry.
	//
	//   - nil, nil: claimed. The scope is held by this transaction until it
	//     ends; the caller runs the business work and calls Complete in the
	//     same transaction, which writes the record. If the transaction rolls
	//     back (or commits without Complete), the claim vanishes with it and
	//     the key is free again.
	//   - existing, nil: a completed, unexpired record for the scope exists.
	//     The caller compares fingerprints; Claim does not judge them. It is
	//     returned whatever other transactions hold or do (replays take no
	//     lock), so retries of a finished request always get it, however
	//     many run at once. A record that expired before rec.CreatedAt is
	//     treated as absent (and replaced).
	//   - error with domain.CodeIdempotencyInProgress: another transaction holds
	//     the scope right now. Returned at once.
	Claim(ctx context.Context, rec model.IdempotencyRecord) (*model.IdempotencyRecord, error)

	// Complete writes the record claimed by this transaction, completed, with
	// the response summary, stored as given: making it safe (allow-listed
	// headers, model.CheckPayloadSafe) is the caller's rule. domain.CodeNotFound if this transaction holds no
	// claim for scope.
	Complete(ctx context.Context, scope model.IdempotencyScope, resp model.SavedResponse, at time.Time) error

	// DeleteExpired deletes up to limit records of this workspace that
	// expired before now, and returns how many it deleted.
	DeleteExpired(ctx context.Context, now time.Time, limit int) (int, error)
}

// IdempotencyDiscovery finds workspaces that have expired idempotency
// records. It sees workspace ids only, never rows, and works without any
// workspace context, so the cleaner can then work workspace by workspace
// under row-level security.
type IdempotencyDiscovery interface {
	WorkspacesWithExpiredIdempotency(ctx context.Context, now time.Time, limit int) ([]uuid.UUID, error)
}
