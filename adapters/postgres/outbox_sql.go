package postgres

// lockOrderingKeys takes, for the transaction, the advisory lock of each
// distinct ordering key ?1 of workspace ?0, in one order (so two appends
// of the same keys cannot deadlock), and only then draws ?2 values of
// outbox_events_key_seq, in order, for the events in the order they are
// inserted.
//
// Why: key_seq must follow commit order within a key, and a sequence
// alone follows the order values were drawn in (sql/021 says why that is
// not enough). The lock is held until the transaction ends, so a second
// writer of the key draws its values only after the first has committed
// or rolled back. The locks are taken in a MATERIALIZED CTE that the
// SELECT of the values depends on (count(*) > 0 over it), so every lock
// is held before the first value is drawn. The key is hashed with its
// workspace and a prefix of its own: distinct (workspace, key) pairs may
// share a hash, which only makes their writers take turns.
const lockOrderingKeys = `
WITH locked AS MATERIALIZED (
    SELECT count(pg_advisory_xact_lock(hashtextextended('once.ordering_key:' || ?0 || ':' || k, 0))) AS n
      FROM (SELECT DISTINCT k FROM unnest(?1::text[]) AS k ORDER BY k) keys
)
SELECT nextval('outbox_events_key_seq') AS seq
  FROM locked, generate_series(1, ?2) AS i
 WHERE locked.n > 0
 ORDER BY i`
