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

type unorderedJobContext struct{}

// WithUnorderedJob marks ctx as the run of a job that has no ordering key
// (jobs.Handler sets it from its message): the end of its operation frees
// no later event of a key, so it need not wake the Dispatchers
// (dispatch.WakeOnEnds). Ends under any other ctx (a keyed job's, a
// cancel, a worker giving up) wake them as before.
func WithUnorderedJob(ctx context.Context) context.Context {
	return context.WithValue(ctx, unorderedJobContext{}, true)
}

// UnorderedJob reports whether ctx is the run of a job without an
// ordering key (WithUnorderedJob).
func UnorderedJob(ctx context.Context) bool {
	unordered, _ := ctx.Value(unorderedJobContext{}).(bool)
	return unordered
}
