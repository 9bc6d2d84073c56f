package simhttp

import (
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/oncehq/once/adapters/simulator/simcore"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// BucketScope says what one leaky bucket of a platform meters.
type BucketScope string

const (
	// ScopeShop meters each shop of the platform alone (Shopify's
	// per-store bucket).
	ScopeShop BucketScope = "shop"
	// ScopePlatform meters every shop of the platform together (an
	// app-wide limit).
	ScopePlatform BucketScope = "platform"
)

// Outage takes Platform down From after the server started, for For (for
// ever if zero): each of its calls answers 503 and does nothing.
type Outage struct {
	Platform string
	From     time.Duration
	For      time.Duration
}

func (o Outage) covers(platform string, sinceStart time.Duration) bool {
	return o.Platform == platform && sinceStart >= o.From && (o.For == 0 || sinceStart < o.From+o.For)
}

// Throttles count the calls answered 429, per platform and per shop
// (ShopKey).
type Throttles struct {
	PerPlatform map[string]int `json:"per_platform"`
	PerShop     map[string]int `json:"per_shop"`
}

// platforms are the settings each platform is served with beyond the
// global ones (its latency, its outages, its buckets), and the buckets'
// state. It is safe for concurrent use.
type platforms struct {
	clock ports.Clock
	start time.Time

	mu        sync.Mutex
	latency   map[string]time.Duration
	down      map[string]bool
	outages   []Outage
	sizes     map[BucketScope]map[string]simcore.BucketSize
	buckets   map[BucketScope]map[string]*simcore.Bucket
	throttles Throttles
}

func newPlatforms(clock ports.Clock, opts ServerOptions) *platforms {
	return &platforms{
		clock:   clock,
		start:   clock.Now(),
		latency: cloned(opts.PlatformLatency),
		down:    map[string]bool{},
		outages: slices.Clone(opts.Outages),
		sizes: map[BucketScope]map[string]simcore.BucketSize{
			ScopeShop: cloned(opts.ShopBuckets), ScopePlatform: cloned(opts.PlatformBuckets),
		},
		buckets:   map[BucketScope]map[string]*simcore.Bucket{ScopeShop: {}, ScopePlatform: {}},
		throttles: Throttles{PerPlatform: map[string]int{}, PerShop: map[string]int{}},
	}
}

// cloned is a copy of m that can be written to, even if m is nil.
func cloned[K comparable, V any](m map[K]V) map[K]V {
	if m == nil {
		return map[K]V{}
	}
	return maps.Clone(m)
}

// gate is what a platform call meets before the platform acts.
type gate struct {
	down bool
	// wait is how long a throttled call must wait; zero: admitted.
	wait time.Duration
	// scope is, for a throttled call, whose bucket has the longer wait:
	// RateLimitScopeShop or RateLimitScopeApplication (the platform's).
	scope string
	// quota is the shop bucket's "used/capacity", empty without one.
	quota string
}

// admit lets one call to d through the outage and the buckets, pouring it
// into the shop's and the platform's buckets only if both have room: a
// throttled call counts against nothing but the throttle count.
func (p *platforms) admit(d model.Destination) gate {
	now := p.clock.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	g := gate{down: p.isDownLocked(d.System, now)}
	shop := p.bucketLocked(ScopeShop, d.System, ShopKey(d))
	both := []*simcore.Bucket{shop, p.bucketLocked(ScopePlatform, d.System, d.System)}
	if !g.down {
		for i, b := range both {
			if b == nil {
				continue
			}
			if wait := b.Wait(now); wait > g.wait {
				g.wait, g.scope = wait, []string{RateLimitScopeShop, RateLimitScopeApplication}[i]
			}
		}
		if g.wait > 0 {
			p.throttles.PerPlatform[d.System]++
			p.throttles.PerShop[ShopKey(d)]++
		} else {
			for _, b := range both {
				if b != nil {
					b.Pour(now)
				}
			}
		}
	}
	if shop != nil {
		g.quota = fmt.Sprintf("%d/%d", shop.Used(now), shop.Capacity())
	}
	return g
}

func (p *platforms) isDownLocked(platform string, now time.Time) bool {
	if p.down[platform] {
		return true
	}
	for _, o := range p.outages {
		if o.covers(platform, now.Sub(p.start)) {
			return true
		}
	}
	return false
}

// bucketLocked is the bucket of key in scope, made on first use; nil if
// the platform has no bucket of that scope.
func (p *platforms) bucketLocked(scope BucketScope, platform, key string) *simcore.Bucket {
	size, ok := p.sizes[scope][platform]
	if !ok {
		return nil
	}
	b := p.buckets[scope][key]
	if b == nil {
		b = simcore.NewBucket(size)
		p.buckets[scope][key] = b
	}
	return b
}

// latencyOf is the platform's latency, or fallback if it has none of its own.
func (p *platforms) latencyOf(platform string, fallback time.Duration) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	if d, ok := p.latency[platform]; ok {
		return d
	}
	return fallback
}

// update changes the settings under the lock.
func (p *platforms) update(change func(p *platforms)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	change(p)
}

// setBucket sizes (or, with nil, removes) the platform's bucket of scope;
// its buckets start empty.
func (p *platforms) setBucket(scope BucketScope, platform string, size *simcore.BucketSize) {
	p.update(func(p *platforms) {
		if size == nil {
			delete(p.sizes[scope], platform)
		} else {
			p.sizes[scope][platform] = *size
		}
		maps.DeleteFunc(p.buckets[scope], func(key string, _ *simcore.Bucket) bool {
			return model.ParseDestination(key).System == platform
		})
	})
}

// counted returns the throttle counts.
func (p *platforms) counted() Throttles {
	p.mu.Lock()
	defer p.mu.Unlock()
	return Throttles{PerPlatform: maps.Clone(p.throttles.PerPlatform), PerShop: maps.Clone(p.throttles.PerShop)}
}

// resetCounters forgets the throttle counts; the buckets keep their levels.
func (p *platforms) resetCounters() {
	p.update(func(p *platforms) {
		p.throttles = Throttles{PerPlatform: map[string]int{}, PerShop: map[string]int{}}
	})
}

// ShopKey names a shop in the throttle counts and the effects read-out:
// "platform/shop", as model.Destination prints.
func ShopKey(d model.Destination) string { return d.String() }

// InFlightShop and InFlightOrdering name a shop and an ordering key in the
// concurrency read-out, which holds both.
func InFlightShop(d model.Destination) string { return "shop:" + ShopKey(d) }

// InFlightOrdering: see InFlightShop.
func InFlightOrdering(orderingKey string) string { return "ordering:" + orderingKey }
