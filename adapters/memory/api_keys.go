package memory

import (
	"bytes"
	"context"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// apiKeyRepo is the api_keys table in one transaction.
type apiKeyRepo struct{ tableRepo[model.APIKey] }

var _ = ports.Register(kindRepositories, func(t *tx) ports.APIKeyRepository {
	return apiKeyRepo{apiKeyTable.in(t)}
})

// apiKeyTable is the api_keys table; its lookup id is unique across
// workspaces, as api_keys_lookup_id_key is: a live index every row holds
// for good.
var apiKeyTable = table[model.APIKey]{
	noun: "API key", pkey: "api_keys_pkey", copy: copyAPIKey,
	rows: newRows[uuid.UUID, model.APIKey](),
	ids:  func(k model.APIKey) (uuid.UUID, uuid.UUID) { return k.ID, k.WorkspaceID },
	live: &liveIndex[model.APIKey]{
		key:   apiKeyLookupKey,
		holds: func(model.APIKey) bool { return true },
		taken: func(model.APIKey) *domain.Error {
			return domain.Errorf(domain.CodeConflict, "an API key with this lookup id already exists")
		},
	},
}

func apiKeyLookupKey(k model.APIKey) uniqueKey {
	return uniqueKey{"api_keys_lookup_id_key", k.LookupID}
}

func copyAPIKey(k model.APIKey) model.APIKey {
	k.Scopes = slices.Clone(k.Scopes)
	k.Hash = bytes.Clone(k.Hash)
	dbTimes(&k.CreatedAt, &k.LastUsedAt, &k.RevokedAt)
	return k
}

func (r apiKeyRepo) List(_ context.Context, q ports.ListQuery) ([]model.APIKey, error) {
	return apiKeyTable.list(r.t, q, func(model.APIKey, ports.ListQuery) bool { return true })
}

func (r apiKeyRepo) ByLookupID(_ context.Context, lookupID string) (model.APIKey, error) {
	return inLock(r.t, func() (model.APIKey, error) {
		for _, rows := range []map[uuid.UUID]model.APIKey{apiKeyTable.rows.mine(r.t), apiKeyTable.rows.committed(r.t)} {
			for id, k := range rows {
				if k.LookupID != lookupID {
					continue
				}
				if k, ok := apiKeyTable.visibleLocked(r.t, id); ok {
					return apiKeyTable.copy(k), nil
				}
			}
		}
		return model.APIKey{}, domain.Errorf(domain.CodeNotFound, "API key not found")
	})
}

func (r apiKeyRepo) Revoke(_ context.Context, id uuid.UUID, at time.Time) (model.APIKey, error) {
	var saved model.APIKey
	err := apiKeyTable.update(r.t, id, func(cur *model.APIKey) {
		if cur.RevokedAt.IsZero() {
			cur.RevokedAt = at
		}
		saved = *cur
	})
	return copyAPIKey(saved), err
}

func (r apiKeyRepo) MarkUsed(_ context.Context, id uuid.UUID, at time.Time, every time.Duration, hashKeyID string, hash []byte) error {
	err := apiKeyTable.update(r.t, id, func(cur *model.APIKey) {
		recent := !cur.LastUsedAt.IsZero() && !cur.LastUsedAt.Before(at.Add(-every))
		if cur.Revoked() || recent {
			return
		}
		cur.LastUsedAt = at
		if hashKeyID != "" {
			cur.HashKeyID, cur.Hash = hashKeyID, bytes.Clone(hash)
		}
	})
	if domain.IsCode(err, domain.CodeNotFound) {
		return nil
	}
	return err
}

// APIKeyDirectory finds a key's workspace across the whole DB, as the
// PostgreSQL adapter's SECURITY DEFINER function does: committed rows
// only, the workspace id only.
type APIKeyDirectory struct{ db *DB }

var _ ports.APIKeyDirectory = (*APIKeyDirectory)(nil)

// NewAPIKeyDirectory returns the directory of db's API keys.
func NewAPIKeyDirectory(db *DB) *APIKeyDirectory { return &APIKeyDirectory{db: db} }

func (d *APIKeyDirectory) WorkspaceOf(_ context.Context, lookupID string) (uuid.UUID, error) {
	d.db.mu.Lock()
	defer d.db.mu.Unlock()
	for _, k := range apiKeyTable.rows.in(&d.db.taskRows) {
		if k.LookupID == lookupID && k.WorkspaceID != uuid.Nil {
			return k.WorkspaceID, nil
		}
	}
	return uuid.Nil, domain.Errorf(domain.CodeNotFound, "API key not found")
}
