package ports

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain/model"
)

// APIKeyRepository stores a workspace's API keys. Tx hands it out through
// Repository. Create (Resources) is domain.CodeConflict when the id or
// the lookup id exists (in any workspace: lookup ids are unique across
// them). List is newest first, as every list (ListQuery; its filters do
// not apply); revoked keys are listed too.
type APIKeyRepository interface {
	Resources[model.APIKey]
	// ByLookupID reads the key of the transaction's workspace whose
	// lookup id is lookupID; domain.CodeNotFound otherwise.
	ByLookupID(ctx context.Context, lookupID string) (model.APIKey, error)
	// Revoke sets the key's RevokedAt to at unless it is revoked already
	// (then it keeps the first time) and returns the key as stored;
	// domain.CodeNotFound if absent.
	Revoke(ctx context.Context, id uuid.UUID, at time.Time) (model.APIKey, error)
	// MarkUsed sets LastUsedAt to at, unless it is already at or after
	// at.Add(-every): of many processes authenticating one key, about one
	// write per every lands. The hash and its key id are replaced too when
	// hashKeyID is not empty (a key hashed under a retired keyring key
	// moves to the current one). Absent or revoked: nothing changes, no
	// error.
	MarkUsed(ctx context.Context, id uuid.UUID, at time.Time, every time.Duration, hashKeyID string, hash []byte) error
}

// APIKeyDirectory finds which workspace an API key belongs to from its
// lookup id, before any workspace is known: the one read of API keys
// across workspaces, which answers the workspace id and nothing else (the
// key itself is then read under that workspace's row-level security).
type APIKeyDirectory interface {
	// WorkspaceOf returns the workspace of the key with lookupID;
	// domain.CodeNotFound if no key has it.
	WorkspaceOf(ctx context.Context, lookupID string) (uuid.UUID, error)
}
