package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/idempotency"
	"github.com/oncehq/once/domain/model"
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

// logAttrs describe an idempotent request of p for operators: the key
// appears only hashed; a key's requests name it (api_key_id) beside the
// admin it acts as (user_id).
func logAttrs(req idempotency.Request, p model.Principal, replayed bool, err error) []slog.Attr {
	attrs := []slog.Attr{
		slog.String("workspace_id", req.Scope.WorkspaceID.String()),
		slog.String("user_id", p.UserID.String()),
		slog.String("method", req.Scope.Method),
		slog.String("path", req.Scope.Path),
		slog.String("idempotency_key_hash", idempotency.LogKey(req.Scope.Key)),
		slog.Bool("replayed", replayed),
	}
	if p.APIKeyID != uuid.Nil {
		attrs = append(attrs, apiKeyAttr(p.APIKeyID))
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
// A request made with an API key names it (api_key_id), which the
// authentication, deeper in, notes for this line (callerNote).
func accessLog(log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		caller := &callerNote{}
		ctx := context.WithValue(context.WithValue(r.Context(), loggerKey{}, log), callerNoteKey{}, caller)
		next.ServeHTTP(rec, r.WithContext(ctx))
		attrs := []slog.Attr{
			slog.String("method", r.Method),
			slog.String("path", r.URL.Path),
			slog.Int("status", rec.status),
			slog.Duration("duration", time.Since(start)),
		}
		if key := caller.apiKey.Load(); key != nil {
			attrs = append(attrs, apiKeyAttr(*key))
		}
		log.LogAttrs(r.Context(), slog.LevelInfo, "http request", attrs...)
	})
}

// callerNote is where the authentication of a request notes the API key
// it came with, for the request's log line, which is written outside the
// routes (after them) and so cannot read the principal they had. Written
// once, read after the request: a log attribute, never a decision.
type callerNote struct{ apiKey atomic.Pointer[uuid.UUID] }

type callerNoteKey struct{}

// noteCaller notes p's API key, if any, for the request's log line.
func noteCaller(ctx context.Context, p model.Principal) {
	if note, ok := ctx.Value(callerNoteKey{}).(*callerNote); ok && p.APIKeyID != uuid.Nil {
		id := p.APIKeyID
		note.apiKey.Store(&id)
	}
}

func apiKeyAttr(id uuid.UUID) slog.Attr { return slog.String("api_key_id", id.String()) }
