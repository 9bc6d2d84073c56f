package destinations

import (
	"cmp"
	"math"
	"time"
)

// Quota is a destination's pace: at most Concurrency calls at once across
// the fleet of workers (0: no cap) and Rate calls per second with bursts
// of Burst (Rate 0: no rate).
type Quota struct {
	Concurrency int
	Rate        float64
	// Burst is how many calls may go at once after an idle spell (< 1:
	// one second's worth of Rate, at least one).
	Burst int
}

// burst is the bucket's size for q.
func (q Quota) burst() float64 {
	if q.Burst >= 1 {
		return float64(q.Burst)
	}
	return max(1, math.Ceil(q.Rate))
}

// BreakerConfig is the shape of each destination's circuit breaker.
type BreakerConfig struct {
	// Failures is how many consecutive upstream failures open it (default 5).
	Failures int
	// Cooldown is its first open period (default 5s), doubling per failed
	// probe...
	Cooldown time.Duration
	// MaxCooldown ...up to this (default 30s).
	MaxCooldown time.Duration
	// ProbeLease is how long the half-open probe a worker took is its own
	// (default DefaultProbeLease): a worker killed while probing never
	// answers, and after this another worker probes.
	ProbeLease time.Duration
}

// Defaults of the fleet's state.
const (
	// DefaultProbeLease is BreakerConfig.ProbeLease's default: longer
	// than a call takes, short beside an outage.
	DefaultProbeLease = 30 * time.Second
	// DefaultCallLease is Config.CallLease's default: as long as a
	// call's timeout (an answer's headers within 30 s), so that a killed
	// worker's calls stop counting against a cap within half a minute: a
	// webhook endpoint's 8 deliveries in flight in a worker killed -9
	// held the endpoint for its restart's first 2 minutes at 2 minutes.
	// A call that outlives it (a slow body) stops counting a little early.
	DefaultCallLease = 30 * time.Second
	// DefaultStateTTL is Config.StateTTL's default.
	DefaultStateTTL = time.Second
	// DefaultStateTimeout is Config.StateTimeout's default.
	DefaultStateTimeout = 500 * time.Millisecond
)

// Config is the shape of a Gate.
type Config struct {
	// Systems holds the quota of each system (model.Destination.System:
	// "shopify", "amazon", "ai", "material", ...), which each of its
	// accounts gets on its own.
	Systems map[string]Quota
	// Fallback is the quota of a system not listed.
	Fallback Quota
	// Platforms are the systems whose accounts one service answers for,
	// which can fail as a whole (a marketplace): besides each account's
	// breaker the platform has one, which opens when several of its
	// accounts fail with no answer from any between, so an outage of
	// the platform stops the calls to all of its shops at once. The
	// others (an AI provider, a seller's web server, a webhook receiver)
	// fail one account at a time and have none: one dead account must not
	// stop its neighbours.
	Platforms map[string]bool
	// Applications holds, for a platform, the quota of our application
	// as a whole, which every account's calls spend together besides
	// their own: none if it has no rate (the platform limits each account
	// only); a platform without an entry starts at one account's quota
	// and grows from there until a 429 or unpaced (newStartingPace).
	// Either way a 429 the platform says is the application's
	// (platformerr.ScopeApplication) paces every one of its accounts.
	Applications map[string]Quota
	Breaker      BreakerConfig
	// IdleAfter is how long a destination goes unused (and untroubled)
	// before the gate forgets it (default 10m), so a worker serving
	// millions of shops keeps only those it serves now.
	IdleAfter time.Duration
	// StateTTL is how long a gate uses the fleet's state of a destination
	// as it last read it before reading it again (default 1s): the most a
	// worker lags behind a pause, a resume or a breaker opened by another
	// when it takes no token (a destination without a rate); a call that
	// takes a token writes, and so meets the current state at once.
	StateTTL time.Duration
	// StateTimeout bounds one read or write of the fleet's state (default
	// 500ms); past it the call is refused for a second (WhyUnknown).
	StateTimeout time.Duration
	// CallLease is how long a call counts against its destination's cap
	// of calls at once across the fleet unless it ends first (default
	// DefaultCallLease): a worker killed during calls never says they
	// ended. Each call its worker starts to the destination renews the
	// leases of that worker's calls in flight there; a call that outlives
	// its lease with no other call of its worker starting meanwhile stops
	// counting, and the fleet may then hold one more than the cap.
	CallLease time.Duration
}

