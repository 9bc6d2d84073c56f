package apikeys

import (
	"context"
	"fmt"
	"sync"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"golang.org/x/sync/singleflight"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
)

// Cache defaults: every request with a key would read the database
// twice (its workspace, then its row); a key found valid is remembered
// instead, by lookup id, for DefaultCacheTTL. Another process sees a
// revocation within the TTL; this one at once (docs/api.md#api-keys).
const (
	DefaultCacheSize = 10000
	DefaultCacheTTL  = 5 * time.Second
	// MaxCacheTTL bounds how long a revoked key may keep working through
	// another process.
	MaxCacheTTL = time.Minute
)

// CacheOptions size the cache of keys found valid; a zero Size or TTL
// turns it off.
type CacheOptions struct {
	Size int
	TTL  time.Duration
}

// keyCache remembers keys found valid (never a refusal), each until the
// service's clock passes its TTL, so tests move time instead of waiting.
// nil is no cache.
type keyCache struct {
	ttl time.Duration
	// mu orders put against forget: a read that started before a
	// revocation must not put the revoked key back (generation changed
	// meanwhile); and it guards the entries' usedAt.
	mu         sync.Mutex
	generation uint64
	lru        *lru.Cache[string, *cachedKey]
}

type cachedKey struct {
	key   model.APIKey
	until time.Time
	// usedAt is the last LastUsedAt this process wrote or read.
	usedAt time.Time
}

func newKeyCache(o CacheOptions) *keyCache {
	if o.Size <= 0 || o.TTL <= 0 {
		return nil
	}
	c, err := lru.New[string, *cachedKey](o.Size)
	if err != nil {
		panic(err) // only for a size <= 0
	}
	return &keyCache{ttl: o.TTL, lru: c}
}

// get is the key remembered for lookup, unless its time is up.
func (c *keyCache) get(lookup string, now time.Time) (cachedKey, bool) {
	if c == nil {
		return cachedKey{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.lru.Get(lookup)
	if !ok {
		return cachedKey{}, false
	}
	if !now.Before(e.until) {
		c.lru.Remove(lookup)
		return cachedKey{}, false
	}
	return *e, true
}

// snapshot is taken before the database read whose result put stores.
func (c *keyCache) snapshot() uint64 {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.generation
}

// put remembers k, read from the database, unless a key was revoked in
// this process since snapshot returned gen.
func (c *keyCache) put(gen uint64, k model.APIKey, now time.Time) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.generation == gen {
		c.lru.Add(k.LookupID, &cachedKey{key: k, until: now.Add(c.ttl), usedAt: k.LastUsedAt})
	}
}

// claimUse says whether the caller should write now as the key's last
// use: true at most once per UsedEvery per remembered key.
func (c *keyCache) claimUse(lookup string, now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.lru.Peek(lookup)
	if !ok || now.Sub(e.usedAt) < UsedEvery {
		return false
	}
	e.usedAt = now
	return true
}

// forget drops a key that changed (after the change committed).
func (c *keyCache) forget(lookup string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.generation++
	c.lru.Remove(lookup)
}

// verifying shares one database read among the requests with one key
// that miss the cache at once: a burst from one client with a cold cache
// would otherwise take the pool before its workspace's limits apply. The
// generation is in the read's key, so a request that comes after a
// revocation here never shares a read begun before it. The read is the
// group's, not the first caller's: its client leaving fails no other.
type verifying struct{ group singleflight.Group }

func (v *verifying) read(ctx context.Context, lookup string, gen uint64, read func(context.Context) (model.APIKey, error)) (model.APIKey, error) {
	ch := v.group.DoChan(fmt.Sprintf("%s/%d", lookup, gen), func() (any, error) {
		return read(context.WithoutCancel(ctx))
	})
	select {
	case res := <-ch:
		if res.Err != nil {
			return model.APIKey{}, res.Err
		}
		return res.Val.(model.APIKey), nil
	case <-ctx.Done():
		return model.APIKey{}, domain.Wrap(domain.CodeUnavailable, context.Cause(ctx), "the request ended while its API key was read")
	}
}
