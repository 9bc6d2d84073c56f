-- 003_task_tables: the tables of the resources that start background work
-- (the ones that must not run twice), recorded as 003_scenarios before it was renamed: product
-- drafts, media, material transfers, publications, catalog syncs and the
-- catalogue, AI tasks and their billing.
--
-- Runs as the schema owner. Row-level security is the form of 001 on every
-- table, without exception: ENABLE + FORCE, one policy `tenant_isolation`
-- whose USING and WITH CHECK are both
--     workspace_id = (SELECT nullif(current_setting('app.workspace_id', true), '')::uuid)
-- (cast the setting, never the column; (SELECT ...) once per statement;
-- nullif so an unset workspace matches no row). Every index leads with
-- workspace_id, except the primary keys on a globally unique uuid, which are
-- looked up by that uuid (the policy is then a filter on one row), as in 001.
--
-- Cross-table references are composite foreign keys (workspace_id, x_id) ->
-- (workspace_id, id). A foreign key check runs without row-level security,
-- so a plain x_id -> id reference would let one workspace point at (and so
-- learn of the existence of) another workspace's row; the composite form
-- only accepts a row of the same workspace. It needs UNIQUE (workspace_id,
-- id) on the referenced table, added below (stores) and in the CREATE TABLEs.
--
-- The rules the database enforces, and how the adapter reads them:
--   * publications_active_key: at most one publication per (product, store)
--     that is not failed. The adapter inserts with ON CONFLICT ... WHERE
--     status <> 'failed' DO NOTHING, then SELECTs the existing id, so the
--     transaction is not aborted and the error can name the publication
--     (ALREADY_PUBLISHED, ResourceID).
--   * catalog_syncs_active_key: at most one pending or running sync per
--     store. Same technique (SYNC_ALREADY_ACTIVE, ResourceID). Under
--     concurrency the second INSERT waits for the first transaction: if it
--     commits, the second sees the conflict; if it rolls back, the second
--     inserts.
--   * ai_billing_records PRIMARY KEY (workspace_id, task_id): one billing
--     record per task; Bill is INSERT ... ON CONFLICT DO NOTHING and reports
--     whether a row was written.
--   * products.revision: optimistic concurrency; the adapter's UPDATE
--     matches on the expected revision and increments it in one statement.

-- The target of the composite foreign keys to stores.
ALTER TABLE stores ADD CONSTRAINT stores_workspace_id_id_key UNIQUE (workspace_id, id);

-- operations: listing a workspace's operations newest first (ids are
-- UUIDv7, time-ordered), with an id cursor.
CREATE INDEX operations_workspace_id_idx ON operations (workspace_id, id DESC);

-- products: listing drafts. media_ids is the ordered list of the product's
-- images; an array, not a join table, because it is always read and
-- replaced whole with the draft and its order matters. Not a foreign key:
-- a draft may name media still being processed or since rejected.
CREATE TABLE products (
    id           uuid        PRIMARY KEY,
    workspace_id uuid        NOT NULL,
    title        text        NOT NULL,
    description  text        NOT NULL,
    price_minor  bigint      NOT NULL CHECK (price_minor >= 0),
    currency     text        NOT NULL,
    media_ids    uuid[]      NOT NULL DEFAULT '{}',
    revision     int         NOT NULL CHECK (revision >= 0),
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT products_workspace_id_id_key UNIQUE (workspace_id, id)
);
ALTER TABLE products ENABLE ROW LEVEL SECURITY;
ALTER TABLE products FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON products
    USING (workspace_id = (SELECT nullif(current_setting('app.workspace_id', true), '')::uuid))
    WITH CHECK (workspace_id = (SELECT nullif(current_setting('app.workspace_id', true), '')::uuid));

