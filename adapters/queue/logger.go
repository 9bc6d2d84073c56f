package queue

import (
	"log/slog"

	"github.com/ThreeDotsLabs/watermill"
)

// NewLogger adapts slog for watermill. Watermill logs every subscription
// and every publish without subscribers at Info; those go to Debug here so
// Info stays for what an operator acts on. Errors stay errors.
func NewLogger(l *slog.Logger) watermill.LoggerAdapter {
	if l == nil {
		l = slog.Default()
	}
	return watermill.NewSlogLoggerWithLevelMapping(l, map[slog.Level]slog.Level{
		slog.LevelInfo: slog.LevelDebug,
	})
}

// newRetryLogger is the logger of the worker's in-process retries.
// Watermill's Retry middleware reports each retry as an error ("Error
// occurred, retrying"), but a transient failure retried is what the
// worker expects, not yet a fault: its lines go to Warn. Everything else
// keeps its level: a job refused or given up on is logged where it is
// handled, and a failure the worker cannot record (the router's "Handler
// returned error") stays an error.
func newRetryLogger(l *slog.Logger) watermill.LoggerAdapter {
	if l == nil {
		l = slog.Default()
	}
	return watermill.NewSlogLoggerWithLevelMapping(l, map[slog.Level]slog.Level{
		slog.LevelInfo:  slog.LevelDebug,
		slog.LevelError: slog.LevelWarn,
	})
}
