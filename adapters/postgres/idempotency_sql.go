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
// So Claim first reads the row with a plain SELECT (selectIdempotency), no
// lock of any kind. Under READ COMMITTED the statement sees every committed
// row, and a record is only ever committed completed (Complete runs in the
// claiming transaction), so:
//
//   - a completed, unexpired row is the answer to replay: Claim returns it
//     and is done. Replays take no lock, so a thousand concurrent replays
//     never see each other (taking the lock first, as an earlier version
//     did, turned 57-81 % of concurrent replays into false "in progress");
//   - a committed in_progress row (a use case broke the rule above) keeps
//     the scope closed: "in progress";
//   - no row, or an expired one: the scope is free or being claimed by a
//     twin right now, which the plain read cannot see (its row is not
//     committed). Only then does Claim take the scope's lock.
//
// The lock is pg_try_advisory_xact_lock on a 64-bit hash of the scope
// (claimIdempotencyScope), never a row lock: a second INSERT of the same
// primary key, or a SELECT ... FOR UPDATE, would wait for the first
// transaction to end, which is the whole business request.
//
//   - false: another transaction holds the scope right now -> IDEMPOTENCY_
//     REQUEST_IN_PROGRESS, Retry-After 1s, without waiting;
//   - true: we hold the scope until our transaction ends (commit or rollback
//     releases it, so a rolled-back claim frees the key at once).
//
// Every writer of a scope goes through that lock, so while we hold it no
// other transaction can insert or complete the row; the only other writer
// is the cleaner (deleteExpiredIdempotency), which deletes expired rows only
// and skips locked ones. A hash collision between two different scopes only
// makes one of them answer "in progress" to a retry, never merges them: the
// row itself is keyed by the full scope.
//
// Then, holding the lock:
//
//   - if the read saw an expired row, deleteExpiredIdempotencyRow deletes
//     it. FOR UPDATE NOWAIT: if the cleaner is deleting that very row right
//     now we answer "in progress" instead of waiting for it;
//   - insertIdempotency writes the row as in_progress in our transaction,
//     invisible to everyone else until commit, and Complete marks it
//     completed in the same transaction. ON CONFLICT DO NOTHING covers the
//     one race the plain read leaves open: a twin claimed, completed and
//     committed between our read and our lock. Its row is committed (we
//     hold the lock, so no uncommitted twin row can exist and the insert
//     never waits); Claim reads it again and replays it.
//
// Cost per request: a replay is one SELECT; a duplicate of a request in
// flight is a SELECT and a failed try-lock; a new request is a SELECT, the
// lock and the INSERT. No path waits on another transaction. The read, the
// lock and the INSERT go to PostgreSQL as one statement
// (readOrClaimIdempotency).
//
// "now" for expiry is the claim's time from the caller's clock
// (IdempotencyRecord.CreatedAt), falling back to the database clock.
//
// Placeholders are bun's '?'; bun quotes the arguments.

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

const claimIdempotencyScope = `SELECT pg_try_advisory_xact_lock(hashtextextended(?, 0))`

// readOrClaimIdempotency is, in one statement and so one round trip, what
// a new request used to send as three: selectIdempotency; then, only where
// the scope has no row, claimIdempotencyScope; then, only if that took the
// lock, insertIdempotency. It always returns one row: the record's columns
// (NULL when there is none), locked (NULL when the lock was not tried) and
// inserted (NULL unless our row was inserted).
//
//   - The try-lock is in a CTE that uses a volatile function, so it is
//     materialized and runs once, and CASE runs it only in its branch: a
//     replay or an in-progress twin still takes no lock.
//   - The INSERT reads the lock's CTE, so it runs after the lock is held,
//     and only when it was taken and there was no row. An expired row is
//     replaced as before, by deleteExpiredIdempotencyRow and
//     insertIdempotency after this statement (found, expired, locked).
//   - The race the separate statements left open is the same here: every
//     part of one statement reads the snapshot taken at its start, so a
//     twin committing between that snapshot and our lock is unseen by the
//     read; the INSERT's ON CONFLICT DO NOTHING still meets its row, and
//     inserted stays NULL, so Claim reads again, as before.
//
// Arguments: selectIdempotency's (now and the scope), the lock key, then
// insertIdempotency's. The casts in the INSERT's select list give those
// arguments their types: they are sent as parameters (readOrClaimPrepared),
// and a parameter in a select list has none of its own.
const readOrClaimIdempotency = `
WITH found AS (` + selectIdempotency + `),
claim AS (
  SELECT CASE WHEN NOT EXISTS (SELECT 1 FROM found) OR (SELECT expired FROM found)
              THEN pg_try_advisory_xact_lock(hashtextextended(?, 0))
         END AS locked
),
inserted AS (
  INSERT INTO idempotency_requests (
         workspace_id, user_id, method, path, idempotency_key,
         fingerprint_key_id, request_fingerprint, status, created_at, expires_at)
  SELECT ?::uuid, ?::uuid, ?::text, ?::text, ?::uuid, ?::text, ?::bytea, 'in_progress',
         coalesce(?::timestamptz, now()),
         coalesce(?::timestamptz, now() + interval '48 hours')
    FROM claim
   WHERE claim.locked AND NOT EXISTS (SELECT 1 FROM found)
  ON CONFLICT (workspace_id, user_id, method, path, idempotency_key) DO NOTHING
  RETURNING true AS inserted
)
SELECT found.*, claim.locked, (SELECT inserted FROM inserted) AS inserted
  FROM claim LEFT JOIN found ON true`

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
        coalesce(?::timestamptz, now() + interval '48 hours'))
ON CONFLICT (workspace_id, user_id, method, path, idempotency_key) DO NOTHING`

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

// readOrClaimPrepared is readOrClaimIdempotency with numbered parameters
// ($1...), for pgx. Sent with its arguments apart from its text, the
// statement is the same text on every request, so pgx's statement cache
// prepares it once per connection and PostgreSQL stops parsing it anew
// for each fresh key. It is still planned for its arguments each time:
// the application role has plan_cache_mode = force_custom_plan (Bootstrap),
// and a generic plan made while the table is small would look the scope
// up through the expiry index instead of the primary key.
var readOrClaimPrepared = numberedPlaceholders(readOrClaimIdempotency)
