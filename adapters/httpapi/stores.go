package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/google/uuid"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/stores"
	"github.com/oncehq/once/ports"
)

// StoreCredentialsBody is write-only: it is sealed on arrival and never
// returned.
type StoreCredentialsBody struct {
	APIKey    string `json:"api_key" minLength:"1" maxLength:"4096" writeOnly:"true" doc:"The platform API key; stored encrypted, never returned"`
	APISecret string `json:"api_secret" minLength:"1" maxLength:"4096" writeOnly:"true" doc:"The platform API secret; stored encrypted, never returned"`
}

type CreateStoreRequest struct {
	Platform       string               `json:"platform" enum:"shopify,amazon,tiktok,shopee,lazada" doc:"The marketplace"`
	Name           string               `json:"name" minLength:"1" maxLength:"200" doc:"A display name"`
	ExternalShopID string               `json:"external_shop_id" minLength:"1" maxLength:"200" doc:"The shop's id on the platform; one store per platform and shop in a workspace"`
	Credentials    StoreCredentialsBody `json:"credentials"`
}

type CreateStoreInput struct {
	IdempotencyKeyHeader
	RawBody []byte
	Body    CreateStoreRequest
}

// Store is a connected store as clients see it: no credentials.
type Store struct {
	ID                uuid.UUID `json:"id" format:"uuid"`
	Platform          string    `json:"platform"`
	Name              string    `json:"name"`
	ExternalShopID    string    `json:"external_shop_id"`
	Status            string    `json:"status" enum:"pending_verification,verified,verification_failed"`
	CredentialVersion int       `json:"credential_version" doc:"Grows by one each time the authorization is replaced"`
	CreatedAt         time.Time `json:"created_at"`
	UpdatedAt         time.Time `json:"updated_at"`
}

type StoreCreated struct {
	Store     Store     `json:"store"`
	Operation Operation `json:"operation" doc:"The credential verification; poll GET /v1/operations/{id}"`
}

type GetStoreInput struct {
	ID uuid.UUID `path:"id" format:"uuid" doc:"The store id"`
}

type StoreOutput struct {
	Body Store
}

func toStore(s model.Store) Store {
	return Store{
		ID: s.ID, Platform: s.Platform, Name: s.Name, ExternalShopID: s.ExternalShopID,
		Status: string(s.Status), CredentialVersion: s.CredentialVersion,
		CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt,
	}
}

type ListStoresInput struct {
	ListParams
	Status   string `query:"status" enum:"pending_verification,verified,verification_failed" doc:"Only stores in this state"`
	Platform string `query:"platform" enum:"shopify,amazon,tiktok,shopee,lazada" doc:"Only stores on this marketplace"`
}

func (h *handlers) registerStores(api huma.API) {
	create := needs(model.ScopeStoresWrite, post("createStore", "/v1/stores", "stores", "Connect a store",
		"Creates a store authorization and starts verifying its credentials in the background. Idempotent: retry with the same Idempotency-Key and body to get the original response.",
		400, 401, 403, 409, 413, 422, 500, 503))
	create.DefaultStatus = http.StatusCreated
	registerTask(h, api, stores.VerifyKind, create, taskAt("/v1/stores/"),
		func(ctx context.Context, tx ports.Tx, p model.Principal, in *CreateStoreInput) (StoreCreated, model.Operation, error) {
			c, err := h.deps.Stores.Create(ctx, tx, p, stores.CreateCommand{
				Platform: in.Body.Platform, Name: in.Body.Name, ExternalShopID: in.Body.ExternalShopID,
				Credentials: model.StoreCredentials{APIKey: in.Body.Credentials.APIKey, APISecret: in.Body.Credentials.APISecret},
			})
			return StoreCreated{Store: toStore(c.Store), Operation: toOperation(c.Operation)}, c.Operation, err
		})

	huma.Register(api, needs(model.ScopeStoresRead, huma.Operation{
		OperationID: "getStore",
		Method:      http.MethodGet,
		Path:        "/v1/stores/{id}",
		Summary:     "Read a store",
		Tags:        []string{"stores"},
		Security:    bearer,
		Errors:      []int{401, 403, 404, 500, 503},
	}), h.getStore)
	registerList[ListStoresInput](api, h, model.ScopeStoresRead, "listStores", "/v1/stores", "List stores", "stores", "The workspace's stores.", ports.Tx.Stores, toStore)
}

func (h *handlers) getStore(ctx context.Context, in *GetStoreInput) (*StoreOutput, error) {
	p, err := principalFrom(ctx)
	if err != nil {
		return nil, toProblem(ctx, err)
	}
	s, err := h.deps.Stores.Get(ctx, p, in.ID)
	if err != nil {
		return nil, toProblem(ctx, err)
	}
	return &StoreOutput{Body: toStore(s)}, nil
}
