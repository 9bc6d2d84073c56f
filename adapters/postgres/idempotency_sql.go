package postgres

// The statements of IdempotencyStore, in the order Claim runs them. They
// decide correctness under concurrency, so they live here, together.
//
// The port promises two things under concurrency, and the order of the
// statements follows from them:
//
//  1. A retry of a request that already completed always gets the saved
//     response, however many retries arrive at once.
//  2. A duplicate that arrives while its twin still executes learns "in
//     progress" at once: nobody waits on a lock.
//
// Every transaction that may write a scope's record first takes the
// scope's lock: pg_try_advisory_xact_lock on a 64-bit hash of the scope
// (lockIdempotencyScope), never a row lock (a second INSERT of the same
// primary key, or a SELECT ... FOR UPDATE, would wait for the first
// transaction to end, which is the whole business request). It returns at
// once; a transaction holds it until it ends (commit or rollback releases
// it, so a rolled-back claim frees the key at once, and so does a killed
// process: its transaction is aborted with its session). The only other
// writer is the cleaner (deleteExpiredIdempotency), which deletes expired
// rows only and skips row-locked ones. A hash collision between two
// scopes only makes one of them answer "in progress" to a retry, never
// merges them: the row itself is keyed by the full scope.
//
// Claim sends two statements, one after the other (in one round trip on a
// pool of OpenPool, with the transaction's BEGIN: pipelinedConn.sendBatch):
// the try-lock, then the plain read of the row (selectIdempotency). Under
// READ COMMITTED the read takes its snapshot when it starts, after the
// try-lock returned, and a record is only ever committed completed (Complete
// writes it, completed, in the claiming transaction), so:
//
//   - a completed, unexpired row is the answer to replay, whether the lock
//     was taken or not: a thousand concurrent replays never refuse each
//     other, though each takes the lock for a moment if it is free (an
//     earlier version that answered "in progress" whenever the lock was
//     held turned 57-81 % of concurrent replays into false "in progress");
//   - a committed in_progress row (written by a version that claimed with
//     an in_progress row) keeps the scope closed: "in progress";
//   - no row, or an expired one, and the lock not taken: a twin holds the
//     scope right now -> IDEMPOTENCY_REQUEST_IN_PROGRESS, Retry-After 1s,
//     without waiting;
//   - no row, or an expired one, and the lock taken: the scope is ours.
//     No twin can be writing it (we hold the lock), and a twin that
//     completed before we took it committed before our read began, so the
//     read would have seen its row. That is why the read comes after the
//     lock, as a statement of its own: one statement reads the snapshot
//     taken at its start, and a twin committing between that snapshot and
//     the lock would be unseen.
//
// Then, holding the lock:
//
//   - if the read saw an expired row, deleteExpiredIdempotencyRow deletes
//     it. FOR UPDATE NOWAIT: if the cleaner is deleting that very row right
//     now we answer "in progress" instead of waiting for it;
//   - the business statements run, and Complete writes the record, once,
//     completed, with the response (insertCompletedIdempotency), in the
//     same transaction: on a pool of OpenPool it goes with the COMMIT. It
//     has no ON CONFLICT: under the lock no row of the scope can appear,
//     and if one did, the transaction must fail rather than overwrite it.
//
// Cost per request: a replay is the try-lock and a SELECT; a duplicate of
// a request in flight the same; a new request the try-lock, the SELECT and
// the INSERT, one version of one row. No path waits on another transaction.
//
// "now" for expiry is the claim's time from the caller's clock
// (IdempotencyRecord.CreatedAt), falling back to the database clock.
//
// Placeholders are bun's '?'; bun quotes the arguments. The statements
// Claim sends with parameters have numbered ones (...Prepared).

// lockIdempotencyScope is the scope's try-lock. Its argument is
// scopeLockKey's text.
const lockIdempotencyScope = `SELECT pg_try_advisory_xact_lock(hashtextextended(?, 0))`

