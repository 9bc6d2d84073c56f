package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/idempotency"
)

type loggerKey struct{}

func logger(ctx context.Context) *slog.Logger {
	if l, ok := ctx.Value(loggerKey{}).(*slog.Logger); ok {
		return l
	}
	return slog.Default()
}

func levelFor(err error) slog.Level {
	switch {
	case err == nil:
		return slog.LevelInfo
	case domain.ErrorCode(err) == domain.CodeInternal, domain.ErrorCode(err) == domain.CodeUnavailable:
		return slog.LevelError
	default:
		return slog.LevelInfo
	}
}

// logAttrs describe an idempotent request for operators: the key appears
// only hashed.
func logAttrs(req idempotency.Request, replayed bool, err error) []slog.Attr {
	attrs := []slog.Attr{
		slog.String("workspace_id", req.Scope.WorkspaceID.String()),
		slog.String("user_id", req.Scope.UserID.String()),
		slog.String("method", req.Scope.Method),
		slog.String("path", req.Scope.Path),
		slog.String("idempotency_key_hash", idempotency.LogKey(req.Scope.Key)),
		slog.Bool("replayed", replayed),
	}
	if err != nil {
		attrs = append(attrs, slog.String("code", string(domain.ErrorCode(err))), slog.String("error", err.Error()))
	}
	return attrs
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(status int) {
	r.status = status
	r.ResponseWriter.WriteHeader(status)
}

// accessLog logs one line per request and puts the logger in the context.
// It never logs headers or bodies: they carry tokens, keys and credentials.
func accessLog(log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(rec, r.WithContext(context.WithValue(r.Context(), loggerKey{}, log)))
		log.LogAttrs(r.Context(), slog.LevelInfo, "http request",
			slog.String("method", r.Method),
			slog.String("path", r.URL.Path),
			slog.Int("status", rec.status),
			slog.Duration("duration", time.Since(start)))
	})
}
