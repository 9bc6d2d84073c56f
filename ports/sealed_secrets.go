package ports

import (
	"context"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain/model"
)

// SealingKeys says which key of the keyring sealed a ciphertext, so that
// the secrets sealed under an older key can be found and sealed again
// under the newest (CredentialSealer's first) one.
type SealingKeys interface {
	// SealingKey names the key Seal uses.
	SealingKey() string
	// KeyOf names the key ciphertext says it was sealed with, and whether
	// the keyring holds that key. It reads the ciphertext's header only,
	// opening nothing; domain.CodeInternal for a ciphertext that is not of
	// the sealer's format.
	KeyOf(ciphertext []byte) (id string, held bool, err error)
}

// SealedSecretWorkspaces lists every workspace, ids only, without any
// workspace context: the re-seal visits each in turn and reads its rows
// under row-level security (PostgreSQL: a SECURITY DEFINER function, as
// for the other discoveries). Optional: the embedded memory store lives
// as long as its process, under the one keyring it started with.
type SealedSecretWorkspaces interface {
	// WorkspacesAfter returns up to limit workspace ids greater than after
	// (uuid.Nil: from the first), in id order.
	WorkspacesAfter(ctx context.Context, after uuid.UUID, limit int) ([]uuid.UUID, error)
}

// SealedSecretRows reads, in one transaction of one workspace, the rows
// that hold sealed secrets, for re-sealing: in id order after a cursor,
// each locked until the transaction ends, so that a change crossing the
// re-seal (a credentials replace, a secret rotation) waits for it and then
// works on the re-sealed row, and the re-seal never writes back a secret
// another transaction replaced. The rows are written back with the
// tables' own Update. Tx hands it out through Repository (PostgreSQL
// only, as SealedSecretWorkspaces).
type SealedSecretRows interface {
	// StoresAfter returns up to limit stores whose id is greater than
	// after, in id order, locked.
	StoresAfter(ctx context.Context, after uuid.UUID, limit int) ([]model.Store, error)
	// WebhookEndpointsAfter returns up to limit webhook endpoints whose id
	// is greater than after, in id order, locked.
	WebhookEndpointsAfter(ctx context.Context, after uuid.UUID, limit int) ([]model.WebhookEndpoint, error)
}
