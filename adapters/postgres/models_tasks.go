package postgres

import (
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
)

// Row types of sql/003_task_tables.sql.

type productRow struct {
	bun.BaseModel `bun:"table:products"`

	ID          uuid.UUID  `bun:"id,pk,type:uuid"`
	WorkspaceID uuid.UUID  `bun:"workspace_id,type:uuid"`
	Title       string     `bun:"title,notnull"`
	Description string     `bun:"description,notnull"`
	PriceMinor  int64      `bun:"price_minor,notnull"`
	Currency    string     `bun:"currency,notnull"`
	MediaIDs    []string   `bun:"media_ids,array,type:uuid[]"`
	Revision    int        `bun:"revision,notnull"`
	CreatedAt   *time.Time `bun:"created_at"`
	UpdatedAt   *time.Time `bun:"updated_at"`
}

func toProductRow(p model.Product) *productRow {
	return &productRow{
		ID: p.ID, WorkspaceID: p.WorkspaceID, Title: p.Title, Description: p.Description,
		PriceMinor: p.PriceMinor, Currency: p.Currency, MediaIDs: uuidStrings(p.MediaIDs), Revision: p.Revision,
		CreatedAt: timePtr(p.CreatedAt), UpdatedAt: timePtr(p.UpdatedAt),
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

// mediaVariantJSON is one element of media.variants. Its field names are
// the stored format: never rename them without a migration.
type mediaVariantJSON struct {
	Name      string `json:"name"`
	ObjectKey string `json:"object_key"`
	SizeBytes int64  `json:"size_bytes"`
}

type mediaRow struct {
	bun.BaseModel `bun:"table:media"`

	ID          uuid.UUID          `bun:"id,pk,type:uuid"`
	WorkspaceID uuid.UUID          `bun:"workspace_id,type:uuid"`
	Filename    string             `bun:"filename,notnull"`
	ContentType string             `bun:"content_type,notnull"`
	SizeBytes   int64              `bun:"size_bytes,notnull"`
	ObjectKey   string             `bun:"object_key,notnull"`
	Status      string             `bun:"status,notnull"`
	Variants    []mediaVariantJSON `bun:"variants,type:jsonb,notnull"`
	taskTimes
}

func toMediaVariants(vs []model.MediaVariant) []mediaVariantJSON {
	out := make([]mediaVariantJSON, 0, len(vs)) // never nil: JSON [] not null
	for _, v := range vs {
		out = append(out, mediaVariantJSON(v))
	}
	return out
}

func toMediaRow(m model.Media) *mediaRow {
	return &mediaRow{
		ID: m.ID, WorkspaceID: m.WorkspaceID, Filename: m.Filename, ContentType: m.ContentType,
		SizeBytes: m.SizeBytes, ObjectKey: m.ObjectKey, Status: string(m.Status), Variants: toMediaVariants(m.Variants),
		taskTimes: toTaskTimes(m.Reason, m.CreatedAt, m.UpdatedAt),
	}
}

func (r *mediaRow) domain() model.Media {
	var vs []model.MediaVariant
	for _, v := range r.Variants {
		vs = append(vs, model.MediaVariant(v))
	}
	return model.Media{
		ID: r.ID, WorkspaceID: r.WorkspaceID, Filename: r.Filename, ContentType: r.ContentType,
		SizeBytes: r.SizeBytes, ObjectKey: r.ObjectKey, Status: model.MediaStatus(r.Status), Variants: vs,
		Reason: strVal(r.Reason), CreatedAt: timeVal(r.CreatedAt), UpdatedAt: timeVal(r.UpdatedAt),
	}
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

type aiTaskRow struct {
	bun.BaseModel `bun:"table:ai_tasks"`

	taskState
	ProductID    uuid.UUID `bun:"product_id,type:uuid"`
	Kind         string    `bun:"kind,notnull"`
	Instructions string    `bun:"instructions,notnull"`
	Result       *string   `bun:"result"`
}

func toAITaskRow(a model.AITask) *aiTaskRow {
	return &aiTaskRow{
		taskState: toTaskState(a.TaskState), ProductID: a.ProductID,
		Kind: string(a.Kind), Instructions: a.Instructions, Result: strPtr(a.Result),
	}
}

func (r *aiTaskRow) domain() model.AITask {
	return model.AITask{
		TaskState: r.state(), ProductID: r.ProductID,
		Kind: model.AIKind(r.Kind), Instructions: r.Instructions, Result: strVal(r.Result),
	}
}

type billingRow struct {
	bun.BaseModel `bun:"table:ai_billing_records"`

	WorkspaceID uuid.UUID  `bun:"workspace_id,pk,type:uuid"`
	TaskID      uuid.UUID  `bun:"task_id,pk,type:uuid"`
	Units       int64      `bun:"units,notnull"`
	CreatedAt   *time.Time `bun:"created_at"`
}

func (r *billingRow) domain() model.BillingRecord {
	return model.BillingRecord{WorkspaceID: r.WorkspaceID, TaskID: r.TaskID, Units: r.Units, CreatedAt: timeVal(r.CreatedAt)}
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

// taskState are the columns of a model.TaskState, which every task table
// (transfers, publications, syncs, AI tasks) has alike.
type taskState struct {
	ID          uuid.UUID `bun:"id,pk,type:uuid"`
	WorkspaceID uuid.UUID `bun:"workspace_id,type:uuid"`
	OperationID uuid.UUID `bun:"operation_id,type:uuid"`
	Status      string    `bun:"status,notnull"`
	taskTimes
}

func toTaskState(s model.TaskState) taskState {
	return taskState{
		ID: s.ID, WorkspaceID: s.WorkspaceID, OperationID: s.OperationID, Status: string(s.Status),
		taskTimes: toTaskTimes(s.Reason, s.CreatedAt, s.UpdatedAt),
	}
}

func (r taskState) state() model.TaskState {
	return model.TaskState{
		ID: r.ID, WorkspaceID: r.WorkspaceID, OperationID: r.OperationID, Status: model.TaskStatus(r.Status),
		Reason: strVal(r.Reason), CreatedAt: timeVal(r.CreatedAt), UpdatedAt: timeVal(r.UpdatedAt),
	}
}

// taskTimes are the columns every task table has alike, media included:
// why the task failed, if it did, and when it was created and last
// changed.
type taskTimes struct {
	Reason    *string    `bun:"reason"`
	CreatedAt *time.Time `bun:"created_at"`
	UpdatedAt *time.Time `bun:"updated_at"`
}

func toTaskTimes(reason string, created, updated time.Time) taskTimes {
	return taskTimes{Reason: strPtr(reason), CreatedAt: timePtr(created), UpdatedAt: timePtr(updated)}
}
