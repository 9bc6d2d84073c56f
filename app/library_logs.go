package app

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"

	amqp091 "github.com/rabbitmq/amqp091-go"
	"github.com/redis/go-redis/v9"

	"github.com/oncehq/once/domain"
)

// The broker libraries log through package-level loggers of their own
// (go-redis: "redis: … pool.go:770 …" on standard error). Both are pointed,
// once per process, at the logger of the application started last, so that
// every line is structured, leveled and has one component.
var (
	libraryLogger     atomic.Pointer[slog.Logger]
	libraryLoggerOnce sync.Once
)

// routeLibraryLogs sends the broker libraries' lines to log.
func routeLibraryLogs(log *slog.Logger) {
	libraryLogger.Store(log)
	libraryLoggerOnce.Do(func() {
		redis.SetLogger(redisLogger{})
		amqp091.SetLogger(amqpLogger{})
	})
}

// libraryLine logs one line a library wrote, as a warning (both write only
// what went wrong: a lost connection, a failed reconnect).
func libraryLine(ctx context.Context, component, format string, args ...any) {
	log := libraryLogger.Load()
	if log == nil {
		return
	}
	msg := domain.SanitizeText(strings.TrimSpace(strings.TrimPrefix(fmt.Sprintf(format, args...), "redis: ")))
	log.LogAttrs(ctx, slog.LevelWarn, msg, slog.String("component", component))
}

type redisLogger struct{}

func (redisLogger) Printf(ctx context.Context, format string, v ...any) {
	libraryLine(ctx, "redis", format, v...)
}

type amqpLogger struct{}

func (amqpLogger) Printf(format string, v ...any) {
	libraryLine(context.Background(), "amqp", format, v...)
}
