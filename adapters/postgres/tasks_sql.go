package postgres

// The statements of the scenario repositories whose correctness depends on
// the exact SQL: optimistic concurrency, compare-and-set on a status, the
// partial unique rules and billing once. Tables and indexes:
// sql/003_task_tables.sql. Placeholders are bun's '?'.
//
// Why ON CONFLICT DO NOTHING and not "INSERT, catch 23505": in PostgreSQL a
// failed statement aborts the whole transaction, so after a unique
// violation the repository could not even look up the row it collided with,
// and the use case could not go on (say, to complete an idempotency record
// with the 409). ON CONFLICT names the partial index by its columns and
// predicate (index inference); a conflicting row written by a transaction
// still in progress makes the INSERT wait for it, then skip if it
// committed, or insert if it rolled back. So two concurrent creations
// cannot both win, and neither sees an error from the database. A conflict
// on any other constraint (the primary key) still raises.

// updateProduct saves a draft only on the revision it was based on, and
// bumps the revision in the same statement. Under READ COMMITTED a
// concurrent update of the same row makes this one wait and then re-check
// "revision = ?" on the new row version, so of two saves based on one
// revision exactly one matches. No row: absent or stale, which
// selectProductRevision tells apart.
const updateProduct = `
UPDATE products
   SET title = ?, description = ?, price_minor = ?, currency = ?, media_ids = ?::uuid[],
       updated_at = coalesce(?::timestamptz, now()), revision = revision + 1
 WHERE workspace_id = ? AND id = ? AND revision = ?
RETURNING id, workspace_id, title, description, price_minor, currency, media_ids, revision, created_at, updated_at`

const selectProductRevision = `SELECT revision FROM products WHERE workspace_id = ? AND id = ?`

// transitionMedia moves a media to a new status only from the status the
// caller saw, in one statement: a plain read (Get) takes no lock, so two
// requests could both see the old status. Under READ COMMITTED a concurrent
// transition of the same row makes this one wait for it and then re-check
// "status = ?" on the new row version, so of two transitions out of one
// status exactly one matches. No row: absent or in another status, which
// selectMediaStatus tells apart.
const transitionMedia = `
UPDATE media
   SET status = ?, updated_at = coalesce(?::timestamptz, now())
 WHERE workspace_id = ? AND id = ? AND status = ?`

const selectMediaStatus = `SELECT status FROM media WHERE workspace_id = ? AND id = ?`

// insertPublication writes a publication unless the product already has
// one for the store that is not failed (publications_active_key).
const insertPublication = `
INSERT INTO publications (
       id, workspace_id, product_id, store_id, operation_id, product_revision, status,
       external_listing_id, reason, created_at, updated_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, coalesce(?::timestamptz, now()), coalesce(?::timestamptz, now()))
ON CONFLICT (workspace_id, product_id, store_id) WHERE status <> 'failed' DO NOTHING`

// selectActivePublication finds the publication that won: a new statement,
// so under READ COMMITTED it sees the row the INSERT waited for.
const selectActivePublication = `
SELECT id FROM publications
 WHERE workspace_id = ? AND product_id = ? AND store_id = ? AND status <> 'failed'`

// insertSync writes a sync unless the store has a pending or running one
// (catalog_syncs_active_key).
const insertSync = `
INSERT INTO catalog_syncs (
       id, workspace_id, store_id, operation_id, status, items_synced, reason, created_at, updated_at)
VALUES (?, ?, ?, ?, ?, ?, ?, coalesce(?::timestamptz, now()), coalesce(?::timestamptz, now()))
ON CONFLICT (workspace_id, store_id) WHERE status IN ('pending', 'running') DO NOTHING`

const selectActiveSync = `
SELECT id FROM catalog_syncs
 WHERE workspace_id = ? AND store_id = ? AND status IN ('pending', 'running')`

// insertBilling writes the one billing record of a task; a second one
// (a redelivered job) writes nothing and affects no row.
const insertBilling = `
INSERT INTO ai_billing_records (workspace_id, task_id, units, created_at)
VALUES (?, ?, ?, coalesce(?::timestamptz, now()))
ON CONFLICT (workspace_id, task_id) DO NOTHING`

// markItemDone records a stored item once: "AND NOT done" keeps the first
// object key and size, and writes no new row version on a repeat.
const markItemDone = `
UPDATE material_transfer_items
   SET done = true, object_key = ?, size_bytes = ?
 WHERE workspace_id = ? AND transfer_id = ? AND idx = ? AND NOT done`

const itemExists = `
SELECT EXISTS (SELECT 1 FROM material_transfer_items WHERE workspace_id = ? AND transfer_id = ? AND idx = ?)`
