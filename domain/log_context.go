package domain

import (
	"context"
	"log/slog"
)

// LogWithin returns a logger whose lines are handled with ctx when the call
// itself brings none (log.Info rather than log.InfoContext). A job's lines
// then name the request and trace the job belongs to (the logging handler
// reads them from the context) without every call site passing ctx.
func LogWithin(ctx context.Context, log *slog.Logger) *slog.Logger {
	return slog.New(boundContext{Handler: log.Handler(), ctx: ctx})
}

type boundContext struct {
	slog.Handler
	ctx context.Context
}

func (b boundContext) pick(ctx context.Context) context.Context {
	if ctx == nil || ctx == context.Background() {
		return b.ctx
	}
	return ctx
}

func (b boundContext) Enabled(ctx context.Context, level slog.Level) bool {
	return b.Handler.Enabled(b.pick(ctx), level)
}

func (b boundContext) Handle(ctx context.Context, r slog.Record) error {
	return b.Handler.Handle(b.pick(ctx), r)
}

func (b boundContext) WithAttrs(attrs []slog.Attr) slog.Handler {
	return boundContext{Handler: b.Handler.WithAttrs(attrs), ctx: b.ctx}
}

func (b boundContext) WithGroup(name string) slog.Handler {
	return boundContext{Handler: b.Handler.WithGroup(name), ctx: b.ctx}
}