// withDefaults fills what cfg leaves unset.
func (cfg Config) withDefaults() Config {
	cfg.Breaker.Failures = cmp.Or(max(cfg.Breaker.Failures, 0), 5)
	cfg.Breaker.Cooldown = cmp.Or(max(cfg.Breaker.Cooldown, 0), 5*time.Second)
	cfg.Breaker.MaxCooldown = max(cmp.Or(max(cfg.Breaker.MaxCooldown, 0), 30*time.Second), cfg.Breaker.Cooldown)
	cfg.Breaker.ProbeLease = cmp.Or(max(cfg.Breaker.ProbeLease, 0), DefaultProbeLease)
	cfg.IdleAfter = cmp.Or(max(cfg.IdleAfter, 0), 10*time.Minute)
	cfg.StateTTL = cmp.Or(max(cfg.StateTTL, 0), DefaultStateTTL)
	cfg.StateTimeout = cmp.Or(max(cfg.StateTimeout, 0), DefaultStateTimeout)
	cfg.CallLease = cmp.Or(max(cfg.CallLease, 0), DefaultCallLease)
	return cfg
}

// quota is the quota of a system.
func (cfg Config) quota(system string) Quota {
	if q, ok := cfg.Systems[system]; ok {
		return q
	}
	return cfg.Fallback
}

// DefaultConfig holds per-platform quotas from the platforms' published
// limits, per seller (the destination's account). Where a platform
// publishes no per-seller figure the value is a cautious one: the first
// 429 teaches the gate the real pace anyway. The concurrency caps keep a
// slow seller from holding many of a worker's slots.
func DefaultConfig() Config {
	return Config{
		Systems: map[string]Quota{
			// Shopify's REST Admin API: a leaky bucket of 40 requests per
			// app and store, leaking 2 a second (shopify.dev, "API rate
			// limits"; Plus stores have 80 and 4/s: configure those
			// where all stores are Plus).
			"shopify": {Concurrency: 10, Rate: 2, Burst: 40},
			// Amazon's SP-API: a token bucket per operation and selling
			// partner; the Listings Items operations, for one, are 5
			// requests a second with a burst of 10
			// (developer-docs.amazon.com, "Usage Plans and Rate Limits").
			"amazon": {Concurrency: 10, Rate: 5, Burst: 10},
			// TikTok Shop's Open API limits each app (partners report
			// about 50 requests a second) and publishes no per-shop
			// figure: a fifth of that per shop.
			"tiktok": {Concurrency: 10, Rate: 10, Burst: 20},
			// Shopee's Open Platform limits per partner and shop per API
			// without a published figure: a cautious pace.
			"shopee": {Concurrency: 10, Rate: 5, Burst: 10},
			// Lazada's Open Platform limits per app and seller per API
			// without a published figure: a cautious pace.
			"lazada": {Concurrency: 10, Rate: 5, Burst: 10},
			// The AI provider's limits are per account and depend on its
			// tier; a call takes seconds, so the cap on calls at once is
			// what matters, and its 429s teach the rate.
			"ai": {Concurrency: 32},
			// A material source is somebody's web server: a few downloads
			// at once per host, as a browser would.
			"material": {Concurrency: 8},
			// A webhook receiver (an endpoint) is somebody's web server
			// too: a slow one holds a few of a worker's slots, not the
			// deliveries to every other endpoint.
			"webhook": {Concurrency: 8},
		},
		Fallback:  Quota{Concurrency: 64},
		Platforms: map[string]bool{"shopify": true, "amazon": true, "tiktok": true, "shopee": true, "lazada": true},
		// Shopify limits each app per store and publishes no bucket of
		// the app across stores: its shops' calls share a breaker, no
		// pace. The others' application buckets are learnt (a slow start
		// from one shop's quota, then their 429s).
		Applications: map[string]Quota{"shopify": {}},
		Breaker:      BreakerConfig{Failures: 5, Cooldown: 5 * time.Second, MaxCooldown: 30 * time.Second},
		IdleAfter:    10 * time.Minute,
	}
}

// WithinSlots caps every quota's calls at once (and the fallback's) at
// half of slots, at least one: a destination that hangs, whatever its
// quota, holds at most half of a worker's slots (of the fleet's, since
// the cap counts every worker's calls) until its breaker opens,
// and the other destinations' jobs keep the rest. The default caps are
// well below half of a worker's default slots: only a worker given few
// sees the difference.
func (cfg Config) WithinSlots(slots int) Config {
	most := max(1, slots/2)
	within := func(q Quota) Quota {
		if q.Concurrency == 0 || q.Concurrency > most {
			q.Concurrency = most
		}
		return q
	}
	systems := make(map[string]Quota, len(cfg.Systems))
	for system, q := range cfg.Systems {
		systems[system] = within(q)
	}
	cfg.Systems, cfg.Fallback = systems, within(cfg.Fallback)
	return cfg
}
