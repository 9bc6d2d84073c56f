// Package destinations paces the calls a worker makes to the systems
// outside (a marketplace's seller, the AI provider, a material source's
// host) and keeps one destination's trouble from reaching the others.
//
// A destination is a model.Destination: a system and, within it, the
// account whose quota a call spends. Marketplaces limit each seller, not
// each of their clients' processes: Shopify leaks a seller's bucket at
// 2 requests a second, Amazon's SP-API refills a seller's bucket for an
// operation at a few a second. A worker that sends a seller's jobs as fast
// as it has slots only collects 429s, and each 429 is a call wasted and a
// job delayed. So the Gate keeps, per destination:
//
//   - a pace: a token bucket at its system's quota (Config), learned down
//     when the destination answers 429 (and no call at all until its
//     Retry-After has passed), and back up as its calls succeed, never
//     beyond the quota; a concurrency cap beside it;
//   - a circuit breaker: consecutive transient failures (5xx, timeouts,
//     refused connections) open it, and while it is open no call goes to
//     that destination; after a cooldown one probe call is let through,
//     which closes it or opens it again for longer.
//
// Both are per destination because an outage or a throttle is: one
// marketplace down, or one seller out of quota, must not hold the jobs
// headed anywhere else. The Gate does no waiting itself: Try answers at
// once, with a Permit or with the earliest time worth asking again, so the
// worker can give a waiting job's slot back (deferring it durably) instead
// of sleeping on it.
//
// What the Gate learns is the fleet's, not one worker's: it keeps it in
// ports.DestinationStates (PostgreSQL, Redis, or memory for one process),
// where every worker reads and writes the same record per destination by
// compare-and-set. So the workers spend one bucket between them, exactly
// one of them probes a half-open breaker per cooldown (a lease, which a
// killed worker's runs out), and a pause written through one is obeyed by
// all. A platform (Config.Platforms) has a record of its own too: its
// breaker, and the bucket of our application's quota, which every shop's
// call spends besides its shop's and which a 429 of the application's
// quota (platformerr.ScopeApplication) slows. A destination's calls in
// flight are counted against its cap across the fleet too, each a lease in
// its record (calls). Only a worker's counters, and which of the calls
// in flight are its own, stay in its memory.
package destinations
