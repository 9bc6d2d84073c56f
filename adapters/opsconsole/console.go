// Package opsconsole is the operator console: a small web page and its JSON
// API, embedded in the binary and served on the ops listener (never on the
// public API), its API behind the operator credential (adapters/opshttp). It shows the outbox backlog per
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
	"time"

	"github.com/google/uuid"

	"github.com/oncehq/once/adapters/httpapi"
	"github.com/oncehq/once/adapters/opshttp"
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
	guard   *opshttp.Guard
	clock   ports.Clock
	log     *slog.Logger
}

// Routes are the console's routes on the ops listener, under Prefix: the
// page (the login form to anyone, the console to a logged-in operator),
// its static files, the login and the logout are open; the JSON API is the
// operators', behind guard, which takes an operator's token as a bearer
// token or the session cookie the login form sets (HttpOnly,
// SameSite=Strict, Secure over TLS; kept where every process reads it, so
// a logout or a revocation ends it everywhere). log receives the audit
// lines.
func Routes(console Console, guard *opshttp.Guard, clock ports.Clock, log *slog.Logger) []opshttp.Route {
	h := &handler{console: console, guard: guard, clock: clock, log: log}
	static, err := fs.Sub(web, "web/static")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	api := http.NewServeMux()
	api.HandleFunc("GET /console/api/backlog", h.api(h.backlog))
	api.HandleFunc("GET /console/api/dead-letters", h.api(h.deadLetters))
	api.HandleFunc("GET /console/api/waiting", h.api(h.waiting))
	api.HandleFunc("GET /console/api/dead-letters/{workspace}/{id}", h.api(h.deadLetter))
	api.HandleFunc("POST /console/api/dead-letters/{workspace}/{id}/redrive", h.api(h.redriveOne))
	api.HandleFunc("POST /console/api/dead-letters/{workspace}/{id}/release", h.api(h.releaseOne))
	api.HandleFunc("POST /console/api/groups/redrive", h.api(h.redriveGroup))
	api.HandleFunc("GET /console/api/webhooks", h.api(h.webhooks))
	api.HandleFunc("POST /console/api/webhooks/{workspace}/{id}/redrive", h.api(h.redriveWebhook))
	api.HandleFunc("POST /console/api/operations/{workspace}/{id}/cancel", h.api(h.cancel))
	api.HandleFunc("GET /console/api/operations/{workspace}/cancels", h.api(h.cancels))
	api.HandleFunc("POST /console/api/operators/{name}/revoke-sessions", h.api(h.revokeSessions))
	api.HandleFunc("/console/api/", notFound)
	route := func(pattern string, handler http.Handler, access opshttp.Access) opshttp.Route {
		return opshttp.Route{Pattern: pattern, Handler: secureHeaders(handler), Access: access}
	}
	return []opshttp.Route{
		route("GET /console/{$}", http.HandlerFunc(h.page), opshttp.Open),
		route("GET /console/static/", http.StripPrefix("/console/static/", http.FileServerFS(static)), opshttp.Open),
		route("POST /console/login", http.HandlerFunc(h.login), opshttp.Open),
		route("POST /console/logout", http.HandlerFunc(h.logout), opshttp.Open),
		route("/console/api/", api, opshttp.Operator),
		route(Prefix, http.HandlerFunc(notFound), opshttp.Open),
	}
}

func notFound(w http.ResponseWriter, r *http.Request) {
	httpapi.WriteProblem(w, r, domain.Errorf(domain.CodeNotFound, "no such console page"))
}

// Disabled answers every console request while no operator is set.
func Disabled() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		httpapi.WriteProblem(w, r, domain.Errorf(domain.CodeNotFound, "the operator console is off: set ONCE_OPERATORS (or ONCE_OPERATORS_FILE, or the legacy ONCE_OPERATOR_TOKEN) to turn it on"))
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
		// "Origin: null" on the page's own POSTs, which the ops listener
		// refuses as cross-origin.
		h.Set("Referrer-Policy", "same-origin")
		h.Set("Cache-Control", "no-store")
		next.ServeHTTP(w, r)
	})
}

// page serves the console to a logged-in operator and the login form to
// anyone else.
func (h *handler) page(w http.ResponseWriter, r *http.Request) {
	name := "web/login.html"
	if _, ok := h.guard.SessionOperator(r); ok {
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

// login checks the token typed in the form and starts a session of the
// operator it belongs to: the token names them, not a name typed beside
// it. The ops listener has already refused a cross-origin POST. Wrong
// tokens are throttled per address (opshttp.Throttle): past the bound the
// form answers 429 with Retry-After.
func (h *handler) login(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxBody)
	value, name, err := h.guard.Login(r, r.PostFormValue("token"))
	switch {
	case domain.IsCode(err, domain.CodeUnauthenticated):
		h.log.WarnContext(r.Context(), "operator action", "operator", "", "action", "login", "outcome", "refused", "remote", r.RemoteAddr)
		http.Redirect(w, r, Prefix+"?login=failed", http.StatusSeeOther)
		return
	case err != nil:
		h.log.WarnContext(r.Context(), "operator action", "operator", "", "action", "login", "outcome", "failed",
			"code", string(domain.ErrorCode(err)), "remote", r.RemoteAddr)
		httpapi.WriteProblem(w, r, err)
		return
	}
	http.SetCookie(w, sessionCookie(r, value, int(opshttp.SessionTTL/time.Second)))
	h.log.InfoContext(r.Context(), "operator action", "operator", name, "action", "login", "outcome", "ok", "remote", r.RemoteAddr)
	http.Redirect(w, r, Prefix, http.StatusSeeOther)
}

// logout ends the session in every process, not only in this browser.
func (h *handler) logout(w http.ResponseWriter, r *http.Request) {
	name, _ := h.guard.SessionOperator(r)
	if err := h.guard.Logout(r); err != nil {
		h.log.ErrorContext(r.Context(), "operator action", "operator", name, "action", "logout", "outcome", "failed", "error", domain.SanitizeError(err))
		httpapi.WriteProblem(w, r, domain.Wrap(domain.CodeUnavailable, err, "the session could not be ended"))
		return
	}
	if name != "" {
		h.log.InfoContext(r.Context(), "operator action", "operator", name, "action", "logout", "outcome", "ok")
	}
	http.SetCookie(w, sessionCookie(r, "", -1))
	http.Redirect(w, r, Prefix, http.StatusSeeOther)
}

// sessionCookie is the session's cookie: HttpOnly, SameSite=Strict, and
// Secure when the ops listener is served over TLS.
func sessionCookie(r *http.Request, value string, maxAge int) *http.Cookie {
	return &http.Cookie{Name: opshttp.SessionCookie, Value: value, Path: Prefix, MaxAge: maxAge,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil}
}

// apiFunc is one console API call: it returns the JSON answer and the
// attributes of its audit line (with or without an error).
type apiFunc func(r *http.Request) (answer any, audit []any, err error)

// api runs a call the ops listener has let through (the operator's),
// writes one audit line after it naming the operator, and answers JSON or
// a problem.
func (h *handler) api(call apiFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, maxBody)
		answer, audit, err := call(r)
		attrs := append([]any{"operator", opshttp.OperatorOf(r.Context())}, audit...)
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
