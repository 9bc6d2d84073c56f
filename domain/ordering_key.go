package domain

import "context"

type orderingKeyContext struct{}

// WithOrderingKey tells the adapters that call external systems under ctx
// the ordering key of the job they call for (the worker sets it), so a
// simulator can check that calls of one key never overlap.
func WithOrderingKey(ctx context.Context, key string) context.Context {
	if key == "" {
		return ctx
	}
	return context.WithValue(ctx, orderingKeyContext{}, key)
}

// OrderingKeyOf is the ordering key WithOrderingKey put in ctx, or "".
func OrderingKeyOf(ctx context.Context) string {
	key, _ := ctx.Value(orderingKeyContext{}).(string)
	return key
}
