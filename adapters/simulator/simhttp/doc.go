// Package simhttp puts the simulated external systems (the marketplace
// platform, the AI provider, the material source) behind real HTTP, so
// their side effects outlive any process that calls them:
//
//   - Server serves the in-process simulators (adapters/simulator/platformsim,
//     adapters/simulator/aisim, adapters/simulator/materialsim) over HTTP with a durable
//     Ledger: every side effect is appended to a file and fsynced before
//     it happens, and a restarted server reloads it, so a request token
//     executed before a crash (of the caller or of the server) still
//     answers with its first outcome and records no second effect. Faults
//     are injected per call through an admin API: fail, reject, fail after
//     acting, delay, or hold a call open until released. Each platform can
//     have its own latency, outages, and leaky buckets per shop and per
//     platform that answer 429 with Retry-After and X-RateLimit-Scope
//     (shop, or application: the platform's bucket); the server counts the
//     429s, the platform calls in flight per shop and per ordering key,
//     and the effects per shop over time.
//   - Client is the shipped PlatformGateway, AIProvider and MaterialSource
//     over that HTTP API: one attempt per call with a timeout, the request
//     token in the Idempotency-Key header, and answers sorted into
//     transient (CodeUnavailable: retry with the same token; a 429 is a
//     platformerr.Throttled) and permanent errors, never repeating
//     credentials or URLs. A context's ordering key (domain.WithOrderingKey)
//     travels with the call.
//   - Admin reads the ledger and the read-outs and steers the faults and
//     the platforms' settings, for tests, benches and `once sim ledger`.
//
// `once sim` runs the Server; ONCE_SIM_URL points the workers' Client at it.
package simhttp
