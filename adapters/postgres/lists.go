package postgres

import (
	"context"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// listFilter is one optional equality filter of a list: column = value,
// applied when value is not zero.
type listFilter struct {
	column string
	value  any
}

func eq(column string, value any) listFilter { return listFilter{column, value} }

// listNewest is the one list query of every resource: the workspace's rows
// (RLS holds them to it as well), newest first by id, older than the cursor,
// with the resource's filters. Row is the bun model; toDomain converts it.
func listNewest[Row any, D any](ctx context.Context, db bun.IDB, workspace uuid.UUID, q ports.ListQuery,
	what string, toDomain func(*Row) (D, error), filters ...listFilter,
) ([]D, error) {
	if q.Limit <= 0 {
		return nil, nil
	}
	var rows []Row
	sel := db.NewSelect().Model(&rows).Where("workspace_id = ?", workspace)
	for _, f := range filters {
		switch v := f.value.(type) {
		case string:
			if v == "" {
				continue
			}
		case uuid.UUID:
			if v == uuid.Nil {
				continue
			}
		}
		sel = sel.Where("? = ?", bun.Ident(f.column), f.value)
	}
	if q.StartingAfter != uuid.Nil {
		sel = sel.Where("id < ?", q.StartingAfter)
	}
	if err := sel.OrderExpr("id DESC").Limit(int64(q.Limit)).Scan(ctx); err != nil {
		return nil, mapError(err, what)
	}
	out := make([]D, 0, len(rows))
	for i := range rows {
		d, err := toDomain(&rows[i])
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

// plain adapts a row conversion that cannot fail.
func plain[Row any, D any](f func(*Row) D) func(*Row) (D, error) {
	return func(r *Row) (D, error) { return f(r), nil }
}

func (r *StoreRepository) List(ctx context.Context, q ports.ListQuery) ([]model.Store, error) {
	return listNewest(ctx, r.db, r.workspace, q, "store", plain((*storeRow).domain),
		eq("status", q.Status), eq("platform", q.Platform))
}

func (r *ProductRepository) List(ctx context.Context, q ports.ListQuery) ([]model.Product, error) {
	return listNewest(ctx, r.db, r.workspace, q, "product", (*productRow).domain)
}

func (r *MediaRepository) List(ctx context.Context, q ports.ListQuery) ([]model.Media, error) {
	return listNewest(ctx, r.db, r.workspace, q, "media", plain((*mediaRow).domain), eq("status", q.Status))
}
