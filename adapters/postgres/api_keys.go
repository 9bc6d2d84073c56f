package postgres

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// The API keys of one transaction: the api_keys table of
// sql/027_api_keys.sql.

// APIKeyRepository implements ports.APIKeyRepository.
type APIKeyRepository struct{ apiKeyTable }

type apiKeyTable = taskRepo[model.APIKey, apiKeyRow, *apiKeyRow]

var _ = ports.Register(kindRepositories, func(t *Tx) ports.APIKeyRepository {
	return &APIKeyRepository{apiKeyTable{t.db, t.workspace, "API key"}}
})

func (r *APIKeyRepository) Create(ctx context.Context, k model.APIKey) error {
	return r.insert(ctx, toAPIKeyRow(k))
}

// ByLookupID reads through api_keys_lookup_id_key; the workspace is in
// the predicate as well as in the policy, so another workspace's key is
// not found here even by the owner.
func (r *APIKeyRepository) ByLookupID(ctx context.Context, lookupID string) (model.APIKey, error) {
	return selectRow[model.APIKey, apiKeyRow](ctx, r.db, r.noun, "workspace_id = ? AND lookup_id = ?", r.workspace, lookupID)
}

// revokeAPIKey keeps the first revocation's time: revoking twice is the
// same as once.
const revokeAPIKey = `
UPDATE api_keys SET revoked_at = coalesce(revoked_at, ?)
 WHERE workspace_id = ? AND id = ?
RETURNING *`

func (r *APIKeyRepository) Revoke(ctx context.Context, id uuid.UUID, at time.Time) (model.APIKey, error) {
	var row apiKeyRow
	if err := r.db.NewRaw(revokeAPIKey, at, r.workspace, id).Scan(ctx, &row); err != nil {
		return model.APIKey{}, mapError(err, r.noun)
	}
	return row.domain(), nil
}

// markAPIKeyUsed writes a key's last use unless one within every (the
// interval, in microseconds) is stored: of many processes using one key,
// the writes after the first of a minute change no row. A hash key id
// replaces the hash and its key id in the same write (NULL: kept).
const markAPIKeyUsed = `
UPDATE api_keys
   SET last_used_at = ?,
       hash_key_id = coalesce(?, hash_key_id),
       secret_hash = coalesce(?, secret_hash)
 WHERE workspace_id = ? AND id = ? AND revoked_at IS NULL
   AND (last_used_at IS NULL OR last_used_at < ?::timestamptz - make_interval(secs => ? / 1e6))`

func (r *APIKeyRepository) MarkUsed(ctx context.Context, id uuid.UUID, at time.Time, every time.Duration, hashKeyID string, hash []byte) error {
	var keyID *string
	if hashKeyID != "" {
		keyID = &hashKeyID
	} else {
		hash = nil
	}
	_, err := r.db.NewRaw(markAPIKeyUsed, at, keyID, hash, r.workspace, id, at, every.Microseconds()).Exec(ctx)
	return mapError(err, r.noun)
}

// List is newest first by id (UUIDv7), through api_keys_workspace_id_idx.
func (r *APIKeyRepository) List(ctx context.Context, q ports.ListQuery) ([]model.APIKey, error) {
	return listNewest(ctx, r.db, r.workspace, q, r.noun, plain((*apiKeyRow).domain))
}

type apiKeyRow struct {
	bun.BaseModel `bun:"table:api_keys"`

	rowKeys
	LookupID   string     `bun:"lookup_id,notnull"`
	Name       string     `bun:"name,notnull"`
	Scopes     []string   `bun:"scopes,array,type:text[]"`
	CreatedBy  uuid.UUID  `bun:"created_by,type:uuid"`
	Role       string     `bun:"role,notnull"`
	HashKeyID  string     `bun:"hash_key_id,notnull"`
	SecretHash []byte     `bun:"secret_hash,notnull"`
	CreatedAt  *time.Time `bun:"created_at"`
	LastUsedAt *time.Time `bun:"last_used_at"`
	RevokedAt  *time.Time `bun:"revoked_at"`
}

func toAPIKeyRow(k model.APIKey) *apiKeyRow {
	scopes := make([]string, 0, len(k.Scopes))
	for _, s := range k.Scopes {
		scopes = append(scopes, string(s))
	}
	return &apiKeyRow{
		rowKeys: rowKeys{k.ID, k.WorkspaceID}, LookupID: k.LookupID, Name: k.Name, Scopes: scopes,
		CreatedBy: k.CreatedBy, Role: string(k.Role), HashKeyID: k.HashKeyID, SecretHash: k.Hash,
		CreatedAt: timePtr(k.CreatedAt), LastUsedAt: timePtr(k.LastUsedAt), RevokedAt: timePtr(k.RevokedAt),
	}
}

func (r *apiKeyRow) domain() model.APIKey {
	var scopes []model.Scope
	for _, s := range r.Scopes {
		scopes = append(scopes, model.Scope(s))
	}
	return model.APIKey{
		ID: r.ID, WorkspaceID: r.WorkspaceID, LookupID: r.LookupID, Name: r.Name, Scopes: scopes,
		CreatedBy: r.CreatedBy, Role: model.Role(r.Role), HashKeyID: r.HashKeyID, Hash: r.SecretHash,
		CreatedAt: timeVal(r.CreatedAt), LastUsedAt: timeVal(r.LastUsedAt), RevokedAt: timeVal(r.RevokedAt),
	}
}

// APIKeyDirectory implements ports.APIKeyDirectory through the SECURITY
// DEFINER function once_api_key_workspace: the application role learns
// which workspace a lookup id is in, never another workspace's row, and
// needs no workspace context to ask.
type APIKeyDirectory struct{ db bun.IDB }

var _ ports.APIKeyDirectory = (*APIKeyDirectory)(nil)

// NewAPIKeyDirectory returns the directory on db, connected as the
// application role.
func NewAPIKeyDirectory(db bun.IDB) *APIKeyDirectory { return &APIKeyDirectory{db: db} }

const selectAPIKeyWorkspace = `SELECT once_api_key_workspace(?)`

func (d *APIKeyDirectory) WorkspaceOf(ctx context.Context, lookupID string) (uuid.UUID, error) {
	var ws uuid.NullUUID
	if err := d.db.NewRaw(selectAPIKeyWorkspace, lookupID).Scan(ctx, &ws); err != nil {
		return uuid.Nil, mapError(err, "API key")
	}
	if !ws.Valid {
		return uuid.Nil, domain.Errorf(domain.CodeNotFound, "API key not found")
	}
	return ws.UUID, nil
}