-- media: uploaded files. Variants are a jsonb array of {name, object_key,
-- size_bytes} rather than a media_variants table: they are derived together
-- by one worker run, always read with their media and replaced as a whole
-- (MediaRepository.Update), never queried or referenced on their own; a
-- column makes that one row write instead of delete + insert and keeps the
-- read a single-row lookup. object_key and the variants' keys are internal
-- (never in responses or events).
CREATE TABLE media (
    id           uuid        PRIMARY KEY,
    workspace_id uuid        NOT NULL,
    filename     text        NOT NULL,
    content_type text        NOT NULL,
    size_bytes   bigint      NOT NULL CHECK (size_bytes >= 0),
    object_key   text        NOT NULL,
    status       text        NOT NULL CHECK (status IN ('awaiting_upload', 'processing', 'ready', 'rejected')),
    variants     jsonb       NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(variants) = 'array'),
    -- sanitized, client-safe; NULL unless rejected
    reason       text,
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now()
);
ALTER TABLE media ENABLE ROW LEVEL SECURITY;
ALTER TABLE media FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON media
    USING (workspace_id = (SELECT nullif(current_setting('app.workspace_id', true), '')::uuid))
    WITH CHECK (workspace_id = (SELECT nullif(current_setting('app.workspace_id', true), '')::uuid));

-- material_transfers: copying collected material into our object store.
CREATE TABLE material_transfers (
    id           uuid        PRIMARY KEY,
    workspace_id uuid        NOT NULL,
    operation_id uuid        NOT NULL,
    status       text        NOT NULL CHECK (status IN ('pending', 'running', 'succeeded', 'failed')),
    reason       text,
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT material_transfers_workspace_id_id_key UNIQUE (workspace_id, id)
);
ALTER TABLE material_transfers ENABLE ROW LEVEL SECURITY;
ALTER TABLE material_transfers FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON material_transfers
    USING (workspace_id = (SELECT nullif(current_setting('app.workspace_id', true), '')::uuid))
    WITH CHECK (workspace_id = (SELECT nullif(current_setting('app.workspace_id', true), '')::uuid));

-- material_transfer_items: one row per file, so the worker records each
-- copied item in its own small update and resumes at the first item not
-- done. source_url may carry a signature: it stays here, never in an event.
-- object_key is '' until the item is stored.
CREATE TABLE material_transfer_items (
    transfer_id  uuid    NOT NULL,
    idx          int     NOT NULL CHECK (idx >= 0),
    workspace_id uuid    NOT NULL,
    source_url   text    NOT NULL,
    object_key   text    NOT NULL DEFAULT '',
    size_bytes   bigint  NOT NULL DEFAULT 0 CHECK (size_bytes >= 0),
    done         boolean NOT NULL DEFAULT false,
    PRIMARY KEY (transfer_id, idx),
    FOREIGN KEY (workspace_id, transfer_id) REFERENCES material_transfers (workspace_id, id)
);
ALTER TABLE material_transfer_items ENABLE ROW LEVEL SECURITY;
ALTER TABLE material_transfer_items FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON material_transfer_items
    USING (workspace_id = (SELECT nullif(current_setting('app.workspace_id', true), '')::uuid))
    WITH CHECK (workspace_id = (SELECT nullif(current_setting('app.workspace_id', true), '')::uuid));

-- publications: the first publish of a product to a store.
CREATE TABLE publications (
    id                  uuid        PRIMARY KEY,
    workspace_id        uuid        NOT NULL,
    product_id          uuid        NOT NULL,
    store_id            uuid        NOT NULL,
    operation_id        uuid        NOT NULL,
    product_revision    int         NOT NULL,
    status              text        NOT NULL CHECK (status IN ('pending', 'running', 'succeeded', 'failed')),
    external_listing_id text,
    reason              text,
    created_at          timestamptz NOT NULL DEFAULT now(),
    updated_at          timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (workspace_id, product_id) REFERENCES products (workspace_id, id),
    FOREIGN KEY (workspace_id, store_id) REFERENCES stores (workspace_id, id)
);
-- No duplicate publish: one publication per product and store unless it
-- failed (a failed one may be retried by a new publication). Also serves
-- the lookup of the existing publication after a conflict.
CREATE UNIQUE INDEX publications_active_key ON publications (workspace_id, product_id, store_id)
    WHERE status <> 'failed';
ALTER TABLE publications ENABLE ROW LEVEL SECURITY;
ALTER TABLE publications FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON publications
    USING (workspace_id = (SELECT nullif(current_setting('app.workspace_id', true), '')::uuid))
    WITH CHECK (workspace_id = (SELECT nullif(current_setting('app.workspace_id', true), '')::uuid));

