package httpapi

import (
	"context"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
)

// Authenticator turns a bearer token into a principal: a user's token is
// verified, checked against the revoked ones and the user's membership of
// the token's workspace is checked; an API key (once_sk_...) is looked up.
// Errors are CodeUnauthenticated (bad token, unknown or revoked key),
// CodeTokenRevoked (a revoked token) or CodeForbidden (not a member).
type Authenticator func(ctx context.Context, bearerToken string) (model.Principal, error)

const bearerScheme = "bearer"

// authMiddleware authenticates every operation that declares security.
func authMiddleware(api huma.API, authenticate Authenticator) func(huma.Context, func(huma.Context)) {
	return func(ctx huma.Context, next func(huma.Context)) {
		op := ctx.Operation()
		if op == nil || len(op.Security) == 0 {
			next(ctx)
			return
		}
		header := ctx.Header("Authorization")
		scheme, token, ok := strings.Cut(header, " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
			ctx.SetHeader("WWW-Authenticate", `Bearer realm="once"`)
			writeDomainError(api, ctx, domain.Errorf(domain.CodeUnauthenticated, "an Authorization: Bearer <token> header is required"))
			return
		}
		p, err := authenticate(ctx.Context(), strings.TrimSpace(token))
		if err != nil {
			if domain.IsCode(err, domain.CodeUnauthenticated) || domain.IsCode(err, domain.CodeTokenRevoked) {
				ctx.SetHeader("WWW-Authenticate", `Bearer realm="once", error="invalid_token"`)
			}
			writeDomainError(api, ctx, err)
			return
		}
		noteCaller(ctx.Context(), p)
		next(huma.WithValue(huma.WithValue(ctx, principalKey{}, p), bearerKey{}, strings.TrimSpace(token)))
	}
}

// writeDomainError writes err as a problem from a middleware.
func writeDomainError(api huma.API, ctx huma.Context, err error) {
	p := toProblem(ctx.Context(), err)
	for k, vs := range p.GetHeaders() {
		for _, v := range vs {
			ctx.SetHeader(k, v)
		}
	}
	_ = huma.WriteErr(api, ctx, p.Status, p.Detail, err)
}

// securedCall is the operation of a call to an authenticated route and
// its caller, for the middlewares that run after authMiddleware; false for
// a route without security, or a call not authenticated (its handler
// refuses it).
func securedCall(ctx huma.Context) (*huma.Operation, model.Principal, bool) {
	op := ctx.Operation()
	if op == nil || len(op.Security) == 0 {
		return nil, model.Principal{}, false
	}
	p, err := principalFrom(ctx.Context())
	return op, p, err == nil
}
