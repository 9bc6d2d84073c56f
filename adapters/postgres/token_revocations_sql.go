package postgres

// The statements of TokenRevocations. They run outside any workspace's
// transaction, each on its own: the tables are the fleet's
// (sql/028_token_revocations.sql).
//
// Placeholders are bun's: '?' in order, '?N' by position.

// revokeToken records a token; one recorded already stays as it is.
const revokeToken = `
INSERT INTO revoked_tokens (token_id, expires_at) VALUES (?, ?)
ON CONFLICT (token_id) DO NOTHING`

// revokeTokensBefore records a cutoff, keeping the later of two: an
// earlier one changes nothing (and is not recorded again).
const revokeTokensBefore = `
INSERT INTO token_cutoffs AS c (subject, not_before) VALUES (?, ?)
ON CONFLICT (subject) DO UPDATE
   SET not_before = excluded.not_before, recorded_at = now()
 WHERE c.not_before < excluded.not_before`

// revocationChanges is what was recorded at or after ?0, and the cursor of
// the next read: this statement's now() less a minute.
//
// Why the minute: recorded_at is the writing transaction's start, and it
// commits a little later. A row this read does not see (committed after
// its snapshot) began before the read's now() by at most as long as its
// transaction lasted: one statement, milliseconds; a minute covers one
// that waited on a lock. Rows read again are applied again, which is
// harmless. The one-row cursor branch makes the read one round trip
// whatever the tables hold.
const revocationChanges = `
SELECT 'token' AS kind, token_id AS id, expires_at AS at FROM revoked_tokens WHERE recorded_at >= ?0
UNION ALL
SELECT 'cutoff', subject, not_before FROM token_cutoffs WHERE recorded_at >= ?0
UNION ALL
SELECT 'cursor', '', now() - interval '1 minute'`

// sweepRevokedTokens deletes up to ?1 tokens that expired before ?0.
const sweepRevokedTokens = `
DELETE FROM revoked_tokens
 WHERE token_id IN (SELECT token_id FROM revoked_tokens WHERE expires_at < ? LIMIT ?)`
