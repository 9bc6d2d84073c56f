package httpapi

import (
	"context"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
)

type principalKey struct{}

// bearerKey holds the bearer token a request authenticated with (POST
// /v1/tokens/revoke revokes it).
type bearerKey struct{}
type requestFactsKey struct{}

// requestFacts are what the idempotency rules need from the raw request and
// huma does not hand to the handler.
type requestFacts struct {
	Key         uuid.UUID
	Method      string
	EscapedPath string
	RawQuery    string
	ContentType string
	IfMatch     string
}

func principalFrom(ctx context.Context) (model.Principal, error) {
	p, ok := ctx.Value(principalKey{}).(model.Principal)
	if !ok {
		return model.Principal{}, domain.Errorf(domain.CodeUnauthenticated, "authentication required")
	}
	return p, nil
}

// bearerFrom is the token the request authenticated with.
func bearerFrom(ctx context.Context) string {
	token, _ := ctx.Value(bearerKey{}).(string)
	return token
}

func factsFrom(ctx context.Context) (requestFacts, error) {
	f, ok := ctx.Value(requestFactsKey{}).(requestFacts)
	if !ok {
		return requestFacts{}, domain.Errorf(domain.CodeIdempotencyKeyMissing, "the Idempotency-Key header is required")
	}
	return f, nil
}
