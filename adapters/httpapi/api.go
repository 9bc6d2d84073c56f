// Package httpapi is the HTTP adapter: huma operations over the use cases,
// problem+json errors with stable codes, bearer authentication and the
// idempotency-key handling that feeds the domain's idempotency service.
package httpapi

import (
	"context"
	"errors"
	"log/slog"
	"net/http"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/fx"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/apikeys"
	"github.com/oncehq/once/domain/idempotency"
	"github.com/oncehq/once/domain/limits"
	"github.com/oncehq/once/domain/media"
	"github.com/oncehq/once/domain/operations"
	"github.com/oncehq/once/domain/pagination"
	"github.com/oncehq/once/domain/products"
	"github.com/oncehq/once/domain/revocation"
	"github.com/oncehq/once/domain/stores"
	"github.com/oncehq/once/domain/webhooks"
	"github.com/oncehq/once/domain/workspaces"
)

// Version is the API version in the spec.
const Version = "0.1.0"

// DefaultMaxBodyBytes caps request bodies; larger ones get 413 before
// anything is read further or stored.
const DefaultMaxBodyBytes = 256 << 10

// Deps are what the handlers call. Registration never touches them, so the
// spec can be generated with zero Deps. It is an fx parameter struct, so
// the application fills it field by field from what it provides and the
// list of dependencies is written here only.
type Deps struct {
	fx.In

	Authenticate Authenticator
	Idempotency  *idempotency.Service
	Stores       *stores.Service
	Operations   *operations.Service
	// Cancel cancels operations (POST /v1/operations/{id}/cancel).
	Cancel      OperationCanceller
	Products    *products.Service
	Media       *media.Service
	DeadLetters DeadLetters
	// TaskServices are the use cases of the kinds of task, which their
	// routes find by type (taskService).
	TaskServices []any `group:"task_services"`
	// Lists serves every list endpoint (lists.go).
	Lists *pagination.Service
	// Workspaces manages members (members.go).
	Workspaces *workspaces.Service
	// Revocations revokes access tokens (tokens.go).
	Revocations *revocation.Service
	// Webhooks manages webhook endpoints (webhooks.go).
	Webhooks *webhooks.Service
	// APIKeys manages API keys (api_keys.go).
	APIKeys *apikeys.Service
	// Limits are the workspaces' rate and cap on concurrent work (nil:
	// none); the idempotency service applies them to its own routes.
	Limits *limits.Limits `optional:"true"`
	// MaxBodyBytes caps request bodies (<= 0: DefaultMaxBodyBytes).
	MaxBodyBytes int64 `name:"max_body_bytes"`
}

func init() {
	// Arrays are always sent, empty rather than null, so generated clients
	// get plain slices rather than pointers to them.
	huma.DefaultArrayNullable = false
}

// Config returns the huma configuration shared by the server and the spec
// generator.
func Config() huma.Config {
	cfg := huma.DefaultConfig("once", Version)
	cfg.Info.Description = "Idempotent writes and a transactional outbox for a multi-tenant listing platform. " +
		"Every write that starts background work takes an Idempotency-Key and executes once however often it is retried. " +
		"Every response carries an X-Request-Id (the client's own when it sends a sane one); quote it when reporting a problem."
	cfg.Components.SecuritySchemes = map[string]*huma.SecurityScheme{
		bearerScheme: {Type: "http", Scheme: "bearer", BearerFormat: "JWT or API key",
			Description: "A user's token (a JWT from the identity provider, or made by `once token`), or an API key (`once_sk_…`, see POST /v1/api-keys)."},
	}
	// No $schema links in bodies: clients and SDKs do not need them, and they
	// would make replayed bodies depend on the host.
	cfg.CreateHooks = nil
	// The reference is served by registerDocs from embedded assets; huma's
	// own page loads its UI from a CDN.
	cfg.DocsPath = ""
	cfg.Transformers = append(cfg.Transformers, problemInstance)
	describeSpec(cfg.OpenAPI)
	return cfg
}

// NewAPI builds the huma API on mux and registers every operation.
func NewAPI(mux *http.ServeMux, deps Deps) huma.API {
	api := humago.New(mux, Config())
	Register(api, deps)
	return api
}

// Register registers every operation on api. It is the single source of the
// routes for both the server and `once openapi`.
func Register(api huma.API, deps Deps) {
	if deps.MaxBodyBytes <= 0 {
		deps.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if deps.Authenticate != nil {
		// The scope right after the token, before the limits and any
		// look at the body: a refused caller costs the workspace nothing.
		api.UseMiddleware(authMiddleware(api, deps.Authenticate), requireScope(api))
	}
	if deps.Limits != nil {
		api.UseMiddleware(admitWorkspace(api, deps.Limits))
	}
	api.UseMiddleware(refuseUnstorableText(api))
	h := &handlers{deps: deps}
	h.registerStores(api)
	h.registerStoreAuthorization(api)
	h.registerProducts(api)
	h.registerMedia(api)
	for _, register := range kindRoutes {
		register(h, api)
	}
	h.registerOperations(api)
	h.registerDeadLetters(api)
	h.registerMembers(api)
	h.registerTokenRevocation(api)
	h.registerWebhookEndpoints(api)
	h.registerAPIKeys(api)
	documentScopes(api)
	addExamples(api.OpenAPI())
	requireCanonicalIDs(api)
	documentShapeProblems(api)
	documentRateLimited(api)
	documentRequestID(api)
}

// HandlerOption adds to what Handler wraps the mux with.
type HandlerOption func(*handlerOptions)

type handlerOptions struct {
	tracerProvider trace.TracerProvider
}

// WithTracerProvider makes a server span per request (serverSpans); nil
// leaves tracing off.
func WithTracerProvider(tp trace.TracerProvider) HandlerOption {
	return func(o *handlerOptions) { o.tracerProvider = tp }
}

// Handler wraps the mux with request ids, server spans, the access log, the
// request metrics (when obs is not nil) and a health check. Metrics are
// served on the ops listener, never here.
func Handler(mux *http.ServeMux, log *slog.Logger, obs RequestObserver, opts ...HandlerOption) http.Handler {
	var o handlerOptions
	for _, opt := range opts {
		opt(&o)
	}
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte("ok\n"))
	})
	registerDocs(mux)
	return serverSpans(mux, o.tracerProvider, requestID(traceContext(accessLog(log, observeRequests(obs, mux, routerProblems(mux))))))
}

type handlers struct {
	deps Deps
}

var bearer = []map[string][]string{{bearerScheme: {}}}

// toProblem turns any error into the problem the client sees, logging the
// cause of internal errors (which the client does not see).
func toProblem(ctx context.Context, err error) *Problem {
	var p *Problem
	if errors.As(err, &p) {
		return p
	}
	var de *domain.Error
	if !errors.As(err, &de) {
		de = domain.Wrap(domain.CodeInternal, err, "internal error")
	}
	if s := statusByCode[de.Code]; s == 0 || s >= 500 {
		logger(ctx).ErrorContext(ctx, "request failed", slog.String("code", string(de.Code)), slog.String("error", err.Error()))
	}
	return problemFromDomain(de)
}
