package httpapi

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"
	"github.com/google/uuid"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/stores"
	"github.com/oncehq/once/ports"
)

type ReplaceAuthorizationRequest struct {
	Credentials StoreCredentialsBody `json:"credentials"`
}

type ReplaceAuthorizationInput struct {
	IdempotencyKeyHeader
	ID      uuid.UUID `path:"id" format:"uuid" doc:"The store id"`
	RawBody []byte
	Body    ReplaceAuthorizationRequest
}

type VerifyStoreInput struct {
	IdempotencyKeyHeader
	ID uuid.UUID `path:"id" format:"uuid" doc:"The store id"`
}

func (h *handlers) registerStoreAuthorization(api huma.API) {
	registerIdempotent(api, startsTask(needs(model.ScopeStoresWrite, huma.Operation{
		OperationID:   "replaceStoreAuthorization",
		Method:        http.MethodPut,
		Path:          "/v1/stores/{id}/authorization",
		Summary:       "Replace a store's credentials",
		Description:   "Seals the new credentials, bumps credential_version and starts verifying that version; a verification still running for an older version is superseded. Idempotent.",
		Tags:          []string{"stores"},
		DefaultStatus: http.StatusAccepted,
		Security:      bearer,
		Errors:        []int{400, 401, 403, 404, 409, 413, 422, 500, 503},
	}), stores.VerifyKind), h.deps.MaxBodyBytes, h.replaceAuthorization)
	registerIdempotent(api, startsTask(needs(model.ScopeStoresWrite, post("verifyStore", "/v1/stores/{id}/verifications", "stores", "Verify a store's credentials again",
		"", 400, 401, 403, 404, 409, 500, 503)), stores.VerifyKind), h.deps.MaxBodyBytes, h.verifyStore)
}

func (h *handlers) replaceAuthorization(ctx context.Context, in *ReplaceAuthorizationInput) (*IdempotentOutput[StoreCreated], error) {
	return runIdempotent(ctx, h.deps.Idempotency, in.RawBody,
		func(ctx context.Context, tx ports.Tx, p model.Principal) (int, string, StoreCreated, error) {
			replaced, err := h.deps.Stores.ReplaceAuthorization(ctx, tx, p, in.ID, model.StoreCredentials{
				APIKey: in.Body.Credentials.APIKey, APISecret: in.Body.Credentials.APISecret,
			})
			if err != nil {
				return 0, "", StoreCreated{}, err
			}
			return http.StatusAccepted, operationLocation(replaced.Operation.ID),
				StoreCreated{Store: toStore(replaced.Store), Operation: toOperation(replaced.Operation)}, nil
		})
}

func (h *handlers) verifyStore(ctx context.Context, in *VerifyStoreInput) (*IdempotentOutput[OperationAccepted], error) {
	return runIdempotent(ctx, h.deps.Idempotency, nil,
		func(ctx context.Context, tx ports.Tx, p model.Principal) (int, string, OperationAccepted, error) {
			op, err := h.deps.Stores.Verify(ctx, tx, p, in.ID)
			if err != nil {
				return 0, "", OperationAccepted{}, err
			}
			return http.StatusAccepted, operationLocation(op.ID), accepted(op), nil
		})
}

func operationLocation(id uuid.UUID) string { return "/v1/operations/" + id.String() }
