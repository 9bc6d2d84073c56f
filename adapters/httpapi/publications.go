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
	ID                uuid.UUID `json:"id" format:"uuid"`
	ProductID         uuid.UUID `json:"product_id" format:"uuid"`
	StoreID           uuid.UUID `json:"store_id" format:"uuid"`
	OperationID       uuid.UUID `json:"operation_id" format:"uuid"`
	ProductRevision   int       `json:"product_revision" doc:"The draft revision being published"`
	Status            string    `json:"status" enum:"pending,running,succeeded,failed"`
	ExternalListingID string    `json:"external_listing_id,omitempty" doc:"The listing on the platform, once created"`
	Reason            string    `json:"reason,omitempty"`
	CreatedAt         time.Time `json:"created_at"`
	UpdatedAt         time.Time `json:"updated_at"`
}

type PublicationAccepted struct {
	Publication Publication `json:"publication"`
	Operation   Operation   `json:"operation"`
}

func toPublication(p domain.Publication) Publication {
	return Publication{ID: p.ID, ProductID: p.ProductID, StoreID: p.StoreID, OperationID: p.OperationID,
		ProductRevision: p.ProductRevision, Status: string(p.Status), ExternalListingID: p.ExternalListingID,
		Reason: p.Reason, CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt}
}

func (h *handlers) registerPublications(api huma.API) {
	registerIdempotent(api, huma.Operation{
		OperationID:   "publishProduct",
		Method:        http.MethodPost,
		Path:          "/v1/products/{id}/publications",
		Summary:       "Publish a product to a store for the first time",
		Description:   "Creates the publish task; the worker creates the listing on the platform with the task id as the request token, so retries, duplicate deliveries and timeouts never make two listings. A product has one live publication per store (409 ALREADY_PUBLISHED with its id). Idempotent.",
		Tags:          []string{"publishing"},
		DefaultStatus: http.StatusAccepted,
		Security:      bearer,
		Errors:        []int{400, 401, 403, 404, 409, 413, 422, 500, 503},
	}, h.deps.MaxBodyBytes, h.publishProduct)
	registerRead(api, "getPublication", "/v1/publications/{id}", "Read a publication", "publishing", h.deps.Publishing.Get, toPublication)
}

func (h *handlers) publishProduct(ctx context.Context, in *PublishProductInput) (*IdempotentOutput[PublicationAccepted], error) {
	return runIdempotent(ctx, h.deps.Idempotency, in.RawBody,
		func(ctx context.Context, tx ports.Tx, p domain.Principal) (int, string, PublicationAccepted, error) {
			pub, op, err := h.deps.Publishing.Publish(ctx, tx, p, in.ProductID, in.Body.StoreID)
			if err != nil {
				return 0, "", PublicationAccepted{}, err
			}
			return http.StatusAccepted, "/v1/publications/" + pub.ID.String(),
				PublicationAccepted{Publication: toPublication(pub), Operation: toOperation(op)}, nil
		})
}
