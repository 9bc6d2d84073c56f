package postgres

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// The products of one transaction (sql/003_task_tables.sql), with their
// row model and the statements whose correctness depends on the exact SQL.
// As in repositories.go, every query names the transaction's workspace
// besides row-level security; placeholders are bun's '?'.

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

func (r *ProductRepository) ForgetMedia(ctx context.Context, ids []uuid.UUID, at time.Time) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	gone := pgdialect.Array(uuidStrings(ids))
	res, err := r.db.ExecContext(ctx, forgetProductMedia, gone, timePtr(at), r.workspace, gone)
	if err != nil {
		return 0, mapError(err, "product")
	}
	n, err := res.RowsAffected()
	return int(n), mapError(err, "product")
}

// forgetProductMedia rewrites media_ids without the ids given, in their
// order (WITH ORDINALITY), on the products naming any (&&), bumping the
// revision as updateProduct does. It reads the workspace's products
// (products_workspace_id_id_key): media_ids has no index, as the clean-up
// that runs it is the only reader by media, once per batch.
const forgetProductMedia = `
UPDATE products
   SET media_ids = ARRAY(SELECT m FROM unnest(media_ids) WITH ORDINALITY AS u(m, n)
                          WHERE m <> ALL (?::uuid[]) ORDER BY n),
       updated_at = coalesce(?::timestamptz, now()), revision = revision + 1
 WHERE workspace_id = ? AND media_ids && ?::uuid[]`

const selectProductRevision = `SELECT revision FROM products WHERE workspace_id = ? AND id = ?`

type productRow struct {
	bun.BaseModel `bun:"table:products"`

	rowKeys
	Title       string   `bun:"title,notnull"`
	Description string   `bun:"description,notnull"`
	PriceMinor  int64    `bun:"price_minor,notnull"`
	Currency    string   `bun:"currency,notnull"`
	MediaIDs    []string `bun:"media_ids,array,type:uuid[]"`
	Revision    int      `bun:"revision,notnull"`
	rowTimes
}

func toProductRow(p model.Product) *productRow {
	return &productRow{
		rowKeys: rowKeys{p.ID, p.WorkspaceID}, Title: p.Title, Description: p.Description,
		PriceMinor: p.PriceMinor, Currency: p.Currency, MediaIDs: uuidStrings(p.MediaIDs), Revision: p.Revision,
		rowTimes: toRowTimes(p.CreatedAt, p.UpdatedAt),
	}
}

func (r *productRow) domain() (model.Product, error) {
	ids, err := parseUUIDs(r.MediaIDs)
	if err != nil {
		return model.Product{}, err
	}
	return model.Product{
		ID: r.ID, WorkspaceID: r.WorkspaceID, Title: r.Title, Description: r.Description,
		PriceMinor: r.PriceMinor, Currency: r.Currency, MediaIDs: ids, Revision: r.Revision,
		CreatedAt: timeVal(r.CreatedAt), UpdatedAt: timeVal(r.UpdatedAt),
	}, nil
}

// uuidStrings renders ids for a uuid[] column; never nil, so an empty list
// is stored as '{}' (the column is NOT NULL).
func uuidStrings(ids []uuid.UUID) []string {
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		out = append(out, id.String())
	}
	return out
}

// parseUUIDs reads a uuid[] column; an empty array reads as nil.
func parseUUIDs(ss []string) ([]uuid.UUID, error) {
	if len(ss) == 0 {
		return nil, nil
	}
	out := make([]uuid.UUID, 0, len(ss))
	for _, s := range ss {
		id, err := uuid.Parse(s)
		if err != nil {
			return nil, domain.Wrap(domain.CodeInternal, err, "stored media id is not a uuid")
		}
		out = append(out, id)
	}
	return out, nil
}