const selectIdempotency = `
SELECT status, fingerprint_key_id, request_fingerprint,
       response_status, response_headers, response_body,
       created_at, completed_at, expires_at,
       expires_at <= coalesce(?::timestamptz, now()) AS expired
  FROM idempotency_requests
 WHERE workspace_id = ? AND user_id = ? AND method = ? AND path = ? AND idempotency_key = ?`

// confirmReplicated makes a replay's transaction commit as a write does,
// so that its COMMIT waits for the synchronous standby: a completed record
// may be on the primary only (its own commit's wait for the standby was
// cancelled, unconfirmed_commit.go), and a failover would lose it after
// the replay acknowledged it. Streaming replication sends the WAL in
// order, so once the standby has this transaction's commit it has the
// record's, committed before the record could be read. A replay whose
// COMMIT is then not confirmed is itself an unknown outcome (503, retry).
//
// A transactional logical message is the smallest write there is: one
// WAL record, no row, allowed to every role. Without a synchronous
// standby nothing waits for it, so it is not written at all.
const confirmReplicated = `SELECT CASE WHEN current_setting('synchronous_standby_names') <> ''
            THEN pg_logical_emit_message(true, 'once.replay', '') END`

const deleteExpiredIdempotencyRow = `
DELETE FROM idempotency_requests
 WHERE ctid = ANY (ARRAY(
        SELECT ctid FROM idempotency_requests
         WHERE workspace_id = ? AND user_id = ? AND method = ? AND path = ? AND idempotency_key = ?
           AND expires_at <= coalesce(?::timestamptz, now())
           FOR UPDATE NOWAIT))`

// insertCompletedIdempotency writes the record, completed, in the
// claiming transaction, after the business rows, the operation and the
// outbox event: it commits with them, or not at all.
const insertCompletedIdempotency = `
INSERT INTO idempotency_requests (
       workspace_id, user_id, method, path, idempotency_key,
       fingerprint_key_id, request_fingerprint, status,
       response_status, response_headers, response_body,
       created_at, completed_at, expires_at)
VALUES (?, ?, ?, ?, ?, ?, ?, 'completed', ?, ?::jsonb, ?,
        coalesce(?::timestamptz, now()), coalesce(?::timestamptz, now()),
        coalesce(?::timestamptz, now() + interval '48 hours'))`

// deleteExpiredIdempotency removes at most a batch of one workspace's
// expired rows, oldest first, through the (workspace_id, expires_at) index.
// ctid = ANY(ARRAY(...)) makes it a TID scan of exactly the chosen rows;
// SKIP LOCKED leaves a row a Claim is replacing right now to that Claim.
const deleteExpiredIdempotency = `
DELETE FROM idempotency_requests
 WHERE ctid = ANY (ARRAY(
        SELECT ctid FROM idempotency_requests
         WHERE workspace_id = ? AND expires_at < ?
         ORDER BY expires_at
         LIMIT ?
           FOR UPDATE SKIP LOCKED))`

// selectExpiredWorkspaces calls the SECURITY DEFINER discovery function
// (sql/001_foundation.sql); it needs no workspace context and sees ids only.
const selectExpiredWorkspaces = `SELECT once_idempotency_expired_workspaces(?::timestamptz, ?::int)`

// lockIdempotencyPrepared and selectIdempotencyPrepared are Claim's
// statements with numbered parameters ($1...), for pgx. Sent with their
// arguments apart from their text, each is the same text on every
// request, so pgx's statement cache prepares it once per connection and
// PostgreSQL stops parsing it anew for each fresh key. The read is still
// planned for its arguments each time: the application role has
// plan_cache_mode = force_custom_plan (Bootstrap), and a generic plan made
// while the table is small could look the scope up through the expiry
// index instead of the primary key.
var (
	lockIdempotencyPrepared   = numberedPlaceholders(lockIdempotencyScope)
	selectIdempotencyPrepared = numberedPlaceholders(selectIdempotency)
)
