package postgres

import (
	"context"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// The material transfers of one transaction: the material_transfers
// table of sql/003_task_tables.sql and its items, rows of their own, with
// their row models at the end.

// markItemDone records a stored item once: "AND NOT done" keeps the first
// object key and size, and writes no new row version on a repeat.
const markItemDone = `
UPDATE material_transfer_items
   SET done = true, object_key = ?, size_bytes = ?
 WHERE workspace_id = ? AND transfer_id = ? AND idx = ? AND NOT done`

const itemExists = `
SELECT EXISTS (SELECT 1 FROM material_transfer_items WHERE workspace_id = ? AND transfer_id = ? AND idx = ?)`

// MaterialTransferRepository implements ports.MaterialTransferRepository.
type MaterialTransferRepository struct{ transferTable }

type transferTable = taskRepo[model.MaterialTransfer, transferRow, *transferRow]

var _ = ports.Register(kindRepositories, func(t *Tx) ports.MaterialTransferRepository {
	return &MaterialTransferRepository{transferTable{t.db, t.workspace, "material transfer"}}
})

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

func (r *MaterialTransferRepository) List(ctx context.Context, q ports.ListQuery) ([]model.MaterialTransfer, error) {
	return listNewest(ctx, r.db, r.workspace, q, "material transfer", plain((*transferRow).domain), eq("status", q.Status))
}

type transferRow struct {
	bun.BaseModel `bun:"table:material_transfers"`

	taskState
}

func toTransferRow(t model.MaterialTransfer) *transferRow {
	return &transferRow{taskState: toTaskState(t.TaskState)}
}

func (r *transferRow) domain() model.MaterialTransfer {
	return model.MaterialTransfer{TaskState: r.state()}
}

type transferItemRow struct {
	bun.BaseModel `bun:"table:material_transfer_items"`

	TransferID  uuid.UUID `bun:"transfer_id,pk,type:uuid"`
	Index       int       `bun:"idx,pk"`
	WorkspaceID uuid.UUID `bun:"workspace_id,type:uuid"`
	SourceURL   string    `bun:"source_url,notnull"`
	ObjectKey   string    `bun:"object_key,notnull"`
	SizeBytes   int64     `bun:"size_bytes,notnull"`
	Done        bool      `bun:"done,notnull"`
}

func (r *transferItemRow) domain() model.MaterialItem {
	return model.MaterialItem{Index: r.Index, SourceURL: r.SourceURL, ObjectKey: r.ObjectKey, SizeBytes: r.SizeBytes, Done: r.Done}
}
