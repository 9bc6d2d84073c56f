// Package retention measures what removing old rows costs (`once-bench
// retention`, docs/benchmarks.md "Retention's cost"): the WAL written and the time taken to remove N
// dispatched outbox events by dropping their partition (what the
// RetentionCleaner does since sql/009), the same N by the batched DELETE it
// used before (which it still uses for the default partition), and N
// expired idempotency records by the idempotency cleaner's batched DELETE.
// On a private PostgreSQL cluster, so that pg_current_wal_insert_lsn()
// counts the bench's writes only.
package retention
