package httpapi

import (
	"context"

	"github.com/danielgtaylor/huma/v2"
	"github.com/google/uuid"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/publishing"
	"github.com/oncehq/once/ports"
)

type PublishProductRequest struct {
	StoreID uuid.UUID `json:"store_id" format:"uuid" doc:"The verified store to publish to"`
}

type PublishProductInput struct {
	IdempotencyKeyHeader
	ProductID uuid.UUID `path:"id" format:"uuid" doc:"The product"`
	RawBody   []byte
	Body      PublishProductRequest
}

type Publication struct {
	TaskHead
	ProductID         uuid.UUID  `json:"product_id" format:"uuid"`
	StoreID           uuid.UUID  `json:"store_id" format:"uuid"`
	ProductRevision   int        `json:"product_revision" doc:"The draft revision being published"`
	ExternalListingID string     `json:"external_listing_id,omitempty" doc:"The listing on the platform, once created"`
	WaitsBehind       *uuid.UUID `json:"waits_behind,omitempty" format:"uuid" doc:"The publication of this product to this store that was the last one when this one was requested: this one starts only once that one's job has ended (one given up on holds the line until an operator re-drives or releases it). Absent for the first one."`
	TaskTimes
}

func toPublication(p model.Publication) Publication {
	return Publication{TaskHead: taskHead(p.TaskState), ProductID: p.ProductID, StoreID: p.StoreID,
		ProductRevision: p.ProductRevision, ExternalListingID: p.ExternalListingID, WaitsBehind: optionalID(p.WaitsBehind),
		TaskTimes: taskTimes(p.TaskState)}
}

// optionalID is id, or nil (absent) for uuid.Nil.
func optionalID(id uuid.UUID) *uuid.UUID {
	if id == uuid.Nil {
		return nil
	}
	return &id
}

// PublicationAccepted is the answer to the request that starts one (202 Accepted).
type PublicationAccepted struct {
	Publication Publication `json:"publication"`
	OperationAccepted
}

type ListPublicationsInput struct {
	ListTasksInput
	StoreID   uuid.UUID `query:"store_id" format:"uuid" doc:"Only publications to this store"`
	ProductID uuid.UUID `query:"product_id" format:"uuid" doc:"Only publications of this product"`
}

var _ = registerKindRoutes((*handlers).registerPublications)

func (h *handlers) registerPublications(api huma.API) {
	publisher := taskService[*publishing.Service](h)
	registerTask(h, api, publishing.Kind, needs(model.ScopeProductsWrite, post("publishProduct", "/v1/products/{id}/publications", "publishing", "Publish a product to a store",
		"Creates the publish task; the worker puts the product's listing on the platform (the first publication to a store creates it, a later one replaces its content with the product's current draft) with the task's request token, so retries, duplicate deliveries and timeouts never make two listings. A product may be published to a store again while an earlier publication there is live: the new one names the last one in `waits_behind` and starts only once that one has ended, so publications reach the platform one at a time, in the order they were accepted. Idempotent.",
		400, 401, 403, 404, 409, 413, 422, 500, 503)), taskAt("/v1/publications/"),
		func(ctx context.Context, tx ports.Tx, p model.Principal, in *PublishProductInput) (PublicationAccepted, model.Operation, error) {
			pub, op, err := publisher.Publish(ctx, tx, p, in.ProductID, in.Body.StoreID)
			return PublicationAccepted{Publication: toPublication(pub), OperationAccepted: accepted(op)}, op, err
		})
	registerRead(api, model.ScopeProductsRead, "getPublication", "/v1/publications/{id}", "Read a publication", "publishing", publisher.Get, toPublication)
	registerList[ListPublicationsInput](api, h, model.ScopeProductsRead, "listPublications", "/v1/publications", "List publications", "publishing", "The workspace's publications.", ports.Repository[ports.PublicationRepository], toPublication)
}
