package postgres

// The statements of the product and media repositories whose correctness
// depends on the exact SQL: optimistic concurrency and compare-and-set on
// a status. Tables: sql/003_task_tables.sql. Those of the task kinds'
// tables are in each table's file (catalog_syncs.go, publications.go,
// ai_tasks.go, material_transfers.go). Placeholders are bun's '?'.

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
