package idempotency

import (
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"

	"github.com/oncehq/once/domain/model"
)

// Completed-response cache defaults: a storm of retries is answered from
// memory for a few minutes, far below the retention of the records.
const (
	DefaultCacheSize = 10000
	DefaultCacheTTL  = 5 * time.Minute
	// MaxCacheTTL keeps the cache well under MinRetention.
	MaxCacheTTL = time.Hour
)

// completedCache holds the completed records of this process's recent scopes,
// bounded in entries (least recently used go first) and in age. Only records
// that are committed and completed enter it, so a hit is an answer the
// database would give too; the fingerprint is compared per caller.
type completedCache struct {
	lru *expirable.LRU[model.IdempotencyScope, model.IdempotencyRecord]
}

// newCompletedCache returns nil (no cache) when size or ttl is zero.
func newCompletedCache(size int, ttl time.Duration) *completedCache {
	if size <= 0 || ttl <= 0 {
		return nil
	}
	return &completedCache{lru: expirable.NewLRU[model.IdempotencyScope, model.IdempotencyRecord](size, nil, ttl)}
}

// get returns the live completed record of scope, if cached.
func (c *completedCache) get(scope model.IdempotencyScope, now time.Time) (model.IdempotencyRecord, bool) {
	if c == nil {
		return model.IdempotencyRecord{}, false
	}
	rec, ok := c.lru.Get(scope)
	if !ok || !rec.ExpiresAt.After(now) {
		return model.IdempotencyRecord{}, false
	}
	return rec, true
}

// put remembers a committed, completed record.
func (c *completedCache) put(rec model.IdempotencyRecord) {
	if c == nil || rec.Status != model.IdempotencyCompleted {
		return
	}
	c.lru.Add(rec.Scope, rec)
}

// len is how many records are cached (for tests).
func (c *completedCache) len() int {
	if c == nil {
		return 0
	}
	return c.lru.Len()
}
