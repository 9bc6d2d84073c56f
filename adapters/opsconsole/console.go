// Package opsconsole is the operator console: a small web page and its JSON
// API, embedded in the binary and served on the ops listener (never on the
// public API), behind the operator token. It shows the outbox backlog per
// workspace, the dead letters and failed jobs of every workspace grouped
// by cause, the jobs workers parked grouped by destination, and the
// webhook deliveries not done per endpoint; it shows one dead letter
// (sanitized), re-drives one, a group or an endpoint's, cancels an
// operation and shows a workspace's recent cancels. Every action is
// audited in one log line.
package opsconsole

import (
	"context"
	"embed"
	"encoding/json"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/adapters/httpapi"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/domain/operator"
	"github.com/oncehq/once/ports"
)

//go:embed web
var web embed.FS

// Prefix is where the console is mounted on the ops listener.
const Prefix = "/console/"

// maxBody bounds what a POST to the console may send.
const maxBody = 16 << 10

// Console is what the page does: the operator use cases.
type Console interface {
	Backlog(ctx context.Context) (operator.Backlog, error)
	DeadLetters(ctx context.Context) (operator.DeadLetters, error)
	Waiting(ctx context.Context) (operator.Waiting, error)
	DeadLetter(ctx context.Context, workspace, id uuid.UUID) (model.OutboxEvent, error)
	Redrive(ctx context.Context, workspace uuid.UUID, ids []uuid.UUID) (int, error)
	Release(ctx context.Context, workspace uuid.UUID, ids []uuid.UUID) (int, error)
	RedriveGroup(ctx context.Context, key string) (operator.Redriven, error)
	Webhooks(ctx context.Context) (operator.Webhooks, error)
	RedriveWebhook(ctx context.Context, workspace, endpoint uuid.UUID) ([]uuid.UUID, int, error)
	Cancel(ctx context.Context, workspace, id uuid.UUID) (model.Operation, error)
	Cancels(ctx context.Context, workspace uuid.UUID) (operator.Cancels, error)
}

var _ Console = (*operator.Console)(nil)

type handler struct {
	console Console
	cred    credential
	clock   ports.Clock
	log     *slog.Logger
}

// New returns the console's handler for everything under Prefix. token is
// the operator credential (distinct from any tenant token): the API takes
// it as a bearer token, the page through a login form that sets an
// HttpOnly, SameSite=Strict session cookie. log receives the audit lines.
func New(console Console, token string, clock ports.Clock, log *slog.Logger) http.Handler {
	h := &handler{console: console, cred: newCredential(token), clock: clock, log: log}
	static, err := fs.Sub(web, "web/static")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /console/{$}", h.page)
	mux.Handle("GET /console/static/", http.StripPrefix("/console/static/", http.FileServerFS(static)))
	mux.HandleFunc("POST /console/login", h.login)
	mux.HandleFunc("POST /console/logout", h.logout)
	mux.HandleFunc("GET /console/api/backlog", h.api(h.backlog))
	mux.HandleFunc("GET /console/api/dead-letters", h.api(h.deadLetters))
	mux.HandleFunc("GET /console/api/waiting", h.api(h.waiting))
	mux.HandleFunc("GET /console/api/dead-letters/{workspace}/{id}", h.api(h.deadLetter))
	mux.HandleFunc("POST /console/api/dead-letters/{workspace}/{id}/redrive", h.api(h.redriveOne))
	mux.HandleFunc("POST /console/api/dead-letters/{workspace}/{id}/release", h.api(h.releaseOne))
	mux.HandleFunc("POST /console/api/groups/redrive", h.api(h.redriveGroup))
	mux.HandleFunc("GET /console/api/webhooks", h.api(h.webhooks))
	mux.HandleFunc("POST /console/api/webhooks/{workspace}/{id}/redrive", h.api(h.redriveWebhook))
	mux.HandleFunc("POST /console/api/operations/{workspace}/{id}/cancel", h.api(h.cancel))
	mux.HandleFunc("GET /console/api/operations/{workspace}/cancels", h.api(h.cancels))
	mux.HandleFunc("/console/", func(w http.ResponseWriter, r *http.Request) {
		httpapi.WriteProblem(w, r, domain.Errorf(domain.CodeNotFound, "no such console page"))
	})
	return secureHeaders(mux)
}

// Disabled answers every console request while no operator token is set.
func Disabled() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		httpapi.WriteProblem(w, r, domain.Errorf(domain.CodeNotFound, "the operator console is off: set ONCE_OPERATOR_TOKEN to turn it on"))
	})
}

// secureHeaders keeps the page to its own scripts and styles, out of
// frames, and out of caches.
func secureHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
		h.Set("X-Frame-Options", "DENY")
		h.Set("X-Content-Type-Options", "nosniff")
		// same-origin, not no-referrer: with no-referrer a browser sends
		// "Origin: null" on the page's own POSTs, which sameOrigin refuses.
		h.Set("Referrer-Policy", "same-origin")
		h.Set("Cache-Control", "no-store")
		next.ServeHTTP(w, r)
	})
}

