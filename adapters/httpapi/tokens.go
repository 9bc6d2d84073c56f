package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/google/uuid"

	"github.com/oncehq/once/domain/model"
)

// RevokeTokenRequest names the token to revoke; without it (or without a
// body), the bearer token of the request.
type RevokeTokenRequest struct {
	Token *string `json:"token,omitempty" maxLength:"8192" doc:"An access token of yours to revoke; absent: the bearer token of this request (a logout)"`
}

type RevokeTokenInput struct {
	Body *RevokeTokenRequest
}

type RevokeMemberTokensInput struct {
	UserID uuid.UUID `path:"user_id" format:"uuid" doc:"The user whose tokens to revoke"`
}

// MemberTokensRevoked says from when the user's tokens are accepted again.
type MemberTokensRevoked struct {
	UserID uuid.UUID `json:"user_id" format:"uuid"`
	// NotBefore is the next whole second after the revocation (iat counts
	// whole seconds).
	NotBefore time.Time `json:"tokens_issued_before" doc:"The user's tokens issued (iat) before this instant are refused with 401 TOKEN_REVOKED; a token issued at or after it is accepted"`
}

type MemberTokensRevokedOutput struct {
	Body MemberTokensRevoked
}

// revocationBound is what the routes say of when other servers refuse a
// revoked token.
const revocationBound = "This server refuses it at once; every other server within `ONCE_TOKEN_REVOCATION_REFRESH` (5 s by default), without a database read per request."

func (h *handlers) registerTokenRevocation(api huma.API) {
	huma.Register(api, needsOnlyItsToken(huma.Operation{
		OperationID: "revokeToken", Method: http.MethodPost, Path: "/v1/tokens/revoke", DefaultStatus: http.StatusNoContent,
		MaxBodyBytes: h.deps.MaxBodyBytes,
		Summary:      "Revoke an access token (log out)",
		Description: "Revokes the bearer token of the request, or the token in the body, which must be one of the same user and workspace (403 otherwise): it is refused with 401 TOKEN_REVOKED from then on. " + revocationBound +
			" A token that is not a valid access token here (an expired one included: it is refused anyway) gets 422. Revoking a token twice is no error. An API key is revoked by its own route, not here.",
		Tags: []string{"workspace"}, Security: bearer, Errors: []int{400, 401, 403, 422, 500, 503},
	}), h.revokeToken)
	huma.Register(api, needs(model.ScopeMembersWrite, huma.Operation{
		OperationID: "revokeMemberTokens", Method: http.MethodPost, Path: "/v1/members/{user_id}/revoke-tokens",
		Summary: "Revoke every token of a member (sign out everywhere)",
		Description: "Workspace admins only. Every token of the user in this workspace issued before now is refused with 401 TOKEN_REVOKED, whether or not the user is a member now; a token issued from `tokens_issued_before` on is accepted. " + revocationBound +
			" A token without `iat` is refused once its user's tokens were revoked.",
		Tags: []string{"workspace"}, Security: bearer, Errors: []int{401, 403, 422, 500, 503},
	}), h.revokeMemberTokens)
}

func (h *handlers) revokeToken(ctx context.Context, in *RevokeTokenInput) (*NoContent, error) {
	p, err := principalFrom(ctx)
	if err != nil {
		return nil, toProblem(ctx, err)
	}
	token := bearerFrom(ctx)
	if in.Body != nil && in.Body.Token != nil {
		token = *in.Body.Token
	}
	if err := h.deps.Revocations.RevokeToken(ctx, p, token); err != nil {
		return nil, toProblem(ctx, err)
	}
	return &NoContent{}, nil
}

func (h *handlers) revokeMemberTokens(ctx context.Context, in *RevokeMemberTokensInput) (*MemberTokensRevokedOutput, error) {
	p, err := principalFrom(ctx)
	if err != nil {
		return nil, toProblem(ctx, err)
	}
	notBefore, err := h.deps.Revocations.RevokeMemberTokens(ctx, p, in.UserID)
	if err != nil {
		return nil, toProblem(ctx, err)
	}
	return &MemberTokensRevokedOutput{Body: MemberTokensRevoked{UserID: in.UserID, NotBefore: notBefore}}, nil
}
