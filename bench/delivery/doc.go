// Package delivery measures the outbox Dispatcher on the machine it
// runs on, against real PostgreSQL and real brokers. It backs
// `once-bench drain`, `once-bench steady` and `once-bench fairness`.
//
//   - drain: a backlog preloaded into a fresh database is drained by K
//     Dispatchers, each a process of its own (this binary, re-executed),
//     and, in the same run, by the raw claim and mark statements of the
//     Dispatcher issued straight from Go (no publish): the limit the
//     Dispatcher is held against.
//   - steady: a producer process commits events at a fixed rate while K
//     Dispatcher processes publish them to Redis; a consumer in the bench
//     reads the stream and records commit → publish latency.
//   - fairness: steady's latency for the quiet workspaces while one
//     other workspace holds a large backlog, beside the same run without
//     it: what one tenant's backlog does to the others.
//
// Every measurement bootstraps its own uniquely named database and roles,
// and its own broker topic prefix, and removes them afterwards, also when
// it fails or is interrupted. Repetitions are interleaved.
package delivery
