package postgres

// The statements of DestinationStates. They decide that of the workers
// racing for one destination's record (its half-open probe, its last
// token) exactly one wins, so they live here, together. They run outside
// any workspace's transaction: the table is the fleet's, not a tenant's
// (sql/020_destination_states.sql).
//
// Placeholders are bun's: '?' in order, '?N' by position.

// swapDestinationState writes ?2 as key ?0's record if its version is
// still ?1, moving the version on, and returns the record written with
// swapped true; otherwise it writes nothing and returns the record as it
// is, swapped false.
//
// Why this shape:
//   - One statement, one round trip: INSERT ... ON CONFLICT DO UPDATE
//     ... WHERE version = ?1 is the compare-and-set. A first write (?1 =
//     0, no row) inserts version 1; of two first writes racing, the
//     second meets the first's row (ON CONFLICT waits for its commit and
//     sees it) and its WHERE fails. Of two writes from one version, the
//     second's WHERE sees the first's new version: the row is locked and
//     re-read by ON CONFLICT DO UPDATE, whatever the statement's snapshot.
//   - A row that is absent while ?1 > 0 (deleted by an operator) is
//     inserted at ?1 + 1, so a later write from ?1 loses as it should.
//   - The second branch reads the record a losing write is told about.
//     It reads the statement's snapshot: a row committed by a racer after
//     the statement began is not in it, and then no row comes back at all;
//     the adapter reads it again in a statement of its own (a rare second
//     round trip).
//   - ?3 is the record's keep in milliseconds (0: NULL, kept for ever),
//     written with it: expires_at is the last write's, as the port says.
const swapDestinationState = `
WITH swapped AS (
    INSERT INTO destination_states AS s (key, version, state, updated_at, expires_at)
    VALUES (?0, ?1::bigint + 1, ?2::jsonb, now(),
            now() + nullif(?3::bigint, 0) * interval '1 millisecond')
    ON CONFLICT (key) DO UPDATE
       SET version = s.version + 1, state = excluded.state, updated_at = now(),
           expires_at = excluded.expires_at
     WHERE s.version = ?1::bigint
    RETURNING s.version, s.state
)
SELECT version, state::text AS state, true AS swapped FROM swapped
UNION ALL
SELECT version, state::text, false FROM destination_states
 WHERE key = ?0 AND NOT EXISTS (SELECT 1 FROM swapped)`

// loadDestinationState is key ?0's record (no row: nobody wrote it).
const loadDestinationState = `SELECT version, state::text AS state FROM destination_states WHERE key = ?`

// sweepDestinationStates deletes up to ?0 records whose keep ran out, the
// oldest first, and returns their keys. A bounded batch, by the partial
// index of sql/032, so a sweep is short whatever the backlog; a record
// written again between the SELECT and the DELETE has a later expires_at
// and is not deleted (the DELETE checks it again on the row it locks).
const sweepDestinationStates = `
DELETE FROM destination_states
 WHERE key IN (SELECT key FROM destination_states
                WHERE expires_at < now()
                ORDER BY expires_at
                LIMIT ?0)
   AND expires_at < now()
RETURNING key`
