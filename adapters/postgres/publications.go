package postgres

import (
	"context"
	"database/sql"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// The first publications of one transaction: the publications table of
// sql/003_task_tables.sql (at most one publication per product and store
// that is not failed). Its row model is at the end.

// publicationActiveIndex is the partial unique index of live
// publications: one per product and store that is not failed.
const publicationActiveIndex = "publications_active_key"

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

// PublicationRepository implements ports.PublicationRepository.
type PublicationRepository struct{ publicationTable }

type publicationTable = taskRepo[model.Publication, publicationRow, *publicationRow]

var _ = ports.Register(kindRepositories, func(t *Tx) ports.PublicationRepository {
	return &PublicationRepository{publicationTable{t.db, t.workspace, "publication"}}
})

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
// violation (publicationActiveIndex), mapped to CodeAlreadyPublished.
func (r *PublicationRepository) Update(ctx context.Context, p model.Publication) error {
	err := r.update(ctx, updatePublication,
		string(p.Status), strPtr(p.ExternalListingID), strPtr(p.Reason), timePtr(p.UpdatedAt), r.workspace, p.ID)
	return liveIndexTaken(err, publicationActiveIndex, domain.CodeAlreadyPublished,
		"the product already has a publication to this store that is not failed")
}

func (r *PublicationRepository) List(ctx context.Context, q ports.ListQuery) ([]model.Publication, error) {
	return listNewest(ctx, r.db, r.workspace, q, "publication", plain((*publicationRow).domain),
		eq("status", q.Status), eq("store_id", q.StoreID), eq("product_id", q.ProductID))
}

type publicationRow struct {
	bun.BaseModel `bun:"table:publications"`

	taskState
	ProductID         uuid.UUID `bun:"product_id,type:uuid"`
	StoreID           uuid.UUID `bun:"store_id,type:uuid"`
	ProductRevision   int       `bun:"product_revision,notnull"`
	ExternalListingID *string   `bun:"external_listing_id"`
}

func (r *publicationRow) domain() model.Publication {
	return model.Publication{
		TaskState: r.state(), ProductID: r.ProductID, StoreID: r.StoreID,
		ProductRevision: r.ProductRevision, ExternalListingID: strVal(r.ExternalListingID),
	}
}
