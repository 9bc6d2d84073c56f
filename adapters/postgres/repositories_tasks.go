package postgres

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"sort"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// The scenario repositories of one transaction (sql/003_task_tables.sql, the
// statements that matter in scenarios_sql.go). As in repositories.go, every
// query names the transaction's workspace besides row-level security.

// conflictRetries bounds the "insert or find the winner" loop: the winner
// found by the INSERT may finish (leave the partial index) before the
// SELECT looks for it; then the INSERT is tried again.
const conflictRetries = 3

// ProductRepository implements ports.ProductRepository.
type ProductRepository struct {
	db        bun.IDB
	workspace uuid.UUID
}

var _ ports.ProductRepository = (*ProductRepository)(nil)

func (r *ProductRepository) Create(ctx context.Context, p model.Product) error {
	return insertHeld(ctx, r.db, toProductRow(p), "product")
}

func (r *ProductRepository) Get(ctx context.Context, id uuid.UUID) (model.Product, error) {
	var row productRow
	err := r.db.NewSelect().Model(&row).Where("workspace_id = ?", r.workspace).Where("id = ?", id).Scan(ctx)
	if err != nil {
		return model.Product{}, mapError(err, "product")
	}
	return row.domain()
}

func (r *ProductRepository) Update(ctx context.Context, p model.Product, expectedRevision int) (model.Product, error) {
	var row productRow
	err := r.db.NewRaw(updateProduct,
		p.Title, p.Description, p.PriceMinor, p.Currency, pgdialect.Array(uuidStrings(p.MediaIDs)),
		timePtr(p.UpdatedAt), r.workspace, p.ID, expectedRevision).Scan(ctx, &row)
	if err == nil {
		return row.domain()
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return model.Product{}, mapError(err, "product")
	}
	var current int
	err = r.db.NewRaw(selectProductRevision, r.workspace, p.ID).Scan(ctx, &current)
	if err != nil {
		return model.Product{}, mapError(err, "product")
	}
	return model.Product{}, domain.Errorf(domain.CodePreconditionFailed,
		"product %s changed since revision %d", p.ID, expectedRevision)
}

func (r *MediaRepository) Create(ctx context.Context, m model.Media) error {
	return r.insert(ctx, toMediaRow(m))
}

var updateMedia = updateTaskRow("media", "status = ?", "variants = ?::jsonb", "reason = ?")

func (r *MediaRepository) Update(ctx context.Context, m model.Media) error {
	variants, err := json.Marshal(toMediaVariants(m.Variants))
	if err != nil {
		return domain.Wrap(domain.CodeInternal, err, "media variants")
	}
	return r.update(ctx, updateMedia,
		string(m.Status), string(variants), strPtr(m.Reason), timePtr(m.UpdatedAt), r.workspace, m.ID)
}

func (r *MediaRepository) Transition(ctx context.Context, id uuid.UUID, from, to model.MediaStatus, at time.Time) error {
	res, err := r.db.ExecContext(ctx, transitionMedia, string(to), timePtr(at), r.workspace, id, string(from))
	if err != nil {
		return mapError(err, "media")
	}
	if n, err := res.RowsAffected(); err != nil || n == 1 {
		return mapError(err, "media")
	}
	var current string
	if err := r.db.NewRaw(selectMediaStatus, r.workspace, id).Scan(ctx, &current); err != nil {
		return mapError(err, "media")
	}
	return domain.Errorf(domain.CodeInvalidState, "media %s is %s, not %s", id, current, from)
}

func (r *MaterialTransferRepository) Create(ctx context.Context, t model.MaterialTransfer) error {
	if _, err := r.db.NewInsert().Model(toTransferRow(t)).Exec(ctx); err != nil {
		return mapError(err, "material transfer")
	}
	if len(t.Items) == 0 {
		return nil
	}
	items := make([]transferItemRow, 0, len(t.Items))
	for _, it := range t.Items {
		items = append(items, transferItemRow{
			TransferID: t.ID, Index: it.Index, WorkspaceID: t.WorkspaceID, SourceURL: it.SourceURL,
			ObjectKey: it.ObjectKey, SizeBytes: it.SizeBytes, Done: it.Done,
		})
	}
	_, err := r.db.NewInsert().Model(&items).Exec(ctx)
	return mapError(err, "material transfer item")
}

func (r *MaterialTransferRepository) Get(ctx context.Context, id uuid.UUID) (model.MaterialTransfer, error) {
	t, err := r.transferTable.Get(ctx, id)
	if err != nil {
		return t, err
	}
	var items []transferItemRow
	err = r.db.NewSelect().Model(&items).
		Where("workspace_id = ?", r.workspace).Where("transfer_id = ?", id).OrderExpr("idx").Scan(ctx)
	if err != nil {
		return model.MaterialTransfer{}, mapError(err, "material transfer item")
	}
	for i := range items {
		t.Items = append(t.Items, items[i].domain())
	}
	return t, nil
}

var updateTransferStatus = updateTaskRow("material_transfers", "status = ?", "reason = ?")

func (r *MaterialTransferRepository) UpdateStatus(ctx context.Context, t model.MaterialTransfer) error {
	return r.update(ctx, updateTransferStatus,
		string(t.Status), strPtr(t.Reason), timePtr(t.UpdatedAt), r.workspace, t.ID)
}

