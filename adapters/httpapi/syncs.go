package httpapi

import (
	"context"

	"github.com/danielgtaylor/huma/v2"
	"github.com/google/uuid"

	"github.com/oncehq/once/domain/catalog"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

type StartSyncInput struct {
	IdempotencyKeyHeader
	StoreID uuid.UUID `path:"id" format:"uuid" doc:"The store"`
}

type CatalogSync struct {
	TaskHead
	StoreID     uuid.UUID `json:"store_id" format:"uuid"`
	ItemsSynced int       `json:"items_synced" example:"120"`
	TaskTimes
}

func toCatalogSync(s model.CatalogSync) CatalogSync {
	return CatalogSync{TaskHead: taskHead(s.TaskState), StoreID: s.StoreID, ItemsSynced: s.ItemsSynced,
		TaskTimes: taskTimes(s.TaskState)}
}

// CatalogSyncAccepted is the answer to the request that starts one (202 Accepted).
type CatalogSyncAccepted struct {
	Sync CatalogSync `json:"sync"`
	OperationAccepted
}

type ListSyncsInput struct {
	ListTasksInput
	StoreID uuid.UUID `query:"store_id" format:"uuid" doc:"Only syncs of this store"`
}

var _ = registerKindRoutes((*handlers).registerSyncs)

func (h *handlers) registerSyncs(api huma.API) {
	catalogs := taskService[*catalog.Service](h)
	registerTask(h, api, catalog.Kind, needs(model.ScopeSyncsWrite, post("startCatalogSync", "/v1/stores/{id}/syncs", "stores", "Start a full catalog sync of a store",
		"At most one sync per store is active at a time, enforced by the database: a second gets 409 SYNC_ALREADY_ACTIVE with the active sync's id in resource_id. Idempotent.",
		400, 401, 403, 404, 409, 500, 503)), taskAt("/v1/syncs/"),
		func(ctx context.Context, tx ports.Tx, p model.Principal, in *StartSyncInput) (CatalogSyncAccepted, model.Operation, error) {
			s, op, err := catalogs.StartSync(ctx, tx, p, in.StoreID)
			return CatalogSyncAccepted{Sync: toCatalogSync(s), OperationAccepted: accepted(op)}, op, err
		})
	registerRead(api, model.ScopeSyncsRead, "getCatalogSync", "/v1/syncs/{id}", "Read a catalog sync", "stores", catalogs.Get, toCatalogSync)
	registerList[ListSyncsInput](api, h, model.ScopeSyncsRead, "listCatalogSyncs", "/v1/syncs", "List catalog syncs", "stores", "The workspace's catalog syncs.", ports.Repository[ports.SyncRepository], toCatalogSync)
}
