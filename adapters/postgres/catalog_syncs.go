package postgres

import (
	"context"
	"database/sql"
	"sort"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// The catalog syncs of one transaction: the catalog_syncs table of
// sql/003_task_tables.sql (at most one active sync per store) and the
// catalog_items a sync fills. Their row models are at the end.

// SyncRepository implements ports.SyncRepository.
type SyncRepository struct{ syncTable }

type syncTable = taskRepo[model.CatalogSync, syncRow, *syncRow]

var _ = ports.Register(kindRepositories, func(t *Tx) ports.SyncRepository {
	return &SyncRepository{syncTable{t.db, t.workspace, "catalog sync"}}
})

// syncActiveIndex is the partial unique index of active syncs: one pending
// or running sync per store.
const syncActiveIndex = "catalog_syncs_active_key"

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

func (r *SyncRepository) Create(ctx context.Context, s model.CatalogSync) error {
	return insertUnlessLive(ctx, r.db, "catalog sync", func() (sql.Result, error) {
		return r.db.ExecContext(ctx, insertSync,
			s.ID, s.WorkspaceID, s.StoreID, s.OperationID, string(s.Status), s.ItemsSynced, strPtr(s.Reason),
			timePtr(s.CreatedAt), timePtr(s.UpdatedAt))
	}, r.db.NewRaw(selectActiveSync, r.workspace, s.StoreID), func(uuid.UUID) *domain.Error {
		return domain.Errorf(domain.CodeSyncAlreadyActive, "store %s already has an active catalog sync", s.StoreID)
	})
}

var updateSync = updateTaskRow("catalog_syncs", "status = ?", "items_synced = ?", "reason = ?")

// Update can move a finished sync back to active; if the store has another
// active one by then, that is a unique violation (syncActiveIndex),
// mapped to CodeSyncAlreadyActive.
func (r *SyncRepository) Update(ctx context.Context, s model.CatalogSync) error {
	err := r.update(ctx, updateSync,
		string(s.Status), s.ItemsSynced, strPtr(s.Reason), timePtr(s.UpdatedAt), r.workspace, s.ID)
	return liveIndexTaken(err, syncActiveIndex, domain.CodeSyncAlreadyActive, "the store already has an active catalog sync")
}

// UpsertItems writes the listings in one statement. Duplicate keys in one
// call keep the last (one INSERT ... ON CONFLICT DO UPDATE cannot touch a
// row twice), and rows go in key order so concurrent upserts of one store
// lock rows in the same order instead of deadlocking.
func (r *SyncRepository) UpsertItems(ctx context.Context, items []model.CatalogItem) error {
	if len(items) == 0 {
		return nil
	}
	type key struct {
		ws, store uuid.UUID
		ext       string
	}
	byKey := make(map[key]catalogItemRow, len(items))
	for _, it := range items {
		byKey[key{it.WorkspaceID, it.StoreID, it.ExternalID}] = toCatalogItemRow(it)
	}
	rows := make([]catalogItemRow, 0, len(byKey))
	for _, row := range byKey {
		rows = append(rows, row)
	}
	sort.Slice(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		if a.WorkspaceID != b.WorkspaceID {
			return a.WorkspaceID.String() < b.WorkspaceID.String()
		}
		if a.StoreID != b.StoreID {
			return a.StoreID.String() < b.StoreID.String()
		}
		return a.ExternalID < b.ExternalID
	})
	_, err := r.db.NewInsert().Model(&rows).
		On("CONFLICT (workspace_id, store_id, external_id) DO UPDATE").
		Set("title = EXCLUDED.title").
		Set("price_minor = EXCLUDED.price_minor").
		Set("currency = EXCLUDED.currency").
		Set("synced_at = EXCLUDED.synced_at").
		Exec(ctx)
	return mapError(err, "catalog item")
}

func (r *SyncRepository) List(ctx context.Context, q ports.ListQuery) ([]model.CatalogSync, error) {
	return listNewest(ctx, r.db, r.workspace, q, "catalog sync", plain((*syncRow).domain),
		eq("status", q.Status), eq("store_id", q.StoreID))
}

type syncRow struct {
	bun.BaseModel `bun:"table:catalog_syncs"`

	taskState
	StoreID     uuid.UUID `bun:"store_id,type:uuid"`
	ItemsSynced int       `bun:"items_synced,notnull"`
}

func (r *syncRow) domain() model.CatalogSync {
	return model.CatalogSync{TaskState: r.state(), StoreID: r.StoreID, ItemsSynced: r.ItemsSynced}
}

type catalogItemRow struct {
	bun.BaseModel `bun:"table:catalog_items"`

	WorkspaceID uuid.UUID  `bun:"workspace_id,pk,type:uuid"`
	StoreID     uuid.UUID  `bun:"store_id,pk,type:uuid"`
	ExternalID  string     `bun:"external_id,pk"`
	Title       string     `bun:"title,notnull"`
	PriceMinor  int64      `bun:"price_minor,notnull"`
	Currency    string     `bun:"currency,notnull"`
	SyncedAt    *time.Time `bun:"synced_at"`
}

func toCatalogItemRow(it model.CatalogItem) catalogItemRow {
	return catalogItemRow{
		WorkspaceID: it.WorkspaceID, StoreID: it.StoreID, ExternalID: it.ExternalID, Title: it.Title,
		PriceMinor: it.PriceMinor, Currency: it.Currency, SyncedAt: timePtr(it.SyncedAt),
	}
}
