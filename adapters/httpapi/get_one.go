package httpapi

import (
	"context"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain/model"
)

// getOne answers the read of one resource: get's answer for id as the
// caller's principal, shaped by output, or the problem.
func getOne[T, O any](ctx context.Context, id uuid.UUID, get func(context.Context, model.Principal, uuid.UUID) (T, error), output func(T) *O) (*O, error) {
	p, err := principalFrom(ctx)
	if err != nil {
		return nil, toProblem(ctx, err)
	}
	v, err := get(ctx, p, id)
	if err != nil {
		return nil, toProblem(ctx, err)
	}
	return output(v), nil
}
