// Package limits keeps one workspace from taking what the others need.
//
// Two limits, both per workspace:
//
//   - A rate of executed writes (Limits.Spend), metered by a
//     ports.RateLimiter: in Redis, shared by every process of the
//     deployment, or in this process on the embedded store. It is spent
//     only by a request that is about to execute: a replay of a completed
//     Idempotency-Key is answered from its saved response and spends
//     nothing, so a client retrying after a timeout is never refused for
//     a request that already succeeded.
//   - A cap on the database work a workspace has in flight in this
//     process (Limits.Enter, Admission): a storm from one workspace holds at
//     most that many of the pool's connections, and the others keep
//     theirs. Over the cap a request waits its turn, first come first
//     served within its workspace, for a slot the work ahead gives back:
//     each holds its slot for milliseconds, so a client with a dozen
//     requests in flight is served, not turned away. The wait is short
//     and bounded (Config.QueueTimeout), and so is the queue
//     (WaitingPerSlot × the cap): past either, or when the request ends
//     first, it is refused, and the client retries after Retry-After as
//     it would after any 429. A waiting request holds no connection.
//
// Both refusals are domain.CodeRateLimited (HTTP 429), with RetryAfter and
// a *Refusal naming the policy, which the HTTP adapter turns into the
// RateLimit and RateLimit-Policy headers.
//
// When the rate limiter's store cannot be asked (Redis down), requests go
// through unmetered: an outage of the limiter must never become an outage
// of the API. It is logged when it starts and ends, counted (Observer), and
// for a short while after a failure the store is not asked at all, so a
// Redis that hangs does not add its timeout to every request.
package limits
