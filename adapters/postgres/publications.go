package postgres

import (
	"context"
	"database/sql"
	"errors"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// The publications of one transaction: the publications table of
// sql/003_task_tables.sql and sql/024_successive_publications.sql (several
// per product and store, in a line by waits_behind). Its row model is at
// the end.

const insertPublication = `
INSERT INTO publications (
       id, workspace_id, product_id, store_id, operation_id, product_revision, status,
       external_listing_id, reason, waits_behind, created_at, updated_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, coalesce(?::timestamptz, now()), coalesce(?::timestamptz, now()))`

// lockPublicationLine takes, for the transaction, the advisory lock of the
// line of a product's publications to a store, so that the line's last
// publication read next is the last committed one and stays the last until
// this transaction ends (022).
const lockPublicationLine = `
SELECT pg_advisory_xact_lock(hashtextextended('once.publication_line:' || ?::text || ':' || ?::text || ':' || ?::text, 0))`

// selectLastInLine is the publication of the line no other waits behind;
// of publications made before the line had links, the newest.
const selectLastInLine = `
SELECT p.id FROM publications p
 WHERE p.workspace_id = ?0 AND p.product_id = ?1 AND p.store_id = ?2
   AND NOT EXISTS (SELECT 1 FROM publications n WHERE n.workspace_id = ?0 AND n.waits_behind = p.id)
 ORDER BY p.created_at DESC, p.id DESC LIMIT 1`

// PublicationRepository implements ports.PublicationRepository.
type PublicationRepository struct{ publicationTable }

type publicationTable = taskRepo[model.Publication, publicationRow, *publicationRow]

var _ = ports.Register(kindRepositories, func(t *Tx) ports.PublicationRepository {
	return &PublicationRepository{publicationTable{t.db, t.workspace, "publication"}}
})

func (r *PublicationRepository) Create(ctx context.Context, p model.Publication) error {
	_, err := r.db.ExecContext(ctx, insertPublication,
		p.ID, p.WorkspaceID, p.ProductID, p.StoreID, p.OperationID, p.ProductRevision, string(p.Status),
		strPtr(p.ExternalListingID), strPtr(p.Reason), uuidPtr(p.WaitsBehind), timePtr(p.CreatedAt), timePtr(p.UpdatedAt))
	return mapError(err, "publication")
}

func (r *PublicationRepository) LastInLine(ctx context.Context, product, store uuid.UUID) (uuid.UUID, error) {
	if _, err := r.db.ExecContext(ctx, lockPublicationLine, r.workspace, product, store); err != nil {
		return uuid.Nil, mapError(err, "publication")
	}
	var last uuid.UUID
	err := r.db.NewRaw(selectLastInLine, r.workspace, product, store).Scan(ctx, &last)
	if errors.Is(err, sql.ErrNoRows) {
		return uuid.Nil, nil
	}
	return last, mapError(err, "publication")
}

var updatePublication = updateTaskRow("publications", "status = ?", "external_listing_id = ?", "reason = ?")

func (r *PublicationRepository) Update(ctx context.Context, p model.Publication) error {
	return r.update(ctx, updatePublication,
		string(p.Status), strPtr(p.ExternalListingID), strPtr(p.Reason), timePtr(p.UpdatedAt), r.workspace, p.ID)
}

func (r *PublicationRepository) List(ctx context.Context, q ports.ListQuery) ([]model.Publication, error) {
	return listNewest(ctx, r.db, r.workspace, q, "publication", plain((*publicationRow).domain),
		eq("status", q.Status), eq("store_id", q.StoreID), eq("product_id", q.ProductID))
}

type publicationRow struct {
	bun.BaseModel `bun:"table:publications"`

	taskState
	ProductID         uuid.UUID  `bun:"product_id,type:uuid"`
	StoreID           uuid.UUID  `bun:"store_id,type:uuid"`
	ProductRevision   int        `bun:"product_revision,notnull"`
	ExternalListingID *string    `bun:"external_listing_id"`
	WaitsBehind       *uuid.UUID `bun:"waits_behind,type:uuid"`
}

func (r *publicationRow) domain() model.Publication {
	return model.Publication{
		TaskState: r.state(), ProductID: r.ProductID, StoreID: r.StoreID,
		ProductRevision: r.ProductRevision, ExternalListingID: strVal(r.ExternalListingID),
		WaitsBehind: uuidVal(r.WaitsBehind),
	}
}
