package domain_test

import (
	"bytes"
	"context"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/oncehq/once/domain"
)

type ctxKey struct{}

// seesContext writes the context's value into each line, as the app's
// logging handler writes request and trace ids.
type seesContext struct{ slog.Handler }

func (h seesContext) Handle(ctx context.Context, r slog.Record) error {
	if v, ok := ctx.Value(ctxKey{}).(string); ok {
		r.AddAttrs(slog.String("from_ctx", v))
	}
	return h.Handler.Handle(ctx, r)
}

func (h seesContext) WithAttrs(attrs []slog.Attr) slog.Handler {
	return seesContext{h.Handler.WithAttrs(attrs)}
}

func TestLogWithinGivesLinesWithoutAContextTheBoundOne(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(seesContext{slog.NewTextHandler(&buf, nil)})
	bound := domain.LogWithin(context.WithValue(context.Background(), ctxKey{}, "job"), log).With("k", "v")

	bound.Info("plain")
	assert.Contains(t, buf.String(), "from_ctx=job")
	buf.Reset()
	bound.InfoContext(context.WithValue(context.Background(), ctxKey{}, "own"), "own context")
	assert.Contains(t, buf.String(), "from_ctx=own", "a context the call brings wins")
	assert.Contains(t, buf.String(), "k=v")
}
