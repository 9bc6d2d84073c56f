package app

import (
	"io"
	"log/slog"
)

// NewLogger builds the process logger from the configuration.
func NewLogger(cfg Config, w io.Writer) *slog.Logger {
	level, _ := parseLevel(cfg.LogLevel)
	opts := &slog.HandlerOptions{Level: level}
	if cfg.LogFormat == "json" {
		return slog.New(WithRequestContext(slog.NewJSONHandler(w, opts)))
	}
	return slog.New(WithRequestContext(slog.NewTextHandler(w, opts)))
}
