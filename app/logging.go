package app

import (
	"io"
	"log/slog"

	"github.com/oncehq/once/domain"
)

// NewLogger builds the process logger from the configuration.
func NewLogger(cfg LoggingConfig, w io.Writer) *slog.Logger {
	level, _ := parseLevel(cfg.LogLevel)
	opts := &slog.HandlerOptions{Level: level, ReplaceAttr: errorsAsText}
	if cfg.LogFormat == "json" {
		return slog.New(WithRequestContext(slog.NewJSONHandler(w, opts)))
	}
	return slog.New(WithRequestContext(slog.NewTextHandler(w, opts)))
}

// errorsAsText writes an error attribute as its sanitized text: never a
// stack trace (errors that print one with %+v, as pkg/errors' do in the
// broker libraries) and never a credential.
func errorsAsText(_ []string, a slog.Attr) slog.Attr {
	if err, ok := a.Value.Any().(error); ok && a.Value.Kind() == slog.KindAny {
		return slog.String(a.Key, domain.SanitizeError(err))
	}
	return a
}