func (r *MaterialTransferRepository) MarkItemDone(ctx context.Context, id uuid.UUID, index int, objectKey string, size int64) error {
	res, err := r.db.ExecContext(ctx, markItemDone, objectKey, size, r.workspace, id, index)
	if err != nil {
		return mapError(err, "material transfer item")
	}
	if n, err := res.RowsAffected(); err != nil || n == 1 {
		return mapError(err, "material transfer item")
	}
	var exists bool
	if err := r.db.NewRaw(itemExists, r.workspace, id, index).Scan(ctx, &exists); err != nil {
		return mapError(err, "material transfer item")
	}
	if !exists {
		return domain.Errorf(domain.CodeNotFound, "material transfer %s has no item %d", id, index)
	}
	return nil // already done: nothing changes
}

func (r *PublicationRepository) Create(ctx context.Context, p model.Publication) error {
	return insertUnlessLive(ctx, r.db, "publication", func() (sql.Result, error) {
		return r.db.ExecContext(ctx, insertPublication,
			p.ID, p.WorkspaceID, p.ProductID, p.StoreID, p.OperationID, p.ProductRevision, string(p.Status),
			strPtr(p.ExternalListingID), strPtr(p.Reason), timePtr(p.CreatedAt), timePtr(p.UpdatedAt))
	}, r.db.NewRaw(selectActivePublication, r.workspace, p.ProductID, p.StoreID), func(uuid.UUID) *domain.Error {
		return domain.Errorf(domain.CodeAlreadyPublished, "product %s is already published to store %s", p.ProductID, p.StoreID)
	})
}

var updatePublication = updateTaskRow("publications", "status = ?", "external_listing_id = ?", "reason = ?")

// Update can move a failed publication back into the partial unique index;
// if another one holds the product and store by then, that is a unique
// violation (publications_active_key), mapped to CodeAlreadyPublished.
func (r *PublicationRepository) Update(ctx context.Context, p model.Publication) error {
	return r.update(ctx, updatePublication,
		string(p.Status), strPtr(p.ExternalListingID), strPtr(p.Reason), timePtr(p.UpdatedAt), r.workspace, p.ID)
}

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
// active one by then, that is a unique violation (catalog_syncs_active_key),
// mapped to CodeSyncAlreadyActive.
func (r *SyncRepository) Update(ctx context.Context, s model.CatalogSync) error {
	return r.update(ctx, updateSync,
		string(s.Status), s.ItemsSynced, strPtr(s.Reason), timePtr(s.UpdatedAt), r.workspace, s.ID)
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

func (r *SyncRepository) CountItems(ctx context.Context, storeID uuid.UUID) (int, error) {
	n, err := r.db.NewSelect().Model((*catalogItemRow)(nil)).
		Where("workspace_id = ?", r.workspace).Where("store_id = ?", storeID).Count(ctx)
	return int(n), mapError(err, "catalog item")
}

func (r *AITaskRepository) Create(ctx context.Context, t model.AITask) error {
	return r.insert(ctx, toAITaskRow(t))
}

var updateAITask = updateTaskRow("ai_tasks", "status = ?", "result = ?", "reason = ?")

func (r *AITaskRepository) Update(ctx context.Context, t model.AITask) error {
	return r.update(ctx, updateAITask,
		string(t.Status), strPtr(t.Result), strPtr(t.Reason), timePtr(t.UpdatedAt), r.workspace, t.ID)
}

func (r *AITaskRepository) Bill(ctx context.Context, b model.BillingRecord) (bool, error) {
	res, err := r.db.ExecContext(ctx, insertBilling, b.WorkspaceID, b.TaskID, b.Units, timePtr(b.CreatedAt))
	if err != nil {
		return false, mapError(err, "billing record")
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, mapError(err, "billing record")
	}
	return n == 1, nil
}

func (r *AITaskRepository) BillingRecords(ctx context.Context, taskID uuid.UUID) ([]model.BillingRecord, error) {
	var rows []billingRow
	err := r.db.NewSelect().Model(&rows).Where("workspace_id = ?", r.workspace).Where("task_id = ?", taskID).Scan(ctx)
	if err != nil {
		return nil, mapError(err, "billing record")
	}
	var out []model.BillingRecord
	for i := range rows {
		out = append(out, rows[i].domain())
	}
	return out, nil
}

// List implements ports.OperationRepository: newest first by id (UUIDv7,
// time-ordered), through operations_workspace_id_idx.
func (r *OperationRepository) List(ctx context.Context, f ports.OperationFilter) ([]model.Operation, error) {
	if f.Limit <= 0 {
		return nil, nil
	}
	var rows []operationRow
	q := r.db.NewSelect().Model(&rows).Where("workspace_id = ?", r.workspace)
	if f.Status != "" {
		q = q.Where("status = ?", string(f.Status))
	}
	if f.Kind != "" {
		q = q.Where("kind = ?", f.Kind)
	}
	if f.Before != uuid.Nil {
		q = q.Where("id < ?", f.Before)
	}
	if err := q.OrderExpr("id DESC").Limit(int64(f.Limit)).Scan(ctx); err != nil {
		return nil, mapError(err, "operation")
	}
	out := make([]model.Operation, 0, len(rows))
	for i := range rows {
		out = append(out, rows[i].domain())
	}
	return out, nil
}
