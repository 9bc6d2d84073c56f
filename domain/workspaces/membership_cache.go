package workspaces

import (
	"sync"
	"time"

	"github.com/google/uuid"
	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/oncehq/once/domain/model"
)

// Membership cache defaults: every authenticated request checks membership,
// so a burst from one member costs one read per TTL instead of one per
// request. Another process sees a removal within the TTL; this one at once.
const (
	DefaultMembershipCacheSize = 10000
	DefaultMembershipCacheTTL  = 5 * time.Second
	// MaxMembershipCacheTTL bounds how long a removed member may keep
	// access through another process.
	MaxMembershipCacheTTL = time.Minute
)

type membership struct{ workspace, user uuid.UUID }

// membershipCache remembers the role of members recently found, bounded in
// entries and age. Only memberships are cached, never their absence, so a
// member added anywhere gets in at once. Age is read from the service's
// clock, so the bound is the clock's (a test moves it; the wall clock of
// a loaded machine does not decide).
type membershipCache struct {
	lru *lru.Cache[membership, rememberedRole]
	ttl time.Duration
	// mu orders put against forget: a read that started before a removal
	// must not put the removed member back (generation changed meanwhile).
	mu         sync.Mutex
	generation uint64
}

// rememberedRole is a role read from the database, and until when it may
// be used.
type rememberedRole struct {
	role  model.Role
	until time.Time
}

// newMembershipCache returns nil (no cache) when size or ttl is zero.
func newMembershipCache(size int, ttl time.Duration) *membershipCache {
	if size <= 0 || ttl <= 0 {
		return nil
	}
	c, err := lru.New[membership, rememberedRole](size)
	if err != nil {
		panic(err) // only for a size <= 0, excluded above
	}
	return &membershipCache{lru: c, ttl: ttl}
}

func (c *membershipCache) get(workspace, user uuid.UUID, now time.Time) (model.Role, bool) {
	if c == nil {
		return "", false
	}
	key := membership{workspace, user}
	r, ok := c.lru.Get(key)
	if !ok {
		return "", false
	}
	if !now.Before(r.until) {
		c.lru.Remove(key)
		return "", false
	}
	return r.role, true
}

// snapshot is taken before the database read whose result put stores.
func (c *membershipCache) snapshot() uint64 {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.generation
}

// put stores a role read from the database, unless a membership changed in
// this process since snapshot returned gen.
// read is when the read began: the role is remembered ttl from then.
func (c *membershipCache) put(gen uint64, workspace, user uuid.UUID, role model.Role, read time.Time) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.generation == gen {
		c.lru.Add(membership{workspace, user}, rememberedRole{role: role, until: read.Add(c.ttl)})
	}
}

// forget drops a membership that changed (after the change committed).
func (c *membershipCache) forget(workspace, user uuid.UUID) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.generation++
	c.lru.Remove(membership{workspace, user})
}
