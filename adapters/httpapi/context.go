package httpapi

import (
	"context"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
)

type principalKey struct{}
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

func factsFrom(ctx context.Context) (requestFacts, error) {
	f, ok := ctx.Value(requestFactsKey{}).(requestFacts)
	if !ok {
		return requestFacts{}, domain.Errorf(domain.CodeIdempotencyKeyMissing, "the Idempotency-Key header is required")
	}
	return f, nil
}