-- catalog_syncs: full catalog syncs of a store.
CREATE TABLE catalog_syncs (
    id           uuid        PRIMARY KEY,
    workspace_id uuid        NOT NULL,
    store_id     uuid        NOT NULL,
    operation_id uuid        NOT NULL,
    status       text        NOT NULL CHECK (status IN ('pending', 'running', 'succeeded', 'failed')),
    items_synced int         NOT NULL DEFAULT 0 CHECK (items_synced >= 0),
    reason       text,
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (workspace_id, store_id) REFERENCES stores (workspace_id, id)
);
-- One active sync per store, enforced here so concurrent requests cannot
-- both win.
CREATE UNIQUE INDEX catalog_syncs_active_key ON catalog_syncs (workspace_id, store_id)
    WHERE status IN ('pending', 'running');
ALTER TABLE catalog_syncs ENABLE ROW LEVEL SECURITY;
ALTER TABLE catalog_syncs FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON catalog_syncs
    USING (workspace_id = (SELECT nullif(current_setting('app.workspace_id', true), '')::uuid))
    WITH CHECK (workspace_id = (SELECT nullif(current_setting('app.workspace_id', true), '')::uuid));

-- catalog_items: a store's listings as last synced, upserted by their key,
-- so re-running a sync replaces rows instead of adding them. The primary
-- key also serves CountItems (workspace_id, store_id prefix).
CREATE TABLE catalog_items (
    workspace_id uuid        NOT NULL,
    store_id     uuid        NOT NULL,
    external_id  text        NOT NULL,
    title        text        NOT NULL,
    price_minor  bigint      NOT NULL,
    currency     text        NOT NULL,
    synced_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (workspace_id, store_id, external_id),
    FOREIGN KEY (workspace_id, store_id) REFERENCES stores (workspace_id, id)
);
ALTER TABLE catalog_items ENABLE ROW LEVEL SECURITY;
ALTER TABLE catalog_items FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON catalog_items
    USING (workspace_id = (SELECT nullif(current_setting('app.workspace_id', true), '')::uuid))
    WITH CHECK (workspace_id = (SELECT nullif(current_setting('app.workspace_id', true), '')::uuid));

-- ai_tasks: one AI provider call each; the task id is the provider's
-- request token.
CREATE TABLE ai_tasks (
    id           uuid        PRIMARY KEY,
    workspace_id uuid        NOT NULL,
    product_id   uuid        NOT NULL,
    operation_id uuid        NOT NULL,
    kind         text        NOT NULL CHECK (kind IN ('text', 'category', 'image')),
    instructions text        NOT NULL DEFAULT '',
    status       text        NOT NULL CHECK (status IN ('pending', 'running', 'succeeded', 'failed')),
    result       text,
    reason       text,
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT ai_tasks_workspace_id_id_key UNIQUE (workspace_id, id),
    FOREIGN KEY (workspace_id, product_id) REFERENCES products (workspace_id, id)
);
CREATE INDEX ai_tasks_workspace_product_idx ON ai_tasks (workspace_id, product_id);
ALTER TABLE ai_tasks ENABLE ROW LEVEL SECURITY;
ALTER TABLE ai_tasks FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON ai_tasks
    USING (workspace_id = (SELECT nullif(current_setting('app.workspace_id', true), '')::uuid))
    WITH CHECK (workspace_id = (SELECT nullif(current_setting('app.workspace_id', true), '')::uuid));

-- ai_billing_records: what a task cost. The primary key is the "billed
-- once" rule: a redelivered job's second INSERT ... ON CONFLICT DO NOTHING
-- writes nothing.
CREATE TABLE ai_billing_records (
    workspace_id uuid        NOT NULL,
    task_id      uuid        NOT NULL,
    units        bigint      NOT NULL CHECK (units >= 0),
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (workspace_id, task_id),
    FOREIGN KEY (workspace_id, task_id) REFERENCES ai_tasks (workspace_id, id)
);
ALTER TABLE ai_billing_records ENABLE ROW LEVEL SECURITY;
ALTER TABLE ai_billing_records FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON ai_billing_records
    USING (workspace_id = (SELECT nullif(current_setting('app.workspace_id', true), '')::uuid))
    WITH CHECK (workspace_id = (SELECT nullif(current_setting('app.workspace_id', true), '')::uuid));

-- Rows only, under RLS: no TRUNCATE, no REFERENCES, no DDL.
GRANT SELECT, INSERT, UPDATE, DELETE ON
    products, media, material_transfers, material_transfer_items, publications,
    catalog_syncs, catalog_items, ai_tasks, ai_billing_records
    TO once_app;
