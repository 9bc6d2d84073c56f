-- 024_successive_publications: a product may be published to a store again
-- while an earlier publication of it there is still live; each runs after
-- the one before it ended.
--
-- Until now publications_active_key allowed one publication per product
-- and store that was not failed (409 ALREADY_PUBLISHED), so a seller who
-- changed a product could not publish the change. Now the platform keeps
-- one listing per shop and SKU (the product's id, ports.CreateListing):
-- the first publication creates it, a later one replaces its content. Two
-- of them must never run at once, nor a later one before an earlier one:
-- their jobs share the ordering key publish/<product>/<store>, which the
-- outbox holds in commit order across workers (021).
--
--   waits_behind  the publication of the same product and store that was
--                 the last one when this one was requested (NULL for the
--                 first, and for publications made before this
--                 migration). The adapter takes a transaction-scoped
--                 advisory lock on (workspace, product, store) before it
--                 reads that last one and inserts, so of two concurrent
--                 publishes the second names the first: the chain is
--                 commit order, as the outbox's key_seq is. No foreign key:
--                 retention may delete a failed publication a later one
--                 names.
--
-- publications_line_idx serves the read of the line's last publication
-- (the one no other publication waits behind) and the lookup by product
-- and store the unique index served. Runs as the schema owner, in one
-- transaction; the table is small beside the outbox.
DROP INDEX publications_active_key;
ALTER TABLE publications ADD COLUMN waits_behind uuid;
CREATE INDEX publications_line_idx ON publications (workspace_id, product_id, store_id, created_at);
CREATE INDEX publications_waits_behind_idx ON publications (workspace_id, waits_behind)
    WHERE waits_behind IS NOT NULL;
