// Package storm measures how once holds up in the bad moments it exists
// for, on the machine it runs on, and prints one table against the targets
// it must meet (`once-bench storm`):
//
//   - storm: many concurrent identical requests (one key, one body) against
//     `once serve`: executions, answers by status, latency, and the peak
//     number of database connections of the service's role;
//   - replays: completed keys replayed in concurrent bursts: how many got
//     the saved response;
//   - outage: producers create work while the broker is cut through a TCP
//     proxy for a given time; what was delivered, dead-lettered or lost, and
//     how long the backlog took to drain;
//   - restart: PostgreSQL restarted under load; whether every process
//     recovered unaided, and how long it took.
//
// Everything runs against the real binary: `once serve`, `once dispatch` and
// `once work` are subprocesses started with the caller's environment (so a
// setting such as a pool size applies as it would to a deployment) with the
// bench's database, secrets, broker prefix and listen address laid over it.
// The database is a private PostgreSQL cluster the bench creates (initdb
// into a temporary directory, its own port) and removes: a storm against an
// unbounded pool takes every connection slot of its cluster, and the restart
// scenario restarts it, and neither may happen to a cluster others use.
package storm
