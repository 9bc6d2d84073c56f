package app

import (
	"errors"
	"time"

	"github.com/oncehq/once/domain/idempotency"
)

// IdempotencyConfig is how long idempotency keys are kept, and the
// completed responses kept in memory so that retries of a finished
// request cost no database work (0 disables).
type IdempotencyConfig struct {
	IdempotencyRetention time.Duration `env:"ONCE_IDEMPOTENCY_RETENTION"`
	IdempotencyCacheSize int           `env:"ONCE_IDEMPOTENCY_CACHE_SIZE"`
	IdempotencyCacheTTL  time.Duration `env:"ONCE_IDEMPOTENCY_CACHE_TTL"`
}

func defaultIdempotencyConfig() IdempotencyConfig {
	return IdempotencyConfig{
		IdempotencyRetention: idempotency.DefaultRetention,
		IdempotencyCacheSize: idempotency.DefaultCacheSize, IdempotencyCacheTTL: idempotency.DefaultCacheTTL,
	}
}

// Validate checks the retention and the cache.
func (c IdempotencyConfig) Validate() error {
	return errors.Join(
		invalidIf(c.IdempotencyRetention < idempotency.MinRetention, "ONCE_IDEMPOTENCY_RETENTION=%s is below the minimum of %s: clients may retry for a day", c.IdempotencyRetention, idempotency.MinRetention),
		invalidIf(outside(c.IdempotencyCacheSize, 0, 1_000_000), "ONCE_IDEMPOTENCY_CACHE_SIZE=%d must be between 0 (off) and 1000000", c.IdempotencyCacheSize),
		invalidIf(outside(c.IdempotencyCacheTTL, 0, idempotency.MaxCacheTTL), "ONCE_IDEMPOTENCY_CACHE_TTL=%s must be between 0 (off) and %s", c.IdempotencyCacheTTL, idempotency.MaxCacheTTL),
	)
}

func (IdempotencyConfig) settings() settingGroup { return idempotencySettings }

var idempotencySettings = settingGroup{
	title: "Idempotency",
	vars: map[string]setting{
		"ONCE_IDEMPOTENCY_RETENTION": {
			help: "how long an idempotency key is kept (at least 24h)",
			doc:  "how long records are kept; below `24h` is refused",
		},
		"ONCE_IDEMPOTENCY_CACHE_SIZE": {
			help: "completed idempotent responses kept in memory for replays (0: off)",
			doc:  "completed idempotent responses each process keeps in memory for replays (least recently used go first; each holds one saved response); `0` turns the cache off",
		},
		"ONCE_IDEMPOTENCY_CACHE_TTL": {
			help: "and for at most this long",
			doc:  "how long one stays there (0 to `1h`, far below the retention; `0` turns the cache off)",
		},
	},
}
