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
	ProductID         uuid.UUID `json:"product_id" format:"uuid"`
	StoreID           uuid.UUID `json:"store_id" format:"uuid"`
	ProductRevision   int       `json:"product_revision" doc:"The draft revision being published"`
	ExternalListingID string    `json:"external_listing_id,omitempty" doc:"The listing on the platform, once created"`
	TaskTimes
}

func toPublication(p model.Publication) Publication {
	return Publication{TaskHead: taskHead(p.TaskState), ProductID: p.ProductID, StoreID: p.StoreID,
		ProductRevision: p.ProductRevision, ExternalListingID: p.ExternalListingID, TaskTimes: taskTimes(p.TaskState)}
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
	registerTask(h, api, publishing.Kind, post("publishProduct", "/v1/products/{id}/publications", "publishing", "Publish a product to a store for the first time",
		"Creates the publish task; the worker creates the listing on the platform with the task id as the request token, so retries, duplicate deliveries and timeouts never make two listings. A product has one live publication per store (409 ALREADY_PUBLISHED with its id). Idempotent.",
		400, 401, 403, 404, 409, 413, 422, 500, 503), taskAt("/v1/publications/"),
		func(ctx context.Context, tx ports.Tx, p model.Principal, in *PublishProductInput) (PublicationAccepted, model.Operation, error) {
			pub, op, err := publisher.Publish(ctx, tx, p, in.ProductID, in.Body.StoreID)
			return PublicationAccepted{Publication: toPublication(pub), OperationAccepted: accepted(op)}, op, err
		})
	registerRead(api, "getPublication", "/v1/publications/{id}", "Read a publication", "publishing", publisher.Get, toPublication)
	registerList[ListPublicationsInput](api, h, "listPublications", "/v1/publications", "List publications", "publishing", "The workspace's publications.", ports.Repository[ports.PublicationRepository], toPublication)
}
