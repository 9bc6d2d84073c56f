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
