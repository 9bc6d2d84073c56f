package idempotency

import (
	"sync/atomic"
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
//
// "The database would give it too" holds only while the database is the one
// the record was read from: after a failover to a standby that never
// received the record's commit (asynchronous replication), the database no
// longer has it, and a retry must execute again rather than replay. So
// every entry carries the store's epoch (ports.StoreEpoch) it was read or
// written in, and only an entry of the current epoch is ever answered; the
// first lookup that sees the epoch move on empties the cache. A hit is
// answered only once the store confirmed its epoch (StoreEpoch.Confirm):
// behind a pooler the process may hear of a new server from nothing else.
type completedCache struct {
	lru *expirable.LRU[model.IdempotencyScope, cachedRecord]
	// epoch is the newest epoch a lookup saw.
	epoch atomic.Uint64
}

// cachedRecord is a completed record and the store's epoch at the start of
// the request that read or wrote it.
type cachedRecord struct {
	rec   model.IdempotencyRecord
	epoch uint64
}

// newCompletedCache returns nil (no cache) when size or ttl is zero.
func newCompletedCache(size int, ttl time.Duration) *completedCache {
	if size <= 0 || ttl <= 0 {
		return nil
	}
	return &completedCache{lru: expirable.NewLRU[model.IdempotencyScope, cachedRecord](size, nil, ttl)}
}

// get returns the live completed record of scope, if cached in epoch.
func (c *completedCache) get(scope model.IdempotencyScope, now time.Time, epoch uint64) (model.IdempotencyRecord, bool) {
	if c == nil {
		return model.IdempotencyRecord{}, false
	}
	if seen := c.epoch.Load(); seen != epoch && c.epoch.CompareAndSwap(seen, epoch) {
		// Nothing cached before belongs to this store any more.
		c.lru.Purge()
	}
	e, ok := c.lru.Get(scope)
	if !ok {
		return model.IdempotencyRecord{}, false
	}
	if e.epoch != epoch {
		// Put by a request that began before the epoch moved on.
		c.lru.Remove(scope)
		return model.IdempotencyRecord{}, false
	}
	if !e.rec.ExpiresAt.After(now) {
		return model.IdempotencyRecord{}, false
	}
	return e.rec, true
}

// put remembers a committed, completed record, read or written by a request
// that began in epoch.
func (c *completedCache) put(rec model.IdempotencyRecord, epoch uint64) {
	if c == nil || rec.Status != model.IdempotencyCompleted {
		return
	}
	c.lru.Add(rec.Scope, cachedRecord{rec: rec, epoch: epoch})
}
