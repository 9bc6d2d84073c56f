package postgres

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// The product and media repositories of one transaction
// (sql/003_task_tables.sql, the statements that matter in tasks_sql.go);
// each task kind's table has a file of its own (catalog_syncs.go). As in
// repositories.go, every query names the transaction's workspace besides
// row-level security.

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

// List implements ports.OperationRepository: newest first by id (UUIDv7,
// time-ordered), through operations_workspace_id_idx.
func (r *OperationRepository) List(ctx context.Context, q ports.ListQuery) ([]model.Operation, error) {
	return listNewest(ctx, r.db, r.workspace, q, "operation", plain((*operationRow).domain),
		eq("status", q.Status), eq("kind", q.Kind))
}
