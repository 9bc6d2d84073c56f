// Package work measures the work side of once on this machine
// (`once-bench work`): one `once work` running store verifications against
// `once sim` as the marketplace, with `once serve` (API only) and
// `once dispatch` on a fresh database of a private PostgreSQL cluster and
// Redis Streams as the queue, all processes of the built once binary
// (bench/storm starts them).
//
// Scenarios, each repeated and interleaved, every figure read after the
// run from PostgreSQL as the superuser (operations' commit and end times,
// the outbox's attempts) or from the simulator's read-outs:
//
//   - throughput: a backlog of verifications across distinct shops, then
//     the worker: jobs/s beside the slots ÷ latency and the CPU limit, and
//     the same with one slot (the worker before many jobs in flight);
//   - fairness: one workspace's backlog, then another's few jobs: the few
//     jobs' commit→end beside the same jobs alone;
//   - outage: shopify down for a while with shopify and amazon jobs arriving
//     steadily: outcomes, attempts spent, amazon's commit→end beside no
//     outage, and how soon shopify's parked jobs end after it is back;
//   - throttle: one shop's many jobs against a per-shop leaky bucket: its
//     rate beside the quota, the 429s, the other shops' commit→end beside
//     the same load without the throttled shop.
package work
