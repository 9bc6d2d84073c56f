package app

import (
	"log/slog"

	"github.com/oncehq/once/domain/apikeys"
	"github.com/oncehq/once/domain/keyring"
	"github.com/oncehq/once/ports"
)

// newAPIKeys is the API key service: keys hashed under keys derived from
// ONCE_IDEMPOTENCY_SECRETS (apikeys.Hasher says why that keyring), found
// valid keys remembered as memberships are (ONCE_AUTH_CACHE_SIZE and
// ONCE_AUTH_CACHE_TTL: one bound for a removed member and a revoked key).
func newAPIKeys(uow ports.UnitOfWork, dir ports.APIKeyDirectory, clock ports.Clock, ids ports.IDGenerator,
	log *slog.Logger, cfg SecretsConfig,
) (*apikeys.Service, error) {
	keys, err := keyring.Parse(cfg.IdempotencySecrets, "fingerprint secret")
	if err != nil {
		return nil, err
	}
	hasher, err := apikeys.NewHasher(keys)
	if err != nil {
		return nil, err
	}
	return apikeys.NewService(apikeys.Deps{
		UoW: uow, Directory: dir, Hasher: hasher, Clock: clock, IDs: ids, Log: log,
		Cache: apikeys.CacheOptions{Size: cfg.AuthCacheSize, TTL: cfg.AuthCacheTTL},
	}), nil
}