// page serves the console to a logged-in operator and the login form to
// anyone else.
func (h *handler) page(w http.ResponseWriter, r *http.Request) {
	name := "web/login.html"
	if _, ok := h.sessionOperator(r); ok {
		name = "web/console.html"
	}
	body, err := web.ReadFile(name)
	if err != nil {
		httpapi.WriteProblem(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(body)
}

func (h *handler) login(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxBody)
	if !sameOrigin(r) {
		httpapi.WriteProblem(w, r, domain.Errorf(domain.CodeForbidden, "cross-origin login refused"))
		return
	}
	name := operatorName(r.PostFormValue("operator"))
	if name == "" || !h.cred.matches(r.PostFormValue("token")) {
		h.log.WarnContext(r.Context(), "operator action", "operator", name, "action", "login", "outcome", "refused", "remote", r.RemoteAddr)
		http.Redirect(w, r, Prefix+"?login=failed", http.StatusSeeOther)
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name: cookieName, Value: h.cred.session(name, h.clock.Now().Add(sessionTTL)),
		Path: Prefix, MaxAge: int(sessionTTL / time.Second),
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil,
	})
	h.log.InfoContext(r.Context(), "operator action", "operator", name, "action", "login", "outcome", "ok", "remote", r.RemoteAddr)
	http.Redirect(w, r, Prefix, http.StatusSeeOther)
}

func (h *handler) logout(w http.ResponseWriter, r *http.Request) {
	if !sameOrigin(r) {
		httpapi.WriteProblem(w, r, domain.Errorf(domain.CodeForbidden, "cross-origin logout refused"))
		return
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: Prefix, MaxAge: -1,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	http.Redirect(w, r, Prefix, http.StatusSeeOther)
}

// sessionOperator reads the operator of a valid session cookie.
func (h *handler) sessionOperator(r *http.Request) (string, bool) {
	c, err := r.Cookie(cookieName)
	if err != nil {
		return "", false
	}
	return h.cred.operator(c.Value, h.clock.Now())
}

// apiFunc is one console API call: it returns the JSON answer and the
// attributes of its audit line (with or without an error).
type apiFunc func(r *http.Request) (answer any, audit []any, err error)

// api authenticates a call (bearer token, or the page's session with the
// CSRF checks for a change), runs it, writes one audit line after it, and
// answers JSON or a problem.
func (h *handler) api(call apiFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		name, err := h.authenticate(r)
		if err != nil {
			httpapi.WriteProblem(w, r, err)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxBody)
		answer, audit, err := call(r)
		attrs := append([]any{"operator", name}, audit...)
		if err != nil {
			code, level := domain.ErrorCode(err), slog.LevelWarn
			if code == domain.CodeInternal || code == domain.CodeUnavailable {
				level = slog.LevelError
			}
			attrs = append(attrs, "outcome", "failed", "code", string(code), "error", domain.SanitizeError(err))
			h.log.Log(r.Context(), level, "operator action", attrs...)
			httpapi.WriteProblem(w, r, err)
			return
		}
		h.log.InfoContext(r.Context(), "operator action", append(attrs, "outcome", "ok")...)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(answer)
	}
}

// authenticate accepts the operator token as a bearer token (the operator
// is then named by X-Operator, "api" without it) or a session cookie. A
// change made through the session must come from the console's origin
// with a JSON body, which a cross-site form cannot send.
func (h *handler) authenticate(r *http.Request) (string, error) {
	if auth := r.Header.Get("Authorization"); auth != "" {
		token, ok := strings.CutPrefix(auth, "Bearer ")
		if !ok || !h.cred.matches(token) {
			return "", domain.Errorf(domain.CodeUnauthenticated, "the operator token is required")
		}
		if name := operatorName(r.Header.Get("X-Operator")); name != "" {
			return name, nil
		}
		return "api", nil
	}
	name, ok := h.sessionOperator(r)
	if !ok {
		return "", domain.Errorf(domain.CodeUnauthenticated, "log in to the operator console")
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		ct := r.Header.Get("Content-Type")
		if !sameOrigin(r) || !strings.HasPrefix(ct, "application/json") {
			return "", domain.Errorf(domain.CodeForbidden, "a change needs a same-origin JSON request")
		}
	}
	return name, nil
}

// pathIDs reads the workspace and the id of the thing (an event, an
// endpoint, an operation) a path names.
func pathIDs(r *http.Request, thing string) (workspace, id uuid.UUID, err error) {
	workspace, err = uuid.Parse(r.PathValue("workspace"))
	if err == nil {
		id, err = uuid.Parse(r.PathValue("id"))
	}
	if err != nil {
		return uuid.Nil, uuid.Nil, domain.Errorf(domain.CodeValidation, "workspace and %s ids must be UUIDs", thing)
	}
	return workspace, id, nil
}
