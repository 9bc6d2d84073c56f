package postgres

// The statements of IdempotencyStore, in the order Claim runs them. They
// decide correctness under concurrency, so they live here, together.
//
// Why an advisory lock first: the port promises that a concurrent duplicate
// learns "in progress" at once. A row lock cannot give that: a second INSERT
// of the same primary key, or a SELECT ... FOR UPDATE, waits for the first
// transaction to end, which is the whole business request. So Claim first
// takes pg_try_advisory_xact_lock on a 64-bit hash of the scope:
//
//   - false: another transaction holds the scope right now -> IDEMPOTENCY_
//     REQUEST_IN_PROGRESS, Retry-After 1s, without waiting;
//   - true: we hold the scope until our transaction ends (commit or
//     rollback releases it, so a rolled-back claim frees the key at once).
//
// Every writer of a scope goes through that lock, so while we hold it no
// other transaction can insert or complete the row; the only other writer
// is the cleaner (deleteExpiredIdempotency), which deletes expired rows only
// and skips locked ones. A hash collision between two different scopes only
// makes one of them wait for a retry, never merges them: the row itself is
// keyed by the full scope.
//
// Then, holding the lock:
//
//   - selectIdempotency: a completed, unexpired row is the answer to replay
//     (Claim returns it, the caller compares fingerprints);
//   - an expired row is deleted (deleteExpiredIdempotencyRow) and replaced.
//     FOR UPDATE NOWAIT: if the cleaner is deleting that very row right now
//     we answer "in progress" instead of waiting for it;
//   - no row: insertIdempotency writes it as in_progress in our transaction,
//     invisible to everyone else until commit, and Complete marks it
//     completed in the same transaction.
//
// "now" for expiry is the claim's time from the caller's clock
// (IdempotencyRecord.CreatedAt), falling back to the database clock.
//
// Placeholders are bun's '?'; bun quotes the arguments.

const claimIdempotencyScope = `SELECT pg_try_advisory_xact_lock(hashtextextended(?, 0))`

const selectIdempotency = `
SELECT status, fingerprint_key_id, request_fingerprint,
       response_status, response_headers, response_body,
       created_at, completed_at, expires_at,
       expires_at <= coalesce(?::timestamptz, now()) AS expired
  FROM idempotency_requests
 WHERE workspace_id = ? AND user_id = ? AND method = ? AND path = ? AND idempotency_key = ?`

const deleteExpiredIdempotencyRow = `
DELETE FROM idempotency_requests
 WHERE ctid = ANY (ARRAY(
        SELECT ctid FROM idempotency_requests
         WHERE workspace_id = ? AND user_id = ? AND method = ? AND path = ? AND idempotency_key = ?
           AND expires_at <= coalesce(?::timestamptz, now())
           FOR UPDATE NOWAIT))`

const insertIdempotency = `
INSERT INTO idempotency_requests (
       workspace_id, user_id, method, path, idempotency_key,
       fingerprint_key_id, request_fingerprint, status, created_at, expires_at)
VALUES (?, ?, ?, ?, ?, ?, ?, 'in_progress',
        coalesce(?::timestamptz, now()),
        coalesce(?::timestamptz, now() + interval '48 hours'))`

// completeIdempotency runs in the claiming transaction, after the business
// rows, the operation and the outbox event are written: the record commits
// completed, or not at all.
const completeIdempotency = `
UPDATE idempotency_requests
   SET status = 'completed', response_status = ?, response_headers = ?::jsonb,
       response_body = ?, completed_at = coalesce(?::timestamptz, now())
 WHERE workspace_id = ? AND user_id = ? AND method = ? AND path = ? AND idempotency_key = ?
   AND status = 'in_progress'`

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
