package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/ports"
)

type StartSyncInput struct {
	IdempotencyKeyHeader
	StoreID uuid.UUID `path:"id" format:"uuid" doc:"The store"`
}

type CatalogSync struct {
	ID          uuid.UUID `json:"id" format:"uuid"`
	StoreID     uuid.UUID `json:"store_id" format:"uuid"`
	OperationID uuid.UUID `json:"operation_id" format:"uuid"`
	Status      string    `json:"status" enum:"pending,running,succeeded,failed"`
	ItemsSynced int       `json:"items_synced"`
	Reason      string    `json:"reason,omitempty"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

type CatalogSyncAccepted struct {
	Sync      CatalogSync `json:"sync"`
	Operation Operation   `json:"operation"`
}

func toCatalogSync(s domain.CatalogSync) CatalogSync {
	return CatalogSync{ID: s.ID, StoreID: s.StoreID, OperationID: s.OperationID, Status: string(s.Status),
		ItemsSynced: s.ItemsSynced, Reason: s.Reason, CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt}
}

func (h *handlers) registerSyncs(api huma.API) {
	registerIdempotent(api, huma.Operation{
		OperationID:   "startCatalogSync",
		Method:        http.MethodPost,
		Path:          "/v1/stores/{id}/syncs",
		Summary:       "Start a full catalog sync of a store",
		Description:   "At most one sync per store is active at a time, enforced by the database: a second gets 409 SYNC_ALREADY_ACTIVE with the active sync's id in resource_id. Idempotent.",
		Tags:          []string{"stores"},
		DefaultStatus: http.StatusAccepted,
		Security:      bearer,
		Errors:        []int{400, 401, 403, 404, 409, 413, 500, 503},
	}, h.deps.MaxBodyBytes, h.startSync)
	registerRead(api, "getCatalogSync", "/v1/syncs/{id}", "Read a catalog sync", "stores", h.deps.Catalog.Get, toCatalogSync)
}

func (h *handlers) startSync(ctx context.Context, in *StartSyncInput) (*IdempotentOutput[CatalogSyncAccepted], error) {
	return runIdempotent(ctx, h.deps.Idempotency, nil,
		func(ctx context.Context, tx ports.Tx, p domain.Principal) (int, string, CatalogSyncAccepted, error) {
			s, op, err := h.deps.Catalog.StartSync(ctx, tx, p, in.StoreID)
			if err != nil {
				return 0, "", CatalogSyncAccepted{}, err
			}
			return http.StatusAccepted, "/v1/syncs/" + s.ID.String(),
				CatalogSyncAccepted{Sync: toCatalogSync(s), Operation: toOperation(op)}, nil
		})
}
